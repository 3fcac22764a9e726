"""Study 1's calibration without the multi-memcg thread's "with" column: no "with" value
enters it (the observations, the fit and the prediction are blind to a poisoned column)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memcglab.calibration.files import CalibrationFile
from memcglab.validation import study01
from memcglab.validation.dataset import CaseModel, case_models, observations
from memcglab.validation.devset import load_cases
from memcglab.validation.scoreboard import LeakError


@pytest.fixture(scope="module")
def models():
    return case_models()


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A fold cache of this module's own: the first calibration is fitted, later ones read."""
    return tmp_path_factory.mktemp("calibrations")


def _poisoned(models: list[CaseModel]) -> list[CaseModel]:
    """The same models, every held-out "with" value replaced by a wrong, finite one."""
    out = []
    for m in models:
        c = m.case
        if c.source == study01.SOURCE:
            c = dataclasses.replace(c, new_value=0.5 * c.base_value, measured_change_pct=-50.0,
                                    digits_low=-50.0, digits_high=-50.0)
        out.append(CaseModel(c, m.model))
    return out


def _seen(obs) -> list[tuple]:
    return [(o.case, o.source, o.kind, o.measured, o.noise) for o in obs]


def test_the_left_out_observations_are_the_sources_cases():
    assert sorted(study01.LEFT_OUT) == sorted(c.case_id for c in load_cases()
                                              if c.source == study01.SOURCE)


def test_only_the_sources_changes_are_left_out(models):
    every = observations(models)
    kept = study01.observations_without_changes(models)
    dropped = [o.case for o in every if o.case not in {k.case for k in kept}]
    assert sorted(dropped) == sorted(study01.LEFT_OUT)
    assert all(o.kind == "log_ratio" for o in every if o.case in study01.LEFT_OUT)
    ours = sorted(o.case for o in kept if o.source == study01.SOURCE)
    assert ours == sorted(f"{c}/base_rate" for c in study01.LEFT_OUT)
    assert {o.kind for o in kept if o.source == study01.SOURCE} == {"log_rate"}
    assert len(kept) == 26 and "kmemcache_accounting/hold_time" in {o.case for o in kept}


def test_a_poisoned_with_column_changes_nothing_the_fit_reads(models):
    poisoned = _poisoned(models)
    # the poison reaches a calibration that reads the changes (so this test can fail) ...
    assert _seen(observations(poisoned)) != _seen(observations(models))
    # ... and not the one study 1 uses
    assert _seen(study01.observations_without_changes(poisoned)) == \
        _seen(study01.observations_without_changes(models))
    at = {"hold_scale": np.array([1.5, 3.0]), "fixed_cycles:tcp_stream": np.array([9e3, 2e4])}
    for a, b in zip(study01.observations_without_changes(poisoned),
                    study01.observations_without_changes(models), strict=True):
        if a.source == study01.SOURCE:
            np.testing.assert_array_equal(a.predict(at), b.predict(at))


def test_the_fit_on_a_poisoned_with_column_is_the_same_calibration(models, monkeypatch,
                                                                   cache):
    monkeypatch.setenv("MEMCGLAB_CACHE", str(cache))
    real = study01.calibrate(models)
    monkeypatch.setenv("MEMCGLAB_CACHE", "off")
    blind = study01.calibrate(_poisoned(models))
    assert real.calibration.converged and real.left_out == (study01.CACHE_KEY,)
    # the fold cache's copy is the fresh fit, byte for byte
    monkeypatch.setenv("MEMCGLAB_CACHE", str(cache))
    assert study01.calibration_sha256(study01.calibrate(models)) == \
        study01.calibration_sha256(real)
    np.testing.assert_array_equal(real.calibration.mode_u, blind.calibration.mode_u)
    np.testing.assert_array_equal(real.calibration.cov_u, blind.calibration.cov_u)
    read = set(real.calibration.cases)
    assert not read & set(study01.LEFT_OUT)
    assert {f"{c}/base_rate" for c in study01.LEFT_OUT} <= read
    # and the prediction reads no "with" value either
    a = study01.predict(real, points=16, models=models)
    b = study01.predict(real, points=16, models=_poisoned(models))
    assert a.equals(b)


