"""A cost model in physical units: charge-path event counts -> CPU cycles -> throughput.

The model is linear: every event of :class:`memcglab.events.ChargeEvents` is priced as
a fixed mix of a few hardware costs (:class:`CostParams`), each named for what it
physically is and defaulted from public hardware figures. Cycles per operation are
``coefficients(events) @ params``, so the same matrix explains the result
(:func:`breakdown`) and serves calibration (``memcglab.stats``).

What each event costs, and why (kernel functions of mm/memcontrol.c and
mm/page_counter.c, 2025-2026 trees):

* a stock lookup (every consume_stock and refill_stock call, and the refill after a
  charge miss) takes the per-CPU stock lock and reads the stock's cache lines;
  each slot compared costs ``slot_compare``;
* a hit writes the slot's ``nr_pages`` (``percpu_rmw``);
* a miss costs the slow path's calls (page_counter_try_charge, then refill_stock);
  a bypass (request above the batch) has no refill;
* every page_counter walk is a call, and every level of it an
  ``atomic_long_add_return`` on ``usage`` (``atomic_rmw``) plus a read of the line
  holding ``max`` and the watermarks (``l1_hit``); a level whose ``usage`` line was
  last written by another CPU adds a cache-to-cache transfer (``c2c_transfer``);
* an eviction draws a random victim (get_random_u32_below, ``random_u32``) and
  rewrites the slot's ``cached`` and ``nr_pages``; a drain is a call and a write;
* css_get/css_put on a percpu_ref and LRU bookkeeping are per-CPU writes.

Reclaim and OOM (``failed_charges``) are outside the model and cost nothing here.

The stock's lines per lookup come from its layout. Until ``memcglab.layout`` provides
it, :func:`default_scan_lines` uses the aligned multi stock's rule: a 1-byte lock,
``slots`` one-byte ``nr_pages`` and ``slots`` 8-byte pointers,
``ceil((1 + slots + 8 * slots) / 64)`` lines; pass ``lines_per_scan`` for others.

>>> from memcglab.events import ChargeEvents
>>> ev = ChargeEvents.zeros(ncpus=1, nmemcgs=1)
>>> for name, n in [("charges", 10), ("stock_hits", 10), ("slots_scanned", 30)]:
...     ev.per_cpu[name][0] = n
>>> p = CostParams()
>>> # per charge: call + lock + one line + 3 compares + the nr_pages write
>>> cycles_per_op(ev, p) == p.call + p.stock_lock + p.l1_hit + 3 * p.slot_compare + p.percpu_rmw
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace

import numpy as np
import pandas as pd

from memcglab.events import EVENT_NAMES, ChargeEvents

__all__ = [
    "CostParams",
    "PRICES",
    "default_scan_lines",
    "event_counts",
    "coefficients",
    "cycles_per_op",
    "breakdown",
    "throughput",
]

CACHELINE = 64


@dataclass(frozen=True)
class CostParams:
    """Hardware costs, in CPU cycles, of the operations the charge path performs.

    Defaults are round figures for a recent x86-64 server core at 2-3 GHz, each the
    typical value of a sourced prior (low, typical, high, shape) in
    ``data/hardware/priors.toml``; ``memcglab.hardware.load_profile(name).cost_params()``
    gives a machine's, and ``memcglab.uncertainty`` propagates the whole ranges. A
    conclusion priced at these defaults alone is an assumption, not a measurement:

    * ``l1_hit`` 4: load-to-use latency of an L1d hit (Intel 64 and IA-32
      Architectures Optimization Reference Manual: 4-5 cycles since Skylake).
    * ``slot_compare`` 1: one pipelined load-compare-branch per stock slot.
    * ``percpu_rmw`` 5: a non-atomic read-modify-write of a local, L1-resident line
      (this_cpu_add, WRITE_ONCE of a slot): load latency plus a dependent store.
    * ``atomic_rmw`` 20: an uncontended LOCK XADD on a line already in L1
      (Agner Fog, "Instruction tables": about 18-20 cycles on Intel cores).
    * ``c2c_transfer`` 150: extra cost of fetching a line another core modified,
      within one socket: tens of nanoseconds (Hackenberg, Molka, Nagel, MICRO 2009;
      Molka et al., ICPP 2015), about 100-200 cycles; more across sockets.
    * ``stock_lock`` 20: local_trylock_irqsave + local_unlock_irqrestore: a
      pushf/cli and popf pair (popf is about 20 cycles per Agner Fog); the irq-free
      lock of 6.16 and later is cheaper, set it per era.
    * ``call`` 15: call, return and prologue of one out-of-line kernel function,
      with return-thunk mitigations.
    * ``random_u32`` 30: get_random_u32_below from the per-CPU batched ChaCha
      stream (drivers/char/random.c), the batch refill amortised.
    """

    l1_hit: float = 4.0
    slot_compare: float = 1.0
    percpu_rmw: float = 5.0
    atomic_rmw: float = 20.0
    c2c_transfer: float = 150.0
    stock_lock: float = 20.0
    call: float = 15.0
    random_u32: float = 30.0

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if not (isinstance(v, int | float) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{f.name}={v!r}: must be a finite number of cycles >= 0")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The parameter names, in field order."""
        return tuple(f.name for f in fields(cls))

    def to_vector(self, names: Sequence[str] | None = None) -> np.ndarray:
        """The parameters as an array, in ``names`` order (default: all)."""
        return np.array([getattr(self, n) for n in (names or self.names())], dtype=float)

    def from_vector(self, values: Sequence[float], names: Sequence[str] | None = None
                    ) -> CostParams:
        """A copy with ``names`` (default: all) set from ``values``: the calibration hook.

        >>> CostParams().from_vector([300.0], ["c2c_transfer"]).c2c_transfer
        300.0
        """
        names = tuple(names or self.names())
        if len(names) != len(values):
            raise ValueError(f"{len(values)} values for {len(names)} names {names}")
        unknown = set(names) - set(self.names())
        if unknown:
            raise ValueError(f"unknown parameters {sorted(unknown)}; valid: {self.names()}")
        return replace(self, **{n: float(v) for n, v in zip(names, values, strict=True)})

    def scaled(self, factor: float) -> CostParams:
        """Every cost times ``factor`` (a slower or faster core, same mix)."""
        return replace(self, **{k: v * factor for k, v in asdict(self).items()})


