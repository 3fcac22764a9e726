"""Study 3's priced changes: the space, the vectorised quantities and their limits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from memcglab.hardware import load_profile
from memcglab.studies.s03_pcstock_vs_multi.counts import count_runs, scenarios
from memcglab.studies.s03_pcstock_vs_multi.pricing import (
    c2c_sweep,
    netperf_space,
    predict_netperf,
    throughput_change_fn,
)
from memcglab.uncertainty import at_fixed

PROFILE = load_profile("butt-netperf-72cpu")
ONE = {"release": ("task",), "placement": ("spread",), "migrate": ("independent",)}


@pytest.fixture(scope="module")
def runs():
    return count_runs([6], scenarios(("task", "softirq"), ("spread",), ("independent",)),
                      [0, 1], 2000)


def test_space_holds_single_options_fixed_and_draws_the_rest():
    s = netperf_space(PROFILE, {"release": ("task", "softirq")}, [0, 1])
    assert "release" in s.varying and "placement" not in s.varying
    assert {"c2c_transfer", "other_cycles", "seed"} <= set(s.varying)
    assert "contended_rmw_per_sharer" not in s.varying  # contention once, as queueing
    assert s.sources == {"parameters", "alternatives", "seeds"}


@pytest.mark.parametrize("choices, match", [
    ({"cpu": ("x",)}, r"choices: unknown axes \['cpu'\]"),
    ({"release": ("reader",)}, r"choices\['release'\]=\['reader'\]: need options from"),
    ({"migrate": ()}, r"choices\['migrate'\]=\[\]"),
])
def test_space_names_bad_choices(choices, match):
    with pytest.raises(ValueError, match=match):
        netperf_space(PROFILE, choices, [0])


def test_the_same_run_for_both_stocks_changes_nothing(runs):
    multi = runs[runs["model"] == "multi"]
    same = pd.concat([multi, multi.assign(model="pcstock")], ignore_index=True)
    fn = throughput_change_fn(same, PROFILE, 6)
    d = netperf_space(PROFILE, ONE, [0, 1]).sample(64)
    assert np.allclose(fn(d), 0.0)


def test_more_shared_line_transfers_cost_throughput(runs):
    fn = throughput_change_fn(runs, PROFILE, 6)
    space = netperf_space(PROFILE, ONE, [0, 1])
    slow = at_fixed(fn, space, {"c2c_transfer": np.array([45.0, 350.0])})
    assert slow[1] < slow[0] < 0  # reader releases: pcstock moves more lines, loses more
    sweep = c2c_sweep(runs, PROFILE, ONE, [0, 1], 6, [45.0, 350.0])
    assert sweep == pytest.approx(slow)


def test_charging_cpu_release_is_negligible_and_reader_release_is_not(runs):
    soft = predict_netperf(runs, PROFILE, {**ONE, "release": ("softirq",)}, [0, 1], 6, n=64)
    assert -2.0 <= soft.low <= soft.high <= 2.0 and soft.p_holds == 1.0
    task = predict_netperf(runs, PROFILE, ONE, [0, 1], 6, n=64)
    assert task.median < soft.median
    with pytest.raises(ValueError, match="quantity='walks'"):
        predict_netperf(runs, PROFILE, ONE, [0, 1], 6, n=64, quantity="walks")
    with pytest.raises(ValueError, match="clients=7: no runs"):
        throughput_change_fn(runs, PROFILE, 7)
