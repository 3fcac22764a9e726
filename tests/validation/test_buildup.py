"""The build-up as notebook 07 shows it: the committed ablation read through
memcglab.resources, each term's score without and with it, and the later registered tests
(memcglab.validation.buildup)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

from memcglab.resources import data_dir
from memcglab.validation import buildup

ROOT = Path(__file__).resolve().parents[2]


def _raw(**kept) -> pd.DataFrame:
    """A hand-made ablation.csv: two error models, M0, its reference, three terms."""
    rows = [("error model", "scaled", 3.0, 0.3, -0.5, 10, None, None),
            ("error model", "student", 2.5, 0.2, -0.1, 10, None, None),
            ("M0", "(none)", 2.0, 0.15, 0.5, 8, True, None),
            ("reference", "-family_deviation", 1.9, 0.14, 0.6, 5, False, None),
            ("build-up", "+cpu_slowdown", 1.5, 0.12, 0.7, 8, True, 2.0),
            ("build-up", "+socket_growth", 1.6, 0.13, 0.6, 9, False, 1.5),
            ("build-up", "+private_lines", 1.0, 0.11, 0.8, 10, True, 1.5)]
    return pd.DataFrame(rows, columns=["step", "term", "interval_score", "crps", "log_score",
                                       "parameters", "kept", "without"])


def test_each_term_is_scored_against_the_model_it_was_added_to():
    t = buildup.buildup_table(_raw())
    assert list(t.columns) == list(buildup.COLUMNS)
    got = list(zip(t["term"], t["interval score without"].fillna(-1),
                   t["interval score with"], t["fitted parameters added"].fillna(-1),
                   t["decision"], strict=True))
    assert got == [
        ("error model: scaled", -1, 3.0, -1, ""),
        ("error model: student", -1, 2.5, -1, "chosen (highest log score)"),
        ("(none: M0)", -1, 2.0, -1, "start"),
        # the reference is M0 less the term: 'with' is M0 itself, 3 parameters more
        ("per-family hold-time deviations", 1.9, 2.0, 3, "in M0 as registered "
                                                         "(reported, not a step)"),
        ("CPU slowdown (SMT, time sharing)", 2.0, 1.5, 0, "kept"),
        # rejected: the next term is compared with the model before it, not with it
        ("socket growth", 1.5, 1.6, 1, "rejected"),
        ("private lines", 1.5, 1.0, 2, "kept")]


def test_the_committed_ablation_is_read_through_the_resources_and_shipped():
    assert buildup.history_dir() == data_dir() / "validation" / "history"
    raw = buildup.load_ablation()
    assert len(raw) == 12 and set(raw["kept"]) == {True, False, None}
    t = buildup.buildup_table(raw).set_index("term")
    growth = t.loc["socket growth"]
    assert (round(growth["interval score without"], 3), round(growth["interval score with"], 3),
            growth["fitted parameters added"], growth["decision"]) == (1.187, 0.94, 1, "kept")
    assert t.loc["perf shares in the likelihood", "decision"] == "rejected"
    assert t.loc["per-family hold-time deviations", "fitted parameters added"] == 5
    spec = importlib.util.spec_from_file_location("memcglab_setup", ROOT / "setup.py")
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    assert ("memcglab/_data/validation/history/2026-12-02_ablation/ablation.csv"
            in setup.shipped_files(ROOT))


def test_a_run_directory_or_its_file_is_read_and_a_wrong_one_named(tmp_path):
    _raw().to_csv(tmp_path / "ablation.csv", index=False)
    assert buildup.load_ablation(tmp_path)["kept"].tolist() == [None, None, True, False, True,
                                                               False, True]
    assert len(buildup.load_ablation(tmp_path / "ablation.csv")) == 7
    with pytest.raises(FileNotFoundError, match="nowhere/ablation.csv"):
        buildup.load_ablation(tmp_path / "nowhere")
    _raw().drop(columns=["log_score"]).to_csv(tmp_path / "ablation.csv", index=False)
    with pytest.raises(ValueError, match=r"missing columns \['log_score'\]"):
        buildup.load_ablation(tmp_path)


def _history(root: Path, chosen: float, without: float) -> None:
    (root / buildup.FAMILY_RUN).mkdir(parents=True)
    (root / buildup.FAMILY_RUN / "scores.json").write_text(json.dumps({
        "chosen": {"interval_score": chosen, "crps": 0.1, "log_score": 0.7, "parameters": 9},
        "-family_deviation": {"interval_score": without, "crps": 0.1, "log_score": 0.8,
                              "parameters": 4}}))
    (root / buildup.STACKING_RUN).mkdir()
    # source a: (1 + 3) / 2 = 2, source b: 1; the mean over sources 1.5
    pd.DataFrame({"method": ["stacked"] * 3 + ["prior"], "source": ["a", "a", "b", "a"],
                  "case": ["a/1", "a/2", "b/1", "a/1"], "interval_score": [1.0, 3.0, 1.0, 9.0],
                  "crps": [0.1] * 4, "log_score": [0.0] * 4}).to_csv(
        root / buildup.STACKING_RUN / "stacking.csv", index=False)
    pd.DataFrame({"fold": ["a"] * 5 + ["b"] * 5, "alternative": ["x", "x", "y", "y", "y"] * 2,
                  "option": ["1", "2", "1", "2", "3"] * 2}).to_csv(
        root / buildup.STACKING_RUN / "stacking_weights.csv", index=False)


def test_the_follow_ups_compare_with_the_chosen_model(tmp_path):
    _history(tmp_path, chosen=1.2, without=1.1)
    t = buildup.buildup_table(_raw())
    f = buildup.follow_ups(t, tmp_path)
    assert list(zip(f["interval score without"], f["interval score with"],
                    f["fitted parameters added"], f["decision"], strict=True)) == [
        (1.1, 1.2, 5, "dropped"),
        # the chosen model is the last kept term's, 1.0; x has 1 free weight, y 2
        (1.0, 1.5, 3, "rejected")]
    text = buildup.buildup_text(pd.concat([t, f], ignore_index=True))
    assert "Rejected (the score did not fall): socket growth (1.600 against 1.500)." in text
    assert "private lines (1.500 to 1.000)" in text
    assert "1.900 against 2.000, lower" in text
    assert "(stacked weights): 1.500 with, 1.000 without: rejected." in text
    assert buildup.follow_ups(t, tmp_path / "empty").empty


def test_the_committed_follow_ups():
    t = buildup.buildup_table(buildup.load_ablation())
    f = buildup.follow_ups(t).round(3)
    assert f["interval score with"].tolist() == [0.94, 1.534, 1.346, 0.75]
    assert f["interval score without"].tolist() == [0.888, 0.94, 1.751, 1.751]
    assert f["decision"].tolist() == ["dropped", "rejected",
                                      "lower than without, but C lower still", "kept"]


def test_a_live_selection_reads_like_the_committed_table(monkeypatch):
    """notebook 07's live_ablation=True path: select's own table, scores made up here
    (each variant's score falls with every term but the last, the error models' log
    score rises along ERROR_MODELS)."""
    from memcglab.scenario.terms import ERROR_MODELS, ORDER
    from memcglab.validation import ablation

    def fake(terms, points, seed, progress=None):
        on = sum(getattr(terms, t) for t in ORDER)
        score = 2.0 - 0.1 * on + (0.5 if terms.perf_shares else 0.0)
        return {"terms": terms.key(), "interval_score": score, "crps": 0.1,
                "log_score": ERROR_MODELS.index(terms.error), "parameters": 8 + on}

    monkeypatch.setattr(ablation, "score_variant", fake)
    raw, chosen = ablation.select(8, 0)
    t = buildup.buildup_table(raw)
    assert t["decision"].tolist() == ["", "", "", "chosen (highest log score)", "start",
                                      "in M0 as registered (reported, not a step)",
                                      "kept", "kept", "kept", "kept", "kept", "rejected"]
    assert t["fitted parameters added"].iloc[6:].tolist() == [1] * 6
    assert not chosen.perf_shares and chosen.alternatives


def test_the_layout_follow_up_compares_b_and_c_with_a(tmp_path):
    (tmp_path / buildup.LAYOUT_RUN).mkdir(parents=True)
    pd.DataFrame({"variant": ["A", "B", "C"], "kept": [False, True, False],
                  "interval_score": [1.0, 0.8, 0.9], "crps": [0.1, 0.09, 0.095],
                  "log_score": [0.5, 0.6, 0.55], "parameters": [9, 9, 9]}).to_csv(
        tmp_path / buildup.LAYOUT_RUN / "layout.csv", index=False)
    f = buildup.follow_ups(buildup.buildup_table(_raw()), tmp_path)
    assert f["interval score without"].tolist() == [1.0, 1.0]
    assert f["interval score with"].tolist() == [0.8, 0.9]
    assert f["decision"].tolist() == ["kept", "lower than without, but B lower still"]
    assert f["fitted parameters added"].tolist() == [0, 0]
