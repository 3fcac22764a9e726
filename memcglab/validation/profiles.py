"""Predicted against printed perf shares: the profile goal of issue 22.

The proper-scoring addendum's goal: "predicted perf shares within a factor of 2 of the
printed ones in at least 80% of the printed memcg rows". A row is one printed share of a
function the model profiles, of one case, kernel and table kind, as
:func:`memcglab.validation.scoreboard.profile_frame` pairs it with the prediction (the
median of its 90% band). :func:`profile_comparison` adds the ratio and the verdict per
row; :func:`profile_goal` counts them; :func:`profile_figure` draws them.

A printed ``0.00`` is not a share a factor can be taken of: it is the bound ``share <
0.005`` % (``rules_addendum_2026-12-02b_model_selection.md``, section 3). The goal is
counted on the rows with a printed share above 0, where a factor of 2 is defined; the
printed zeros are counted apart, as consistent with their bound when the predicted
median is below twice it (:data:`ZERO_BOUND_PCT`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["FACTOR", "GOAL_SHARE", "ZERO_BOUND_PCT", "goal_line", "profile_comparison",
           "profile_figure", "profile_goal", "profile_text"]

#: the goal's factor: predicted within [printed / 2, printed x 2]
FACTOR = 2.0
#: the goal's share of printed rows within the factor
GOAL_SHARE = 0.8
#: the share (% of cycles) below which perf prints 0.00 (half its last digit)
ZERO_BOUND_PCT = 0.005


def profile_comparison(profiles: pd.DataFrame) -> pd.DataFrame:
    """``profiles`` (one row per printed share) with ``ratio`` (predicted median over the
    printed share, NaN where perf printed 0.00), ``printed_zero``, ``within`` (the
    factor of 2, or for a printed zero the median below twice its bound) and
    ``in_band`` (the printed share, or its bound, inside the 90% band).

    >>> row = dict(case="c", kernel="new", kind="self", function="f", low=1.0, high=9.0)
    >>> t = profile_comparison(pd.DataFrame([{**row, "measured_pct": 2.0, "median": 3.0},
    ...                                      {**row, "measured_pct": 2.0, "median": 5.0}]))
    >>> t[["ratio", "within", "in_band"]].to_dict("list")
    {'ratio': [1.5, 2.5], 'within': [True, False], 'in_band': [True, True]}
    """
    out = profiles.copy()
    printed, median = out["measured_pct"].astype(float), out["median"].astype(float)
    zero = printed <= 0.0
    ratio = median / printed.where(~zero)
    out["printed_zero"] = zero
    out["ratio"] = ratio
    out["within"] = np.where(zero, median < FACTOR * ZERO_BOUND_PCT,
                             (ratio >= 1.0 / FACTOR) & (ratio <= FACTOR))
    out["in_band"] = np.where(zero, out["low"] < ZERO_BOUND_PCT,
                              (out["low"] <= printed) & (printed <= out["high"]))
    return out.astype({"within": bool, "in_band": bool})


def profile_goal(comparison: pd.DataFrame) -> dict[str, float | int | bool]:
    """The goal counted (module doc): ``rows`` with a printed share above 0, ``within``
    of them, their ``share``, ``met``; ``zero_rows`` and ``zero_within`` apart.

    >>> profile_goal(pd.DataFrame({"printed_zero": [False] * 5 + [True],
    ...                            "within": [True] * 4 + [False, True]}))
    {'rows': 5, 'within': 4, 'share': 0.8, 'met': True, 'zero_rows': 1, 'zero_within': 1}
    """
    zero = comparison["printed_zero"].astype(bool)
    ok = comparison["within"].astype(bool)
    rows, within = int((~zero).sum()), int((ok & ~zero).sum())
    share = within / rows if rows else float("nan")
    return {"rows": rows, "within": within, "share": share,
            "met": bool(rows and share >= GOAL_SHARE), "zero_rows": int(zero.sum()),
            "zero_within": int((ok & zero).sum())}


def goal_line(comparison: pd.DataFrame) -> str:
    """The goal as one line of a conclusion's list (``met``, ``missed`` or ``not judged``).

    >>> goal_line(pd.DataFrame({"printed_zero": [False, False], "within": [True, False]}))[:11]
    '- missed: p'
    >>> goal_line(pd.DataFrame({"printed_zero": [False], "within": [True]})).split("(")[-1]
    'this run: 1 of 1)'
    """
    g = profile_goal(comparison)
    verdict = "not judged" if not g["rows"] else "met" if g["met"] else "missed"
    return (f"- {verdict}: predicted perf shares within a factor of {FACTOR:g} of the printed "
            f"ones in at least {GOAL_SHARE:.0%} of the printed memcg rows (this run: "
            f"{g['within']} of {g['rows']})")


def profile_text(comparison: pd.DataFrame) -> str:
    """:func:`profile_goal` in words, with the rows furthest off."""
    g = profile_goal(comparison)
    if not g["rows"]:
        return "No case of this run has a printed share above 0: the goal is not judged."
    verdict = "met" if g["met"] else "missed"
    text = (f"Goal {verdict}: {g['within']} of {g['rows']} printed memcg rows "
            f"({g['share']:.0%}) have a predicted median within a factor of {FACTOR:g} of "
            f"the printed share (the goal: at least {GOAL_SHARE:.0%}).")
    if g["zero_rows"]:
        text += (f" Of the {g['zero_rows']} rows perf printed as 0.00 (below "
                 f"{ZERO_BOUND_PCT}%), {g['zero_within']} are predicted below "
                 f"{FACTOR * ZERO_BOUND_PCT:g}%.")
    off = comparison[~comparison["printed_zero"] & ~comparison["within"]]
    if len(off):
        high = int((off["ratio"] > 1).sum())
        text += (f" Of the {len(off)} rows outside, {high} are over-predicted "
                 f"(median ratio {off['ratio'].median():.2f}).")
    return text


def profile_figure(comparison: pd.DataFrame):
    """Predicted median (with its 90% band) against the printed share, log axes, one
    point per printed row above 0, the diagonal and the factor-of-2 lines."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    shown = comparison[~comparison["printed_zero"]].copy()
    fig, ax = plt.subplots(figsize=(9.5, 6))
    if shown.empty:
        ax.text(0.5, 0.5, "no printed share above 0", ha="center", transform=ax.transAxes)
    else:
        shown["kernel, table"] = shown["kernel"] + ", " + shown["kind"]
        ax.errorbar(shown["measured_pct"], shown["median"],
                    yerr=[shown["median"] - shown["low"], shown["high"] - shown["median"]],
                    fmt="none", ecolor="0.75", elinewidth=1, zorder=1)
        sns.scatterplot(data=shown, x="measured_pct", y="median", hue="function",
                        style="kernel, table", s=60, ax=ax, zorder=2)
        lo = min(shown["measured_pct"].min(), shown["low"].min()) / 1.5
        hi = max(shown["measured_pct"].max(), shown["high"].max()) * 1.5
        x = np.array([lo, hi])
        ax.plot(x, x, color="grey", lw=1, ls="--", label="predicted = printed", gid="diagonal")
        for f, label in ((FACTOR, f"×{FACTOR:g} and ×1/{FACTOR:g}"), (1 / FACTOR, None)):
            ax.plot(x, x * f, color="grey", lw=1, ls=":", label=label, gid="factor")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("printed perf share (% of cycles)")
    ax.set_ylabel("predicted share (% of cycles, median and 90% interval)")
    fig.tight_layout()
    return fig
