"""Sobol indices against Ishigami's analytic values; break-even; tornado swings."""

import numpy as np
import pytest

from memcglab.uncertainty import Alternative, Prior, Space, at_fixed, break_even, sobol, tornado

A, B = 7.0, 0.1


def _ishigami_indices(a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """Analytic first-order and total indices of sin x1 + a sin^2 x2 + b x3^4 sin x1."""
    pi = np.pi
    v1 = 0.5 * (1 + b * pi**4 / 5) ** 2
    v2 = a**2 / 8
    v13 = b**2 * pi**8 * (1 / 18 - 1 / 50)
    v = v1 + v2 + v13
    return np.array([v1, v2, 0.0]) / v, np.array([v1 + v13, v2, v13]) / v


def _ishigami(d):
    return np.sin(d["x1"]) + A * np.sin(d["x2"]) ** 2 + B * d["x3"] ** 4 * np.sin(d["x1"])


def _ishigami_space() -> Space:
    return Space([Prior(f"x{i}", "rad", -np.pi, 0.0, np.pi, "uniform", "Ishigami test")
                  for i in (1, 2, 3)])


def test_analytic_ishigami_values_are_the_textbook_ones():
    first, total = _ishigami_indices(A, B)
    np.testing.assert_allclose(first, [0.314, 0.442, 0.0], atol=1e-3)
    np.testing.assert_allclose(total, [0.558, 0.442, 0.244], atol=1e-3)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sobol_indices_match_ishigami(seed):
    # n = 4096: over 20 seeds the largest error of any index was 0.012; 0.03 is honest
    first, total = sobol(_ishigami, _ishigami_space(), n=4096, seed=seed)
    want_first, want_total = _ishigami_indices(A, B)
    assert list(first.index) == ["x1", "x2", "x3"]
    np.testing.assert_allclose(first.to_numpy(), want_first, atol=0.03)
    np.testing.assert_allclose(total.to_numpy(), want_total, atol=0.03)


def test_sobol_needs_power_of_two():
    with pytest.raises(ValueError, match="power of 2"):
        sobol(_ishigami, _ishigami_space(), n=1000)


def test_sobol_sees_a_discrete_alternative_and_ignores_an_inert_one():
    s = Space([Prior("x", "cycles", 0.0, 0.5, 1.0, "uniform", "t")],
              {"cpus_per_flow": [1, 2, 4], "inert": ["p", "q"]})
    first, total = sobol(lambda d: d["x"] + d["cpus_per_flow"], s, n=2048, seed=0)
    # var(x) = 1/12, var(cpus) over {1, 2, 4} = 14/9: the alternative dominates
    want = (14 / 9) / (14 / 9 + 1 / 12)
    assert first["cpus_per_flow"] == pytest.approx(want, abs=0.03)
    assert abs(total["inert"]) < 0.01


def test_break_even_linear_root_and_none_outside_range():
    s = Space([Prior("x", "cycles", 0.0, 2.0, 10.0, "triangular", "t"),
               Prior("y", "cycles", 1.0, 3.0, 5.0, "uniform", "t")])
    # 2x - y - 4 = 0 with y typical (3): x = 3.5
    assert break_even(lambda d: 2 * d["x"] - d["y"] - 4, s, "x") == pytest.approx(3.5, abs=1e-8)
    # x typical (2): 4 - y - 4 = -y < 0 on [1, 5]: no root
    assert break_even(lambda d: 2 * d["x"] - d["y"] - 4, s, "y") is None
    # a threshold other than zero
    assert break_even(lambda d: d["x"], s, "x", threshold=7.25) == pytest.approx(7.25)


def test_break_even_nearest_typical_of_several_roots():
    s = Space([Prior("x", "u", 0.0, 6.0, 10.0, "uniform", "t")])
    # roots at 1 and 7; typical 6 -> 7
    assert break_even(lambda d: (d["x"] - 1) * (d["x"] - 7), s, "x") == pytest.approx(7.0)


def test_break_even_averages_over_seeds_and_uses_declared_defaults():
    s = Space([Prior("x", "u", 0.0, 1.0, 10.0, "uniform", "t")],
              [Alternative("offset", (1.0, 5.0), default=5.0)], seeds=[0, 2])
    fn = lambda d: d["x"] - d["offset"] - d["seed"]  # noqa: E731
    # offset held at its default 5, seeds 0 and 2 averaged: root at 6
    assert break_even(fn, s, "x") == pytest.approx(6.0)
    assert at_fixed(fn, s, {"x": [6.0, 7.0]}).tolist() == pytest.approx([0.0, 1.0])
    with pytest.raises(ValueError, match="discrete"):
        break_even(fn, s, "offset")


def test_tornado_swings_sorted_with_option_labels():
    s = Space([Prior("x", "cycles", 0.0, 0.5, 1.0, "uniform", "t")],
              {"placement": ["same", "softirq", "reader"]})
    cost = {"same": 0.0, "softirq": 3.0, "reader": -1.0}
    t = tornado(lambda d: d["x"] + np.array([cost[p] for p in d["placement"]]), s)
    assert t["input"].tolist() == ["placement", "x"]
    row = t.iloc[0]
    assert (row.at_low, row.at_high, row.y_low, row.y_high) == ("reader", "softirq", -0.5, 3.5)
    assert t.iloc[1][["y_low", "y_high", "y_typical"]].tolist() == [0.0, 1.0, 0.5]


def test_quantity_must_return_one_value_per_point():
    with pytest.raises(ValueError, match="one value per point"):
        sobol(lambda d: np.zeros(3), _ishigami_space(), n=8)
