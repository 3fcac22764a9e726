"""Study 1's counts: each registered trace replayed, its events counted per message.

For every trace the registration needs (release x ancestors x seed, see
:meth:`~memcglab.studies.s01_single_vs_multi.prereg.Study01Prereg.trace_keys`), every client count
and both stock models, the compiled engine replays the netperf receive mix
(:func:`memcglab.workloads.netperf_rx`) with events on. From the events come the exact
counts (walks, stock hits, evictions, drains, usage-line transfers per message), the
split of the transfers into shared lines (one queueing station each) and private ones
(:func:`memcglab.queueing.line_counts`), and the charge path's CPU cycles without
transfers (:func:`memcglab.cost.cycles_per_op` at ``c2c_transfer = 0``, the profile's
typical costs). No published number is read here.

>>> from memcglab.studies.s01_single_vs_multi.prereg import load_prereg
>>> r = load_prereg()
>>> c = count_traces(r, quick=True, clients=(6,), keys=[("task", 1, 0)])
>>> sorted(c.loads), c.table[["model", "clients"]].values.tolist()
([('task', 1, 0, 'multi'), ('task', 1, 0, 'single')], [['single', 6], ['multi', 6]])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from memcglab.cost import CostParams, cycles_per_op
from memcglab.engine import replay_compiled
from memcglab.hardware import load_profile
from memcglab.pricing import FlowLoad
from memcglab.queueing import line_counts, trace_parents
from memcglab.studies.common.measure import lookup_slots, metrics, scan_lines
from memcglab.studies.s01_single_vs_multi.prereg import Study01Prereg
from memcglab.workloads import NetperfRxSpec, netperf_rx

__all__ = ["PROFILE", "TraceCounts", "count_traces", "cost_params"]

#: the machine profile of the multi-memcg thread's netperf box (data/hardware/profiles)
PROFILE = "butt-netperf-72cpu"


def cost_params(profile: str = PROFILE) -> CostParams:
    """The charge path's costs at ``profile``'s typical values (a shipped profile's name or
    a profile file's path), transfers excluded."""
    return replace(load_profile(profile).cost_params("typical"), c2c_transfer=0.0)


@dataclass(frozen=True)
class TraceCounts:
    """Counts of every replay (``table``, one row per key, model and client count) and
    the pricing core's load per (release, ancestors, seed, model) (``loads``)."""

    table: pd.DataFrame
    loads: dict[tuple[Any, ...], FlowLoad]


def _spec(r: Study01Prereg, clients: int, release: str, ancestors: int, seed: int,
          messages: int) -> NetperfRxSpec:
    t = r.trace
    return NetperfRxSpec(cpus=int(t["cpus"]), clients=clients, messages=messages,
                         message_size=int(t["message_size"]), placement=t["placement"],
                         migration_rate=float(t["migration_rate"]),
                         interleave=int(t["interleave"]), release=release,
                         queue_depth=int(t["queue_depth"]), ancestors=int(ancestors),
                         seed=int(seed))


def count_traces(r: Study01Prereg, quick: bool, clients: Sequence[int] | None = None,
                 keys: Sequence[tuple[Any, ...]] | None = None,
                 messages: int | None = None, profile: str = PROFILE) -> TraceCounts:
    """Replay every trace of ``keys`` (default: all the registration needs) at every
    client count (default: the table's) through both models, and count; the charge
    path's cycles are priced at ``profile``'s typical costs."""
    clients = tuple(clients or r.clients)
    keys = list(keys or r.trace_keys(r.seeds(quick)))
    messages = int(messages or r.messages(quick))
    slots = int(r.trace["slots"])
    price = cost_params(profile)
    rows, loads = [], {}
    for release, ancestors, seed in keys:
        per_model: dict[str, tuple[list, list]] = {}
        for n in clients:
            trace = netperf_rx(_spec(r, n, release, ancestors, seed, messages))
            parents = trace_parents(trace)
            for model in (r.without_model, r.with_model):
                _, ev = replay_compiled(trace, model=model, slots=slots, seed=int(seed),
                                        events=True)
                lines = line_counts(ev, parents)
                looked = lookup_slots(model, slots)
                cyc = cycles_per_op(ev, price, lines_per_scan=scan_lines(looked), slots=looked)
                m = metrics(ev, model, slots, price)
                t = ev.totals()
                rows.append({"release": release, "ancestors": int(ancestors),
                             "seed": int(seed), "model": model, "clients": n,
                             "walks_per_op": m["walks_per_op"], "hit_rate": m["hit_rate"],
                             "evictions_per_op": m["evictions_per_op"],
                             "drains_per_op": t["drains"] / t["charges"],
                             "transfers_per_op": m["transfers_per_op"],
                             "shared_transfers_per_op": float(lines.shared.sum()),
                             "root_transfers_per_op": float(lines.shared[0])
                             if lines.names and lines.names[0] == "usage:0" else 0.0,
                             "private_transfers_per_op": lines.private,
                             "memcg_cycles_per_op": cyc,
                             **{f"line:{k}": float(v)
                                for k, v in zip(lines.names, lines.shared, strict=True)}})
                acc = per_model.setdefault(model, ([], []))
                acc[0].append(lines)
                acc[1].append(cyc)
        for model, (counts, cycles) in per_model.items():
            loads[(release, int(ancestors), int(seed), model)] = \
                FlowLoad.from_counts(clients, counts, cycles)
    return TraceCounts(pd.DataFrame(rows), loads)
