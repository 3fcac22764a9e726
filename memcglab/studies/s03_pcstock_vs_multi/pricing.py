"""Study 3's priced predictions, each with its 90% interval, driver and break-even.

**The netperf mix** (no published number: the lab's own prediction). The quantity is
the change in throughput per flow of the RFC's stock against the multi stock, in %
(a loss is negative), at the largest client count: each stock's counted load per
message (the shared page_counter usage lines' transfers that
:func:`~memcglab.studies.s03_pcstock_vs_multi.counts.count_runs` counted, and its cost-model units)
priced by the pricing core (:func:`memcglab.pricing.throughput_change`, the drawn names
mapped by :func:`memcglab.pricing.core_inputs`: the hold time per transfer is the drawn
``c2c_transfer``). Both stocks are priced at the same point: the same hardware costs,
the same scenario and the same trace seed. The
space is :func:`memcglab.pricing.chargepath_space`'s for ``netperf_rx`` on the multi-memcg thread's
72-CPU profile (its hardware priors, ``other_cycles_per_packet``, SMT gain,
cross-socket share, busiest-CPU share) with this study's scenario axes as
alternatives (:data:`~memcglab.studies.s03_pcstock_vs_multi.counts.ALTERNATIVES`). A pair that
shares a CPU and moves together keeps one hardware thread busy (``cpus_per_flow``
1, all its cycles on that CPU); every other flow keeps two.

:func:`cycles_change_fn` prices the older, narrower quantity, charge-path cycles per
packet (``c2c_transfer`` included), to show what the throughput model changes.

**The madvise loop.** :func:`madvise_change_fn`: the change in a trial's CPU time,
``(charge-path cycles + fault_cycles) x faults``, in % of the multi stock's, over the
the page_counter-stock RFC 40-CPU profile's cost priors and a prior on the fault's other work, with
the trials as the seed factor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from memcglab.cost import CostParams
from memcglab.hardware import MachineProfile
from memcglab.pricing import (
    OTHER_CYCLES,
    FlowLoad,
    charge_cycles,
    chargepath_space,
    core_inputs,
    group_points,
    subset,
    throughput_change,
)
from memcglab.studies.common.constraints import constrained
from memcglab.studies.s03_pcstock_vs_multi.counts import ALTERNATIVES, MODELS_COMPARED, Scenario
from memcglab.uncertainty import (
    Alternative,
    Draws,
    Prior,
    Space,
    UncertainResult,
    at_fixed,
    summarise,
)

__all__ = ["C2C", "FAULT_CYCLES", "c2c_sweep", "cycles_change_fn", "madvise_change_fn",
           "madvise_space", "netperf_space", "predict_netperf", "throughput_change_fn"]

#: the prior whose break-even the conclusion quotes
C2C = "c2c_transfer"
BEFORE, AFTER = MODELS_COMPARED


def netperf_space(profile: MachineProfile, choices: Mapping[str, Sequence[str]],
                  seeds: Sequence[int]) -> Space:
    """Priors of :func:`memcglab.pricing.chargepath_space` for netperf_rx,
    every axis of ``choices`` (a subset of ``ALTERNATIVES``' options, one or more each)
    as an alternative, and the seeds."""
    unknown = [k for k in choices if k not in ALTERNATIVES]
    if unknown:
        raise ValueError(f"choices: unknown axes {unknown}; valid: {', '.join(ALTERNATIVES)}")
    for k, v in choices.items():
        bad = [o for o in v if o not in ALTERNATIVES[k]]
        if not v or bad:
            raise ValueError(f"choices[{k!r}]={list(v)}: need options from "
                             f"{list(ALTERNATIVES[k])}")
    # busiest_cpu_share is drawn for two CPUs per flow; a one-CPU scenario ignores it; the
    # work outside memcg per message is the data's constraint where there is one
    base = constrained(chargepath_space(profile, "netperf_rx", 2, {}, seeds), profile,
                       "netperf_rx")
    full = {k: tuple(choices.get(k, ALTERNATIVES[k][:1])) for k in ALTERNATIVES}
    return Space(list(base.priors), [Alternative(k, v) for k, v in full.items()], seeds=seeds)


def _table(runs: pd.DataFrame, clients: int) -> dict[tuple, pd.Series]:
    sub = runs[runs["clients"] == clients]
    if sub.empty:
        raise ValueError(f"clients={clients}: no runs; client counts: "
                         f"{sorted(set(runs['clients']))}")
    return {(r["release"], r["placement"], r["migrate"], int(r["seed"]), r["model"]): r
            for _, r in sub.iterrows()}


def _groups(d: Draws):
    """Points grouped by (scenario, seed): yields (Scenario, seed, indices)."""
    for values, idx in group_points(d, (*ALTERNATIVES, "seed")):
        yield Scenario(*values[:3]), int(values[3]), idx


def _cost(d: Mapping[str, np.ndarray]) -> np.ndarray:
    return np.column_stack([np.asarray(d[n], dtype=float) for n in CostParams.names()])


def _load(row: pd.Series, d: Mapping[str, np.ndarray]) -> FlowLoad:
    """One stock's counted load, its charge-path cycles at the points ``d``."""
    return FlowLoad(flows=int(row["clients"]), memcg_cycles=charge_cycles(row["coef"], d)[:, None],
                    shared_names=tuple(row["shared_names"]), shared=tuple(row["shared"]),
                    private=float(row["private_per_msg"]))


def throughput_change_fn(runs: pd.DataFrame, profile: MachineProfile, clients: int):
    """The vectorised quantity: % change of pcstock's throughput per flow vs multi's."""
    table = _table(runs, clients)

    def fn(d: Draws) -> np.ndarray:
        out = np.empty(d.n)
        for case, seed, idx in _groups(d):
            sub = subset(d, idx)
            key = (case.release, case.placement, case.migrate, seed)
            point = core_inputs(sub, profile, case.cpus_per_flow)
            out[idx] = throughput_change(_load(table[(*key, BEFORE)], sub),
                                         _load(table[(*key, AFTER)], sub), point)[:, 0]
        return out
    return fn


def cycles_change_fn(runs: pd.DataFrame, clients: int):
    """The vectorised quantity: % change of charge-path cycles per packet, pcstock vs
    multi, line transfers priced at ``c2c_transfer`` (the first study's measure)."""
    table = _table(runs, clients)

    def fn(d: Draws) -> np.ndarray:
        out = np.empty(d.n)
        for case, seed, idx in _groups(d):
            cost = _cost({k: np.asarray(d[k])[idx] for k in CostParams.names()})
            key = (case.release, case.placement, case.migrate, seed)
            base = cost @ np.asarray(table[(*key, BEFORE)]["coef"], dtype=float)
            new = cost @ np.asarray(table[(*key, AFTER)]["coef"], dtype=float)
            out[idx] = (new / base - 1.0) * 100.0
        return out
    return fn


def predict_netperf(runs: pd.DataFrame, profile: MachineProfile,
                    choices: Mapping[str, Sequence[str]], seeds: Sequence[int], clients: int,
                    n: int = 1024, margin_pct: float = 2.0, quantity: str = "throughput"
                    ) -> UncertainResult:
    """One priced change over ``choices`` (one scenario, or several drawn jointly).

    The claim "negligible" holds when the change lies within ``+-margin_pct``; the
    break-even is where the change crosses ``-margin_pct`` (a loss stops being
    negligible) for ``quantity="throughput"``, ``+margin_pct`` for ``"cycles"``.
    """
    space = netperf_space(profile, choices, seeds)
    if quantity == "throughput":
        fn, threshold = throughput_change_fn(runs, profile, clients), -margin_pct
    elif quantity == "cycles":
        fn, threshold = cycles_change_fn(runs, clients), margin_pct
    else:
        raise ValueError(f"quantity={quantity!r}: must be 'throughput' or 'cycles'")
    return summarise(fn, space, n=n, holds=lambda y: np.abs(y) <= margin_pct,
                     threshold=threshold, unit="%")


def c2c_sweep(runs: pd.DataFrame, profile: MachineProfile,
              choices: Mapping[str, Sequence[str]], seeds: Sequence[int], clients: int,
              values: Sequence[float]) -> np.ndarray:
    """The throughput change at ``c2c_transfer`` = each of ``values`` (outside its prior
    too), the other inputs typical and the seeds averaged: where the break-even would
    be if it is not inside the prior."""
    space = netperf_space(profile, choices, seeds)
    fn = throughput_change_fn(runs, profile, clients)
    return at_fixed(fn, space, {C2C: np.asarray(values, dtype=float)})


#: the madvise loop's work outside memcg per fault (study 6's prior, named for this study)
FAULT_CYCLES = Prior("fault_cycles", "cycles", OTHER_CYCLES["madvise_fault"].low,
                     OTHER_CYCLES["madvise_fault"].typical, OTHER_CYCLES["madvise_fault"].high,
                     OTHER_CYCLES["madvise_fault"].shape, OTHER_CYCLES["madvise_fault"].source)


def madvise_space(profile: MachineProfile, trials: Sequence[int]) -> Space:
    """The profile's cost priors, :data:`FAULT_CYCLES`, and the trials as the seed factor."""
    priors = [profile.priors[n] for n in CostParams.names()] + [FAULT_CYCLES]
    return Space(priors, seeds=list(trials))


def madvise_change_fn(trials: pd.DataFrame, cgroups: int):
    """% change of a trial's CPU time, pcstock vs multi, at ``cgroups`` cgroups.

    ``trials`` has one row per (cgroups, model, sample) with ``coef`` (cost units per
    fault) and ``charges``; a point's seed picks the trial, priced for both stocks.
    """
    sub = trials[trials["cgroups"] == cgroups]
    if sub.empty:
        raise ValueError(f"cgroups={cgroups}: no trials; cgroups: {sorted(set(trials['cgroups']))}")
    rows = {(int(r["sample"]), r["model"]): r for _, r in sub.iterrows()}

    def fn(d: Draws) -> np.ndarray:
        cost, fault = _cost(d), np.asarray(d["fault_cycles"], dtype=float)
        out = np.empty(d.n)
        seeds = np.asarray(d["seed"]).astype(int)
        for t in np.unique(seeds):
            idx = np.flatnonzero(seeds == t)
            time = {}
            for model in MODELS_COMPARED:
                r = rows[(int(t), model)]
                per = cost[idx] @ np.asarray(r["coef"], dtype=float) + fault[idx]
                time[model] = per * float(r["charges"])
            out[idx] = (time[AFTER] / time[BEFORE] - 1.0) * 100.0
        return out
    return fn
