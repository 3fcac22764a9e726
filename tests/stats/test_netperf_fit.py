"""Study 1's batched fit on "without": each point's fit is the fit of that point alone."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.queueing import ChargePathLoad
from memcglab.stats.netperf_fit import fit_without, predict

LOAD = ChargePathLoad(clients=[6, 12, 18, 24, 30, 36], names=("usage:0", "usage:1"),
                      shared=[[0.13, 0.13], [0.26, 0.26], [0.33, 0.33], [0.43, 0.43],
                              [0.5, 0.5], [0.58, 0.58]],
                      private=[0.11, 0.15, 0.18, 0.22, 0.27, 0.34],
                      memcg_cycles=[120.0, 150.0, 165.0, 185.0, 205.0, 225.0])
BOUNDS = ((12000.0, 150.0), (3000.0, 45.0), (80000.0, 3500.0))


@settings(max_examples=15, deadline=None)
@given(other=st.floats(4000, 60000), c2c=st.floats(60, 3000), smt=st.floats(0.05, 0.45),
       cpf=st.sampled_from([1.0, 2.0, 3.0]))
def test_recovers_the_parameters_that_made_the_column(other, c2c, smt, cpf):
    params = {"smt_gain": smt, "cpus_per_flow": cpf, "ghz": 2.7}
    truth = predict(LOAD, params, np.array([other]), np.array([c2c]))[0]
    f = fit_without(LOAD, params, truth, *BOUNDS)
    assert f.mape_pct[0] < 1e-3
    assert np.allclose(f.fitted_mbps[0], truth, rtol=1e-4)


def test_a_batch_fits_each_point_as_alone():
    rng = np.random.default_rng(3)
    y = np.array([42584.1, 30617.1, 25305.2, 20104.1, 14702.4, 10801.5]) * rng.uniform(
        0.9, 1.1, 6)
    smt = np.array([0.05, 0.2, 0.45])
    cpf = np.array([1.0, 2.0, 3.0])
    batch = fit_without(LOAD, {"smt_gain": smt, "cpus_per_flow": cpf}, y, *BOUNDS)
    for i in range(3):
        one = fit_without(LOAD, {"smt_gain": smt[i], "cpus_per_flow": cpf[i]}, y, *BOUNDS)
        assert one.mape_pct[0] == pytest.approx(batch.mape_pct[i], rel=1e-3, abs=1e-3)


def test_rejects_a_column_of_the_wrong_length_and_a_start_outside_the_bounds():
    with pytest.raises(ValueError, match="without_mbps"):
        fit_without(LOAD, {}, [1.0, 2.0], *BOUNDS)
    with pytest.raises(ValueError, match="x0"):
        fit_without(LOAD, {}, np.ones(6), (1.0, 150.0), BOUNDS[1], BOUNDS[2])
