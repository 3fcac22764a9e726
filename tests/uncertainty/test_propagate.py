"""summarise: the interval, the claim probability and the claim columns."""

import math

import numpy as np
import pytest

from memcglab.uncertainty import Alternative, Prior, Space, summarise


def _linear_space() -> Space:
    return Space([Prior("a", "cycles", 0.0, 0.5, 1.0, "uniform", "t"),
                  Prior("b", "cycles", 0.0, 0.5, 1.0, "uniform", "t")])


def _cdf_inverse(p: float) -> float:
    """Exact quantile of a + 2b, a, b ~ U(0, 1): a trapezoid on [0, 3]."""
    if p <= 0.25:
        return 2 * math.sqrt(p)
    if p <= 0.75:
        return 1 + 2 * (p - 0.25)
    return 3 - 2 * math.sqrt(1 - p)


@pytest.mark.parametrize("method", ["sobol", "lhs"])
def test_interval_matches_exact_quantiles_of_a_linear_model(method):
    r = summarise(lambda d: d["a"] + 2 * d["b"], _linear_space(), n=2048, method=method,
                  threshold=1.0, unit="cycles")
    assert r.low == pytest.approx(_cdf_inverse(0.05), abs=0.02)   # 0.447
    assert r.median == pytest.approx(_cdf_inverse(0.5), abs=0.02)  # 1.5
    assert r.high == pytest.approx(_cdf_inverse(0.95), abs=0.02)  # 2.553
    assert r.coverage == 0.9 and r.interval == (r.low, r.high)
    # the exact P(a + 2b > 1) is 1 - 1/4
    assert r.p_holds == pytest.approx(0.75, abs=0.01)
    # linear, independent: first = total = 1/5 and 4/5
    assert r.sobol_first.to_numpy() == pytest.approx([0.2, 0.8], abs=0.03)
    assert r.sobol_total.to_numpy() == pytest.approx([0.2, 0.8], abs=0.03)
    assert r.driver == "b"


def test_holds_band_and_break_even_threshold():
    r = summarise(lambda d: d["a"] + 2 * d["b"], _linear_space(), n=1024,
                  holds=lambda y: (y > 1) & (y < 2), threshold=2.0)
    assert r.p_holds == pytest.approx(0.5, abs=0.01)
    # a + 2b = 2 with the other at 0.5: a = 1 (at the edge), b = 0.75
    assert r.break_even["b"] == pytest.approx(0.75)
    assert r.break_even["a"] == pytest.approx(1.0)


def test_crossings_name_only_the_priors_that_cross_in_their_range():
    r = summarise(lambda d: d["a"] + 2 * d["b"], _linear_space(), n=256, threshold=1.9)
    # b crosses at 0.7 with a typical; a would need 0.9, inside [0, 1] too
    assert r.crossings() == {"a": "a = 0.9 cycles", "b": "b = 0.7 cycles"}
    assert summarise(lambda d: d["a"] - 2.0 + 0 * d["b"], _linear_space(),
                     n=256).crossings() == {}


def test_claim_columns_carry_interval_driver_and_break_even():
    r = summarise(lambda d: d["a"] - 2.0 + 0 * d["b"], _linear_space(), n=256, unit="%")
    c = r.as_claim_columns()
    assert set(c) == {"low", "high", "p_holds", "driver", "break_even"}
    assert c["p_holds"] == 0.0 and c["low"] < c["high"] < 0
    assert c["driver"].startswith("a (total Sobol index 1.00")
    assert c["break_even"] == "a: none in [0, 1] cycles; b: none in [0, 1] cycles"
    assert "[" in r.describe() and r.sources == {"parameters"}


def test_seed_only_space_says_so_in_sources():
    s = Space(seeds=[0, 1, 2, 3])
    r = summarise(lambda d: d["seed"] * 1.0, s, n=64)
    assert r.sources == {"seeds"} and r.break_even == {}
    assert r.driver == "seed"


def test_constant_quantity_has_no_driver():
    r = summarise(lambda d: 0 * d["a"] + 1.0, _linear_space(), n=64)
    assert r.low == r.high == 1.0 and r.driver.startswith("none")


def test_alternatives_enter_the_interval():
    s = Space([Prior("x", "cycles", 0.0, 0.5, 1.0, "uniform", "t")],
              [Alternative("cpus_per_flow", (1, 2, 4), weights=(1, 1, 2))])
    r = summarise(lambda d: d["x"] + d["cpus_per_flow"], s, n=4096)
    draws = s.sample(4096)
    assert np.mean(draws["cpus_per_flow"] == 4) == pytest.approx(0.5, abs=0.01)
    assert r.high > 4.0 and r.low < 2.0
    assert r.sources == {"parameters", "alternatives"}


def test_errors():
    with pytest.raises(ValueError, match="coverage"):
        summarise(lambda d: d["a"], _linear_space(), coverage=1.0)
    with pytest.raises(ValueError, match="non-finite"), np.errstate(invalid="ignore"):
        summarise(lambda d: np.log(d["a"] - 0.5), _linear_space(), n=64)
    with pytest.raises(ValueError, match="booleans"):
        summarise(lambda d: d["a"], _linear_space(), n=64, holds=lambda y: y)
