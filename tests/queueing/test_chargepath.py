"""The charge-path throughput model: hand-worked cases, batching, inputs and limits."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.queueing.chargepath import (
    ChargePathLoad,
    ChargePathParams,
    chargepath_throughput,
    cpu_slowdown,
)


def one_line(clients, transfers=1.0, private=0.0, memcg=0.0):
    return ChargePathLoad(clients=clients, names=("usage:0",),
                          shared=[[transfers]] * len(clients), private=[private] * len(clients),
                          memcg_cycles=[memcg] * len(clients))


def test_two_stations_by_hand():
    """A flow's CPU (delay) and the root's usage line (queue), 4 flows, worked by hand.

    other_cycles 1000, memcg 0, busiest share 1/2 at 1 GHz: CPU demand Z = 500 ns
    per message; 4 flows x 2 CPUs = 8 threads <= 36 cores, so no SMT slowdown. One
    transfer per message, held 400 cycles (no per-sharer term): D = 400 ns.
    In ns, Q(0) = 0:
      n=1: R = 400,            X = 1/900,            Q = 4/9
      n=2: R = 400*13/9,       X = 2/(500+5200/9)   = 18/9700,     Q = 104/97
      n=3: R = 400*201/97,     X = 3/(500+80400/97) = 291/128900,  Q = 2412/1289
      n=4: R = 400*3701/1289,  X = 4/(500+1480400/1289) = 5156/2124900
    Per flow: X/4 = 1289/2124900 per ns = 606,616.8 messages/s; line utilisation
    X*D = 5156*400/2124900; 10 KiB per message.
    """
    p = ChargePathParams(other_cycles=1000.0, ghz=1.0, c2c_cycles=400.0, cycles_per_sharer=0.0)
    r = chargepath_throughput(one_line([1, 4]), p)
    x4 = Fraction(5156, 2124900) * 10**9
    assert r.aggregate_rate[0, 1] == pytest.approx(float(x4), rel=1e-12)
    assert r.per_flow_rate[0, 0] == pytest.approx(1e9 / 900, rel=1e-12)
    assert r.per_flow_mbps[0, 1] == pytest.approx(float(x4) / 4 * 10240 * 8 / 1e6, rel=1e-12)
    assert r.utilisation[0, 1, 2] == pytest.approx(float(Fraction(5156 * 400, 2124900)))
    assert r.utilisation[0, 1, 0] == pytest.approx(float(x4) / 4 * 500e-9)   # per flow
    assert r.stations == ("cpu", "private lines", "usage:0")
    assert r.bottleneck_names() == [["cpu", "usage:0"]]


def test_sharers_and_cross_socket_set_the_hold_time():
    """8 writing CPUs: hold = 0.5*100 + 0.5*300 + 6*10 = 260 cycles at 2 GHz = 130 ns."""
    p = ChargePathParams(other_cycles=0.0, ghz=2.0, c2c_cycles=100.0, c2c_cross_cycles=300.0,
                         cross_socket_fraction=0.5, cycles_per_sharer=10.0)
    r = chargepath_throughput(one_line([4], transfers=2.0, private=3.0), p)
    assert r.demands[0, 0].tolist() == pytest.approx([0.0, 3 * 50e-9, 2 * 130e-9])


def test_no_shared_transfers_no_contention():
    p = ChargePathParams(other_cycles=20_000.0, ghz=2.0, busiest_cpu_share=0.5)
    r = chargepath_throughput(one_line([1, 10, 18], transfers=0.0, memcg=400.0), p)
    assert r.per_flow_rate[0].tolist() == pytest.approx([2e9 / (20_400 * 0.5)] * 3)


def test_cpu_slowdown_by_hand():
    """72 threads, 36 cores, gain 0.25: a paired thread runs at 0.625, i.e. 1.6x slower.

    40 threads: 4 cores paired, 8 threads at 1.6 and 32 at 1 -> (32 + 12.8)/40 = 1.12.
    """
    s = cpu_slowdown(np.array([10, 20, 36, 54]), 2.0, 72.0, 2.0, 0.25)
    assert s.tolist() == pytest.approx([1.0, 1.12, 1.6, 1.6 * 108 / 72])
    assert cpu_slowdown(30, 2.0, 72.0, 1.0, 0.25) == 1.0                 # SMT off: 72 cores
    assert cpu_slowdown(72, 2.0, 72.0, 1.0, 0.25) == pytest.approx(2.0)  # time sharing


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 200), st.floats(1, 4), st.floats(1, 2), st.floats(0, 1))
def test_cpu_slowdown_is_monotone_and_bounded(n, cpf, smt, gain):
    s = cpu_slowdown(np.arange(1, n + 1), cpf, 72.0, smt, gain)
    assert np.all(np.diff(s) >= -1e-12)
    assert np.all(s >= 1.0)
    threads = np.arange(1, n + 1) * cpf
    assert np.all(s <= 2.0 / (1 + gain) * np.maximum(threads / 72, 1) + 1e-12)


def test_batch_equals_one_by_one():
    load = ChargePathLoad(clients=[2, 9, 30], names=("usage:0", "usage:1"),
                          shared=[[0.1, 0.1], [0.3, 0.2], [0.6, 0.6]], private=[0.1, 0.2, 0.3],
                          memcg_cycles=[120.0, 150.0, 220.0])
    c2c = np.array([50.0, 150.0, 400.0])
    ghz = np.array([2.0, 2.7, 3.5])
    batch = chargepath_throughput(load, ChargePathParams(c2c_cycles=c2c, ghz=ghz))
    for i in range(3):
        one = chargepath_throughput(load, ChargePathParams(c2c_cycles=c2c[i], ghz=ghz[i]))
        assert np.allclose(batch.per_flow_rate[i], one.per_flow_rate[0], rtol=1e-13)
        assert np.allclose(batch.utilisation[i], one.utilisation[0], rtol=1e-13)


def test_memcg_cycles_per_sample():
    load = ChargePathLoad(clients=[3], names=("usage:0",), shared=[[0.2]], private=[0.0],
                          memcg_cycles=[[100.0], [5000.0]])
    r = chargepath_throughput(load, ChargePathParams())
    assert r.per_flow_rate.shape == (2, 1) and r.per_flow_rate[0, 0] > r.per_flow_rate[1, 0]
    with pytest.raises(ValueError, match="must be 1 or the parameter batch's 3"):
        chargepath_throughput(load, ChargePathParams(ghz=[2.0, 2.5, 3.0]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 2), min_size=1, max_size=3), st.floats(10, 500),
       st.floats(100, 50_000), st.integers(1, 60))
def test_laws_hold(transfers, c2c, other, n):
    k = len(transfers)
    load = ChargePathLoad(clients=[n], names=tuple(f"usage:{i}" for i in range(k)),
                          shared=[transfers], private=[0.1], memcg_cycles=[100.0])
    r = chargepath_throughput(load, ChargePathParams(c2c_cycles=c2c, other_cycles=other))
    d = r.demands[0, 0]
    x = r.aggregate_rate[0, 0]
    assert np.all(r.utilisation[0, 0, 2:] <= 1 + 1e-9)                  # bottleneck law
    assert x <= n / d.sum() * (1 + 1e-9)                                 # never faster than alone
    assert n == pytest.approx(x * r.residence[0, 0].sum(), rel=1e-9)    # Little


def test_from_params_names_and_errors():
    p = ChargePathParams.from_params({"c2c_transfer": np.array([100.0, 200.0]), "cpu_ghz": 3.0,
                                      "contended_rmw_per_sharer": 0.0, "smt_per_core": 1.0,
                                      "other_cycles_per_packet": 9000.0, "l1_hit": 4.0},
                                     ignore=("l1_hit",))
    assert (p.ghz, p.smt, p.other_cycles, p.cycles_per_sharer) == (3.0, 1.0, 9000.0, 0.0)
    assert p.batch()[0] == 2
    with pytest.raises(ValueError, match="unknown name 'l1_hit'"):
        ChargePathParams.from_params({"l1_hit": 4.0})
    with pytest.raises(ValueError, match="sets 'ghz' twice"):
        ChargePathParams.from_params({"ghz": 2.0, "cpu_ghz": 3.0})


@pytest.mark.parametrize("kwargs,match", [
    (dict(smt=3.0), "smt=3.0"),
    (dict(busiest_cpu_share=1.5), "busiest_cpu_share=1.5"),
    (dict(ghz=[2.0, np.nan]), "ghz="),
    (dict(ghz=[2.0, 3.0], c2c_cycles=[1.0, 2.0, 3.0]), "lengths \\[2, 3\\]"),
])
def test_params_errors_name_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ChargePathParams(**kwargs)


def test_load_errors_name_the_field():
    with pytest.raises(ValueError, match="clients="):
        ChargePathLoad(clients=[0], names=(), shared=[[]], private=[0.0], memcg_cycles=[0.0])
    with pytest.raises(ValueError, match="shared has shape \\(1, 2\\): must be \\(1, 1\\)"):
        ChargePathLoad(clients=[3], names=("usage:0",), shared=[[1.0, 2.0]], private=[0.0],
                       memcg_cycles=[0.0])
