"""synthetic: contract, conservation, and the tenant-mix shapes of study 2."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.trace import OP_CHARGE, OP_UNCHARGE
from memcglab.workloads.describe import memcgs_per_cpu, switch_fraction
from memcglab.workloads.synthetic import MIXES, SyntheticSpec, synthetic
from tests.workloads.checks import assert_conserved, assert_contract, same_ops


def _charges_by_cpu(spec: SyntheticSpec) -> tuple[np.ndarray, np.ndarray]:
    ops = synthetic(spec).ops
    charges = ops[ops["op"] == OP_CHARGE]
    return charges["cpu"], charges["memcg"]


def test_deterministic_for_a_seed_and_different_across_seeds():
    spec = SyntheticSpec(charges_per_cpu=500)
    assert same_ops(synthetic(spec), synthetic(spec))
    assert not same_ops(synthetic(spec), synthetic(dataclasses.replace(spec, seed=1)))


@pytest.mark.parametrize("mix", sorted(MIXES))
def test_contract_and_conservation(mix):
    spec = SyntheticSpec(charges_per_cpu=2000, mix=mix, remote_release=0.3)
    trace = synthetic(spec)
    assert_contract(trace)
    assert_conserved(trace)
    charges = trace.ops[trace.ops["op"] == OP_CHARGE]
    assert len(charges) == 8 * 2000
    assert set(np.unique(charges["arg"]).tolist()) == {1, 2, 3}


@pytest.mark.parametrize("active", [1, 7, 8, 64])
def test_each_cpu_charges_exactly_its_active_memcgs(active):
    spec = SyntheticSpec(cpus=4, memcgs=64, active_per_cpu=active, charges_per_cpu=3000)
    assert memcgs_per_cpu(synthetic(spec)).tolist() == [active] * 4


def test_uniform_mix_switches_memcg_as_a_uniform_draw_does():
    spec = SyntheticSpec(active_per_cpu=16, charges_per_cpu=5000)
    assert switch_fraction(synthetic(spec)) == pytest.approx(1 - 1 / 16, abs=0.01)


def test_zipf_mix_gives_rank_r_a_share_proportional_to_one_over_r_to_the_s():
    for s in (0.5, 1.0, 2.0):
        spec = SyntheticSpec(cpus=2, active_per_cpu=10, mix="zipf", zipf_s=s,
                             charges_per_cpu=40_000)
        cpu, memcg = _charges_by_cpu(spec)
        weight = 1 / np.arange(1, 11) ** s
        expect = np.sort(weight / weight.sum())[::-1]
        for c in (0, 1):
            share = np.sort(np.unique(memcg[cpu == c], return_counts=True)[1])[::-1] / 40_000
            assert share == pytest.approx(expect, abs=0.01)


def test_bursty_mix_switches_memcg_only_at_phase_boundaries():
    spec = SyntheticSpec(cpus=4, active_per_cpu=32, mix="bursty", burst_length=50,
                         charges_per_cpu=5000)
    # A boundary every 50 charges, to another memcg unless the same one is drawn (1/32).
    assert switch_fraction(synthetic(spec)) == pytest.approx((1 / 50) * (31 / 32), abs=0.004)
    cpu, memcg = _charges_by_cpu(spec)
    phases = memcg[cpu == 0].reshape(-1, 50)
    assert all(len(set(p.tolist())) == 1 for p in phases)


def test_bursty_phases_cover_burst_memcgs_each():
    spec = SyntheticSpec(cpus=2, active_per_cpu=16, mix="bursty", burst_length=200,
                         burst_memcgs=4, charges_per_cpu=4000)
    cpu, memcg = _charges_by_cpu(spec)
    phases = memcg[cpu == 1].reshape(-1, 200)
    assert [len(set(p.tolist())) for p in phases] == [4] * 20


def test_remote_release_sets_the_fraction_of_releases_on_another_cpu():
    base = SyntheticSpec(cpus=8, charges_per_cpu=4000)
    local = synthetic(base)
    # All local: each CPU releases exactly the pages it charged, memcg by memcg.
    ops = local.ops[local.ops["op"] != 0]
    key = ops["cpu"].astype(np.int64) * 1000 + ops["memcg"]
    signed = np.where(ops["op"] == OP_CHARGE, 1, -1) * ops["arg"].astype(np.int64)
    assert not np.bincount(key, weights=signed).any()
    for fraction in (0.1, 0.5, 1.0):
        moved = synthetic(dataclasses.replace(base, remote_release=fraction))
        # Only release CPUs differ, so the uncharge rows align one to one.
        before = local.ops[local.ops["op"] == OP_UNCHARGE]
        after = moved.ops[moved.ops["op"] == OP_UNCHARGE]
        assert np.array_equal(before["memcg"], after["memcg"])
        assert np.mean(before["cpu"] != after["cpu"]) == pytest.approx(fraction, abs=0.02)


def test_release_delay_sets_pages_outstanding():
    def outstanding(delay: int) -> float:
        ops = synthetic(SyntheticSpec(cpus=2, release_delay=delay, charges_per_cpu=4000)).ops
        ops = ops[ops["op"] != 0]
        sign = np.where(ops["op"] == OP_CHARGE, 1, -1)
        return float(np.mean(np.cumsum(sign)))  # charges in flight, machine-wide

    # Each CPU keeps about `delay` charges outstanding.
    assert outstanding(4) == pytest.approx(2 * 4, rel=0.1)
    assert outstanding(32) == pytest.approx(2 * 32, rel=0.1)


@settings(max_examples=25, deadline=None)
@given(cpus=st.integers(1, 12), memcgs=st.integers(1, 70), mix=st.sampled_from(sorted(MIXES)),
       n=st.integers(1, 300), delay=st.integers(1, 20), pages=st.integers(1, 100),
       seed=st.integers(0, 2**64 - 1), data=st.data())
def test_any_spec_gives_a_valid_conserving_trace(cpus, memcgs, mix, n, delay, pages, seed, data):
    active = data.draw(st.integers(1, memcgs))
    spec = SyntheticSpec(
        cpus=cpus, memcgs=memcgs, active_per_cpu=active, mix=mix, charges_per_cpu=n,
        burst_length=data.draw(st.integers(1, 80)),
        burst_memcgs=data.draw(st.integers(1, active)),
        zipf_s=data.draw(st.floats(0, 4)), release_delay=delay, max_pages=pages,
        remote_release=data.draw(st.floats(0, 1)) if cpus > 1 else 0.0, seed=seed)
    trace = synthetic(spec)
    assert_contract(trace)
    # At most 2*delay-1 later steps of the CPU can charge before the release.
    assert_conserved(trace, most=cpus * (2 * delay) * pages)
    assert (memcgs_per_cpu(trace) <= active).all()


@pytest.mark.parametrize("changes, message", [
    ({"memcgs": 0}, "memcgs=0: must be an integer between 1 and 65534"),
    ({"active_per_cpu": 65}, "active_per_cpu=65: must be an integer between 1 and 64 (at most"),
    ({"mix": "pareto"}, "mix='pareto': must be one of uniform, zipf, bursty"),
    ({"burst_memcgs": 17}, "burst_memcgs=17: must be an integer between 1 and 16"),
    ({"zipf_s": -1.0}, "zipf_s=-1.0: must be a number in [0.0, 16.0]"),
    ({"remote_release": 2}, "remote_release=2: must be a number in [0.0, 1.0]"),
    ({"cpus": 1, "remote_release": 0.5}, "remote_release=0.5: must be 0 with cpus=1"),
    ({"max_pages": 2**32}, "max_pages=4294967296: must be an integer between 1 and 4294967295"),
])
def test_invalid_parameters_name_the_field_and_what_is_valid(changes, message):
    with pytest.raises(ValueError) as info:
        SyntheticSpec(**changes)
    assert str(info.value).startswith(message)
