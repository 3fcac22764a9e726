"""The proper-rule table in words: issue 22's goals, and what giving the base run does.

:func:`skill_goals` judges the goals the proper-scoring addendum registered
(``rules_addendum_2026-12-02_proper_scoring.md``, "Goals") on
:func:`memcglab.validation.proper.proper_run`'s tables; the profile goal is
:mod:`memcglab.validation.profiles`', and the 30 s per scenario is not timed here.
:func:`conditioning_frame` sets memcglab beside ``memcglab+measured`` case by case
(addendum b, section 4: each point's work outside memcg solved from the source's printed
base throughput, the points weighted by its printed base profile), with the share of
points where no work outside memcg can meet the printed throughput;
:func:`conditioning_text` says what that did.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from memcglab.scenario.predict import scenario_draws
from memcglab.validation.baselines import BASELINES
from memcglab.validation.proper import MEASURED, base_measured

__all__ = ["LAW_MARGIN", "conditioning_frame", "conditioning_text", "skill_goals", "skill_text"]

#: the goal's margin over the bottleneck law: at least 25% lower
LAW_MARGIN = 0.25


def skill_goals(table: pd.DataFrame, scores: pd.DataFrame) -> list[tuple[str, bool, str]]:
    """(goal, met, this run's value) for each of issue 22's scoring goals, from
    :func:`~memcglab.validation.proper.proper_summary`'s ``table`` and the per-case
    ``scores`` of :func:`~memcglab.validation.proper.proper_frame`."""
    lab = table.loc["memcglab"]
    fair = {b.name: float(table.loc[b.name, "interval_score"]) for b in BASELINES}
    best = min(fair, key=fair.get)
    law = fair["bottleneck_law"]
    rows = scores[scores["method"] == "memcglab"]
    median_change = float(np.median(np.abs(rows["measured_change_pct"])))
    clear = rows[rows["measured_change_pct"].abs() > rows["noise_pct"]]
    return [
        (f"mean interval score per source below every fair baseline's (the best: {best}, "
         f"{fair[best]:.3f})", bool(lab["interval_score"] < fair[best]),
         f"{lab['interval_score']:.3f}"),
        (f"at least {LAW_MARGIN:.0%} below the bottleneck law's ({law:.3f}, so at most "
         f"{(1 - LAW_MARGIN) * law:.3f})",
         bool(lab["interval_score"] <= (1 - LAW_MARGIN) * law), f"{lab['interval_score']:.3f}"),
        (f"median band width no larger than the median measured change in magnitude "
         f"({median_change:.1f} pp)", bool(lab["median_width_pp"] <= median_change),
         f"{lab['median_width_pp']:.1f} pp"),
        ("coverage of at least 80%", bool(lab["coverage"] >= 0.8), f"{lab['coverage']:.0%}"),
        (f"the right sign in every case whose measured change exceeds its noise "
         f"({len(clear)} cases)", bool(clear["sign_right"].all()),
         f"{int(clear['sign_right'].sum())} of {len(clear)}"),
    ]


def skill_text(table: pd.DataFrame, scores: pd.DataFrame) -> str:
    """:func:`skill_goals` as a Markdown list."""
    return "\n".join(f"- {'met' if ok else 'missed'}: {what} (this run: {value})"
                     for what, ok, value in skill_goals(table, scores))


def conditioning_frame(frame: pd.DataFrame, folds: Mapping, scores: pd.DataFrame,
                       models: Mapping, points: int, seed: int) -> pd.DataFrame:
    """Per case of the scoreboard ``frame``: whether its source prints the base run, the
    share of points where the charge path alone runs slower than that run (``unmet``),
    and memcglab's and memcglab+measured's interval score, band width and inside, read
    from the per-case ``scores``; ``models`` by case ID, as the scoreboard priced them."""
    by = scores.set_index(["method", "case"])
    rows = []
    for r in frame.itertuples():
        measured = base_measured(models[r.case])
        unmet = np.nan
        if measured is not None:
            sd = scenario_draws(models[r.case].model.with_measured(measured), points, seed,
                                folds[r.source].calibration, with_profile=False)
            unmet = _unmet(sd.conditioning)
        lab, given = by.loc[("memcglab", r.case)], by.loc[(MEASURED, r.case)]
        rows.append({"case": r.case, "source": r.source, "base_printed": measured is not None,
                     "profile_printed": bool(measured is not None and measured.profile),
                     "unmet": unmet, "measured_change_pct": lab["measured_change_pct"],
                     "median": lab["median"], "median_measured": given["median"],
                     "interval_score": lab["interval_score"],
                     "interval_score_measured": given["interval_score"],
                     "width_pp": lab["width_pp"], "width_pp_measured": given["width_pp"],
                     "inside": bool(lab["inside"]), "inside_measured": bool(given["inside"])})
    return pd.DataFrame(rows)


def _unmet(conditioning: str) -> float:
    """The share of points ``scenario_draws``' conditioning text reports unmet (0 if met).

    >>> _unmet("met"), _unmet("unmet: at 62% of the points the charge path alone, ...")
    (0.0, 0.62)
    """
    if not conditioning.startswith("unmet"):
        return 0.0
    return float(conditioning.split("at ", 1)[1].split("%", 1)[0]) / 100.0


def _cases(frame: pd.DataFrame) -> str:
    return ", ".join(frame["case"]) if len(frame) else "none"


def conditioning_text(cf: pd.DataFrame, table: pd.DataFrame) -> str:
    """What :func:`conditioning_frame`'s rows say (module doc), with the means over
    sources from :func:`~memcglab.validation.proper.proper_summary`'s ``table``."""
    given = cf[cf["base_printed"]]
    worse = given[given["interval_score_measured"] > given["interval_score"]]
    wider = worse[worse["width_pp_measured"] > worse["width_pp"]]
    narrower = worse[worse["width_pp_measured"] <= worse["width_pp"]]
    a, b = table.loc["memcglab", "interval_score"], table.loc[MEASURED, "interval_score"]
    lines = [f"Given the base run where the source prints it ({len(given)} of {len(cf)} "
             f"cases), the mean interval score over sources goes from {a:.3f} to {b:.3f} "
             f"({'worse' if b > a else 'better'}); {len(worse)} of those {len(given)} cases "
             "score worse."]
    unmet = wider[wider["unmet"] > 0]
    if len(wider):
        lines.append(
            f"In {len(wider)} ({_cases(wider)}) the band widens (median width "
            f"{wider['width_pp'].median():.0f} pp without, "
            f"{wider['width_pp_measured'].median():.0f} pp with)"
            + (f"; in {len(unmet)} of them, at {unmet['unmet'].min():.0%} to "
               f"{unmet['unmet'].max():.0%} of the points, the model's charge path alone, "
               "with no work outside memcg, already runs slower than the printed base "
               "throughput, so those points keep one cycle of other work and their change "
               "is the charge path's own: there the model prices the charge path too "
               "dear."
               if len(unmet) else "."))
    if len(narrower):
        nearer = narrower[(narrower["median_measured"].abs() < narrower["median"].abs())
                          & (narrower["median_measured"].abs()
                             < narrower["measured_change_pct"].abs())]
        lost = narrower[narrower["inside"] & ~narrower["inside_measured"]]
        weighted = narrower[narrower["profile_printed"]]
        text = (f"In {len(narrower)} ({_cases(narrower)}) the band narrows (median width "
                f"{narrower['width_pp'].median():.1f} pp without, "
                f"{narrower['width_pp_measured'].median():.1f} pp with)")
        if len(nearer):
            text += (f" and in {len(nearer)} of them its median moves nearer to no change, "
                     "further from the measured change: the work outside memcg that the "
                     "printed throughput implies leaves the charge path too small a share "
                     "of each operation for the measured change")
        if len(weighted):
            text += (f"; where the source prints the base profile too ({_cases(weighted)}) "
                     "its weights narrow the band further")
        if len(lost):
            text += (f"; {len(lost)} band{'s' if len(lost) != 1 else ''} that held the "
                     f"measurement no longer {'do' if len(lost) != 1 else 'does'}")
        lines.append(text + ".")
    if len(wider) and len(narrower):
        lines.append("The printed throughput pulls the bands both ways, by source; both "
                     "point at the model's absolute price of the charge path, whose scale "
                     "the calibration fits only relative to the prior on the work outside "
                     "memcg (docs/prediction.md).")
    return " ".join(lines)
