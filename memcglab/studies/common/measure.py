"""One replay, measured and priced: the row every study's results table is made of.

A study replays a trace through a stock model with the compiled engine
(:func:`memcglab.engine.replay_compiled`, byte-identical to the faithful replay),
takes its :class:`~memcglab.events.ChargeEvents`, and prices them with
:mod:`memcglab.cost`. Rates are per charge (one packet, one fault): the uncharges
and drains a charge implies are part of its cost.

The cost model is linear in the counts, so :func:`price` prices each event once per
(lines, slots, hardware costs) through :func:`memcglab.cost.cycles_per_op` and then
takes a dot product: the same cycles, without rebuilding the cost matrix per replay.

The lines a stock lookup reads come from the stock's C layout:
:func:`memcglab.layout.slot_scan_lines` of v6.16's ``memcg_stock_pcp``
(DEFINE_PER_CPU_ALIGNED), the lock, ``nr_pages[]`` and ``cached[]``.

>>> from memcglab.trace import parse_text
>>> t = parse_text("memcglab-trace 1\\ncpus 1\\ncgroup 5 0\\ncharge 0 5 1\\ncharge 0 5 1\\n")
>>> row = measure(t, "multi", slots=7)
>>> row["charges"], row["walks_per_op"], row["hit_rate"]
(2, 0.5, 0.5)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache

import numpy as np

from memcglab.cost import CostParams, cycles_per_op
from memcglab.engine import Engine, replay_compiled
from memcglab.events import EVENT_NAMES, ChargeEvents
from memcglab.layout import slot_scan_lines
from memcglab.models import MODELS
from memcglab.trace import Trace
from memcglab.workloads import MadviseFaultSpec, madvise_fault, trial_bounds

__all__ = ["METRICS", "scan_lines", "lookup_slots", "unit_cycles", "price", "metrics", "measure",
           "totals_between", "trial_counts"]

#: metric -> what it is, per charge operation unless said otherwise
METRICS: dict[str, str] = {
    "charges": "charge operations replayed (the denominator of every rate)",
    "walks_per_op": "hierarchical page_counter walks per charge",
    "walks_per_1000": "page_counter walks per 1000 charges",
    "walk_levels_per_op": "page_counter levels updated per charge",
    "hit_rate": "fraction of charges served from a per-CPU stock",
    "evictions_per_op": "stock slots drained to make room, per charge",
    "transfers_per_op": "usage cache lines fetched from another CPU, per charge",
    "lru_writes_per_op": "LRU recency writes per charge (multi-lru only)",
    "lines_per_scan": "cache lines one stock lookup reads",
    "cycles_per_op": "charge-path CPU cycles per charge (memcglab.cost)",
}


@cache
def scan_lines(slots: int) -> float:
    """Cache lines a lookup of a ``slots``-slot stock reads (v6.16's aligned stock).

    >>> scan_lines(7), scan_lines(8)
    (1, 2)
    """
    return slot_scan_lines(slots)


def lookup_slots(model: str, slots: int) -> int:
    """Slots a lookup compares: ``slots`` for the multi stock, one for single and pcstock.

    The v6.15 stock caches one memcg; the RFC's stock is one per page_counter and CPU,
    found through the counter, so neither scans slots.

    >>> lookup_slots("multi-lru", 12), lookup_slots("pcstock", 12)
    (12, 1)
    """
    if model not in MODELS:
        raise ValueError(f"model={model!r}: unknown; valid: {', '.join(MODELS)}")
    return slots if MODELS[model].multi else 1


@cache
def unit_cycles(lines: float, slots: int, params: CostParams) -> np.ndarray:
    """Cycles each event of :data:`~memcglab.events.EVENT_NAMES` adds to a replay's total.

    Measured with :func:`memcglab.cost.cycles_per_op` itself: the total of one charge
    plus one event, less the total of one charge alone (totals are cycles per charge
    times charges).
    """
    def total(counts: dict[str, int]) -> float:
        return cycles_per_op(counts, params, lines_per_scan=lines, slots=slots) * counts["charges"]

    base = {n: 0 for n in EVENT_NAMES} | {"charges": 1}
    one = total(base)
    return np.array([total(base | {n: base[n] + 1}) - one if n != "charges" else one
                     for n in EVENT_NAMES])


def price(totals: Mapping[str, int], lines: float, slots: int,
          params: CostParams | None = None) -> float:
    """Charge-path cycles per charge: :func:`memcglab.cost.cycles_per_op` of ``totals``.

    >>> t = {n: 0 for n in EVENT_NAMES} | {"charges": 10, "stock_hits": 9, "walks": 1,
    ...                                    "walk_levels": 2, "slots_scanned": 40}
    >>> abs(price(t, 1, 7) - cycles_per_op(t, lines_per_scan=1, slots=7)) < 1e-9
    True
    """
    counts = np.array([totals[n] for n in EVENT_NAMES], dtype=float)
    if counts[EVENT_NAMES.index("charges")] <= 0:
        raise ValueError("no charges were counted; cycles per charge are undefined")
    prices = unit_cycles(float(lines), slots, params or CostParams())
    return float(counts @ prices / counts[EVENT_NAMES.index("charges")])


def metrics(events: ChargeEvents | Mapping[str, float], model: str, slots: int = 7,
            params: CostParams | None = None) -> dict[str, float]:
    """The :data:`METRICS` of one replay's event counts (totals or a ``ChargeEvents``)."""
    t = events.totals() if isinstance(events, ChargeEvents) else dict(events)
    n = t["charges"]
    if n <= 0:
        raise ValueError("the replay made no charges; rates per charge are undefined")
    s = lookup_slots(model, slots)
    lines = scan_lines(s)
    return {
        "charges": int(n),
        "walks_per_op": t["walks"] / n,
        "walks_per_1000": 1000.0 * t["walks"] / n,
        "walk_levels_per_op": t["walk_levels"] / n,
        "hit_rate": t["stock_hits"] / n,
        "evictions_per_op": t["evictions"] / n,
        "transfers_per_op": t["usage_transfers"] / n,
        "lru_writes_per_op": t["lru_writes"] / n,
        "lines_per_scan": float(lines),
        "cycles_per_op": price(t, lines, s, params),
    }


def measure(trace: Trace, model: str, slots: int = 7, seed: int = 0, batch: int = 64,
            params: CostParams | None = None) -> dict[str, float]:
    """Replay ``trace`` through ``model`` with the compiled engine; its :data:`METRICS`."""
    _, events = replay_compiled(trace, model=model, slots=slots, seed=seed, batch=batch,
                                events=True)
    return metrics(events, model, slots, params)


def totals_between(before: Mapping[str, int], after: ChargeEvents) -> dict[str, int]:
    """Event totals counted between two moments of one replay (``before`` is a ``totals()``).

    >>> ev = ChargeEvents.zeros(1, 1)
    >>> ev.per_cpu["charges"][0] = 5
    >>> totals_between({"charges": 2}, ev)["charges"]
    3
    """
    now = after.totals()
    return {n: int(now[n] - before.get(n, 0)) for n in EVENT_NAMES}


def trial_counts(spec: MadviseFaultSpec, model: str) -> Iterator[dict[str, int]]:
    """The page_counter-stock RFC's loop ``spec`` replayed through ``model`` trial by trial:
    each trial's event totals (:func:`totals_between` over that trial's operations), in trial order.

    One engine replays the whole trace, so stocks carry over from trial to trial as they
    do in the kernel; the cgroup lines before the first trial are not counted.
    """
    trace, bounds = madvise_fault(spec), trial_bounds(spec)
    engine = Engine(trace.cpus, model=model, events=True)
    engine.feed(trace.ops[:bounds[0]])
    before = engine.events().totals()
    for t in range(spec.trials):
        engine.feed(trace.ops[bounds[t]:bounds[t + 1]])
        events = engine.events()
        yield totals_between(before, events)
        before = events.totals()
