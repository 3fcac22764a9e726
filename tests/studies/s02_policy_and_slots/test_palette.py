"""Study 2's figures draw every policy it compares, a plugin's included: a policy without
a fixed colour gets one deterministically (memcglab.studies.common.figures)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex

from memcglab import registry
from memcglab.kernel import victim
from memcglab.studies.common.figures import (
    MODEL_PALETTE,
    POLICY_PALETTE,
    model_palette,
    policy_palette,
)
from memcglab.studies.s02_policy_and_slots import study as study
from memcglab.studies.s02_policy_and_slots import verdict as pv
from memcglab.studies.s02_policy_and_slots import views as views


def test_known_names_keep_their_colours_and_others_get_unused_ones_by_name():
    colours = policy_palette(["zeta", "random", "fewest", "lru", "rr"])
    assert {k: colours[k] for k in POLICY_PALETTE} == POLICY_PALETTE
    assert len(set(colours.values())) == 5
    assert not {colours["fewest"], colours["zeta"]} & set(POLICY_PALETTE.values())
    # keyed by sorted name, not by the order the names come in
    assert policy_palette(["rr", "fewest", "zeta", "lru", "random"]) == colours
    assert colours["fewest"] == policy_palette(["fewest"])["fewest"]
    assert model_palette(["multi", "nostock"])["multi"] == MODEL_PALETTE["multi"]
    assert model_palette(["nostock"])["nostock"] not in MODEL_PALETTE.values()


def test_more_new_names_than_spare_colours_still_get_distinct_ones():
    names = [f"p{i:02d}" for i in range(20)]
    colours = policy_palette(names)
    assert set(colours) == set(names) and len(set(colours.values())) == 20


@pytest.fixture
def twin():
    # a plugin policy with a compiled twin: study 2 runs it beside random and LRU
    registry.register_policy("random-twin", victim.RandomVictim, compiled="random")
    yield "random-twin"
    registry.unregister_policy("random-twin")


def test_study_2_draws_a_plugin_policy(twin):
    p = study.PolicyParams(policy=twin, slots=7, actives=(2, 9), mixes=("uniform",),
                           cpus=(1,), seeds=2, charges_per_cpu=200, slot_counts=(7, 8),
                           netperf_messages=1500, samples=16, windows=(16,))
    df = study.run(p)
    assert twin in set(df["policy"])
    want = policy_palette(df["policy"].unique())[twin]
    for fig in (views.figure_policies(df, p), views.figure_slots(df, p, pv.analyse(df, p))):
        drawn = {to_hex(line.get_color()) for a in fig.axes for line in a.get_lines()}
        assert want in drawn
        plt.close(fig)