#: event -> {parameter: units of that parameter per event}. ``lookups`` is derived
#: (see :func:`event_counts`); its lines are added by :func:`coefficients`.
PRICES: dict[str, dict[str, float]] = {
    "lookups": {"stock_lock": 1.0},
    "charges": {"call": 1.0},
    "uncharges": {"call": 1.0},
    "uncharges_direct": {"call": 1.0},
    "stock_hits": {"percpu_rmw": 1.0},
    "miss_absent": {"call": 2.0},
    "miss_short": {"call": 2.0},
    "miss_bypass": {"call": 1.0},
    "evictions": {"random_u32": 1.0, "percpu_rmw": 2.0},
    "walks": {"call": 1.0},
    "walk_levels": {"atomic_rmw": 1.0, "l1_hit": 1.0},
    "drains": {"call": 1.0, "percpu_rmw": 1.0},
    "slots_scanned": {"slot_compare": 1.0},
    "lru_writes": {"percpu_rmw": 1.0},
    "usage_transfers": {"c2c_transfer": 1.0},
    "css_ref_ops": {"percpu_rmw": 1.0},
    "failed_charges": {},
}


def default_scan_lines(slots: int) -> int:
    """Cache lines a full scan of an aligned multi stock touches (see module doc).

    >>> [default_scan_lines(s) for s in (1, 7, 8, 14)]
    [1, 1, 2, 2]
    """
    if not 1 <= slots <= 255:
        raise ValueError(f"slots={slots}: must be between 1 and 255 (NR_MEMCG_STOCK)")
    return math.ceil((1 + slots + 8 * slots) / CACHELINE)


def event_counts(events: ChargeEvents | Mapping[str, float]) -> dict[str, float]:
    """Totals of every event, plus ``lookups``: the stock lock/line reads.

    Each charge and each refill_stock uncharge looks the stock up once, and a
    charge that missed looks it up again to refill the batch surplus.
    """
    tot = events.totals() if isinstance(events, ChargeEvents) else dict(events)
    missing = [n for n in EVENT_NAMES if n not in tot]
    if missing:
        raise ValueError(f"event counts lack {', '.join(missing)}; need every one of "
                         "memcglab.events.EVENT_NAMES")
    out = {n: float(tot[n]) for n in EVENT_NAMES}
    out["lookups"] = out["charges"] + out["uncharges"] + out["miss_absent"] + out["miss_short"]
    return out


