"""Study 2's exact counts: what the replays counted, and how often a CPU has too many memcgs.

A victim policy is asked only when a CPU's stock has no free slot and no slot holds
the memcg at hand, so before any price the study counts (per policy, slot count and
mix, from the replays' :class:`~memcglab.events.ChargeEvents`) the page_counter walks,
evictions and stock hits per 1000 charges and LRU's recency writes per charge, and
measures, exactly from the trace, how often a CPU is *over its slots*.

**Active memcgs.** A CPU's stock is looked up by its charges (consume_stock) and by
its uncharges (refill_stock), and both claim a slot. The active memcgs of a CPU at
one of its stock operations are the distinct memcgs among its last ``W`` stock
operations, that one included (a sliding window over the CPU's own operations, in
trace order; ``uncharge_direct`` bypasses the stock and is not counted). A window
is *over* ``K`` slots when it holds more than ``K`` distinct memcgs: ``K`` slots
cannot hold them all at its end, so within it the stock evicts a memcg the window
uses, whatever the policy. Below that a policy that evicted only memcgs the CPU no longer uses would
never evict a live one; but a stock keeps a memcg until it is evicted or drained, so
its slots also fill with memcgs whose tasks have moved on, and real policies still
differ in which memcg they evict (the event counts say how often one is evicted).
:func:`window_distinct` counts every full window of a sequence at once with numpy
(each entry's previous and next occurrence, then a running sum);
:func:`active_windows` applies it to every CPU of a trace.

>>> window_distinct(np.array([1, 2, 1, 3, 3, 4]), 3).tolist()
[2, 3, 2, 2]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from memcglab.studies import count_row
from memcglab.studies.common.text import plural
from memcglab.trace import OP_CHARGE, OP_UNCHARGE, Trace

__all__ = ["STOCK_OPS", "ACTIVE_COLUMNS", "window_distinct", "active_windows", "active_summary",
           "event_counts", "counts"]

#: the trace operations that look a CPU's stock up (consume_stock, refill_stock)
STOCK_OPS: tuple[int, ...] = (OP_CHARGE, OP_UNCHARGE)
#: the columns of :func:`active_windows`
ACTIVE_COLUMNS: tuple[str, ...] = ("cpu", "window", "slots", "windows", "over", "max_active",
                                   "mean_active")


def window_distinct(values: np.ndarray, window: int) -> np.ndarray:
    """Distinct values in every full window of ``window`` consecutive entries.

    Entry ``i`` of the result is the window ending at ``values[window - 1 + i]``; a
    sequence shorter than ``window`` has none.
    """
    v = np.asarray(values)
    if v.ndim != 1:
        raise ValueError(f"values: need a 1-D array, not shape {v.shape}")
    if isinstance(window, bool) or not isinstance(window, int | np.integer) or window < 1:
        raise ValueError(f"window={window!r}: must be an integer >= 1")
    n = len(v)
    if n < window:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((np.arange(n), v))
    same = v[order[1:]] == v[order[:-1]]
    prev = np.full(n, -1, dtype=np.int64)
    nxt = np.full(n, n, dtype=np.int64)
    prev[order[1:][same]] = order[:-1][same]
    nxt[order[:-1][same]] = order[1:][same]
    first = int(np.count_nonzero(prev[:window] < 0))
    i = np.arange(window, n)
    step = (prev[window:] < i - window).astype(np.int64) - (nxt[:n - window] > i)
    return np.concatenate(([first], first + np.cumsum(step)))


def active_windows(trace: Trace, windows: Sequence[int], slots: int | Sequence[int],
                   ops: Iterable[int] = STOCK_OPS) -> pd.DataFrame:
    """Per CPU, window length and slot count: full windows, windows over the slots and
    the most and mean active memcgs (:data:`ACTIVE_COLUMNS`; see the module doc)."""
    counts = [slots] if isinstance(slots, int | np.integer) else list(slots)
    bad = [k for k in counts if not 1 <= k <= 255]
    if bad or not counts:
        raise ValueError(f"slots={slots}: each must be between 1 and 255 (NR_MEMCG_STOCK)")
    o = trace.ops
    sel = np.isin(o["op"], np.asarray(list(ops), dtype=o["op"].dtype))
    cpu, memcg = o["cpu"][sel], o["memcg"][sel]
    rows = []
    for c in np.unique(cpu):
        seq = memcg[cpu == c]
        for w in windows:
            d = window_distinct(seq, int(w))
            top = int(d.max()) if len(d) else 0
            mean = float(d.mean()) if len(d) else float("nan")
            for k in counts:
                rows.append({"cpu": int(c), "window": int(w), "slots": int(k),
                             "windows": len(d), "over": int(np.count_nonzero(d > k)),
                             "max_active": top, "mean_active": mean})
    return pd.DataFrame(rows, columns=list(ACTIVE_COLUMNS))


def active_summary(per_cpu: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Pooled over CPUs (and whatever else ``per_cpu`` stacks, e.g. seeds): per window
    (and ``by``), windows, windows over the slots, their percentage, the CPUs with any
    window over, and the most active memcgs."""
    keys = [*by, "window", "slots"]
    g = per_cpu.assign(any_over=per_cpu["over"] > 0).groupby(keys)
    out = g.agg(windows=("windows", "sum"), over=("over", "sum"),
                cpu_windows_over=("any_over", "sum"), cpu_rows=("cpu", "size"),
                max_active=("max_active", "max"), mean_active=("mean_active", "mean"))
    out["over_pct"] = 100.0 * out["over"] / out["windows"].where(out["windows"] > 0)
    return out.reset_index()


