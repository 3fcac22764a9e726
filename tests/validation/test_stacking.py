"""Stacking the alternatives' weights (rules_addendum_2026-12-03_stacking.md) on points
made by hand: the prior weights are the unstacked mixture, the fit moves weight toward the
option whose points explain the measurements, and only alternatives two or more training
sources bear on are stacked."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.validation.stacking import CasePoints, fit_weights, point_weights, score
from memcglab.workloads.catalogue import ALTERNATIVES


def _case(source: str, case: str, rx: np.ndarray, good: int | None,
          ack: np.ndarray | None = None) -> CasePoints:
    """Points whose density is high where rx == good (None: flat), the change draws
    +10% there and -30% elsewhere; the measured change +10%."""
    dens = np.where(rx == good, 0.0, -8.0) if good is not None else np.zeros(rx.size)
    change = np.where(rx == good, 10.0, -30.0) if good is not None else np.full(rx.size, 10.0)
    options = {"rx": rx} | ({"ack": ack} if ack is not None else {})
    return CasePoints(source, case, 10.0, 2.2, change, dens, options)


def _prior(name: str) -> np.ndarray:
    p = np.asarray(ALTERNATIVES[name].prior, dtype=float)
    return p / p.sum()


RX = np.array([0, 0, 0, 1, 1, 0, 0, 1, 0, 1])  # 6 of 10 points at option 0, as the prior


def test_the_prior_weights_are_the_unstacked_mixture():
    c = _case("a", "a/1", RX, 1)
    lw = point_weights(c, {"rx": _prior("rx")})
    assert np.allclose(np.exp(lw), 1.0 / RX.size)
    assert np.allclose(point_weights(c, {}), lw)


def test_weight_moves_to_the_option_that_explains_the_measurements():
    train = [_case("a", "a/1", RX, 1), _case("b", "b/1", RX, 1), _case("c", "c/1", RX, 1)]
    pi, names = fit_weights(train)
    assert names == ("rx",)
    # by hand: each source's log density is about log(pi_1) (option 0's points have
    # e^-8 of the density), so J = 3 log pi_1 + (0.6 log pi_0 + 0.4 log pi_1) with the
    # one-source Dirichlet penalty at the prior (0.6, 0.4): its maximum is pi_1 = 3.4 / 4
    assert _prior("rx").tolist() == pytest.approx([0.6, 0.4])
    assert pi["rx"][1] == pytest.approx(3.4 / 4, abs=2e-3)


def test_an_alternative_one_training_source_bears_on_stays_at_its_prior():
    only_a = np.array([0, 1] * 5)
    train = [_case("a", "a/1", RX, 1, ack=only_a), _case("b", "b/1", RX, 1,
                                                         ack=np.zeros(10, dtype=int))]
    pi, names = fit_weights(train)
    assert names == ("rx",) and "ack" not in pi


def test_score_stacks_each_held_out_source_on_the_others_only():
    pts = [_case("a", "a/1", RX, 1), _case("b", "b/1", RX, 1), _case("c", "c/1", RX, 1)]
    frame, weights = score(pts)
    assert sorted(set(frame["method"])) == ["prior", "stacked"]
    assert sorted(set(weights["fold"])) == ["a", "all", "b", "c"]
    s = frame.set_index(["method", "case"])["interval_score"]
    # the stacked weights put the draws on +10%, the measured change: a better score
    for case in ("a/1", "b/1", "c/1"):
        assert s["stacked", case] < s["prior", case]
    lone = [_case("a", "a/1", RX, 1), _case("b", "b/1", RX, None)]
    frame, _ = score(lone)
    # holding out a leaves b alone, which bears on rx but is one source: nothing stacked
    row = frame[(frame["case"] == "a/1") & (frame["method"] == "stacked")].iloc[0]
    assert row["stacked"] == ""
    assert row["interval_score"] == pytest.approx(
        frame[(frame["case"] == "a/1") & (frame["method"] == "prior")].iloc[0]["interval_score"])
