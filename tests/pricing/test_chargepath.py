"""The pricing core's load type and pricing function, exercised without any study."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memcglab.pricing
from memcglab.cost import CostParams
from memcglab.hardware import load_profile
from memcglab.pricing import (
    INPUTS,
    FlowLoad,
    charge_cycles,
    chargepath_space,
    closed_network,
    core_inputs,
    cpu_slowdown,
    per_flow_rate,
    price_flows,
    throughput_change,
)

PROFILE = load_profile("butt-netperf-72cpu")
N = len(CostParams.names())
C2C = CostParams.names().index("c2c_transfer")
#: round figures, not fits
POINT = {"other_cycles": 12_000.0, "busiest_cpu_share": 0.6, "cpu_ghz": 2.7,
         "hold_cycles": 150.0, "hold_cycles_cross": 350.0, "cross_socket_fraction": 0.5,
         "smt_gain": 0.25, "cpus_per_flow": 2.0, "cpus": 72.0, "smt": 2.0}


def _load(shared: float = 0.5, flows=36, memcg=200.0) -> FlowLoad:
    return FlowLoad(flows=flows, memcg_cycles=memcg, shared_names=("usage:root",),
                    shared=[shared], private=0.2)


def _draws(n: int = 64, workload: str = "tcp_rr", cpus_per_flow: int = 2):
    return chargepath_space(PROFILE, workload, cpus_per_flow, {}, [0]).sample(n)


def test_the_price_is_the_network_of_the_stations_the_module_doc_names():
    """By hand at 2 GHz: CPU (200 + 12000) * 0.6 * slowdown(36 flows) / 2e9; private 0.2 *
    150 / 2e9; the line 0.5 * (0.5 * 150 + 0.5 * 350) / 2e9."""
    r = price_flows(_load(), POINT | {"cpu_ghz": 2.0})
    slow = float(cpu_slowdown(36, 2.0, 72.0, 2.0, 0.25))
    want = closed_network(36, [12_200 * 0.6 * slow / 2e9], [0.2 * 150 / 2e9],
                          [[0.5 * 250 / 2e9]], ("usage:root",))
    np.testing.assert_allclose(r.demands[0, 0], want.demands[0], rtol=1e-13)
    np.testing.assert_allclose(r.per_instance[0, 0], want.per_instance[0], rtol=1e-13)
    assert r.stations == ("cpu", "private lines", "usage:root")


def test_contention_is_the_queue_alone_no_cost_per_sharer():
    """The hold time per transfer is the input's, whatever the number of writers."""
    r = price_flows(_load(flows=[1, 8, 36]), POINT)
    hold = r.demands[0, :, 2] / 0.5 * 2.7e9
    assert hold.tolist() == pytest.approx([250.0] * 3)


def test_private_cycles_price_the_private_lines_only():
    base = price_flows(_load(), POINT)
    cheap = price_flows(_load(), POINT | {"private_cycles": 0.0})
    assert cheap.demands[0, 0, 1] == 0.0
    assert cheap.demands[0, 0, 2] == base.demands[0, 0, 2]


def test_a_hold_time_per_flow_count_prices_each_count_with_its_own():
    load = _load(flows=[6, 36])
    per_count = price_flows(load, POINT | {"hold_cycles": [[100.0, 400.0]],
                                           "hold_cycles_cross": [[100.0, 400.0]]})
    for j, h in enumerate((100.0, 400.0)):
        one = price_flows(_load(flows=load.flows[j]), POINT | {"hold_cycles": h,
                                                               "hold_cycles_cross": h})
        assert per_count.per_instance[0, j] == pytest.approx(one.per_instance[0, 0], rel=1e-13)


