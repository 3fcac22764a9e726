"""Counted loads priced into throughput per flow, exercised without any study."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memcglab.pricing
from memcglab.cost import CostParams
from memcglab.hardware import load_profile
from memcglab.pricing import FlowLoad, chargepath_space, per_flow_rate, throughput_change
from memcglab.queueing import ChargePathLoad, ChargePathParams, chargepath_throughput

PROFILE = load_profile("butt-netperf-72cpu")
N = len(CostParams.names())
C2C = CostParams.names().index("c2c_transfer")


def _load(shared: float = 0.5, coef: float | np.ndarray = 1.0, **kw) -> FlowLoad:
    coef = np.broadcast_to(coef, (N,)) if np.ndim(coef) == 0 else coef
    return FlowLoad(**{"flows": 36, "coef": coef, "shared_names": ("usage:root",),
                       "shared": (shared,), "private": 0.2, **kw})


def _draws(n: int = 64, workload: str = "tcp_rr", cpus_per_flow: int = 2):
    return chargepath_space(PROFILE, workload, cpus_per_flow, {}, [0]).sample(n)


def test_the_rate_is_the_contention_models_at_the_drawn_inputs():
    d, load = _draws(), _load()
    coef = load.coef.copy()
    coef[C2C] = 0.0
    memcg = np.column_stack([d[n] for n in CostParams.names()]) @ coef
    params = ChargePathParams(
        other_cycles=d["other_cycles"], busiest_cpu_share=d["busiest_cpu_share"],
        ghz=d["cpu_ghz"], c2c_cycles=d["c2c_transfer"],
        c2c_cross_cycles=d["c2c_transfer_cross_socket"],
        cross_socket_fraction=d["cross_socket_fraction"],
        cycles_per_sharer=d["contended_rmw_per_sharer"], cpus=72.0, smt=2.0,
        smt_gain=d["smt_gain"], cpus_per_flow=2.0)
    path = ChargePathLoad(clients=[36], names=("usage:root",), shared=[[0.5]], private=[0.2],
                          memcg_cycles=memcg[:, None])
    want = chargepath_throughput(path, params).per_flow_rate[:, 0]
    np.testing.assert_array_equal(per_flow_rate(load, d, PROFILE), want)


def test_the_cost_models_c2c_units_are_left_to_the_line_stations():
    d = _draws()
    with_c2c = np.ones(N)
    with_c2c[C2C] = 1e6
    np.testing.assert_array_equal(per_flow_rate(_load(), d, PROFILE),
                                  per_flow_rate(_load(coef=with_c2c), d, PROFILE))
    assert _load(coef=with_c2c).coef[C2C] == 1e6  # kept as counted, ignored when priced


def test_one_cpu_per_flow_ignores_the_drawn_busiest_share():
    d = _draws()
    one = _load(cpus_per_flow=1)
    forced = {k: np.asarray(d[k]) for k in d.values} | {"busiest_cpu_share": np.ones(d.n)}
    np.testing.assert_array_equal(per_flow_rate(one, d, PROFILE),
                                  per_flow_rate(one, forced, PROFILE))
    assert not np.array_equal(per_flow_rate(_load(), d, PROFILE),
                              per_flow_rate(_load(), forced, PROFILE))


def test_a_load_without_shared_lines_prices_its_cpu_time_alone():
    d = _draws()
    bare = FlowLoad(flows=4, coef=np.zeros(N))
    empty = FlowLoad(flows=4, coef=np.zeros(N), shared_names=("usage:x",), shared=(0.0,))
    np.testing.assert_array_equal(per_flow_rate(bare, d, PROFILE),
                                  per_flow_rate(empty, d, PROFILE))
    np.testing.assert_array_equal(throughput_change(bare, bare, d, PROFILE), 0.0)


@settings(max_examples=25, deadline=None)
@given(low=st.floats(0.0, 5.0), extra=st.floats(0.01, 5.0), flows=st.integers(1, 64))
def test_more_shared_transfers_never_raise_the_rate(low, extra, flows):
    d = _draws(16)
    a, b = _load(shared=low, flows=flows), _load(shared=low + extra, flows=flows)
    change = throughput_change(a, b, d, PROFILE)
    assert np.all(change <= 1e-9)
    np.testing.assert_array_equal(throughput_change(a, a, d, PROFILE), 0.0)


def test_the_change_is_new_over_base_in_percent():
    d = _draws(8)
    a, b = _load(shared=0.1), _load(shared=3.0)
    want = (per_flow_rate(b, d, PROFILE) / per_flow_rate(a, d, PROFILE) - 1.0) * 100.0
    np.testing.assert_array_equal(throughput_change(a, b, d, PROFILE), want)


@pytest.mark.parametrize(("kw", "match"), [
    ({"flows": 0}, "flows=0"),
    ({"cpus_per_flow": 0}, "cpus_per_flow=0"),
    ({"coef": np.ones(N - 1)}, "coef has shape"),
    ({"coef": np.full(N, np.nan)}, "coef has shape"),
    ({"shared_names": ("usage:a", "usage:b")}, "one finite value >= 0 per name"),
    ({"shared": -1.0}, "one finite value >= 0 per name"),
    ({"private": float("inf")}, "private=inf"),
])
def test_a_bad_load_is_named(kw, match):
    with pytest.raises(ValueError, match=match):
        _load(**kw)


def test_draws_lacking_an_input_are_named():
    d = {k: np.asarray(v) for k, v in _draws(2).values.items() if k != "smt_gain"}
    with pytest.raises(ValueError, match="draws lack smt_gain"):
        per_flow_rate(_load(), d, PROFILE)


def test_the_pricing_layer_knows_no_study_and_no_published_number():
    root = Path(memcglab.pricing.__file__).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith(("memcglab.studies", "memcglab.published",
                                            "memcglab.stats")), f"{path.name} imports {name}"
