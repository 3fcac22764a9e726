"""Vectorised pricing equals the cost model priced one point at a time."""

import numpy as np
import pytest

from memcglab.cost import CostParams, cycles_per_op
from memcglab.events import EVENT_NAMES, ChargeEvents
from memcglab.uncertainty import Alternative, CoefficientTable, Prior, Space, price

RNG = np.random.default_rng(7)


def _events(rng) -> ChargeEvents:
    ev = ChargeEvents.zeros(ncpus=2, nmemcgs=1)
    for name in EVENT_NAMES:
        ev.per_cpu[name][:] = rng.integers(0, 500, size=2)
    ev.per_cpu["charges"][:] += 100
    return ev


def _space() -> Space:
    priors = [Prior(n, "cycles", v * 0.5, v, v * 2.0, "triangular", "test")
              for n, v in zip(CostParams.names(), CostParams().to_vector(), strict=True)
              if n != "slot_compare"]  # one parameter left at its CostParams default
    return Space(priors, [Alternative("cpus_per_flow", (1, 2, 4))], seeds=[0, 1, 2])


def test_vectorised_equals_per_point_cycles_per_op():
    events = {(s, c): _events(RNG) for s in (0, 1, 2) for c in (1, 2, 4)}
    slots = {k: 3 + k[1] for k in events}
    table = CoefficientTable.from_events(events, ("seed", "cpus_per_flow"), slots=slots)
    space = _space()
    draws = space.sample(64, seed=1)
    got = table.cycles(draws)
    for i in range(0, 64, 7):
        key = (int(draws["seed"][i]), int(draws["cpus_per_flow"][i]))
        p = CostParams(**{n: (draws[n][i] if n in draws else getattr(CostParams(), n))
                          for n in CostParams.names()})
        want = cycles_per_op(events[key], p, slots=slots[key])
        assert got[i] == pytest.approx(want, rel=1e-12)


def test_frame_round_trip_and_price_shape_errors():
    events = {s: _events(RNG) for s in (0, 1)}
    table = CoefficientTable.from_events(events)
    again = CoefficientTable.from_frame(table.frame(), ["seed"])
    np.testing.assert_array_equal(again.matrix, table.matrix)
    with pytest.raises(ValueError, match="same P"):
        price(table.matrix, np.array([0]), np.zeros((1, 3)))
    with pytest.raises(ValueError, match="one row index per point"):
        price(table.matrix, np.array([0, 1]), np.zeros((1, 8)))


def test_missing_combination_is_named():
    table = CoefficientTable.from_events({(0, 1): _events(RNG)}, ("seed", "cpus_per_flow"))
    draws = _space().at({"seed": 0, "cpus_per_flow": 2})
    with pytest.raises(KeyError, match="'cpus_per_flow': 2"):
        table.cycles(draws)
    with pytest.raises(ValueError, match="lack discrete inputs"):
        CoefficientTable.from_events({0: _events(RNG)}, ("trace",)).cycles(draws)
