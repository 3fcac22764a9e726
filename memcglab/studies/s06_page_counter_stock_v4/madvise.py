"""Study 6's same-CPU check: the RFC's madvise loop, pcstock-v4 against the multi stock.

The series' own benchmark faults and zaps anonymous pages with 1, 4 and 32 cgroups, 30
trials of 50 iterations (the page_counter-stock RFC). This module replays it trial by
trial through the multi stock and ``pcstock-v4`` as study 3 does (one
:class:`~memcglab.engine.Engine` fed one trial at a time, so stocks carry over between
trials; a trial's time is its faults' charge-path cycles from :mod:`memcglab.cost` plus
``fault_cycles`` per fault),
at 50 iterations per trial and at 15, and tests equivalence with study 3's TOST
(:func:`memcglab.stats.verdict_003_simulated`).

>>> df = run(cgroups=(1,), n_trials=2, iterations=(2,), region_pages=64)
>>> sorted(df["model"].unique()), len(df)
(['multi', 'pcstock-v4'], 4)
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from memcglab.stats import verdict_003_simulated
from memcglab.studies.common.measure import metrics, trial_counts
from memcglab.workloads import MadviseFaultSpec

__all__ = ["BEFORE", "AFTER", "run", "tost", "trials"]

BEFORE, AFTER = "multi", "pcstock-v4"


def trials(spec: MadviseFaultSpec, model: str, fault_cycles: float = 2500.0,
           cpu_hz: float = 2.5e9) -> list[dict]:
    """Replay ``spec``'s loop trial by trial through ``model``: one row per trial with
    :func:`memcglab.studies.common.measure.metrics` and ``trial_ms`` (CPU ms of its faults)."""
    rows = []
    for t, counted in enumerate(trial_counts(spec, model)):
        m = metrics(counted, model)
        ms = (m["cycles_per_op"] + fault_cycles) * m["charges"] / cpu_hz * 1e3
        rows.append({"cgroups": spec.cgroups, "sample": t, "model": model, **m,
                     "trial_ms": ms})
    return rows


def run(cgroups: Sequence[int] = (1, 4, 32), n_trials: int = 30,
        iterations: Sequence[int] = (50, 15), region_pages: int = 256,
        fault_cycles: float = 2500.0) -> pd.DataFrame:
    """One row per (iterations, cgroups, model, trial): :func:`trials` for the RFC's
    loop (MadviseFaultSpec's defaults: 40 CPUs, spread placement) at each ``iterations``."""
    if n_trials < 2:
        raise ValueError(f"n_trials={n_trials}: the equivalence test needs at least 2")
    frames = []
    for it in iterations:
        if it < 1:
            raise ValueError(f"iterations={it}: must be >= 1")
        specs = [MadviseFaultSpec(cgroups=int(c), trials=n_trials, iterations=int(it),
                                  region_pages=region_pages) for c in cgroups]
        rows = [r for spec in specs for model in (BEFORE, AFTER)
                for r in trials(spec, model, fault_cycles)]
        frames.append(pd.DataFrame(rows).assign(iterations=int(it)))
    return pd.concat(frames, ignore_index=True)


def tost(df: pd.DataFrame, margin_pct: float = 2.0) -> pd.DataFrame:
    """Welch and TOST per (iterations, cgroups) on CPU ms per trial, v4 vs multi."""
    out = []
    for it, part in df.groupby("iterations", sort=False):
        s = pd.DataFrame({"cgroups": part["cgroups"], "arm": part["model"],
                          "value": part["trial_ms"]})
        v = verdict_003_simulated(s, margin_pct, before=BEFORE, after=AFTER)
        v.insert(0, "iterations", int(it))
        out.append(v)
    return pd.concat(out, ignore_index=True)
