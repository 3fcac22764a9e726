"""From measurements to a profile, on hand-made results (no benchmark runs here)."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.hardware import HardwareDataError, load_priors, load_profile
from memcglab.probe.measure import QUICK, ProbeResult, Stat, sharer_counts, total_lines
from memcglab.probe.toprofile import Topology, to_profile


def _stat(v: float, spread: float = 0.0) -> Stat:
    return Stat.of([v - spread, v - spread / 2, v, v + spread / 2, v + spread])


def _result(pairs: dict, contend: dict, cpus=(0, 1, 2, 3)) -> ProbeResult:
    return ProbeResult(cpus=cpus, core_ghz=_stat(2.0, 0.1), tsc_ghz=_stat(2.5),
                       local_ns={"l1": _stat(2.0), "rmw": _stat(2.5, 0.5),
                                 "atomic": _stat(10.0, 1.0)},
                       pair_ns={k: _stat(v) for k, v in pairs.items()},
                       contend_ns={k: _stat(v) for k, v in contend.items()},
                       contend_oncpu=dict.fromkeys(contend, 1.0), plan=QUICK,
                       imul_ghz=_stat(1.98, 0.1), imm_ghz=_stat(2.0, 0.1),
                       os_ghz={"/proc/cpuinfo cpu MHz": 2.3})


# two sockets of one core with two SMT threads each: cpus 0,1 | 2,3
TWO_SOCKETS = Topology(package={0: 0, 1: 0, 2: 1, 3: 1},
                       core={0: (0, 0), 1: (0, 0), 2: (1, 0), 3: (1, 0)})
PAIRS = {(0, 1): 10.0, (2, 3): 12.0, (0, 2): 150.0, (0, 3): 160.0, (1, 2): 170.0,
         (1, 3): 180.0}


def test_measured_values_become_narrow_priors_in_cycles():
    p = to_profile(_result(PAIRS, {1: 5.0, 2: 50.0, 3: 60.0, 4: 70.0}), topo=TWO_SOCKETS)
    assert (p.cpus, p.sockets, p.cores, p.smt, p.ghz) == (4, 2, 2, 2, 2.0)
    l1 = p.priors["l1_hit"]                                           # 2 ns at 2 GHz
    assert (l1.low, l1.typical, l1.high, l1.shape) == (4.0, 4.0, 4.0, "point")
    rmw = p.priors["percpu_rmw"]                 # 2.5 ns, IQR half-width 0.25 ns at 2 GHz
    assert (rmw.low, rmw.typical, rmw.high, rmw.shape) == (4.5, 5.0, 5.5, "triangular")
    atomic = p.priors["atomic_rmw"]
    assert atomic.typical == 20.0 and atomic.low < 20.0 < atomic.high
    assert p.priors["cpu_ghz"].typical == 2.0
    assert p.priors["smt_per_core"].typical == 2.0
    assert "0.5 ns" not in atomic.note and "10 ns" in atomic.note


def test_collapsed_quartiles_fall_back_to_the_runs_range():
    # five runs whose quartiles all equal the median, yet the runs differ: not a point
    r = _result(PAIRS, {1: 5.0, 2: 50.0})
    r = replace(r, local_ns={**r.local_ns, "l1": Stat.of([1.9, 2.0, 2.0, 2.0, 2.1])})
    l1 = to_profile(r, topo=TWO_SOCKETS).priors["l1_hit"]    # ns x 2 GHz
    assert (l1.low, l1.typical, l1.high, l1.shape) == (3.8, 4.0, 4.2, "triangular")


def test_pairs_are_split_by_socket_and_smt_siblings_left_out():
    p = to_profile(_result(PAIRS, {1: 5.0, 2: 50.0}), topo=TWO_SOCKETS)
    # no two different cores share a socket here, so only SMT pairs are within one;
    # they stand in as a lower bound, and the note says so
    assert p.priors["c2c_transfer"].typical == 22.0                   # 11 ns median
    assert "SMT siblings only" in p.priors["c2c_transfer"].note
    assert p.priors["c2c_transfer_cross_socket"].typical == 330.0     # 165 ns median


def test_one_socket_keeps_the_generic_cross_socket_prior():
    one = Topology(package=dict.fromkeys(range(4), 0), core={c: (0, c) for c in range(4)})
    pairs = {(a, b): 40.0 + a + b for a in range(4) for b in range(a + 1, 4)}
    p = to_profile(_result(pairs, {1: 5.0, 2: 50.0}), topo=one)
    assert p.priors["c2c_transfer"].typical == 2 * 43.0
    assert "c2c_transfer_cross_socket" not in p.overrides
    assert p.priors["c2c_transfer_cross_socket"] == load_priors()["c2c_transfer_cross_socket"]


def test_contention_curve_and_its_slope():
    p = to_profile(_result(PAIRS, {1: 5.0, 2: 50.0, 3: 60.0, 4: 70.0}), topo=TWO_SOCKETS)
    c = p.curves["contended_rmw"]
    assert c.x == (1, 2, 3, 4) and c.typical == (5.0, 50.0, 60.0, 70.0)
    # 10 ns more per op for each sharer beyond two: 20 cycles at 2 GHz
    assert p.priors["contended_rmw_per_sharer"].typical == pytest.approx(20.0)
    two = to_profile(_result({(0, 1): 40.0}, {1: 5.0, 2: 50.0}, cpus=(0, 1)),
                     topo=Topology({0: 0, 1: 0}, {0: (0, 0), 1: (0, 1)}))
    assert "contended_rmw_per_sharer" not in two.overrides


def test_an_implausible_measurement_is_refused():
    pairs = {k: 1e5 for k in PAIRS}                 # 100 us: a scheduler, not a cache
    with pytest.raises(HardwareDataError, match="c2c_transfer.*=200000.0: outside the plausible"):
        to_profile(_result(pairs, {1: 5.0, 2: 50.0}), topo=TWO_SOCKETS)


def test_a_plausible_median_with_a_noisy_spread_is_cut_at_the_range():
    # a busy machine: the atomic's median is 200 cycles, its high quartile 600 (> 500)
    r = _result(PAIRS, {1: 5.0, 2: 50.0})
    r.local_ns["atomic"] = Stat.of([10.0, 20.0, 100.0, 300.0, 400.0])   # ns at 2 GHz
    atomic = to_profile(r, topo=TWO_SOCKETS).priors["atomic_rmw"]
    assert atomic.typical == 200.0 and atomic.high == 500.0
    assert "cut at the plausible range [0, 500]" in atomic.note


def test_a_clock_whose_spread_leaves_the_plausible_range_is_refused_not_cut():
    # load only slows a dependent chain: runs reaching past 8 GHz are a clock that does
    # not count cycles (the immediate-add chain on Sapphire Rapids), which a cut would hide
    r = replace(_result(PAIRS, {1: 5.0, 2: 50.0}),
                core_ghz=Stat.of([0.5, 1.0, 3.0, 9.0, 12.0]), imul_ghz=_stat(3.0))
    with pytest.raises(HardwareDataError,
                       match=r"priors.cpu_ghz.low=0.0: outside the plausible range \[0.2, 8\]"):
        to_profile(r, topo=TWO_SOCKETS)


def test_clock_chains_that_disagree_are_refused_even_when_plausible():
    # a core that folded half the adds would read 2x its clock, well inside [0.2, 8]
    r = replace(_result(PAIRS, {1: 5.0, 2: 50.0}), core_ghz=_stat(5.0), imul_ghz=_stat(2.5))
    with pytest.raises(HardwareDataError, match=r"cpu_ghz: the clock chains disagree: "
                       r"register-register adds read 5 GHz, 3-cycle imuls 2.5 GHz \(2x"):
        to_profile(r, topo=TWO_SOCKETS)
    # within 10% they agree
    ok = replace(r, imul_ghz=_stat(4.6))
    assert to_profile(ok, topo=TWO_SOCKETS).priors["cpu_ghz"].typical == 5.0


def test_the_clock_note_says_which_chain_is_used_and_how_it_compares_with_the_os():
    r = replace(_result(PAIRS, {1: 5.0, 2: 50.0}), core_ghz=_stat(2.85), imul_ghz=_stat(2.86),
                imm_ghz=_stat(14.0))
    p = to_profile(r, topo=TWO_SOCKETS)
    note = p.priors["cpu_ghz"].note
    assert note.startswith("core clock from dependent register-register adds, one cycle "
                           "each (the clock used)")
    assert "3-cycle imuls read 2.860 GHz (1.004x)" in note
    assert "immediate adds read 14.000 GHz (4.912x; this core folds them" in note
    assert "OS: /proc/cpuinfo cpu MHz 2.300 GHz; the clock used is 1.239x the highest" in note
    assert "TSC 2.500 GHz" in note and "the clock used is 1.239x" in p.note
    # a clock below what the OS reports is compared without the VM remark
    slow = to_profile(replace(r, os_ghz={"cpufreq cpuinfo_max_freq": 3.5}), topo=TWO_SOCKETS)
    assert "0.814x the highest of them" in slow.priors["cpu_ghz"].note
    assert "VM" not in slow.priors["cpu_ghz"].note
    none = to_profile(replace(r, os_ghz={}), topo=TWO_SOCKETS)
    assert "the OS reports no clock" in none.priors["cpu_ghz"].note


@settings(deadline=None, max_examples=40)
@given(st.floats(0.2, 5.0), st.floats(0.0, 2.0), st.floats(20.0, 400.0), st.floats(0.0, 50.0),
       st.floats(1.0, 5.0), st.floats(0.0, 0.3))
def test_plausible_measurements_always_give_a_loadable_profile(l1, spread, c2c, c2c_spread,
                                                               ghz, ghz_spread):
    r = _result({k: c2c for k in PAIRS}, {1: 5.0, 2: 50.0})
    clock = Stat.of([ghz, ghz + ghz_spread / 3, ghz + ghz_spread])
    r = replace(r, core_ghz=clock, imul_ghz=clock)
    r.local_ns["l1"] = Stat.of([l1, l1 + spread / 2, l1 + spread])
    r.pair_ns[(0, 2)] = Stat.of([c2c, c2c + c2c_spread])
    p = to_profile(r, topo=TWO_SOCKETS)
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "p.toml"
        f.write_text(p.to_toml())
        assert load_profile(f) == p


def test_busy_machine_is_flagged_in_the_curve_note():
    r = _result(PAIRS, {1: 5.0, 2: 50.0})
    r.contend_oncpu[2] = 0.4
    note = to_profile(r, topo=TWO_SOCKETS).curves["contended_rmw"].note
    assert "2: 0.40" in note and "the machine was busy" in note


@given(st.integers(1, 4096), st.integers(3, 16))
def test_sharer_counts_start_at_one_end_at_all_and_stay_short(ncpus, most):
    xs = sharer_counts(ncpus, most)
    assert xs[0] == 1 and xs[-1] == ncpus and len(xs) <= most
    assert xs == sorted(set(xs))


def test_progress_total_counts_every_line():
    # 2 clock runs of 5, 3 local values x 5, 1 pair x 5, sharers 1 and 2 x 5
    assert total_lines(2, QUICK) == 10 + 15 + 5 + 10


def test_stat_needs_a_run():
    with pytest.raises(ValueError, match="no runs"):
        Stat.of([])
