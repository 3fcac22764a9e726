"""Pages stranded in per-CPU stocks: measured over time, per memcg and in total.

The v3 and v4 cover letters of the page_counter stock series say the bound on pages
held in stocks grows from ``nr_cpus * 7 * 64`` (the multi stock: 7 slots of at most a
batch per CPU) to ``nr_cpus * nr_cgroups * 64`` (one stock per CPU and counter), and
that coming close to it "is difficult and rare" because it "would require processes
to bounce across CPUs". This module measures the stocks instead of bounding them.

Method. The compiled engine (:class:`memcglab.engine.Engine`) keeps its whole state
between chunks of a trace and replays each chunk exactly as the whole trace would
be replayed (the chunked form is the one its differential tests hold to the
faithful port). :func:`occupancy` feeds a trace in ``samples`` equal chunks of
operations and, after each, reads every CPU's stock: for the multi stocks, the
``nr_pages`` of each occupied slot, summed by its cached memcg; for ``pcstock`` and
``pcstock-v4``, each counter's per-CPU stock. Usage is each memcg's page_counter
usage, which includes what its stocks hold.

"Close to the bound" is defined here, before any run: the total held in stocks is
at least :data:`CLOSE_FRACTION` (50%) of the bound. A stock's leftover after a
walk is the batch less the charge, so stocks left behind by moving tasks hold about
half a batch each on average; a total near 50% of the bound means nearly every
(CPU, memcg) pair holds a stranded leftover.

>>> from memcglab.trace import parse_text
>>> t = parse_text("memcglab-trace 1\\ncpus 2\\ncgroup 1 0\\ncharge 0 1 1\\n"
...                "charge 1 1 2\\nuncharge 1 1 3\\n")
>>> occ = occupancy(t, "pcstock-v4", samples=3)
>>> occ.total["stocked"].tolist()
[63, 125, 125]
>>> bound_pages("pcstock-v4", cpus=2, cgroups=1), bound_pages("multi", cpus=2, cgroups=1)
(128, 128)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from memcglab import registry
from memcglab.engine import Engine
from memcglab.engine.state import (
    F_USAGE,
    G_MODEL,
    G_NMEMCG,
    M_PCSTOCK,
    M_PCSTOCK_V4,
    S_CACHED,
    S_NR,
)
from memcglab.models import MODELS
from memcglab.trace import OP_CGROUP, Trace

__all__ = ["CLOSE_FRACTION", "PAGE_MIB", "Occupancy", "bound_pages", "occupancy", "summary"]

#: "close to the bound": the total held in stocks is at least this share of it
CLOSE_FRACTION = 0.5
#: MiB per 4 KiB page
PAGE_MIB = 4096 / 2**20


class Occupancy(NamedTuple):
    """:func:`occupancy`'s result.

    ``total``: one row per sample (``sample``, ``op``: operations replayed,
    ``stocked``: pages in stocks summed over the trace's memcgs, ``usage``: the root
    counter's usage, which every charge reaches).
    ``memcg``: one row per (sample, memcg) with ``stocked`` > 0 or ``usage`` > 0:
    ``memcg`` (its trace ID), ``stocked``, ``usage``.
    """

    total: pd.DataFrame
    memcg: pd.DataFrame


def bound_pages(model: str, cpus: int, cgroups: int, batch: int = 64, slots: int = 7) -> int:
    """The cover letters' bound on pages held in stocks, in pages.

    The multi stock: ``cpus * min(slots, cgroups) * batch`` (its 7 slots, fewer when
    fewer memcgs charge); the page_counter stocks: ``cpus * cgroups * batch``. v4's
    stock holds at most ``batch - 1`` (the replay contract), so its bound is not
    reached exactly; the cover letter's figure is kept.
    """
    if model not in MODELS:
        raise ValueError(f"model={model!r}: unknown; valid: {', '.join(MODELS)}")
    if cpus < 1 or cgroups < 1 or batch < 1 or slots < 1:
        raise ValueError(f"cpus={cpus}, cgroups={cgroups}, batch={batch}, slots={slots}: "
                         "each must be >= 1")
    entry = registry.model(model)
    if entry.stock_kind == "page_counter":  # one stock per page_counter on every CPU
        return cpus * cgroups * batch
    per = min(slots, cgroups) if entry.multi else 1  # slots, or one cached memcg
    return cpus * per * batch


def _stocked(engine: Engine) -> tuple[np.ndarray, np.ndarray]:
    """Pages in stocks and usage per dense memcg, from the engine's current state."""
    s = engine.state
    n = int(s.g[G_NMEMCG])
    usage = s.mc[F_USAGE, :n].copy()
    if int(s.g[G_MODEL]) in (M_PCSTOCK, M_PCSTOCK_V4):
        return s.pcs[:n].sum(axis=1), usage
    cached, nr = s.sl[S_CACHED], s.sl[S_NR]
    held = cached >= 0
    return np.bincount(cached[held], weights=nr[held], minlength=n).astype(np.int64), usage


def occupancy(trace: Trace, model: str, samples: int = 40, slots: int = 7, batch: int = 64,
              seed: int = 0) -> Occupancy:
    """Replay ``trace`` in ``samples`` chunks of equal operation counts; the stocks after
    each (see the module doc). The ``cgroup`` lines at the trace's head go with the
    first chunk."""
    if not 1 <= samples <= 100_000:
        raise ValueError(f"samples={samples}: must be between 1 and 100000")
    ops = trace.ops
    head = int(np.argmax(ops["op"] != OP_CGROUP)) if np.any(ops["op"] != OP_CGROUP) \
        else len(ops)
    edges = np.linspace(head, len(ops), samples + 1).round().astype(int)
    edges[0] = 0
    engine = Engine(trace.cpus, model, slots, seed, batch, source=trace.source)
    totals, per = [], []
    for k in range(samples):
        engine.feed(ops[edges[k]:edges[k + 1]])
        stocked, usage = _stocked(engine)
        ids = np.asarray(engine.validator.ids[:len(usage)], dtype=np.int64)
        keep = (stocked > 0) | (usage > 0)
        keep[0] = False  # the root memcg: its usage is every memcg's
        totals.append({"sample": k, "op": int(edges[k + 1]),
                       "stocked": int(stocked[1:].sum()),
                       "usage": int(usage[0])})  # the root's counter: every charge
        per.append(pd.DataFrame({"sample": k, "memcg": ids[keep], "stocked": stocked[keep],
                                 "usage": usage[keep]}))
    return Occupancy(pd.DataFrame(totals), pd.concat(per, ignore_index=True))


def summary(occ: Occupancy, model: str, cpus: int, cgroups: int, memory_max_mib: float,
            batch: int = 64, slots: int = 7) -> dict[str, float | bool]:
    """One run's numbers: peak and final totals (pages, MiB, share of the bound), and per
    memcg the most it had stocked, as MiB and as a share of ``memory.max``, and the
    median and 95th percentile of its stocked share of its usage.

    Shares of usage leave out the last sample: the traces end by releasing every page,
    so there usage is all stock. Leaf and ancestor memcgs both count (an ancestor's
    usage includes its children's).
    """
    if not memory_max_mib > 0:
        raise ValueError(f"memory_max_mib={memory_max_mib}: must be > 0")
    bound = bound_pages(model, cpus, cgroups, batch, slots)
    t = occ.total
    peak, final = int(t["stocked"].max()), int(t["stocked"].iloc[-1])
    m = occ.memcg
    running = m[(m["sample"] < t["sample"].max()) & (m["usage"] > 0)]
    share = (running["stocked"] / running["usage"]).to_numpy(float)
    top = int(m["stocked"].max()) if len(m) else 0
    used = t.iloc[:-1] if len(t) > 1 else t
    return {
        "bound_pages": bound, "bound_mib": bound * PAGE_MIB,
        "peak_pages": peak, "peak_mib": peak * PAGE_MIB,
        "final_pages": final, "final_mib": final * PAGE_MIB,
        "peak_fraction_of_bound": peak / bound, "final_fraction_of_bound": final / bound,
        "close_to_bound": bool(peak >= CLOSE_FRACTION * bound),
        "mean_share_of_usage": float(used["stocked"].sum() / max(1, used["usage"].sum())),
        "memcg_max_pages": top, "memcg_max_mib": top * PAGE_MIB,
        "memcg_max_share_of_max": top * PAGE_MIB / memory_max_mib,
        "memcg_median_share_of_usage": float(np.median(share)) if share.size else 0.0,
        "memcg_p95_share_of_usage": float(np.quantile(share, 0.95)) if share.size else 0.0,
    }