def test_a_loads_own_cross_socket_shares_price_each_line_at_its_own_mix():
    """What predict's counts give: line 0's writers on one socket, line 1's on both."""
    two = FlowLoad(flows=[6, 36], memcg_cycles=200.0, shared_names=("usage:root", "usage:ancestor"),
                   shared=[0.5, 0.25], private=0.2, cross=[[0.0, 1.0], [0.0, 0.5]])
    no_input = {k: v for k, v in POINT.items() if k != "cross_socket_fraction"}
    r = price_flows(two, no_input | {"cpu_ghz": 1.0})
    assert r.demands[0, :, 2].tolist() == pytest.approx([0.5 * 150 / 1e9] * 2, rel=1e-15)
    assert r.demands[0, :, 3].tolist() == pytest.approx([0.25 * 350 / 1e9, 0.25 * 250 / 1e9],
                                                        rel=1e-15)
    # one share on every line is the cross_socket_fraction input
    same = FlowLoad(flows=36, memcg_cycles=200.0, shared_names=("usage:root",), shared=[0.5],
                    private=0.2, cross=[0.5])
    np.testing.assert_array_equal(price_flows(same, no_input).demands,
                                  price_flows(_load(), POINT).demands)


def test_a_loads_private_cross_share_prices_its_private_lines_at_the_hold_times():
    load = FlowLoad(flows=36, memcg_cycles=200.0, private=0.2, private_cross=0.25)
    r = price_flows(load, POINT | {"cpu_ghz": 1.0})
    assert r.demands[0, 0, 1] == pytest.approx(0.2 * (0.75 * 150 + 0.25 * 350) / 1e9, rel=1e-15)
    with pytest.raises(ValueError, match="private_cycles: the load counts its private lines"):
        price_flows(load, POINT | {"private_cycles": 100.0})


def test_the_busiest_cpu_runs_at_least_an_even_share():
    one_cpu = POINT | {"cpus_per_flow": 1.0}
    np.testing.assert_array_equal(per_flow_rate(_load(), one_cpu),
                                  per_flow_rate(_load(), one_cpu | {"busiest_cpu_share": 1.0}))
    assert per_flow_rate(_load(), POINT)[0, 0] > per_flow_rate(
        _load(), POINT | {"busiest_cpu_share": 1.0})[0, 0]


def test_a_batch_equals_one_point_at_a_time():
    d = _draws(8)
    x = core_inputs(d, PROFILE, 2)
    load = _load(flows=[4, 36], memcg=np.arange(16.0).reshape(8, 2) * 10)
    batch = per_flow_rate(load, x)
    for i in range(8):
        one = {k: (np.asarray(v)[i] if np.ndim(v) else v) for k, v in x.items()}
        alone = FlowLoad(flows=[4, 36], memcg_cycles=load.memcg_cycles[i],
                         shared_names=load.shared_names, shared=load.shared,
                         private=load.private)
        np.testing.assert_allclose(batch[i], per_flow_rate(alone, one)[0], rtol=1e-13)


def test_charge_cycles_leave_the_cost_models_transfers_to_the_line_stations():
    d = _draws()
    units = np.ones(N)
    with_c2c = units.copy()
    with_c2c[C2C] = 1e6
    np.testing.assert_array_equal(charge_cycles(units, d), charge_cycles(with_c2c, d))
    assert with_c2c[C2C] == 1e6  # the caller's units are not changed


def test_core_inputs_take_the_drawn_transfer_as_the_hold_time():
    d = _draws(4)
    x = core_inputs(d, PROFILE, 1)
    np.testing.assert_array_equal(x["hold_cycles"], d["c2c_transfer"])
    np.testing.assert_array_equal(x["hold_cycles_cross"], d["c2c_transfer_cross_socket"])
    assert set(x) == set(INPUTS) and x["cpus"] == PROFILE.cpus and x["cpus_per_flow"] == 1.0
    assert "contended_rmw_per_sharer" not in chargepath_space(PROFILE, "tcp_rr", 2, {},
                                                              [0]).varying


