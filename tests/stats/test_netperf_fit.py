"""Study 1's batched fit on "without": each point's fit is the fit of that point alone."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.pricing import FlowLoad, price_flows
from memcglab.stats.netperf_fit import (
    MESSAGE_BYTES,
    fit_without,
    predict,
    registered_inputs,
)

LOAD = FlowLoad(flows=[6, 12, 18, 24, 30, 36], shared_names=("usage:0", "usage:1"),
                shared=[[0.13, 0.13], [0.26, 0.26], [0.33, 0.33], [0.43, 0.43],
                        [0.5, 0.5], [0.58, 0.58]],
                private=[0.11, 0.15, 0.18, 0.22, 0.27, 0.34],
                memcg_cycles=[120.0, 150.0, 165.0, 185.0, 205.0, 225.0])
BOUNDS = ((12000.0, 150.0), (3000.0, 45.0), (80000.0, 3500.0))
#: the core's inputs but the fitted two: round figures, not fits
POINT = {"busiest_cpu_share": 0.5, "cpu_ghz": 2.7, "hold_cycles_cross": 350.0,
         "cross_socket_fraction": 0.0, "smt_gain": 0.25, "cpus_per_flow": 2.0,
         "cpus": 72.0, "smt": 2.0}


def point(**kw):
    return POINT | kw


def test_the_registered_hold_time_adds_the_per_sharer_cost_to_shared_lines_only():
    """0.5 cross-socket share, 3 cycles per writer beyond two: at 6 flows of 2 CPUs, 12
    writers, the hold is 0.5*100 + 0.5*300 + 10*3 = 230 cycles; at 36, 72 writers,
    0.5*100 + 0.5*300 + 70*3 = 410; a private transfer stays at the fitted 100."""
    load = FlowLoad(flows=[6, 36], memcg_cycles=0.0, shared_names=("usage:0",),
                    shared=[[1.0], [1.0]], private=[1.0, 1.0])
    p = point(cross_socket_fraction=0.5, hold_cycles_cross=300.0,
              contended_rmw_per_sharer=3.0, cpu_ghz=1.0)
    r = price_flows(load, registered_inputs(load, p, 0.0, np.array([100.0])))
    assert r.demands[0, :, 2] * 1e9 == pytest.approx([230.0, 410.0])
    assert r.demands[0, :, 1] * 1e9 == pytest.approx([100.0, 100.0])
    bare = price_flows(load, registered_inputs(load, point(cpu_ghz=1.0), 0.0, [100.0]))
    assert bare.demands[0, :, 2] * 1e9 == pytest.approx([100.0, 100.0])


def test_mbps_are_the_cores_messages_per_second_times_the_message():
    p = point(other_cycles=9000.0, hold_cycles=200.0, private_cycles=200.0)
    rate = price_flows(LOAD, p).per_instance
    want = rate * MESSAGE_BYTES * 8 / 1e6
    np.testing.assert_allclose(predict(LOAD, POINT, [9000.0], [200.0]), want, rtol=1e-12)


@settings(max_examples=15, deadline=None)
@given(other=st.floats(4000, 60000), c2c=st.floats(60, 3000), smt=st.floats(0.05, 0.45),
       cpf=st.sampled_from([1.0, 2.0, 3.0]))
def test_recovers_the_parameters_that_made_the_column(other, c2c, smt, cpf):
    params = point(smt_gain=smt, cpus_per_flow=cpf, contended_rmw_per_sharer=5.0)
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
    batch = fit_without(LOAD, point(smt_gain=smt, cpus_per_flow=cpf), y, *BOUNDS)
    for i in range(3):
        one = fit_without(LOAD, point(smt_gain=smt[i], cpus_per_flow=cpf[i]), y, *BOUNDS)
        assert one.mape_pct[0] == pytest.approx(batch.mape_pct[i], rel=1e-3, abs=1e-3)


def test_rejects_a_column_of_the_wrong_length_and_a_start_outside_the_bounds():
    with pytest.raises(ValueError, match="without_mbps"):
        fit_without(LOAD, POINT, [1.0, 2.0], *BOUNDS)
    with pytest.raises(ValueError, match="x0"):
        fit_without(LOAD, POINT, np.ones(6), (1.0, 150.0), BOUNDS[1], BOUNDS[2])
