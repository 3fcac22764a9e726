"""memcglab predict prices through the pricing core: the model's network, built by hand."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.cost import CostParams, default_scan_lines
from memcglab.pricing import closed_network, cpu_slowdown
from memcglab.pricing.profile import function_cycles
from memcglab.scenario.model import ScenarioModel, line_label
from memcglab.scenario.spec import load_scenario
from memcglab.scenario.terms import FULL, M0

#: two sockets, so lines cross; a cgroup per instance, so some alternatives have private
#: lines; protection, so a protection line is a station
SMALL = """schema = 1
name = "netperf TCP_SENDFILE, 6 instances in a cgroup each"
[machine]
cpus = 16
sockets = 2
threads_per_core = 2
family = "ice-lake"
[workload]
family = "netperf"
test = "TCP_SENDFILE"
instances = 6
[cgroups]
layout = "per-instance"
protection = true
[base]
model = "single"
[new]
model = "multi"
"""


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    f = tmp_path_factory.mktemp("m") / "small.toml"
    f.write_text(SMALL)
    return load_scenario(f)


@pytest.fixture(scope="module")
def full(scenario):
    return ScenarioModel(scenario, terms=FULL)


def _values(m: ScenarioModel, b: int = 4) -> dict[str, np.ndarray]:
    """The profile's typical costs, and round figures (not fits) that differ per point."""
    v = {n: np.full(b, m.profile.priors[n].typical) for n in CostParams.names()
         if n != "c2c_transfer"}
    v |= {"cpu_ghz": np.linspace(2.0, 3.0, b), "smt_gain": np.full(b, 0.25),
          "busiest_cpu_share": np.linspace(0.55, 0.9, b),
          "hold_cycles": np.linspace(100.0, 900.0, b), "hold_cycles_cross": np.full(b, 700.0),
          "other_cycles": np.linspace(2e3, 4e4, b)}
    return v


def _by_hand(m: ScenarioModel, k: int, v: dict[str, np.ndarray]):
    """The base kernel's network of alternative ``k`` at every point of ``v``, station by
    station as the model's module doc says (what model.py assembled before issue 22)."""
    c, design = m.base[k], m.scenario.base
    b = v["cpu_ghz"].size
    hz = v["cpu_ghz"] * 1e9
    h, hc = v["hold_cycles"], v["hold_cycles_cross"]
    cost = {n: x for n, x in v.items() if n in CostParams.names()}
    scan = default_scan_lines(min(design.slots, 255)) if design.model.startswith("multi") \
        else 1.0
    compute = function_cycles(c.per_op, cost, scan, np.zeros(b), design.model)["total"]
    t = m.terms
    slow = cpu_slowdown(m.instances, m.tasks, m.profile.cpus, m.profile.smt, v["smt_gain"]) \
        if t.cpu_slowdown else 1.0
    busiest = v["busiest_cpu_share"] if t.busiest_share else 1.0
    cpu = (v["other_cycles"] + compute) * busiest * slow / hz
    private = (c.private * ((1 - c.private_cross) * h + c.private_cross * hc) / hz
               if t.private_lines else np.zeros(b))
    lines = m._lines(c, design)
    demand = np.column_stack([n * ((1 - x) * h + x * hc) / hz for _, n, x in lines])
    return closed_network(m.instances, cpu, private, demand, [s for s, _, _ in lines])


@pytest.mark.parametrize("k", [2, 3])
def test_predicts_price_is_the_cores_network(full, k):
    """To the bit (the pinned calibration was fitted on these numbers). Alternatives 2
    and 3 have private lines; 3 lacks the server's line (a station of 0 demand in the
    model's network, which has every alternative's stations)."""
    v = _values(full)
    priced = full.evaluate(v, np.full(4, k))
    want = _by_hand(full, k, v)
    assert "protection:ancestor" in want.stations
    assert full.base[k].private > 0.0
    assert ("usage:server" in want.stations) == (k == 2)
    np.testing.assert_array_equal(priced.base_rate, want.ops_per_s)
    assert priced.base_bottleneck == [line_label(s) for s in want.bottleneck_names()]


def test_terms_switched_off_are_inputs_of_the_same_network(scenario):
    m0 = ScenarioModel(scenario, terms=M0)
    v = _values(m0)
    want = _by_hand(m0, 0, v)
    got = m0.evaluate(v, np.zeros(4, dtype=np.int64), with_profile=False)
    np.testing.assert_array_equal(got.base_rate, want.ops_per_s)
    # the busiest share is not read without its term
    v["busiest_cpu_share"] = np.full(4, 0.5)
    assert m0.evaluate(v, np.zeros(4, dtype=np.int64)).base_rate.tolist() == \
        got.base_rate.tolist()


def test_each_point_is_priced_with_its_own_alternative(full):
    v = _values(full)
    which = np.array([3, 2, 3, 2])
    mixed = full.evaluate(v, which)
    for k in (2, 3):
        idx = np.flatnonzero(which == k)
        alone = full.evaluate({n: x[idx] for n, x in v.items()}, np.full(idx.size, k))
        assert mixed.base_rate[idx].tolist() == alone.base_rate.tolist()
        for f, share in alone.new_profile.items():
            assert mixed.new_profile[f][idx].tolist() == share.tolist()
        assert [mixed.base_bottleneck[i] for i in idx] == alone.base_bottleneck


def test_an_alternative_that_was_not_priced_is_named(full):
    with pytest.raises(ValueError, match=r"which=\[0, 9\]: each point's alternative must be "
                                         r"0 to \d"):
        full.evaluate(_values(full, 2), np.array([0, 9]))
