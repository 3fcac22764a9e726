"""The proper scores (memcglab.validation.scoring): exact values, propriety on simulated
data, invariances, the noise convolution and the per-source average."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from memcglab.validation import scoring

finite = st.floats(-50, 50, allow_nan=False, allow_infinity=False)
samples = st.lists(finite, min_size=1, max_size=40)


def brute_crps(x, y, w=None):
    x = np.asarray(x, float)
    w = np.full(x.size, 1 / x.size) if w is None else np.asarray(w, float) / np.sum(w)
    pair = np.abs(x[:, None] - x[None, :])
    return float(np.sum(w * np.abs(x - y)) - 0.5 * w @ pair @ w)


@given(samples, finite)
def test_crps_sorted_form_equals_the_pairwise_energy_form(x, y):
    assert scoring.crps_from_draws(x, y) == pytest.approx(brute_crps(x, y), abs=1e-9)


@given(samples, finite, st.data())
def test_weighted_crps_equals_the_pairwise_form_and_repetition(x, y, data):
    w = data.draw(st.lists(st.integers(1, 5), min_size=len(x), max_size=len(x)))
    got = scoring.crps_from_draws(x, y, w)
    assert got == pytest.approx(brute_crps(x, y, w), abs=1e-9)
    # integer weights are repeated draws
    assert got == pytest.approx(scoring.crps_from_draws(np.repeat(x, w), y), abs=1e-9)


@given(finite, finite)
def test_crps_of_a_point_mass_is_the_absolute_error(a, y):
    assert scoring.crps_from_draws([a], y) == pytest.approx(abs(a - y), abs=1e-12)
    assert scoring.crps_from_draws([a, a, a], y) == pytest.approx(abs(a - y), abs=1e-9)


@given(samples, finite, finite, st.floats(0.1, 10))
def test_crps_is_shift_invariant_scale_equivariant_and_order_free(x, y, c, k):
    base = scoring.crps_from_draws(x, y)
    assert base >= -1e-9
    assert scoring.crps_from_draws(np.add(x, c), y + c) == pytest.approx(base, abs=1e-7)
    assert scoring.crps_from_draws(np.multiply(x, k), y * k) == pytest.approx(k * base,
                                                                              rel=1e-7,
                                                                              abs=1e-7)
    assert scoring.crps_from_draws(x[::-1], y) == pytest.approx(base, abs=1e-9)


def test_crps_of_a_large_normal_sample_matches_the_closed_form():
    z = stats.norm.ppf((np.arange(20000) + 0.5) / 20000)
    y = 0.7
    closed = y * (2 * stats.norm.cdf(y) - 1) + 2 * stats.norm.pdf(y) - 1 / np.sqrt(np.pi)
    assert scoring.crps_from_draws(z, y) == pytest.approx(closed, abs=1e-4)


@given(finite, st.floats(0, 10), finite, st.floats(0.01, 0.5))
def test_interval_score_is_width_plus_the_penalised_miss(lo, width, y, alpha):
    hi = lo + width
    width = hi - lo  # as represented
    got = scoring.interval_score(lo, hi, y, alpha)
    miss = max(lo - y, 0) + max(y - hi, 0)
    assert got == pytest.approx(width + 2 / alpha * miss)
    assert got >= width
    # inside the band only the width counts; shifting all three changes nothing
    assert scoring.interval_score(lo + 3, hi + 3, y + 3, alpha) == pytest.approx(got)


def test_interval_score_refuses_a_reversed_band_and_is_vectorised():
    with pytest.raises(ValueError, match="high < low"):
        scoring.interval_score(1.0, 0.0, 0.5)
    got = scoring.interval_score(np.zeros(3), np.ones(3), np.array([0.5, 2.0, -1.0]))
    assert np.allclose(got, [1.0, 21.0, 21.0])


@settings(max_examples=30, deadline=None)
@given(st.floats(-2, 2), st.floats(0.2, 3), st.floats(0.3, 1.5), st.booleans())
def test_the_true_quantiles_beat_shifted_or_scaled_ones_in_expectation(mu, sd, delta, widen):
    # propriety on simulated data: Y ~ N(mu, sd); the true 5%/95% quantiles have the lowest
    # expected interval score, and the true distribution the lowest expected CRPS
    rng = np.random.default_rng(1)
    y = rng.normal(mu, sd, 20000)
    lo, hi = stats.norm.ppf([0.05, 0.95], mu, sd)
    truth = np.mean(scoring.interval_score(lo, hi, y))
    if widen:
        c, h = (lo + hi) / 2, (hi - lo) / 2 * (1 + delta)
        other = np.mean(scoring.interval_score(c - h, c + h, y))
        shrink = h / (1 + delta) / (1 + delta)
        narrower = np.mean(scoring.interval_score(c - shrink, c + shrink, y))
        assert truth < other and truth < narrower
    else:
        shift = delta * sd
        assert truth < np.mean(scoring.interval_score(lo + shift, hi + shift, y))
    grid = stats.norm.ppf((np.arange(400) + 0.5) / 400)
    ys = y[:2000]
    true_crps = np.mean([scoring.crps_from_draws(mu + sd * grid, v) for v in ys])
    off_crps = np.mean([scoring.crps_from_draws(mu + delta * sd + sd * grid, v) for v in ys])
    assert true_crps < off_crps


@given(samples, st.floats(0, 3))
def test_noise_convolution_keeps_the_mean_and_adds_the_variance(x, sd):
    cx, cw = scoring.convolve_noise(x, sd)
    assert cw.sum() == pytest.approx(1.0)
    assert np.sum(cw * cx) == pytest.approx(np.mean(x), abs=1e-9)
    z = stats.norm.ppf((np.arange(scoring.NOISE_POINTS) + 0.5) / scoring.NOISE_POINTS)
    var = np.sum(cw * (cx - np.mean(x)) ** 2)
    assert var == pytest.approx(np.var(x) + sd ** 2 * np.mean(z ** 2), rel=1e-7, abs=1e-9)


def test_noise_makes_a_point_forecast_at_the_measurement_score_its_noise():
    # a point mass at y convolved with N(0, sd): CRPS near that of a normal at its mean,
    # sd (sqrt 2 - 1) / sqrt(pi)
    cx, cw = scoring.convolve_noise([0.0], 0.02)
    assert scoring.crps_from_draws(cx, 0.0, cw) == pytest.approx(
        0.02 * (np.sqrt(2) - 1) / np.sqrt(np.pi), rel=0.02)


def test_noise_sd_of_the_default_is_two_percent():
    for m in (-69.4, 0.0, 145.11):
        assert scoring.noise_sd(2 * (1 + m / 100), m) == pytest.approx(0.02)
    with pytest.raises(ValueError, match="-100"):
        scoring.noise_sd(1.0, -100.0)


@given(samples, st.floats(0.01, 0.99))
def test_weighted_quantile_is_the_inverse_distribution_function(x, q):
    got = float(scoring.weighted_quantile(x, q))
    xs = np.sort(x)
    assert got == xs[int(np.ceil(q * len(x) - 1e-9)) - 1 if q * len(x) > 1e-9 else 0]
    assert np.mean(np.asarray(x) <= got) >= q - 1e-9


def test_case_scores_read_changes_in_percent():
    s = scoring.case_scores([10.0], 10.0, 0.0)
    assert s["crps"] == pytest.approx(0.0) and s["interval_score"] == pytest.approx(0.0)
    s = scoring.case_scores(np.full(5, 0.0), 10.0, 0.0)
    assert s["crps"] == pytest.approx(np.log(1.1))
    assert s["interval_score"] == pytest.approx(20 * np.log(1.1))


def test_per_source_weighs_sources_not_cases():
    f = pd.DataFrame({"source": ["a"] * 6 + ["b"], "crps": [1.0] * 6 + [3.0]})
    means, overall = scoring.per_source(f, ["crps"])
    assert means.loc["a", "crps"] == 1.0 and overall["crps"] == 2.0
