"""Random's throughput advantage over LRU, priced per mix with its 90% interval.

For one mix the quantity is random's throughput advantage over LRU, in %:

``100 * ((C_lru + O) / (C_random + O) - 1)``

``C`` is a policy's charge-path cycles per charge (:mod:`memcglab.cost`'s units of
each hardware cost, from the replay's event counts, dotted with the costs) and ``O``
the work per charge outside memcg (``other_cycles``). Both policies are priced at the
same point: the same hardware costs, the same trace (seed and modelling
alternatives), so what differs is the policy. The price goes through the pricing core
(:func:`memcglab.pricing.throughput_change`) as one flow on one CPU with no line
stations (:data:`LONE_FLOW`), whose throughput ratio is the one above: the policies'
line transfers are the same walks, so the quantity leaves them out.

LRU pays three things random does not, on top of its events:

* its recency writes (``lru_writes``, one per slot found or filled), at ``percpu_rmw``
  each, as :mod:`memcglab.cost` prices them;
* the line its recency state adds (:mod:`memcglab.studies.s02_policy_and_slots.recency`): with the
  state after ``cached[]`` each recency write touches one more line, with it beside
  ``nr_pages[]`` every scan reads one more; each line read is an ``l1_hit``, as a
  scan's lines are;
* its victim search: it compares every slot's stamp (``slot_compare`` per slot per
  eviction) instead of drawing a random number (:mod:`memcglab.cost` prices every
  eviction with ``random_u32``; for LRU that draw is taken out).

The space (:func:`pricing_space`) holds the machine profile's cost priors (the multi-memcg thread's
72-CPU machine by default), ``other_cycles`` from its ``other_cycles_per_packet``
prior, the trace's modelling alternatives (netperf: where tasks start and where
pages are released; a synthetic mix: how many active memcgs per CPU, over the
slots, and how many CPUs), the recency layout, and the seeds: all varying jointly
(:func:`memcglab.uncertainty.summarise`). A synthetic charge is priced as a packet
too (the bursty mix is a NAPI poll's packets), so it shares netperf's ``other_cycles``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np
import pandas as pd

from memcglab.cost import CostParams, coefficients
from memcglab.events import EVENT_NAMES
from memcglab.hardware import MachineProfile
from memcglab.pricing import FlowLoad, throughput_change
from memcglab.studies.common.constraints import other_cycles_for
from memcglab.studies.s02_policy_and_slots.recency import DEFAULT_LAYOUT, recency_lines
from memcglab.uncertainty import (
    Alternative,
    CoefficientTable,
    Draws,
    Prior,
    Space,
    UncertainResult,
    at_fixed,
    break_even,
    summarise,
)

__all__ = ["LONE_FLOW", "RECENCY_LAYOUT", "NETPERF_ALTERNATIVES", "FACTORS", "CLAIM_BAND",
           "SEARCH_HIGH",
           "CLAIM_SEARCH_HIGH",
           "RecencyBreakEven", "coefficient_frame", "pricing_priors", "pricing_space",
           "advantage_fn", "price_mix", "recency_break_even"]

#: the modelling alternative of where LRU keeps its recency state
RECENCY_LAYOUT = Alternative("recency_layout", ("after cached[]", "beside nr_pages[]"),
                             default=DEFAULT_LAYOUT)
#: netperf's modelling alternatives (the first of each is the default), as in study 6
NETPERF_ALTERNATIVES: dict[str, tuple[str, ...]] = {"placement": ("spread", "random"),
                                                    "release": ("task", "softirq")}
#: the discrete inputs that pick a trace, per workload (the seed last)
FACTORS: dict[str, tuple[str, ...]] = {"netperf": ("placement", "release", "seed"),
                                       "synthetic": ("active", "cpus", "seed")}
#: the multi-memcg thread's claim: random better than LRU by 1% to 3% of throughput
CLAIM_BAND: tuple[float, float] = (1.0, 3.0)
#: the top of the break-even search of a recency write's cost, cycles (the prior stops at 7)
SEARCH_HIGH = 20.0
#: the top of the search for the recency-write cost that reaches the claim's band: past
#: a cross-socket line transfer (data/hardware: c2c_transfer_cross_socket up to 700)
CLAIM_SEARCH_HIGH = 1000.0
_PARAMS = CostParams.names()
#: the pricing core's inputs for the quantity's loop: one flow on one hardware thread,
#: no line station. Its clock and the machine's threads cancel in the ratio of two
#: policies' rates (1 GHz, one thread); the hold times price no station (0)
LONE_FLOW: dict[str, float] = {"busiest_cpu_share": 1.0, "cpu_ghz": 1.0, "hold_cycles": 0.0,
                               "hold_cycles_cross": 0.0, "cross_socket_fraction": 0.0,
                               "smt_gain": 0.0, "cpus_per_flow": 1.0, "cpus": 1.0, "smt": 1.0}


def _coef(totals: Mapping[str, float], policy: str, slots: int, layout: str | None
          ) -> np.ndarray:
    """Units of each cost parameter per charge of one replay (see the module doc)."""
    if policy != "lru":
        lines = recency_lines("none (random)", slots)
        return coefficients(totals, lines_per_scan=lines.scan_lines, slots=slots) \
            .reindex(list(_PARAMS)).to_numpy()
    r = recency_lines(layout or "none (random)", slots)
    c = coefficients(totals, lines_per_scan=r.scan_lines, slots=slots).reindex(list(_PARAMS))
    n = float(totals["charges"])
    ev, writes = float(totals["evictions"]) / n, float(totals["lru_writes"]) / n
    c["l1_hit"] += r.extra_lines_per_write * (writes + ev)
    c["random_u32"] -= ev
    c["slot_compare"] += slots * ev
    return c.to_numpy()


def coefficient_frame(runs: pd.DataFrame, policy: str, factors: Sequence[str],
                      layout: str | None = None) -> pd.DataFrame:
    """One row per replay of ``policy`` in ``runs``: the ``factors`` columns and the units
    of each cost parameter per charge; LRU pays its victim search and, with ``layout``,
    the lines of its recency state, as the module doc says (``layout=None``: no line)."""
    sub = runs[runs["policy"] == policy]
    if sub.empty:
        raise ValueError(f"runs has no replay of policy={policy!r}")
    rows = []
    for _, r in sub.iterrows():
        totals = {n: float(r[f"ev_{n}"]) for n in EVENT_NAMES}
        rows.append(_coef(totals, policy, int(r["slots"]), layout))
    out = sub[list(factors)].reset_index(drop=True).copy()
    return pd.concat([out, pd.DataFrame(rows, columns=list(_PARAMS))], axis=1)


def pricing_priors(profile: MachineProfile) -> list[Prior]:
    """The cost model's priors from ``profile`` and ``other_cycles``, the work outside memcg
    per charge: the data's constraint where the repository has one
    (:func:`memcglab.studies.common.constraints.other_cycles_for`: the published netperf
    throughput on the multi-memcg thread's machine, or the development-set calibration), else the
    profile's ``other_cycles_per_packet``."""
    missing = [n for n in (*_PARAMS, "other_cycles_per_packet") if n not in profile.priors]
    if missing:
        raise KeyError(f"profile {profile.name} lacks priors {missing}")
    other = replace(profile.priors["other_cycles_per_packet"], name="other_cycles")
    return [profile.priors[n] for n in _PARAMS] + [other_cycles_for(profile, "netperf_rx",
                                                                     other)]


def pricing_space(profile: MachineProfile, alternatives: Mapping[str, Sequence | Alternative],
                  seeds: Sequence[int], layouts: Alternative = RECENCY_LAYOUT) -> Space:
    """:func:`pricing_priors`, the trace's ``alternatives`` (name -> options, the first
    the default, or an :class:`~memcglab.uncertainty.Alternative`), the recency layout
    and the seeds."""
    alts = [v if isinstance(v, Alternative) else Alternative(k, tuple(v))
            for k, v in alternatives.items()]
    return Space(pricing_priors(profile), [*alts, layouts], seeds=list(seeds))


def advantage_fn(runs: pd.DataFrame, factors: Sequence[str],
                 layouts: Sequence[str] = RECENCY_LAYOUT.options, layout_cost: bool = True):
    """The vectorised quantity of one mix: random's advantage over LRU in % (module doc).

    ``runs`` holds that mix's replays of random and LRU at one slot count, with the
    ``factors`` columns; ``layout_cost=False`` leaves the lines of LRU's recency state
    out (its writes and victim search stay).
    """
    factors = tuple(factors)
    rand = CoefficientTable.from_frame(coefficient_frame(runs, "random", factors), factors)
    lru = [CoefficientTable.from_frame(
        coefficient_frame(runs, "lru", factors, lay if layout_cost else None), factors)
        for lay in layouts]

    def fn(d: Draws) -> np.ndarray:
        cr = rand.cycles(d)
        cl = np.stack([t.cycles(d) for t in lru])
        which = d.index[RECENCY_LAYOUT.name] if RECENCY_LAYOUT.name in d.index \
            else np.zeros(d.n, dtype=np.intp)
        lru_cycles = cl[which, np.arange(d.n)]
        point = LONE_FLOW | {"other_cycles": np.asarray(d["other_cycles"], dtype=float)}
        return throughput_change(FlowLoad(flows=1, memcg_cycles=lru_cycles[:, None]),
                                 FlowLoad(flows=1, memcg_cycles=cr[:, None]), point)[:, 0]
    return fn


def _in_band(y: np.ndarray) -> np.ndarray:
    return (y >= CLAIM_BAND[0]) & (y <= CLAIM_BAND[1])


def price_mix(runs: pd.DataFrame, workload: str, profile: MachineProfile,
              alternatives: Mapping[str, Sequence | Alternative], seeds: Sequence[int],
              n: int = 1024
              ) -> UncertainResult:
    """One mix's priced advantage: median, 90% interval, P(1% <= advantage <= 3%), Sobol
    indices, driver and break-even values (threshold 0: where LRU and random swap)."""
    if workload not in FACTORS:
        raise ValueError(f"workload={workload!r}: must be one of {', '.join(FACTORS)}")
    space = pricing_space(profile, alternatives, seeds)
    fn = advantage_fn(runs, FACTORS[workload])
    return summarise(fn, space, n=n, holds=_in_band, threshold=0.0, unit="%")


class RecencyBreakEven(NamedTuple):
    """Where LRU and random swap as a recency write's cost (``percpu_rmw``) moves.

    ``value``: the crossing in cycles, or None in ``[0, high]``; ``at_free`` and
    ``at_high``: random's advantage in % with writes free and at ``high`` cycles.
    """

    value: float | None
    at_free: float
    at_high: float
    high: float

    def describe(self) -> str:
        """``"0.45 cycles"``, or where no crossing is, which policy stays ahead.

        >>> RecencyBreakEven(None, 0.05, 0.4, 20.0).describe()
        'none in 0-20 cycles (random ahead by +0.05% even with free writes)'
        """
        if self.value is not None:
            return f"{self.value:.2f} cycles"
        if self.at_free > 0:
            return (f"none in 0-{self.high:g} cycles (random ahead by {self.at_free:+.3g}% "
                    "even with free writes)")
        return (f"none in 0-{self.high:g} cycles (LRU ahead by {-self.at_high:+.3g}% even "
                f"at {self.high:g} cycles a write)")


def recency_break_even(runs: pd.DataFrame, workload: str, profile: MachineProfile,
                       alternatives: Mapping[str, Sequence | Alternative],
                       seeds: Sequence[int], high: float = SEARCH_HIGH,
                       threshold: float = 0.0) -> dict[str, RecencyBreakEven]:
    """``percpu_rmw`` (the cost of one recency write) where random's advantage over LRU is
    ``threshold`` % (0: where they swap; 1 and 3: where the claim's band starts and ends),
    searched over ``[0, high]`` cycles (beyond the prior), the other inputs typical and the
    seeds averaged: one per recency layout, and ``"writes only"`` with the layout's lines
    left out."""
    space = pricing_space(profile, alternatives, seeds)
    p = space["percpu_rmw"]
    assert isinstance(p, Prior)
    search = Prior("percpu_rmw", p.unit, 0.0, min(max(p.typical, 0.0), high), high, "uniform",
                   "a search range for the break-even, not a prior")
    out: dict[str, RecencyBreakEven] = {}
    factors = FACTORS[workload]
    for lay in (*RECENCY_LAYOUT.options, "writes only"):
        cost = lay != "writes only"
        alt = Alternative(RECENCY_LAYOUT.name, RECENCY_LAYOUT.options,
                          default=lay if cost else RECENCY_LAYOUT.default)
        wide = Space([search if q.name == "percpu_rmw" else q for q in space.priors],
                     [*space.alternatives[:-1], alt], seeds=list(seeds))
        fn = advantage_fn(runs, factors, layout_cost=cost)
        ends = at_fixed(fn, wide, {"percpu_rmw": np.array([0.0, high])})
        out[lay] = RecencyBreakEven(break_even(fn, wide, "percpu_rmw", threshold=threshold),
                                    float(ends[0]), float(ends[1]), high)
    return out
