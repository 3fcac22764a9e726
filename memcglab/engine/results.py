"""Turn the engine's arrays into the contract's JSON object and into ChargeEvents.

The JSON object is built with plain Python ``int``/``bool``/``None``/``str`` so that
``json.dumps`` (the contract's ``sort_keys=True, separators=(",", ":")``) writes
exactly what the faithful replay writes: memcg IDs and pcstock stock keys are
strings, as JSON object keys are.
"""

from __future__ import annotations

import numpy as np

from memcglab.engine.state import (
    EV,
    F_MAXEV,
    F_ONLINE,
    F_USAGE,
    F_WATERMARK,
    G_BUSY,
    G_EVICT,
    G_EVON,
    G_FAILED,
    G_HITS,
    G_MODEL,
    G_NCPUS,
    G_NMEMCG,
    G_OPS,
    G_SHORT,
    G_WALKS,
    G_WARN,
    M_PCSTOCK,
    M_PCSTOCK_V4,
    M_SINGLE,
    S_CACHED,
    S_NR,
    State,
)
from memcglab.events import ChargeEvents

__all__ = ["contract_dict", "charge_events"]


def _stocks(s: State, ids: list[int], slots: int) -> list:
    ncpus, model = int(s.g[G_NCPUS]), int(s.g[G_MODEL])
    if model in (M_PCSTOCK, M_PCSTOCK_V4):
        n = int(s.g[G_NMEMCG])
        out = []
        for cpu in range(ncpus):
            col = s.pcs[:n, cpu]
            nz = np.flatnonzero(col)
            out.append({str(ids[m]): int(col[m]) for m in nz})
        return out
    per = 1 if model == M_SINGLE else slots
    cached = s.sl[S_CACHED].reshape(ncpus, per)
    nrp = s.sl[S_NR].reshape(ncpus, per)
    out = []
    for cpu in range(ncpus):
        row: list = [None] * per
        for i in np.flatnonzero(cached[cpu] >= 0):
            row[i] = [ids[cached[cpu, i]], int(nrp[cpu, i])]
        out.append(row)
    return out


def contract_dict(s: State, ids: list[int], model: str, slots: int, seed: int,
                  batch: int) -> dict:
    """The replay contract's output object for the engine's current state."""
    n = int(s.g[G_NMEMCG])
    usage, wm, maxev, online = (s.mc[f, :n].tolist()
                                for f in (F_USAGE, F_WATERMARK, F_MAXEV, F_ONLINE))
    return {
        "model": model,
        "slots": slots,
        "batch": batch,
        "seed": seed,
        "ops": int(s.g[G_OPS]),
        "failed_charges": int(s.g[G_FAILED]),
        "set_max_busy": int(s.g[G_BUSY]),
        "short_uncharges": int(s.g[G_SHORT]),
        "warnings": int(s.g[G_WARN]),
        "memcgs": {str(ids[m]): {"usage": usage[m], "watermark": wm[m],
                                 "max_events": maxev[m], "online": bool(online[m])}
                   for m in range(n)},
        "stocks": _stocks(s, ids, slots),
        "counters": {"walks": int(s.g[G_WALKS]), "stock_hits": int(s.g[G_HITS]),
                     "evictions": int(s.g[G_EVICT])},
    }


def charge_events(s: State, ids: list[int]) -> ChargeEvents:
    """The per-CPU and per-memcg event counts (the engine must run with events on)."""
    if not s.g[G_EVON]:
        raise ValueError("events=False: this replay did not count events; "
                         "run it with events=True")
    n, ncpus = int(s.g[G_NMEMCG]), int(s.g[G_NCPUS])
    return ChargeEvents(
        per_cpu={name: s.ev[i, :ncpus].copy() for i, name in enumerate(EV)},
        per_memcg={name: s.ev[i, ncpus:ncpus + n].copy() for i, name in enumerate(EV)},
        memcg_ids=np.array(ids[:n], dtype=np.int64),
    )
