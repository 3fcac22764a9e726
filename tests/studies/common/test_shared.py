"""What the studies share below them: sources by name, data constraints, what it would take,
and the pricing layer's grouping of draws by trace."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.hardware import load_profile
from memcglab.pricing import group_points, per_unit_coefficients, subset
from memcglab.studies.common import constraints, sources
from memcglab.studies.common.judging import derived_band, search_range, would_take
from memcglab.uncertainty import Prior, Space


def test_sources_are_named_as_their_readers_know_them():
    assert sources.name(sources.MULTI) == \
        "memcg: multi-memcg percpu charge cache (Shakeel Butt, April 2025)"
    assert sources.name(sources.RFC) == ("mm/memcontrol, page_counter: move stock from "
                                         "mem_cgroup to page_counter (Joshua Hahn, RFC, "
                                         "April 2026)")
    assert sources.name(sources.FALSE_SHARING) == ("mm/memcontrol: avoid false sharing "
                                                   "between vmstats and events (Usama Arif, "
                                                   "August 2026)")
    assert sources.cite(sources.MULTI).endswith(
        "<20250416180229.2902751-1-shakeel.butt@linux.dev>")
    assert "20260623180124.868655-1-joshua.hahnjy@gmail.com" in sources.cite(sources.V4)
    assert all("seed" not in s.name for s in sources.SOURCES.values())
    with pytest.raises(KeyError, match="source 'seed 000': unknown; valid"):
        sources.name("seed 000")


def test_the_published_throughput_constrains_netperf_work_on_its_machine_only(monkeypatch):
    monkeypatch.setattr(constraints, "calibrated", lambda *a, **k: None)
    box = load_profile("butt-netperf-72cpu")
    p = constraints.netperf_other_cycles(box)
    wide = box.priors["other_cycles_per_packet"]
    assert wide.low < p.low < p.typical < p.high < wide.high
    # 10 KiB at the published 48,603 Mbit/s is 1.69 us; at 2.7 GHz on two even CPUs, 9.1k
    assert p.typical == pytest.approx(10240 * 8 / 48603e6 * 2.7e9 * 2, rel=0.15)
    other = Prior("other_cycles", "cycles", 3000.0, 12000.0, 80000.0, "loguniform", "x")
    generic = load_profile("generic-x86-64")
    assert constraints.other_cycles_for(generic, "netperf_rx", other) is other
    assert constraints.other_cycles_for(box, "tcp_rr", other) is other
    assert constraints.other_cycles_for(box, "netperf_rx", other) == p
    space = constraints.constrained(Space([other], {"placement": ["a", "b"]}, seeds=[0, 1]),
                                    box, "netperf_rx")
    assert space["other_cycles"] == p and space.seeds == (0, 1)
    assert [a.name for a in space.alternatives] == ["placement"]


def test_the_calibration_comes_first_unless_it_was_fitted_on_what_is_judged():
    from memcglab.calibration.files import load_calibration

    cal = load_calibration("default")[0].calibration
    p = constraints.calibrated("netperf_rx")
    draws = cal.sample(4096, seed=0)
    work = draws["fixed_cycles:tcp_stream"] + draws["unit_cycles:byte"] * 10240
    assert p.typical == pytest.approx(float(np.median(work)))
    assert p.source.startswith("development-set calibration (default:")
    other = Prior("other_cycles", "cycles", 3000.0, 12000.0, 80000.0, "loguniform", "x")
    generic = load_profile("generic-x86-64")
    assert constraints.other_cycles_for(generic, "netperf_rx", other) == p  # any machine
    prefix = cal.cases[0].split("/")[0]
    assert constraints.calibrated("netperf_rx", avoid=(prefix,)) is None
    assert constraints.calibrated("tcp_rr") is None  # no cost family for it here
    assert constraints.describe(p) == "the development-set calibration"


def test_what_it_would_take_searches_past_the_prior_to_a_physical_bound():
    s = Space([Prior("c", "cycles", 45.0, 150.0, 350.0, "triangular", "x"),
               Prior("f", "fraction", 0.1, 0.5, 0.9, "triangular", "x")])
    takes = would_take(lambda d: d["c"] / 100.0 + d["f"], s, ["c", "f"], 17.7,
                       infeasible=lambda n, x: "too hot" if x > 1000 else "")
    assert takes[0].value == pytest.approx((17.7 - 0.5) * 100) and takes[0].infeasible
    assert takes[1].value is None and takes[1].searched == (0.0, 1.0)
    assert "outside its prior 45-350" in takes[0].text()
    assert search_range(s["c"]) == (0.45, 35000.0)


def test_a_derived_band_is_the_interval_arithmetic_of_its_inputs():
    lo, hi = derived_band(lambda a, b: a / b, {"a": (10.0, 1.0), "b": (5.0, 1.0)})
    assert (lo, hi) == pytest.approx((9 / 6, 11 / 4))


def test_draws_group_by_the_discrete_inputs_that_pick_a_trace():
    space = Space([Prior("x", "cycles", 0.0, 1.0, 2.0, "uniform", "x")],
                  {"release": ["task", "softirq"]}, seeds=[0, 1, 2])
    d = space.sample(64)
    seen = np.zeros(d.n, dtype=int)
    for (release, seed), idx in group_points(d, ("release", "seed")):
        assert set(d["release"][idx]) == {release} and set(d["seed"][idx]) == {seed}
        seen[idx] += 1
        assert np.array_equal(subset(d, idx)["x"], d["x"][idx])
    assert (seen == 1).all()
    (values, idx), = list(group_points(d, ()))
    assert values == () and idx.size == d.n
    with pytest.raises(ValueError, match="'x' not discrete|x not discrete"):
        list(group_points(d, ("x",)))


def test_per_unit_coefficients_scale_charges_to_the_unit_of_work():
    from memcglab.engine import replay_compiled
    from memcglab.trace import parse_text

    t = parse_text("memcglab-trace 1\ncpus 1\ncgroup 5 0\ncharge 0 5 1\ncharge 0 5 1\n")
    _, ev = replay_compiled(t, "multi", events=True)
    per_charge = per_unit_coefficients(ev, "multi", 7, 2)
    per_msg = per_unit_coefficients(ev, "multi", 7, 1)
    assert per_msg == pytest.approx(2 * per_charge)
    assert per_unit_coefficients(ev, "multi", 7, 1, keep_c2c=False).shape == per_msg.shape
    with pytest.raises(ValueError, match="units=0"):
        per_unit_coefficients(ev, "multi", 7, 0)
