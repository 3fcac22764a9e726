"""The older obj-stock eras' own events are priced, outside the profile's six functions."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.cost import CostParams
from memcglab.pricing.profile import FUNCTIONS, function_cycles

COST = {n: np.array([v]) for n, v in vars(CostParams()).items()}
BASE = {"charges": 1.0, "try_charge_memcg": 1.0, "stock_hits": 1.0, "walks": 0.5,
        "walk_levels": 1.5, "obj_cgroup_charge": 2.0}


def cycles(per_op):
    return function_cycles(per_op, COST, 1.0, np.zeros(1), "multi")


@pytest.mark.parametrize(("event", "per_event"), [
    ("mod_objcg_state", 15 + 20 + 5),          # call, irq off/on, one per-CPU write
    ("memcg_stat_updates", 15 + 3 * 5),        # call, three per-CPU counters
    ("memcg_stat_flushes", 3 * 20),            # an atomic add per level (1.5 / 0.5 = 3)
    ("slab_page_charges", 15),
    ("slab_page_uncharges", 15),
])
def test_each_era_event_adds_its_price_to_the_total_only(event, per_event):
    before, after = cycles(BASE), cycles({**BASE, event: 2.0})
    assert float(after["total"][0] - before["total"][0]) == pytest.approx(2.0 * per_event)
    for f in FUNCTIONS:  # the slab hooks call them outside the six functions
        assert float(after[f][0]) == float(before[f][0])


def test_without_era_events_the_total_is_bit_identical():
    # the eras ported before (v6.15 on) count none of them: their prices must not move
    plain = cycles(BASE)["total"]
    zeros = cycles({**BASE, "mod_objcg_state": 0.0, "memcg_stat_updates": 0.0})["total"]
    assert plain.tobytes() == zeros.tobytes()
