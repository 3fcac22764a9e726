"""The scoreboard's rows for the report: the registered goals judged, the counts exact.

Issue 17 registered four goals for the leave-one-source-out scoreboard
(``data/validation/rules.md``, "Goals"); :func:`goal_claims` judges each with
:func:`memcglab.stats.judge` (rule kind ``goal``: ``goal met`` / ``goal missed``), so the
report prints them with every other study's claims. :func:`count_rows` gives each case's
exact counts per benchmark operation (walks, charges, uncharges of both kernels), which
come from the replay, not from the pricing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from memcglab.stats import judge
from memcglab.studies.common.rows import claim_row, count_row

__all__ = ["SOURCE", "STUDY", "count_rows", "goal_claims"]

STUDY = "07"
SOURCE = ("issue 17's registered goals for the development set (data/validation/rules.md, "
          "2026-12-01)")


def goal_claims(summary: pd.DataFrame, frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One claim row per registered goal, judged with the goal rule."""
    lab = summary.loc["memcglab"]
    none = summary.loc["no_change", "median_abs_error_pp"]
    law = summary.loc["bottleneck_law", "median_abs_error_pp"]
    half_width = 2 * float(np.median(np.abs(frame["measured_change_pct"])))
    goals = [
        ("leave-one-source-out coverage of at least 80% with a median band width at most "
         "twice the median |measured change|",
         bool(lab["coverage"] >= 0.8 and lab["median_width_pp"] <= half_width),
         f"coverage >= 80%, width <= {half_width:.1f} pp",
         f"coverage {lab['coverage']:.0%}, median width {lab['median_width_pp']:.1f} pp"),
        ("the right sign in every case", bool(lab["sign_accuracy"] == 1.0),
         "sign right in 100% of cases", f"sign right in {lab['sign_accuracy']:.0%}"),
        ("median absolute error at most a third of the no-change baseline's",
         bool(lab["median_abs_error_pp"] <= none / 3), f"<= {none / 3:.1f} pp",
         f"{lab['median_abs_error_pp']:.1f} pp"),
        ("median absolute error below the bottleneck law's",
         bool(lab["median_abs_error_pp"] < law), f"< {law:.1f} pp",
         f"{lab['median_abs_error_pp']:.1f} pp"),
    ]
    rows = []
    for goal, met, target, found in goals:
        v = judge("goal", met=met, goal=goal)
        rows.append(claim_row(goal, SOURCE, target, found, v))
    return rows


def count_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Exact counts per benchmark operation of each case's kernels, from the predictions
    a scoreboard (:func:`memcglab.validation.scoreboard.run`) keeps beside its rows."""
    rows = []
    for case, out in frame["_profile"]:
        for kernel in ("base", "new"):
            for q in ("walks_per_op", "charges_per_op", "uncharges_per_op"):
                rows.append(count_row(STUDY, q.replace("_per_op", " per operation"),
                                      f"{case.case_id}, {kernel} kernel", out[kernel][q]))
    return rows
