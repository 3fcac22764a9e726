"""The model built up, term by term: ``rules_addendum_2026-12-02b_model_selection.md``.

:func:`score_variant` runs the leave-one-source-out scoreboard for one
:class:`~memcglab.scenario.terms.Terms` and returns memcglab's registered scores: the mean
interval score per source (the selection score), the CRPS, the predictive log score
(:func:`log_scores`: the density of each held-out measurement under the prediction's points,
the error model's and the measurement's noise convolved) and the secondary columns.
:func:`select` follows the addendum: the error model with the highest log score on the
full model, then each term of :data:`~memcglab.scenario.terms.ORDER` added to ``M0`` and
kept only if the selection score falls. ``python -m memcglab.validation.ablation --out DIR``
writes ``ablation.csv`` and ``ablation.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace

import numpy as np
import pandas as pd

from memcglab.scenario.errors import log_density
from memcglab.scenario.predict import DEFAULT_POINTS, scenario_draws
from memcglab.scenario.terms import ERROR_MODELS, FULL, M0, ORDER, Terms
from memcglab.validation.dataset import case_models, declared_noise, unknowns
from memcglab.validation.scoring import per_source

__all__ = ["LAYOUT_VARIANTS", "layout_test", "log_scores", "score_variant", "select"]

#: rules_addendum_2026-12-04_layout_term.md: the chosen model, + page_counter_fields,
#: + prefetch_pair, simplest first
LAYOUT_VARIANTS: tuple[tuple[str, dict[str, bool]], ...] = (
    ("A", {"page_counter_fields": False, "prefetch_pair": False}),
    ("B", {"page_counter_fields": True, "prefetch_pair": False}),
    ("C", {"page_counter_fields": True, "prefetch_pair": True}))


def log_scores(frame: pd.DataFrame, folds, terms: Terms, points: int, seed: int
               ) -> pd.DataFrame:
    """Per case: log p(measured y) under the held-out prediction (module doc)."""
    models = {m.case.case_id: m for m in case_models(terms=terms)}
    rows = []
    for r in frame.itertuples():
        m = models[r.case]
        sd = scenario_draws(m.model, points, seed, folds[r.source].calibration,
                            with_profile=False)
        L = np.log(sd.priced.new_rate / sd.priced.base_rate)
        y = float(np.log1p(r.measured_change_pct / 100.0))
        noise = declared_noise(m.case) / (100.0 + r.measured_change_pct)
        dens = log_density(terms.error, y, L[None, :], sd.values, noise)
        top = dens.max()
        rows.append({"source": r.source, "case": r.case,
                     "log_score": float(top + np.log(np.mean(np.exp(dens - top))))})
    return pd.DataFrame(rows)


def score_variant(terms: Terms, points: int = DEFAULT_POINTS, seed: int = 0,
                  progress=None) -> dict:
    """memcglab's registered scores for model ``terms`` (module doc)."""
    from memcglab.validation.proper import proper_run
    from memcglab.validation.scoreboard import run

    frame, folds = run(points=points, seed=seed, progress=progress, terms=terms)
    pf, table = proper_run(frame, folds, points, seed, terms=terms)
    ls = log_scores(frame, folds, terms, points, seed)
    _, overall = per_source(ls, ("log_score",))
    row = table.loc["memcglab"]
    params = len(unknowns(case_models(terms=terms)))
    return {"terms": terms.key(), "interval_score": float(row["interval_score"]),
            "crps": float(row["crps"]), "log_score": float(overall["log_score"]),
            "coverage": float(row["coverage"]), "median_width_pp": float(row["median_width_pp"]),
            "median_abs_error_pp": float(row["median_abs_error_pp"]),
            "sign_accuracy": float(row["sign_accuracy"]), "parameters": params}


def select(points: int = DEFAULT_POINTS, seed: int = 0, progress=None
           ) -> tuple[pd.DataFrame, Terms]:
    """The addendum's procedure: one row per fitted variant, and the chosen model."""
    rows = []
    say = progress or (lambda s: None)
    for error in ERROR_MODELS:
        say(f"error model {error} (full model)")
        rows.append({"step": "error model", "term": error,
                     **score_variant(replace(FULL, error=error), points, seed)})
    errors = [r for r in rows if r["step"] == "error model"]
    best = max(errors, key=lambda r: r["log_score"])["term"]
    current = replace(M0, error=best)
    say(f"M0 with {best}")
    now = score_variant(current, points, seed)
    rows.append({"step": "M0", "term": "(none)", "kept": True, **now})
    say("M0 with one pooled hold time (reference)")
    rows.append({"step": "reference", "term": "-family_deviation", "kept": False,
                 **score_variant(current.with_term("family_deviation", False), points, seed)})
    for term in ORDER:
        say(f"+{term}")
        trial = current.with_term(term, True)
        got = score_variant(trial, points, seed)
        kept = got["interval_score"] < now["interval_score"]
        rows.append({"step": "build-up", "term": f"+{term}", "kept": kept,
                     "without": now["interval_score"], **got})
        if kept:
            current, now = trial, got
    return pd.DataFrame(rows), current


def layout_test(base: Terms, points: int = DEFAULT_POINTS, seed: int = 0, progress=None
                ) -> tuple[pd.DataFrame, Terms]:
    """The layout addendum's test on ``base`` (the chosen model): one row per variant, and
    the variant kept. A variant is kept only if its interval score, at three decimals, is
    below every simpler variant's; ties keep the simpler."""
    say = progress or (lambda s: None)
    rows, kept, best = [], base, None
    for name, switches in LAYOUT_VARIANTS:
        terms = replace(base, **switches)
        say(f"layout variant {name}: {terms.key()}")
        got = score_variant(terms, points, seed)
        score = round(got["interval_score"], 3)
        beats = all(score < round(r["interval_score"], 3) for r in rows)
        rows.append({"variant": name, "kept": False, **got})
        if best is None or beats:
            kept, best = terms, len(rows) - 1
    rows[best]["kept"] = True
    return pd.DataFrame(rows), kept


def main(argv: list[str] | None = None) -> int:
    """``python -m memcglab.validation.ablation --out DIR [--layout]``."""
    from pathlib import Path

    from memcglab.validation.cli import _atomic, markdown_table

    ap = argparse.ArgumentParser(prog="python -m memcglab.validation.ablation")
    ap.add_argument("--out", required=True, help="directory for ablation.csv and .md")
    ap.add_argument("--points", type=int, default=DEFAULT_POINTS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layout", action="store_true",
                    help="only the layout addendum's variants A, B, C on the chosen model "
                         "(layout.csv and layout.md)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()

    def say(s: str) -> None:
        print(f"[{time.monotonic() - start:5.0f} s] {s}", file=sys.stderr, flush=True)

    if args.layout:
        from memcglab.scenario.terms import DEFAULT_TERMS

        table, chosen = layout_test(DEFAULT_TERMS, args.points, args.seed, say)
        stem, index = "layout", "variant"
    else:
        table, chosen = select(args.points, args.seed, say)
        stem, index = "ablation", "step"
    _atomic(out / f"{stem}.csv", lambda p: table.to_csv(p, index=False))
    text = markdown_table(table.set_index(index).round(3)) + f"\n\nchosen: {chosen.key()}\n"
    _atomic(out / f"{stem}.md", lambda p: p.write_text(text))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