def event_counts(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (mix, policy, slots), means over the replays (seeds; for a synthetic mix also
    its configurations with more active memcgs than slots): walks, evictions and stock
    hits per 1000 charges, and recency writes per charge. Only the rows of the default
    modelling alternative count (``runs["default"]``)."""
    keep = (runs["workload"] == "netperf") | (runs["active"] > runs["slots"])
    sel = runs[runs["default"] & keep]
    per = sel.assign(
        walks_per_1000=1000.0 * sel["ev_walks"] / sel["ev_charges"],
        evictions_per_1000=1000.0 * sel["ev_evictions"] / sel["ev_charges"],
        hits_per_1000=1000.0 * sel["ev_stock_hits"] / sel["ev_charges"],
        recency_writes_per_charge=sel["ev_lru_writes"] / sel["ev_charges"])
    cols = ["walks_per_1000", "evictions_per_1000", "hits_per_1000",
            "recency_writes_per_charge"]
    out = per.groupby(["mix", "policy", "slots"])[cols].mean()
    out["replays"] = per.groupby(["mix", "policy", "slots"]).size()
    return out.reset_index()


def _config(mix: str, policy: str, slots: int, clients: int) -> str:
    where = f"netperf {clients} clients" if mix == "netperf" else \
        f"synthetic {mix}, CPUs with more active memcgs than slots"
    return f"{policy}, {plural(slots, 'slot')}, {where}"


def counts(events: pd.DataFrame, active: pd.DataFrame, slots: int,
           netperf_slots: Sequence[int], clients: int,
           policies: Sequence[str] = ("random", "rr", "lru")) -> list[dict]:
    """The count rows (:func:`memcglab.studies.count_row`): the active-memcg windows on
    netperf first, then per mix and policy the event rates at ``slots`` (netperf also
    at ``netperf_slots``). ``events`` is :func:`event_counts`, ``active``
    :func:`active_summary` of the default netperf alternative."""
    rows = []
    for r in active.itertuples():
        rows.append(count_row(
            "02", "windows with more active memcgs than slots (%)",
            f"netperf {clients} clients, W = {r.window} stock operations per CPU, "
            f"{plural(int(r.slots), 'slot')}", float(r.over_pct),
            f"{int(r.over)} of {int(r.windows)} windows; at most {int(r.max_active)} active "
            f"memcgs in a window (mean {r.mean_active:.2f}); exact from the traces"))
    names = (("walks_per_1000", "walks per 1000 charges"),
             ("evictions_per_1000", "evictions per 1000 charges"),
             ("hits_per_1000", "stock hits per 1000 charges"))
    for mix in dict.fromkeys(events["mix"]):
        counts_at = sorted({slots, *netperf_slots}) if mix == "netperf" else [slots]
        for n in counts_at:
            for pol in policies:
                sel = events[(events["mix"] == mix) & (events["policy"] == pol)
                             & (events["slots"] == n)]
                if sel.empty:
                    continue
                e = sel.iloc[0]
                note = f"mean over {int(e['replays'])} replays"
                for col, quantity in names:
                    rows.append(count_row("02", quantity, _config(mix, pol, n, clients),
                                          float(e[col]), note))
                if pol == "lru":
                    rows.append(count_row("02", "recency writes per charge",
                                          _config(mix, pol, n, clients),
                                          float(e["recency_writes_per_charge"]), note))
    return rows
