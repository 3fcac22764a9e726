"""What notebook 07 shows of a scoreboard: predicted against measured, and the misses.

* :func:`figure`: every case's measured change (± its noise) against the prediction's
  median and 90% band, the diagonal of perfect agreement, every case labelled;
* :func:`miss_table`: the cases whose band does not hold the measurement widened by its
  noise, each with the gap and :func:`what_it_would_take`: the hold time per transfer
  that would make the fold's calibrated model (at its posterior mode) give the measured
  change, or that no hold time does (then the miss points to a mechanism or a count the
  model lacks, not to the price of a transfer);
* :func:`summary_text`: the summary and the goals of ``data/validation/rules.md`` in
  words, from this run's numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize

from memcglab.validation.dataset import CaseModel, case_models, priced_cases

__all__ = ["case_table", "figure", "miss_table", "summary_text", "what_it_would_take"]


def _short(case: str) -> str:
    source, _, name = case.partition("/")
    return {"multi_memcg_stock": "multi-memcg", "page_counter_stock_rfc": "pcstock RFC",
            "sk_forward_alloc_regression": "sk_forward_alloc",
            "optimize_charge_codepath": "optimize charge",
            "stock_refill_regression": "stock refill"}.get(source, source) + " " + name


def case_table(frame: pd.DataFrame) -> str:
    """One Markdown row per case: measured, predicted, inside, sign, the baselines."""
    rows = ["| case | measured ± noise | memcglab median [90%] | inside | sign | no change | "
            "inverse cycles | bottleneck law |", "|---|---|---|---|---|---|---|---|"]
    for r in frame.itertuples():
        law = "—" if pd.isna(r.bottleneck_law) else f"{r.bottleneck_law:+.1f}"
        rows.append(f"| {r.case} | {r.measured_change_pct:+.2f} ± {r.noise_pct:.2f} | "
                    f"{r.median:+.2f} [{r.low:+.2f}, {r.high:+.2f}] | "
                    f"{'yes' if r.inside else 'no'} | {'yes' if r.sign_right else 'no'} | "
                    f"{r.no_change:+.1f} | {r.inverse_cycles:+.2f} | {law} |")
    return "\n".join(rows)


def figure(frame: pd.DataFrame):
    """Predicted (median, 90% band) against measured (± noise), log-ratio axes."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(8, 7))
    palette = dict(zip(sorted(frame["source"].unique()),
                       sns.color_palette("colorblind", frame["source"].nunique()),
                       strict=True))
    for r in frame.itertuples():
        colour = palette[r.source]
        ax.errorbar(r.measured_change_pct, r.median, xerr=r.noise_pct,
                    yerr=[[r.median - r.low], [r.high - r.median]], fmt="o", color=colour,
                    capsize=3, alpha=0.85, label=r.source)
        ax.annotate(_short(r.case), (r.measured_change_pct, r.median), fontsize=7,
                    xytext=(4, 4), textcoords="offset points")
    lo = min(frame["measured_change_pct"].min(), frame["low"].min(), -100.0)
    hi = max(frame["measured_change_pct"].max(), frame["median"].max()) * 1.1 + 5
    ax.plot([lo, hi], [lo, hi], color="grey", lw=1, ls="--", label="predicted = measured")
    ax.set_yscale("symlog", linthresh=5.0)
    ax.set_xscale("symlog", linthresh=5.0)
    ax.set_xlabel("measured change in operations per second (%, ± stated or declared noise)")
    ax.set_ylabel("predicted change (%, median and 90% interval)")
    handles, labels = ax.get_legend_handles_labels()
    seen = dict(zip(labels, handles, strict=True))
    ax.legend(seen.values(), seen.keys(), fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def what_it_would_take(model: CaseModel, mode: dict[str, float]) -> str:
    """The hold time per transfer at which the model, at ``mode``, gives the measured change."""
    measured = model.case.measured_change_pct
    theta = {k: np.array([v]) for k, v in mode.items()}
    scale = mode["hold_scale"]

    def gap(log_factor: float) -> float:
        t = dict(theta)
        t["hold_scale"] = np.array([scale * np.exp(log_factor)])
        return float(model.change_pct(t)[0]) - measured

    grid = np.linspace(-4.0, 4.0, 33)
    values = [gap(g) for g in grid]
    for a, b, va, vb in zip(grid[:-1], grid[1:], values[:-1], values[1:], strict=True):
        if va == 0 or va * vb < 0:
            root = optimize.brentq(gap, a, b, xtol=1e-3) if va != 0 else a
            return (f"hold time x{np.exp(root):.2g} of the calibrated one "
                    "(the other inputs at the fold's mode)")
    reach = (min(values) + measured, max(values) + measured)
    return (f"no hold time from x1/55 to x55 reaches it (the model spans "
            f"{reach[0]:+.1f}% to {reach[1]:+.1f}%): a count or a mechanism the model lacks")


def miss_table(frame: pd.DataFrame, folds: dict | None = None) -> pd.DataFrame:
    """The cases outside their band, with the gap and what it would take."""
    misses = frame[~frame["inside"].astype(bool)].copy()
    if misses.empty:
        return pd.DataFrame(columns=["case", "measured", "predicted", "gap_pp",
                                     "what it would take"])
    models = {m.case.case_id: m for m in case_models(priced_cases())}
    rows = []
    for r in misses.itertuples():
        gap = r.measured_change_pct - (r.high if r.measured_change_pct > r.high else r.low)
        take = ""
        if folds is not None and r.source in folds:
            take = what_it_would_take(models[r.case], folds[r.source].calibration.calibration.mode)
        rows.append({"case": r.case,
                     "measured": f"{r.measured_change_pct:+.2f} ± {r.noise_pct:.2f}",
                     "predicted": f"{r.median:+.2f} [{r.low:+.2f}, {r.high:+.2f}]",
                     "gap_pp": round(float(gap), 2), "what it would take": take})
    return pd.DataFrame(rows)


def summary_text(summary: pd.DataFrame, frame: pd.DataFrame) -> str:
    """The summary against the registered goals, in words."""
    lab = summary.loc["memcglab"]
    med_measured = float(np.median(np.abs(frame["measured_change_pct"])))
    goals = [
        ("coverage of at least 80%", lab["coverage"] >= 0.8, f"{lab['coverage']:.0%}"),
        ("median band width at most twice the median |measured change| "
         f"({2 * med_measured:.1f} pp)", lab["median_width_pp"] <= 2 * med_measured,
         f"{lab['median_width_pp']:.1f} pp"),
        ("the right sign in every case", lab["sign_accuracy"] == 1.0,
         f"{lab['sign_accuracy']:.0%}"),
        ("median absolute error at most a third of no change's "
         f"({summary.loc['no_change', 'median_abs_error_pp'] / 3:.1f} pp)",
         lab["median_abs_error_pp"] <= summary.loc["no_change", "median_abs_error_pp"] / 3,
         f"{lab['median_abs_error_pp']:.1f} pp"),
        ("and below the bottleneck law's "
         f"({summary.loc['bottleneck_law', 'median_abs_error_pp']:.1f} pp)",
         lab["median_abs_error_pp"] < summary.loc["bottleneck_law", "median_abs_error_pp"],
         f"{lab['median_abs_error_pp']:.1f} pp"),
    ]
    lines = [f"- {'met' if ok else 'missed'}: {what} (this run: {value})"
             for what, ok, value in goals]
    return (f"Over {int(lab['cases'])} cases, predicted leave one source out:\n\n"
            + "\n".join(lines))
