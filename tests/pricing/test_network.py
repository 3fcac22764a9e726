"""The package's one network and the CPU slowdown: hand-worked cases, batching, limits."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.pricing.cpu import cpu_slowdown
from memcglab.pricing.network import MAX_INSTANCES, closed_network
from memcglab.queueing import cpu_slowdown as reexported


def test_two_stations_by_hand():
    """One customer's CPU (delay, 500 ns) and one line (queue, 400 ns), 4 customers.

    In ns, Q(0) = 0:
      n=1: R = 400,            X = 1/900,            Q = 4/9
      n=2: R = 400*13/9,       X = 2/(500+5200/9)   = 18/9700,     Q = 104/97
      n=3: R = 400*201/97,     X = 3/(500+80400/97) = 291/128900,  Q = 2412/1289
      n=4: R = 400*3701/1289,  X = 4/(500+1480400/1289) = 5156/2124900
    Per customer X/4 = 606,616.8 per s; line utilisation X*D = 5156*400/2124900.
    """
    r = closed_network(4, [500e-9], [0.0], [[400e-9]], ("usage:0",))
    x4 = float(Fraction(5156, 2124900) * 10**9)
    assert r.ops_per_s[0] == pytest.approx(x4, rel=1e-12)
    assert r.per_instance[0] == pytest.approx(x4 / 4, rel=1e-12)
    assert r.utilisation[0, 2] == pytest.approx(float(Fraction(5156 * 400, 2124900)))
    assert r.utilisation[0, 0] == pytest.approx(x4 / 4 * 500e-9)      # one customer's
    assert r.residence[0, 2] == pytest.approx(400e-9 * 3701 / 1289, rel=1e-12)
    assert r.stations == ("cpu", "private lines", "usage:0")
    assert r.bottleneck_names() == ["usage:0"]


def test_each_network_of_a_batch_is_solved_at_its_own_population():
    demands = np.array([[1e-6, 2e-7, 5e-7, 1e-7], [3e-6, 0.0, 2e-7, 9e-7]])
    pops = np.array([[1, 7, 40], [3, 12, 200]])
    both = closed_network(pops, demands[:, None, 0], demands[:, None, 1],
                          np.broadcast_to(demands[:, None, 2:], (2, 3, 2)), ("a", "b"))
    assert both.ops_per_s.shape == (2, 3) and both.residence.shape == (2, 3, 4)
    for i in range(2):
        for j in range(3):
            one = closed_network(int(pops[i, j]), demands[i, :1], demands[i, 1:2],
                                 demands[i, None, 2:], ("a", "b"))
            assert both.ops_per_s[i, j] == pytest.approx(one.ops_per_s[0], rel=1e-13)
            np.testing.assert_allclose(both.utilisation[i, j], one.utilisation[0], rtol=1e-13)
    assert np.array_equal(both.instances, pops)


def test_no_shared_lines_leaves_the_delays():
    r = closed_network([[1, 10]], [[2e-6, 2e-6]], 1e-6, np.zeros((1, 2, 0)), ())
    assert r.per_instance[0].tolist() == pytest.approx([1e6 / 3] * 2)
    assert r.stations == ("cpu", "private lines")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 2e-6), min_size=1, max_size=3), st.floats(1e-7, 5e-5),
       st.integers(1, 60))
def test_laws_hold(lines, cpu, n):
    names = tuple(f"usage:{i}" for i in range(len(lines)))
    r = closed_network(n, [cpu], [1e-7], [lines], names)
    x = r.ops_per_s[0]
    assert np.all(r.utilisation[0, 2:] <= 1 + 1e-9)                 # bottleneck law
    assert x <= n / r.demands[0].sum() * (1 + 1e-9)                  # never faster than alone
    assert n == pytest.approx(x * r.residence[0].sum(), rel=1e-9)   # Little


@pytest.mark.parametrize(("kw", "match"), [
    ({"instances": 0}, r"instances=0: must be integers from 1 to"),
    ({"instances": MAX_INSTANCES + 1}, "instances="),
    ({"instances": 2.5}, "instances=2.5"),
    ({"instances": True}, "instances=True"),
    ({"lines": [[1e-6, 1e-6]]}, r"lines has shape \(1, 2\): its last axis must be one"),
    ({"cpu": [-1.0]}, "demands must be finite and >= 0"),
])
def test_bad_inputs_are_named(kw, match):
    args = {"instances": 2, "cpu": [1e-6], "private": [0.0], "lines": [[1e-6]],
            "names": ("root",)} | kw
    with pytest.raises(ValueError, match=match):
        closed_network(**args)


def test_cpu_slowdown_by_hand():
    """72 threads, 36 cores, gain 0.25: a paired thread runs at 0.625, i.e. 1.6x slower.

    40 threads: 4 cores paired, 8 threads at 1.6 and 32 at 1 -> (32 + 12.8)/40 = 1.12.
    """
    s = cpu_slowdown(np.array([10, 20, 36, 54]), 2.0, 72.0, 2.0, 0.25)
    assert s.tolist() == pytest.approx([1.0, 1.12, 1.6, 1.6 * 108 / 72])
    assert cpu_slowdown(30, 2.0, 72.0, 1.0, 0.25) == 1.0                 # SMT off: 72 cores
    assert cpu_slowdown(72, 2.0, 72.0, 1.0, 0.25) == pytest.approx(2.0)  # time sharing
    assert reexported is cpu_slowdown                                    # one function


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 200), st.floats(1, 4), st.floats(1, 2), st.floats(0, 1))
def test_cpu_slowdown_is_monotone_and_bounded(n, cpf, smt, gain):
    s = cpu_slowdown(np.arange(1, n + 1), cpf, 72.0, smt, gain)
    assert np.all(np.diff(s) >= -1e-12)
    assert np.all(s >= 1.0)
    threads = np.arange(1, n + 1) * cpf
    assert np.all(s <= 2.0 / (1 + gain) * np.maximum(threads / 72, 1) + 1e-12)
