"""Welch and TOST on the madvise table of "mm/memcontrol, page_counter: move stock from
mem_cgroup to page_counter" (Joshua Hahn, RFC, April 2026), and on simulated trials.

Each returns a tidy table of test statistics; ``finding`` reads them in a few words
("equivalent within +-2%, yet detectably different"). These are statistical tests on
the published numbers (or on a simulation's trials), not verdicts on the model: every
verdict word comes from :func:`memcglab.stats.judge`, which study 3 calls with the
measured differences these tables give (a difference of means with its Welch interval).

>>> v = verdict_003()
>>> v[["cgroups", "equivalent"]].values.tolist()
[[1, True], [4, True], [32, True]]
"""

from __future__ import annotations

import pandas as pd
from scipy import stats

from memcglab.published import load
from memcglab.stats.inference import (
    equivalence_margin,
    hedges_g,
    tost,
    welch,
)

__all__ = ["verdict_003", "verdict_003_simulated"]

_COLS_003 = ["cgroups", "n", "before_ms", "after_ms", "sd_before_ms", "sd_after_ms", "diff_ms",
             "delta_pct", "welch_t", "welch_df", "welch_p", "hedges_g", "margin_pct", "tost_p",
             "equivalent", "min_equiv_margin_pct", "ci90_half_pct", "finding"]


def _word(significant: bool, equivalent: bool, margin_pct: float) -> str:
    if equivalent:
        m = f"equivalent within +-{margin_pct:g}%"
        return m + ", yet detectably different" if significant else m
    return "different" if significant else "inconclusive"


def _ci_half(w, alpha: float) -> float:
    """Half-width of the two-sided (1 - alpha) Welch interval of the difference."""
    return float(stats.t.ppf(1 - alpha / 2, w.df) * w.se)


def _equivalence_rows(stats: list[dict], margin_pct: float, alpha: float) -> pd.DataFrame:
    rows = []
    for r in stats:
        m1, s1, n1, m2, s2, n2 = (r[k] for k in ("m1", "s1", "n1", "m2", "s2", "n2"))
        w = welch(m1, s1, n1, m2, s2, n2)
        t = tost(m1, s1, n1, m2, s2, n2, margin=margin_pct / 100 * abs(m1), alpha=alpha)
        rows.append({
            "cgroups": r["cgroups"], "n": n1, "before_ms": r["before"], "after_ms": r["after"],
            "sd_before_ms": s1, "sd_after_ms": s2, "diff_ms": w.diff,
            "delta_pct": w.diff / m1 * 100, "welch_t": w.t, "welch_df": w.df, "welch_p": w.p,
            "hedges_g": hedges_g(m1, s1, n1, m2, s2, n2), "margin_pct": margin_pct,
            "tost_p": t.p, "equivalent": t.equivalent,
            "min_equiv_margin_pct": equivalence_margin(m1, s1, n1, m2, s2, n2, alpha)
            / abs(m1) * 100,
            "ci90_half_pct": _ci_half(w, 0.10) / abs(m1) * 100,
            "finding": _word(w.p < alpha, t.equivalent, margin_pct),
        })
    return pd.DataFrame(rows, columns=_COLS_003)


def verdict_003(table: pd.DataFrame | None = None, margin_pct: float = 2.0, n: int = 30,
                alpha: float = 0.05, diff_from: str = "delta") -> pd.DataFrame:
    """Welch and TOST per row of the RFC's madvise table, from its published numbers alone.

    Assumptions, because the mail does not say: the one ``stddev`` per row applies to
    both arms, and each arm has ``n`` = 30 observations (the 30 trials). With
    ``diff_from="delta"`` the difference is ``delta_pct * before`` (the author computed
    delta from unrounded means); ``"rounded"`` uses the printed whole milliseconds.
    ``min_equiv_margin_pct`` is the smallest margin, in % of ``before``, at which TOST
    declares equivalence.
    """
    if diff_from not in ("delta", "rounded"):
        raise ValueError(f"diff_from={diff_from!r}: must be 'delta' or 'rounded'")
    t = load("seed003_madvise").frame if table is None else table
    stats = []
    for _, r in t.iterrows():
        m1 = float(r["before_ms"])
        m2 = m1 * (1 + r["delta_pct"] / 100) if diff_from == "delta" else float(r["after_ms"])
        s = float(r["stddev_ms"])
        stats.append({"cgroups": int(r["cgroups"]), "before": m1, "after": float(r["after_ms"]),
                      "m1": m1, "s1": s, "n1": n, "m2": m2, "s2": s, "n2": n})
    return _equivalence_rows(stats, margin_pct, alpha)


def verdict_003_simulated(samples: pd.DataFrame, margin_pct: float = 2.0, alpha: float = 0.05,
                          before: str = "before", after: str = "after") -> pd.DataFrame:
    """The same tests on simulated samples: columns cgroups, arm, value (one row per trial).

    >>> s = pd.DataFrame({"cgroups": 1, "arm": ["before"] * 3 + ["after"] * 3,
    ...                   "value": [10.0, 11.0, 12.0, 10.0, 11.5, 12.5]})
    >>> round(float(verdict_003_simulated(s)["diff_ms"][0]), 3)
    0.333
    """
    need = {"cgroups", "arm", "value"}
    if not need <= set(samples.columns):
        raise ValueError(f"samples needs columns {sorted(need)}; has {list(samples.columns)}")
    arms = set(samples["arm"])
    if not {before, after} <= arms:
        raise ValueError(f"samples arms {sorted(arms)}: need {before!r} and {after!r}")
    g = samples.groupby(["cgroups", "arm"])["value"].agg(["mean", "std", "count"])
    stats = []
    for c in sorted(samples["cgroups"].unique()):
        b, a = g.loc[(c, before)], g.loc[(c, after)]
        stats.append({"cgroups": int(c), "before": b["mean"], "after": a["mean"],
                      "m1": b["mean"], "s1": b["std"], "n1": int(b["count"]),
                      "m2": a["mean"], "s2": a["std"], "n2": int(a["count"])})
    return _equivalence_rows(stats, margin_pct, alpha)