@settings(max_examples=25, deadline=None)
@given(low=st.floats(0.0, 5.0), extra=st.floats(0.01, 5.0), flows=st.integers(1, 64))
def test_more_shared_transfers_never_raise_the_rate(low, extra, flows):
    x = core_inputs(_draws(16), PROFILE, 2)
    a, b = _load(shared=low, flows=flows), _load(shared=low + extra, flows=flows)
    assert np.all(throughput_change(a, b, x) <= 1e-9)
    np.testing.assert_array_equal(throughput_change(a, a, x), 0.0)


def test_the_change_is_new_over_base_in_percent():
    x = core_inputs(_draws(8), PROFILE, 2)
    a, b = _load(shared=0.1), _load(shared=3.0)
    want = (per_flow_rate(b, x) / per_flow_rate(a, x) - 1.0) * 100.0
    np.testing.assert_array_equal(throughput_change(a, b, x), want)
    with pytest.raises(ValueError, match="same flow counts"):
        throughput_change(a, _load(flows=4), x)


@pytest.mark.parametrize(("kw", "match"), [
    ({"flows": 0}, r"flows=\[0\]"),
    ({"flows": [3, True]}, r"flows=\[3, True\]"),
    ({"shared": [1.0, 2.0]}, r"shared has shape \(2,\): must be \(1, 1\)"),
    ({"shared": [[1.0, 2.0]]}, r"shared has shape \(1, 2\): must be \(1, 1\)"),
    ({"shared": [-1.0]}, "shared has shape"),
    ({"private": float("inf")}, "private has shape"),
    ({"memcg_cycles": [1.0, 2.0]}, r"memcg_cycles has shape \(2,\): must be \(1,\) or"),
    ({"cross": [1.5]}, r"cross has shape \(1, 1\): must be \(1, 1\).*>= 0 and <= 1"),
    ({"cross": [0.5, 0.5]}, r"cross has shape \(2,\)"),
    ({"private_cross": -0.1}, r"private_cross has shape \(1,\): must be \(1,\)"),
])
def test_a_bad_load_is_named(kw, match):
    args = {"flows": 36, "memcg_cycles": 1.0, "shared_names": ("usage:root",),
            "shared": [0.5], "private": 0.2} | kw
    with pytest.raises(ValueError, match=match):
        FlowLoad(**args)


@pytest.mark.parametrize(("kw", "match"), [
    ({"smt": 3.0}, r"smt=3.0: must be a number, a \(B,\) or a \(B, 1\) array of numbers "
                   r"between 1.0 and 2.0"),
    ({"busiest_cpu_share": 1.5}, "busiest_cpu_share=1.5"),
    ({"cpu_ghz": [2.0, np.nan]}, "cpu_ghz="),
    ({"cpu_ghz": [2.0, 3.0], "hold_cycles": [1.0, 2.0, 3.0]}, r"batch sizes \[2, 3\]"),
    ({"private_cycles": -1.0}, "private_cycles=-1.0"),
])
def test_bad_inputs_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        price_flows(_load(), POINT | kw)


def test_missing_inputs_are_named():
    with pytest.raises(ValueError, match="inputs lack smt_gain; the pricing core needs"):
        price_flows(_load(), {k: v for k, v in POINT.items() if k != "smt_gain"})
    with pytest.raises(ValueError, match="memcg_cycles has 3 rows"):
        price_flows(_load(memcg=np.ones((3, 1))), POINT | {"cpu_ghz": [2.0, 2.5]})


def test_the_pricing_layer_knows_no_study_and_no_published_number():
    root = Path(memcglab.pricing.__file__).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith(("memcglab.studies", "memcglab.published",
                                            "memcglab.stats")), f"{path.name} imports {name}"


def test_the_pricing_core_is_the_only_network():
    """No module of the package but the core's network runs the MVA solver (issue 22):
    predict and the studies price through it; the solvers live in memcglab.queueing."""
    root = Path(memcglab.pricing.__file__).parent.parent
    solver = re.compile(r"\b(mva|mva_at|schweitzer)\(")
    users = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                   if solver.search(p.read_text()) and "queueing" not in p.parts)
    assert users == ["pricing/network.py"]
