"""The verdicts the notebooks show for seeds 003 and 004 and the LRU-vs-random claim.

Each returns a tidy table. Seed 004's regression and the LRU-vs-random claim are judged
only on intervals that carry the hardware priors, by the pre-registered rules
(:func:`memcglab.stats.verdict_rules.judge`); the earlier verdicts on seed-only
intervals were retired, because under those rules they decide nothing. The published
side comes from ``memcglab.published``; the simulated side is passed in (samples over
seeds or trials, or a priced interval), so every verdict can be computed from hand-made
inputs. Seed 000's fit is in ``memcglab.stats.netperf_fit``;
study 1 judges it.

>>> v = verdict_003()
>>> v[["cgroups", "equivalent"]].values.tolist()
[[1, True], [4, True], [32, True]]
"""

from __future__ import annotations

import pandas as pd

from memcglab.published import load
from memcglab.stats.inference import (
    equivalence_margin,
    hedges_g,
    tost,
    welch,
)
from memcglab.stats.verdict_rules import judge

__all__ = ["verdict_003", "verdict_003_simulated", "verdict_004_rules",
           "verdict_lru_random_rules"]

_COLS_003 = ["cgroups", "n", "before_ms", "after_ms", "sd_before_ms", "sd_after_ms", "diff_ms",
             "delta_pct", "welch_t", "welch_df", "welch_p", "hedges_g", "margin_pct", "tost_p",
             "equivalent", "min_equiv_margin_pct", "verdict"]


def _word(significant: bool, equivalent: bool, margin_pct: float) -> str:
    if equivalent:
        m = f"equivalent within +-{margin_pct:g}%"
        return m + ", yet detectably different" if significant else m
    return "different" if significant else "inconclusive"


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
            "verdict": _word(w.p < alpha, t.equivalent, margin_pct),
        })
    return pd.DataFrame(rows, columns=_COLS_003)


def verdict_003(table: pd.DataFrame | None = None, margin_pct: float = 2.0, n: int = 30,
                alpha: float = 0.05, diff_from: str = "delta") -> pd.DataFrame:
    """Welch and TOST per row of seed 003's table, from its published numbers alone.

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


def verdict_004_rules(regression, fixed_gap=None) -> pd.DataFrame:
    """Seed 004's regression and fix judged by the pre-registered rules
    (:func:`memcglab.stats.verdict_rules.judge`).

    ``regression`` and ``fixed_gap`` are priced predictions in % with ``median``,
    ``low``, ``high``, ``coverage``, ``sources`` and ``as_claim_columns()`` (a
    :class:`memcglab.uncertainty.UncertainResult`): the blamed layout's loss against the
    parent, and the fixed layout's. The regression is a ``difference`` claim (blamed
    minus parent) at the published 4.38%; "within 0.5% of the parent" is a ``value``
    claim with the band [-0.5, 0.5]%. The boot-to-boot spread (up to 1.2%) is reported
    beside, not folded into the bands.
    """
    q = load("seed004_false_sharing").frame.set_index("quantity")["value"]
    pub, noise, gap = (float(q[k]) for k in ("median_mremap_throughput_regression",
                                             "boot_to_boot_spread", "fixed_gap_to_parent"))
    rows = []
    for name, pred, kind, band in (("regression", regression, "difference", (pub, pub)),
                                   ("fixed_gap", fixed_gap, "value", (-gap, gap))):
        if pred is None:
            continue
        v = judge(kind, band[0], band[1], interval=pred)
        cols = pred.as_claim_columns()
        rows.append({"quantity": name, "kind": kind, "median_pct": float(pred.median),
                     "low_pct": float(pred.low), "high_pct": float(pred.high),
                     "coverage": float(pred.coverage), "p_holds": float(cols["p_holds"]),
                     "driver": cols["driver"], "break_even": cols["break_even"],
                     "published_low_pct": band[0], "published_high_pct": band[1],
                     "noise_band_pct": noise, "verdict": v.word, "reason": v.reason,
                     "rules_sha256": v.rules_sha256})
    return pd.DataFrame(rows)


def verdict_lru_random_rules(priced) -> pd.DataFrame:
    """Seed 000's "random better than LRU by 1% to 3%" judged per mix by the pre-registered
    rules (:func:`memcglab.stats.verdict_rules.judge`, a ``difference`` claim on the
    band [1, 3]% of random's throughput advantage).

    ``priced`` maps a mix name to its priced advantage in % (a
    :class:`memcglab.uncertainty.UncertainResult`, or anything with ``median``,
    ``low``, ``high``, ``coverage``, ``sources`` and ``as_claim_columns()``). The interval
    carries the hardware priors and the modelling alternatives.
    """
    c = load("claims").frame.set_index("claim_id").loc["lru_vs_random"]
    low, high = float(c["low"]), float(c["high"])
    rows = []
    for mix, pred in priced.items():
        v = judge("difference", low, high, interval=pred)
        cols = pred.as_claim_columns()
        rows.append({"mix": mix, "median_pct": float(pred.median), "low_pct": float(pred.low),
                     "high_pct": float(pred.high), "coverage": float(pred.coverage),
                     "p_holds": float(cols["p_holds"]), "driver": cols["driver"],
                     "break_even": cols["break_even"], "claim_low_pct": low,
                     "claim_high_pct": high, "verdict": v.word, "reason": v.reason,
                     "rules_sha256": v.rules_sha256})
    return pd.DataFrame(rows)
