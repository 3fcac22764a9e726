"""The model built up term by term, as notebook 07 shows it (issue 22, item 3).

The registered build-up (``rules_addendum_2026-12-02b_model_selection.md``) is
:func:`memcglab.validation.ablation.select`: hours at 512 points, so the notebook reads the
committed run by default. :func:`load_ablation` reads an ``ablation.csv`` from a run
directory, or the committed one (:data:`ABLATION_RUN` under :func:`history_dir`, found
through :mod:`memcglab.resources`, so an installed wheel has it too);
:func:`buildup_table` gives per term the score without and with it, the calibrated
parameters it adds and the decision; :func:`follow_ups` adds the registered tests made
after the build-up (the per-family deviations on the chosen model, the stacked
alternatives) where their runs are committed; :func:`buildup_text` says it in words.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from memcglab.resources import data_dir
from memcglab.validation.scoring import per_source

__all__ = ["ABLATION_RUN", "COLUMNS", "FAMILY_RUN", "LAYOUT_RUN", "STACKING_RUN", "buildup_table",
           "buildup_text", "follow_ups", "history_dir", "load_ablation"]

#: the committed runs under :func:`history_dir`: the registered build-up, then the two
#: registered tests made after it
ABLATION_RUN = "2026-12-02_ablation"
FAMILY_RUN = "2026-12-03_family_deviation"
STACKING_RUN = "2026-12-03_stacking"
#: the layout addendum's run (``python -m memcglab.validation.ablation --layout``), scored on
#: the grown set: its variant A is the chosen model there
LAYOUT_RUN = "2026-12-04_layout"
#: :func:`buildup_table`'s columns
COLUMNS: tuple[str, ...] = ("step", "term", "interval score without", "interval score with",
                            "CRPS with", "log score with", "fitted parameters added",
                            "decision")
_NAMES = {"cpu_slowdown": "CPU slowdown (SMT, time sharing)",
          "busiest_share": "busiest-CPU share", "socket_growth": "socket growth",
          "private_lines": "private lines", "alternatives": "modelling alternatives (mixture)",
          "perf_shares": "perf shares in the likelihood",
          "family_deviation": "per-family hold-time deviations",
          "page_counter_fields": "page_counter layout, field by field",
          "prefetch_pair": "adjacent-line prefetch pair"}


def history_dir() -> Path:
    """``data/validation/history/``: the committed scoreboard and selection runs."""
    return data_dir() / "validation" / "history"


def load_ablation(run_dir: str | Path | None = None) -> pd.DataFrame:
    """``ablation.csv`` of ``python -m memcglab.validation.ablation --out DIR`` from
    ``run_dir``, or the committed run (:data:`ABLATION_RUN`); ``kept`` as True, False or
    None (the error-model rows, which are not kept or rejected but compared)."""
    path = Path(run_dir) if run_dir else history_dir() / ABLATION_RUN
    if path.suffix != ".csv":  # a run directory
        path = path / "ablation.csv"
    if not path.is_file():
        raise FileNotFoundError(f"ablation table {path}: no such file (write one with "
                                "python -m memcglab.validation.ablation --out DIR)")
    raw = pd.read_csv(path)
    missing = {"step", "term", "interval_score", "crps", "log_score", "parameters",
               "kept"} - set(raw.columns)
    if missing:
        raise ValueError(f"ablation table {path}: missing columns {sorted(missing)}")
    return raw.assign(kept=[None if pd.isna(k) else str(k) == "True" for k in raw["kept"]])


def _name(term: str) -> str:
    return _NAMES.get(term.lstrip("+-"), term.lstrip("+-"))


def buildup_table(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per scored variant of :func:`load_ablation`'s table (or of
    :func:`~memcglab.validation.ablation.select`'s): the selection score without and with
    the term, the variant's CRPS and log score, the calibrated parameters the term adds
    and the decision (:data:`COLUMNS`)."""
    rows = []
    errors = raw[raw["step"] == "error model"]
    best = errors.loc[errors["log_score"].idxmax(), "term"] if len(errors) else None
    current = None
    for r in raw.itertuples():
        row = dict.fromkeys(COLUMNS, np.nan)
        row.update({"step": r.step, "CRPS with": r.crps, "log score with": r.log_score})
        if r.step == "error model":
            row.update({"term": f"error model: {r.term}", "interval score with": r.interval_score,
                        "decision": "chosen (highest log score)" if r.term == best else ""})
        elif r.step == "M0":
            current = r
            row.update({"term": "(none: M0)", "interval score with": r.interval_score,
                        "decision": "start"})
        elif r.step == "reference":
            # M0 less a term: the term's 'with' is M0 itself
            row.update({"term": _name(r.term), "interval score without": r.interval_score,
                        "interval score with": current.interval_score,
                        "CRPS with": current.crps, "log score with": current.log_score,
                        "fitted parameters added": current.parameters - r.parameters,
                        "decision": "in M0 as registered (reported, not a step)"})
        else:
            row.update({"term": _name(r.term), "interval score without": current.interval_score,
                        "interval score with": r.interval_score,
                        "fitted parameters added": r.parameters - current.parameters,
                        "decision": "kept" if r.kept else "rejected"})
            if r.kept:
                current = r
        rows.append(row)
    return _counts(pd.DataFrame(rows, columns=list(COLUMNS)))


def _counts(table: pd.DataFrame) -> pd.DataFrame:
    """Parameter counts as whole numbers, missing where a row adds no term."""
    return table.astype({"fitted parameters added": "Int64"})


def _free_weights(weights: pd.DataFrame) -> int:
    one = weights[weights["fold"] == weights["fold"].iloc[0]]
    return int((one.groupby("alternative")["option"].count() - 1).sum())


