"""Study 6's same-CPU check: seed 003's madvise loop, pcstock-v4 against the multi stock.

The series' own benchmark faults and zaps anonymous pages with 1, 4 and 32 cgroups,
30 trials of 50 iterations (seed 003). This module replays it trial by trial through
the multi stock and ``pcstock-v4`` with study 3's machinery
(:mod:`memcglab.studies.pcstock_study`: a trial's time is its faults' charge-path
cycles plus the work outside memcg), at 50 iterations per trial and at 15, and tests
equivalence with study 3's TOST (:func:`memcglab.stats.verdict_003_simulated`).

>>> df = run(cgroups=(1,), trials=2, iterations=(2,), region_pages=64)
>>> sorted(df["model"].unique()), len(df)
(['multi', 'pcstock-v4'], 4)
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from memcglab.stats import verdict_003_simulated
from memcglab.studies.pcstock_study import PcstockParams, _trials

__all__ = ["BEFORE", "AFTER", "run", "tost"]

BEFORE, AFTER = "multi", "pcstock-v4"


def run(cgroups: Sequence[int] = (1, 4, 32), trials: int = 30,
        iterations: Sequence[int] = (50, 15), region_pages: int = 256,
        fault_cycles: float = 2500.0) -> pd.DataFrame:
    """One row per (iterations, cgroups, model, trial): study 3's trial metrics."""
    if trials < 2:
        raise ValueError(f"trials={trials}: the equivalence test needs at least 2")
    frames = []
    for it in iterations:
        if it < 1:
            raise ValueError(f"iterations={it}: must be >= 1")
        p = PcstockParams(cgroups=tuple(cgroups), trials=trials, iterations=int(it),
                          region_pages=region_pages, fault_cycles=fault_cycles)
        rows = [r for c in p.cgroups for model in (BEFORE, AFTER) for r in _trials(p, c, model)]
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