def test_a_calibration_that_read_a_change_is_refused(models, monkeypatch):
    with pytest.raises(LeakError, match=r"multi_memcg_stock/clients06'\]"):
        study01.check_no_change(["multi_memcg_stock/clients06/base_rate",
                                 "multi_memcg_stock/clients06"])
    study01.check_no_change([f"{c}/base_rate" for c in study01.LEFT_OUT])
    # a fit that recorded a held-out change (a broken dataset or fit) is caught afterwards
    monkeypatch.setenv("MEMCGLAB_CACHE", "off")
    real_fit = study01.fit

    def leaky(params, obs, hyper=None):
        cal = real_fit(params[:1], obs[:1])
        return dataclasses.replace(cal, cases=(*cal.cases, study01.LEFT_OUT[-1]))

    monkeypatch.setattr(study01, "fit", leaky)
    with pytest.raises(LeakError, match="clients36"):
        study01.calibrate(models)


def test_the_prediction_converts_the_new_kernels_rate_per_client(models, cache, monkeypatch):
    from memcglab.scenario.predict import predict_scenario

    monkeypatch.setenv("MEMCGLAB_CACHE", str(cache))
    cf: CalibrationFile = study01.calibrate(models)
    t = study01.predict(cf, points=16, models=models)
    assert t["clients"].tolist() == [6, 12, 18, 24, 30, 36]
    assert (t["low"] <= t["predicted_with_mbps"]).all()
    assert (t["predicted_with_mbps"] <= t["high"]).all()
    assert t["scenario"].tolist() == list(study01.LEFT_OUT)
    m = next(x for x in models if x.case.case_id == study01.LEFT_OUT[0])
    out = predict_scenario(m.model.scenario, 16, 0, cf, "x", model=m.model)
    assert t["predicted_with_mbps"].iloc[0] == pytest.approx(
        out["new"]["ops_per_s"]["median"] / 6 * 10240 * 8 / 1e6)
    with pytest.raises(ValueError, match="study 1 predicts"):
        study01.predict(cf, points=16, models=models[:3])


def test_each_row_carries_its_bands_driver(models, cache, monkeypatch):
    from memcglab.report import Study, priced_without_driver
    from memcglab.studies.s01_single_vs_multi import calibrated
    from memcglab.validation.drivers import NEW_RATE, inputs_of, predict_draws

    monkeypatch.setenv("MEMCGLAB_CACHE", str(cache))
    cf = study01.calibrate(models)
    t = study01.predict(cf, points=16, models=models)
    m = next(x for x in models if x.case.case_id == study01.LEFT_OUT[0]).model
    d = predict_draws(m, 16, 0, cf)
    space = inputs_of(tuple(d.columns))
    assert set(t["driver"]) <= set(space) and t["driver_st"].between(0.0, 1.0).all()
    # the driver was found on the band printed: the same points, the same rate
    mbps = np.quantile(NEW_RATE.at(m, d), [0.05, 0.95]) / 6 * 10240 * 8 / 1e6
    np.testing.assert_allclose(mbps, t[["low", "high"]].iloc[0], rtol=1e-3)
    # the claim rows carry it; a miss says what it would take, an agreement nothing
    pred = calibrated.CalibratedPrediction(t, cf, 16)
    far = t["high"].to_numpy() * np.r_[3.0, np.ones(5)]
    rows = calibrated.claims(calibrated.score(pred, far))
    assert priced_without_driver([Study("01_x", "Study 1", "ok", None, None, rows)]) == []
    assert rows[0]["verdict"] == "misses" and rows[0]["would_take"].startswith(
        f"{far[0]:.0f} Mbit/s per flow: {t['driver'].iloc[0]}")
    assert all("would_take" not in r for r in rows[1:6] if r["verdict"] != "misses")