def follow_ups(table: pd.DataFrame, history: str | Path | None = None) -> pd.DataFrame:
    """The registered tests made on the model :func:`buildup_table`'s ``table`` chose,
    after the build-up: one row each in :data:`COLUMNS`, for those whose runs are
    committed under ``history`` (:func:`history_dir` by default); empty if none is."""
    root = Path(history) if history else history_dir()
    kept = table[(table["step"] == "build-up") & (table["decision"] == "kept")]
    start = table[table["step"] == "M0"]
    chosen = (kept if len(kept) else start)["interval score with"]
    chosen_score = float(chosen.iloc[-1]) if len(chosen) else np.nan
    rows = []
    family = root / FAMILY_RUN / "scores.json"
    if family.is_file():
        s = json.loads(family.read_text())
        with_, without = s["chosen"], s["-family_deviation"]
        kept = with_["interval_score"] < without["interval_score"]
        rows.append({"step": "follow-up (addendum 2026-12-03b)",
                     "term": _name("family_deviation") + " (on the chosen model)",
                     "interval score without": without["interval_score"],
                     "interval score with": with_["interval_score"],
                     "CRPS with": with_["crps"], "log score with": with_["log_score"],
                     "fitted parameters added": with_["parameters"] - without["parameters"],
                     "decision": "kept" if kept else "dropped"})
    stacking = root / STACKING_RUN / "stacking.csv"
    if stacking.is_file():
        per_case = pd.read_csv(stacking)
        _, stacked = per_source(per_case[per_case["method"] == "stacked"],
                                ("interval_score", "crps", "log_score"))
        weights = pd.read_csv(root / STACKING_RUN / "stacking_weights.csv")
        rows.append({"step": "follow-up (addendum 2026-12-03)",
                     "term": "modelling alternatives (stacked weights)",
                     "interval score without": chosen_score,
                     "interval score with": float(stacked["interval_score"]),
                     "CRPS with": float(stacked["crps"]),
                     "log score with": float(stacked["log_score"]),
                     "fitted parameters added": _free_weights(weights),
                     "decision": ("kept" if stacked["interval_score"] < chosen_score
                                  else "rejected")})
    layout = root / LAYOUT_RUN / "layout.csv"
    if layout.is_file():
        got = pd.read_csv(layout).set_index("variant")
        names = {"B": _name("page_counter_fields"),
                 "C": _name("page_counter_fields") + " + " + _name("prefetch_pair")}
        for v in ("B", "C"):
            rows.append({"step": "follow-up (addendum 2026-12-04, grown set)",
                         "term": names[v] + " (on the chosen model)",
                         "interval score without": float(got.loc["A", "interval_score"]),
                         "interval score with": float(got.loc[v, "interval_score"]),
                         "CRPS with": float(got.loc[v, "crps"]),
                         "log score with": float(got.loc[v, "log_score"]),
                         "fitted parameters added": int(got.loc[v, "parameters"]
                                                        - got.loc["A", "parameters"]),
                         "decision": _layout_decision(got, v)})
    return _counts(pd.DataFrame(rows, columns=list(COLUMNS)))


def _layout_decision(got: pd.DataFrame, variant: str) -> str:
    """``kept``; or, for a variant below A that a richer one beat, which one was kept."""
    if bool(got.loc[variant, "kept"]):
        return "kept"
    kept = got.index[got["kept"].astype(bool)]
    if (len(kept) and kept[0] != "A" and round(got.loc[variant, "interval_score"], 3)
            < round(got.loc["A", "interval_score"], 3)):
        return f"lower than without, but {kept[0]} lower still"
    return "rejected"


def _fmt(terms: list[str]) -> str:
    return ", ".join(terms) if terms else "none"


def buildup_text(table: pd.DataFrame) -> str:
    """:func:`buildup_table`'s rows (with :func:`follow_ups`') in words."""
    chosen = table.loc[table["decision"] == "chosen (highest log score)", "term"]
    steps = table[table["step"] == "build-up"]
    kept = [f"{r.term} ({r['interval score without']:.3f} to {r['interval score with']:.3f})"
            for _, r in steps[steps["decision"] == "kept"].iterrows()]
    rejected = [f"{r.term} ({r['interval score with']:.3f} against "
                f"{r['interval score without']:.3f})"
                for _, r in steps[steps["decision"] == "rejected"].iterrows()]
    lines = []
    if len(chosen):
        lines.append(f"- Error model: {chosen.iloc[0].removeprefix('error model: ')}, "
                     "the highest leave-one-source-out log score on the full model.")
    m0 = table[table["step"] == "M0"]
    if len(m0):
        lines.append(f"- M0 scores {m0['interval score with'].iloc[0]:.3f}. Kept, each "
                     f"lowering the score: {_fmt(kept)}.")
    lines.append(f"- Rejected (the score did not fall): {_fmt(rejected)}.")
    for _, r in table[table["step"] == "reference"].iterrows():
        better = r["interval score without"] < r["interval score with"]
        lines.append(f"- Reference row: M0 without the {r.term} scores "
                     f"{r['interval score without']:.3f} against {r['interval score with']:.3f}"
                     + (", lower: by this score they did not earn their place, but the "
                        "registered procedure kept them in M0." if better else "."))
    for _, r in table[table["step"].str.startswith("follow-up")].iterrows():
        lines.append(f"- {r.step.capitalize()}, {r.term}: {r['interval score with']:.3f} "
                     f"with, {r['interval score without']:.3f} without: {r.decision}.")
    return "\n".join(lines)
