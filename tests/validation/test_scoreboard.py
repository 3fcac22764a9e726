"""The scoreboard's rules, its leave-one-source-out folds (no leak), and calibration recovery."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from memcglab.resources import data_dir
from memcglab.validation import scoreboard
from memcglab.validation.calibrate import Observation, fit
from memcglab.validation.dataset import case_models, declared_noise, observations, unknowns
from memcglab.validation.devset import load_cases

#: data/validation/rules.md as committed before any scoreboard was computed
RULES_SHA256 = "339076b497f77b3c210e21aa8a3cf0428b422cf9e6c7f76688889686abef9089"


def test_the_scoring_rules_are_pinned():
    digest = hashlib.sha256((data_dir() / "validation" / "rules.md").read_bytes()).hexdigest()
    assert digest == RULES_SHA256, "a rule changes by a dated section, and a new pin"


#: its addendum of 2026-12-02 (issue 22: proper scores, fair baselines), committed before
#: any score it defines was computed
ADDENDUM_SHA256 = {
    "rules_addendum_2026-12-02_proper_scoring.md":
        "4cfd5850ebd04d353aa9f5cf3568bf4c401aeea7a0a057e4cb7b924f6a52eed4",
    # model selection (issue 22: error model, build-up, perf shares, [base.measured]),
    # committed before any variant it defines was fitted or scored
    "rules_addendum_2026-12-02b_model_selection.md":
        "fff9ee8568f4cb22503576a5f3b5a4a4aac1477b3d561e8bc00658bdcc2c242a",
    # its quadrature, amended before any selection result was read
    "rules_addendum_2026-12-02c_quadrature.md":
        "3e4a79d15bcd2b142e2832b0b69a7beb52aab2457a98b7ba7fe4b7ad60374c66",
    # the alternatives' weights stacked, registered before any code stacked them
    "rules_addendum_2026-12-03_stacking.md":
        "2f0217ae8964e84e15f2e6ab6730b870aba9d6d989563c92f7dfddce94705f00",
    # the per-family deviations tried on the chosen model, registered before it was scored
    "rules_addendum_2026-12-03b_family_deviation.md":
        "117777323ca57e7a2ff38984613d4a58c51ce7b0ab3a49054a0da41e95d550cb",
    # the layout term and the grown set (issue 23), registered before any variant's score
    "rules_addendum_2026-12-04_layout_term.md":
        "65683600578e80a221bbf4e76777f363ab8b51a6043bcdf1da777f155bf7e8fc"}


@pytest.mark.parametrize("name", sorted(ADDENDUM_SHA256))
def test_the_scoring_rules_addenda_are_pinned(name):
    digest = hashlib.sha256((data_dir() / "validation" / name).read_bytes()).hexdigest()
    assert digest == ADDENDUM_SHA256[name], "an addendum changes by a new dated file and pin"


def test_declared_noise_follows_the_rules():
    cases = {c.case_id: c for c in load_cases()}
    stated = cases["stock_refill_regression/tcp_maerts_64"]
    assert declared_noise(stated) == 2.0
    unstated = cases["sk_forward_alloc_regression/lazy_vs_eager"]
    assert declared_noise(unstated) == pytest.approx(2.0 * (1 - 0.694))


def test_inside_and_sign_and_summary():
    frame = pd.DataFrame({
        "measured_change_pct": [-10.0, 5.0, 0.5], "noise_pct": [1.0, 1.0, 1.0],
        "median": [-8.0, -1.0, 0.0], "low": [-12.0, -3.0, 0.0], "high": [-5.0, 1.0, 0.0],
        "no_change": [0.0, 0.0, 0.0], "inverse_cycles": [-1.0, 1.0, 0.1],
        "bottleneck_law": [-10.0, 0.0, np.nan]})
    s = scoreboard.summary(frame)
    assert s.loc["memcglab", "coverage"] == pytest.approx(2 / 3)  # [-3, 1] misses [4, 6]
    assert s.loc["memcglab", "sign_accuracy"] == pytest.approx(1 / 3)
    assert s.loc["memcglab", "median_abs_error_pp"] == 2.0
    assert s.loc["no_change", "coverage"] == pytest.approx(1 / 3)  # 0 is inside 0.5 +- 1
    assert s.loc["bottleneck_law", "cases"] == 2


@pytest.fixture(scope="module")
def models():
    return case_models()


def test_a_fold_never_reads_its_held_out_source(models, monkeypatch):
    for source in sorted({m.case.source for m in models}):
        train = [m for m in models if m.case.source != source]
        assert all(o.source != source for o in observations(train))
    # and the guard fires when observations leak (a broken dataset function)
    leaky = observations(models)
    monkeypatch.setattr(scoreboard, "observations", lambda ms: leaky)
    with pytest.raises(scoreboard.LeakError, match="multi_memcg_stock"):
        scoreboard.calibrate_on(models, left_out=("multi_memcg_stock",))


def test_calibration_recovers_known_parameters_from_the_models_own_measurements(models):
    # synthetic measurements: the scenario model itself at a known point, with noise
    picked = [m for m in models if m.case.source in ("optimize_charge_codepath",
                                                     "stock_refill_regression")]
    names = {"hold_scale", "fixed_cycles:tcp_stream", "unit_cycles:byte"}
    params = [p for p in unknowns(picked) if p.name in names]
    truth = {"hold_scale": 4.0, "fixed_cycles:tcp_stream": 5000.0, "unit_cycles:byte": 0.5}
    at = {k: np.array([v]) for k, v in truth.items()}
    rng = np.random.default_rng(7)
    obs = []
    for m in picked:
        obs.append(Observation(m.case.case_id, "synthetic", "change_pct",
                               float(m.change_pct(at)[0]) + rng.normal(0, 1.0), 1.0,
                               m.change_pct))
        obs.append(Observation(m.case.case_id + "/rate", "synthetic", "log_rate",
                               float(m.log_base_rate(at)[0]) + rng.normal(0, 0.03), 0.03,
                               m.log_base_rate))
    cal = fit(params, obs)
    assert cal.converged
    for name, value in truth.items():
        lo, hi = cal.interval(name, 0.99)
        assert lo <= value <= hi, (name, value, lo, hi)
    assert cal.shrinkage()["hold_scale"] < 0.5


def test_fold_cache_refits_only_when_it_must(tmp_path, monkeypatch):
    from memcglab.calibration.files import read_calibration
    from memcglab.resources import data_dir
    from memcglab.validation.foldcache import cached_fold

    monkeypatch.setenv("MEMCGLAB_CACHE", str(tmp_path))
    default = read_calibration(data_dir() / "calibration" / "default.json")
    fold = type(default)(default.calibration, "d" * 64, default.tau, ("src",),
                         default.families, "test")
    calls = []

    def fit():
        calls.append(1)
        return fold

    assert cached_fold("d" * 64, "src", fit) == fold
    assert cached_fold("d" * 64, "src", fit).left_out == ("src",) and len(calls) == 1
    for f in (tmp_path / "calibrations").glob("*.json"):
        f.write_text("{broken")
    cached_fold("d" * 64, "src", fit)
    assert len(calls) == 2  # a corrupt entry is refitted
    monkeypatch.setenv("MEMCGLAB_CACHE", "off")
    cached_fold("d" * 64, "src", fit)
    assert len(calls) == 3
