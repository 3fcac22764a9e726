"""Study 6's predictions: each stock's throughput change from the contention model, priced.

For one (workload, machine, baseline, model) the quantity is the change in throughput
per flow, in % of the baseline's (a loss is negative), at the workload's flow count:
each stock's counted load per message (the transfers
:func:`~memcglab.studies.s06_page_counter_stock_v4.counts.count_runs` counted, and its cost-model
units) priced by :func:`memcglab.pricing.throughput_change`. Baseline and model are priced at the
same point: the same hardware costs, the same modelling alternative and the same trace seed, so what
differs is the stock.

The space (:func:`prediction_space`) is :func:`memcglab.pricing.chargepath_space`'s for
the case: the machine profile's hardware priors, the work outside memcg per message
(:data:`memcglab.pricing.OTHER_CYCLES`; netperf_rx takes the profile's), the share of a
flow's cycles on its busiest CPU and the share of shared-line transfers that cross
sockets, with the case's modelling alternatives (where tasks start, where pages are
released or acknowledged) and the trace seeds. The case fixes ``cpus_per_flow``. A case
that is not ``steady`` (:class:`~memcglab.studies.s06_page_counter_stock_v4.counts.Case`) has no
load per message, so its change is exactly 0 and its Sobol indices are undefined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from memcglab.hardware import MachineProfile
from memcglab.pricing import FlowLoad, chargepath_space, group_points, subset, throughput_change
from memcglab.studies.common.constraints import constrained
from memcglab.studies.s06_page_counter_stock_v4.counts import CASES
from memcglab.uncertainty import Space, UncertainResult, summarise

__all__ = ["PAIRS", "PREDICTION_COLUMNS", "change_fn", "prediction_space", "predict",
           "predictions_frame"]

#: (baseline, model) pairs: v4 against v6.16's stock and against the RFC
PAIRS: tuple[tuple[str, str], ...] = (("multi", "pcstock"), ("multi", "pcstock-v4"),
                                      ("pcstock", "pcstock-v4"))
#: columns of predictions.parquet
PREDICTION_COLUMNS: tuple[str, ...] = ("workload", "machine", "baseline", "model",
                                       "predicted_change_pct", "low", "high")


def prediction_space(profile: MachineProfile, case: str, choices: Mapping[str, Sequence],
                     seeds: Sequence[int]) -> Space:
    """The inputs of one case's prediction on one machine (see the module doc); the work
    outside memcg is the data's constraint where the repository has one
    (:func:`memcglab.studies.common.constraints.constrained`)."""
    return constrained(chargepath_space(profile, case, CASES[case].cpus_per_flow, choices,
                                        seeds), profile, case)


def _load(row: pd.Series, cpus_per_flow: int) -> FlowLoad:
    return FlowLoad(flows=int(row["flows"]), coef=row["coef"],
                    shared_names=tuple(row["shared_names"]), shared=tuple(row["shared"]),
                    private=float(row["private"]), cpus_per_flow=cpus_per_flow)


def change_fn(runs: pd.DataFrame, case: str, machine: str, baseline: str, model: str,
              profile: MachineProfile):
    """The vectorised quantity: % change of ``model``'s throughput per flow vs ``baseline``.

    ``runs`` is :func:`~memcglab.studies.s06_page_counter_stock_v4.counts.count_runs`' frame; points
    are grouped by their trace (choice and seed), each group priced in one batch.
    """
    sub = runs[(runs["workload"] == case) & (runs["machine"] == machine)]
    cpf = CASES[case].cpus_per_flow
    loads = {(r["choice"], r["seed"], r["model"]): _load(r, cpf) for _, r in sub.iterrows()}
    alts = list(CASES[case].alternatives)
    if not loads:
        raise ValueError(f"no runs of {case} on {machine}")

    names = sorted(alts)
    varying = [k for k in names if len(CASES[case].alternatives[k]) > 1]

    def fn(d) -> np.ndarray:
        out = np.empty(d.n)
        for values, idx in group_points(d, (*varying, "seed")):
            fixed = dict(zip(varying, values[:-1], strict=True))
            label = ",".join(f"{k}={fixed.get(k, CASES[case].alternatives[k][0])}"
                             for k in names)
            key = (label, int(values[-1]))
            out[idx] = throughput_change(loads[(*key, baseline)], loads[(*key, model)],
                                         subset(d, idx), profile)
        return out
    return fn


def predict(runs: pd.DataFrame, case: str, machine: str, profile: MachineProfile,
            baseline: str, model: str, seeds: Sequence[int], n: int = 256,
            margin_pct: float = 2.0) -> UncertainResult:
    """One pair's priced change; the claim "no loss beyond ``margin_pct``" holds when the
    change is at least ``-margin_pct`` (break-even at that threshold)."""
    space = prediction_space(profile, case, CASES[case].alternatives, seeds)
    fn = change_fn(runs, case, machine, baseline, model, profile)
    return summarise(fn, space, n=n, holds=lambda y: y >= -margin_pct, threshold=-margin_pct,
                     unit="%")


def predictions_frame(results: Mapping[tuple[str, str, str, str], UncertainResult]
                      ) -> pd.DataFrame:
    """predictions.parquet's rows from ``{(workload, machine, baseline, model): result}``."""
    rows = [{"workload": w, "machine": m, "baseline": b, "model": mo,
             "predicted_change_pct": r.median, "low": r.low, "high": r.high}
            for (w, m, b, mo), r in results.items()]
    return pd.DataFrame(rows, columns=list(PREDICTION_COLUMNS))
