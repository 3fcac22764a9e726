"""predict's points come from the package's one input space (memcglab.uncertainty.Space)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import qmc

from memcglab.calibration import Calibration
from memcglab.calibration.files import load_calibration
from memcglab.hardware import load_profile
from memcglab.scenario.space import DESIGN, TAU_PARAM, draw, scenario_space, unknown_params
from memcglab.scenario.terms import DEFAULT_TERMS
from memcglab.uncertainty import Block, Variate

PROFILE = load_profile("lkp-2s-224t-spr")


def _args(calibration, terms=DEFAULT_TERMS, tasks=1, combos=1):
    return PROFILE, "tcp_stream", "byte", tasks, combos, calibration, terms


def test_draw_is_the_one_spaces_draws_at_the_same_points():
    cal, _ = load_calibration("default")
    s = scenario_space(*_args(cal))
    u = qmc.Sobol(len(s.varying), scramble=True, seed=3).random(16)
    d, e = draw(*_args(cal)[:5], 16, 0, cal, DEFAULT_TERMS, unit_points=u), s.draws(u)
    assert d.columns == s.varying and d.unit is u
    assert set(d.values) == set(e.values) - set(DESIGN)
    for k, v in d.values.items():
        assert np.array_equal(v, e[k]), k
    assert np.array_equal(d.which, e.index["alternative"])
    for k in ("z_change", "z_rate", "z_add"):
        assert np.array_equal(getattr(d, k), e[k]), k


def test_columns_are_predicts_design_order_and_fixed_inputs_own_one():
    cal, _ = load_calibration("default")
    s = scenario_space(*_args(cal))
    names = cal.calibration.names
    assert isinstance(s[names[0]], Block) and s.varying[:len(names)] == names
    assert s.varying[-4:] == DESIGN
    # one task: the busiest share is a point prior; one combination: one option. Both
    # still own a column, so the Sobol design does not depend on them
    assert s["busiest_cpu_share"].shape == "point" and "busiest_cpu_share" in s.varying
    assert s["alternative"].options == (0,)
    assert s["z_change"].df == 4 and s["z_rate"].df is None   # the student error model


def test_without_calibration_the_unknowns_are_params_and_the_error_is_zero():
    s = scenario_space(*_args(None))
    free = [p.name for p in unknown_params("tcp_stream", "byte", DEFAULT_TERMS)]
    assert s.varying[:len(free)] == tuple(free)
    d = draw(*_args(None)[:5], 8, 0, None)
    assert d.values["sigma_rel"].tolist() == [0.0] * 8 and d.unit.shape == (8, len(s.varying))


def test_an_unseen_family_deviation_is_the_fitted_spread_times_a_normal():
    cal = SimpleNamespace(calibration=Calibration(
        (TAU_PARAM,), np.array([np.log(0.5)]), np.array([[1e-6]]), ("c",), 0.0, True), tau=0.7)
    terms = replace(DEFAULT_TERMS, family_deviation=True)
    dev = f"hold_dev:{PROFILE.family}"
    s = scenario_space(*_args(cal, terms))
    assert s.varying[-1] == dev and isinstance(s[dev], Variate)
    u = np.full((1, len(s.varying)), 0.5)
    u[0, -1] = 0.8413447460685429                      # the normal's +1 sd
    d = draw(*_args(cal, terms)[:5], 1, 0, cal, terms, unit_points=u)
    assert d.values[dev] == pytest.approx(d.values["hold_tau"])
    with pytest.raises(ValueError, match="must be"):
        draw(*_args(cal, terms)[:5], 1, 0, cal, terms, unit_points=u[:, 1:])