#: rows and columns of the units matrix: every priced event (``lookups`` first), every
#: parameter
_EVENTS = tuple(PRICES)
_PARAMS = CostParams.names()
#: units of each parameter per event, (event, parameter) in C order: the memory layout of
#: the pandas frame this replaced, so every sum adds in the same order, to the last bit
_UNITS = np.array([[PRICES[e].get(q, 0.0) for q in _PARAMS] for e in _EVENTS])
_LOOKUPS, _L1_HIT = _EVENTS.index("lookups"), _PARAMS.index("l1_hit")


def _matrix(events: ChargeEvents | Mapping[str, float], lines_per_scan: float | None,
            slots: int, per: str) -> np.ndarray:
    """Units of each parameter per operation caused by each event, (event, parameter).

    Plain numpy: the studies price every configuration and seed, and a labelled frame
    filled cell by cell was most of that time (``benchmarks/cost_speed.py`` compares).
    """
    counts = event_counts(events)
    if per not in counts:
        raise ValueError(f"per={per!r}: must be an event name, one of {', '.join(counts)}")
    nops = counts[per]
    if nops <= 0:
        raise ValueError(f"per={per!r}: no such events were counted; cycles per op undefined")
    lines = default_scan_lines(slots) if lines_per_scan is None else float(lines_per_scan)
    if lines < 0:
        raise ValueError(f"lines_per_scan={lines_per_scan}: must be >= 0")
    m = _UNITS * np.array([counts[e] for e in _EVENTS])[:, None] / nops
    m[_LOOKUPS, _L1_HIT] = lines * counts["lookups"] / nops
    return m


def coefficients(events: ChargeEvents | Mapping[str, float], lines_per_scan: float | None = None,
                 slots: int = 7, per: str = "charges") -> pd.Series:
    """Units of each parameter per operation: cycles per op is this dotted with the params.

    ``per`` names the event that counts operations (a packet's or a fault's charge).
    """
    return pd.Series(_matrix(events, lines_per_scan, slots, per).sum(axis=0),
                     index=list(_PARAMS))


def cycles_per_op(events: ChargeEvents | Mapping[str, float], params: CostParams | None = None,
                  lines_per_scan: float | None = None, slots: int = 7,
                  per: str = "charges") -> float:
    """Charge-path CPU cycles per operation."""
    p = params or CostParams()
    return float(_matrix(events, lines_per_scan, slots, per).sum(axis=0) @ p.to_vector())


def breakdown(configs: Mapping[str, ChargeEvents | Mapping[str, float]],
              params: CostParams | None = None, lines_per_scan: float | None = None,
              slots: int | Mapping[str, int] = 7, per: str = "charges",
              by: str = "event") -> pd.DataFrame:
    """Where the cycles go, per configuration: a tidy (config, component, cycles) frame.

    ``by="event"`` attributes cycles to the events that cause them (a stacked bar
    per configuration); ``by="parameter"`` to the hardware costs. Rows with zero
    cycles are kept so every configuration has the same components.
    """
    if by not in ("event", "parameter"):
        raise ValueError(f"by={by!r}: must be 'event' or 'parameter'")
    p = (params or CostParams()).to_vector()
    labels = _EVENTS if by == "event" else _PARAMS
    rows = []
    for name, ev in configs.items():
        s = slots[name] if isinstance(slots, Mapping) else slots
        m = _matrix(ev, lines_per_scan, s, per) * p
        part = m.sum(axis=1) if by == "event" else m.sum(axis=0)
        rows += [{"config": name, "component": c, "cycles": float(v)}
                 for c, v in zip(labels, part, strict=True)]
    return pd.DataFrame(rows, columns=["config", "component", "cycles"])


def throughput(memcg_cycles: float | np.ndarray, other_cycles: float | np.ndarray,
               cpu_hz: float, cpus: float) -> float | np.ndarray:
    """Operations per second when ``cpus`` CPUs at ``cpu_hz`` do nothing but these ops.

    Each operation costs its charge-path cycles plus ``other_cycles`` of work outside
    memcg (the packet's protocol processing, the fault's page zeroing).

    >>> throughput(100.0, 900.0, cpu_hz=2e9, cpus=4)
    8000000.0
    """
    if cpu_hz <= 0 or cpus <= 0:
        raise ValueError(f"cpu_hz={cpu_hz}, cpus={cpus}: both must be > 0")
    total = np.asarray(memcg_cycles, dtype=float) + np.asarray(other_cycles, dtype=float)
    if np.any(total <= 0):
        raise ValueError("memcg_cycles + other_cycles must be > 0 per operation")
    out = cpus * cpu_hz / total
    return float(out) if np.ndim(out) == 0 else out
