"""Study 3's scenarios: their validation, their workload specs and their exact counts."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.cost import CostParams, cycles_per_op
from memcglab.engine import replay_compiled
from memcglab.layout import slot_scan_lines
from memcglab.studies import check_counts
from memcglab.studies.s03_pcstock_vs_multi.counts import (
    ALTERNATIVES,
    RELEASE_PLACEMENTS,
    Scenario,
    count_runs,
    counts,
    scenarios,
)
from memcglab.workloads import netperf_paired
from memcglab.workloads.netperf import PLACEMENTS, RELEASES
from memcglab.workloads.paired_migration import MIGRATE


def test_the_issue_placements_map_onto_the_workload_options():
    assert set(RELEASE_PLACEMENTS.values()) == set(ALTERNATIVES["release"])
    assert RELEASE_PLACEMENTS["same CPU"] == RELEASE_PLACEMENTS["softirq CPU"] == "softirq"
    assert set(ALTERNATIVES["release"]) <= set(RELEASES)
    assert set(ALTERNATIVES["placement"]) <= set(PLACEMENTS)
    assert set(ALTERNATIVES["migrate"]) <= set(MIGRATE)


def test_scenarios_are_every_combination_default_first():
    cases = scenarios()
    assert len(cases) == 8 and cases[0] == Scenario()
    assert cases[0].label == "task/spread/independent"
    assert [c.cpus_per_flow for c in cases].count(1) == 2  # paired and together


def test_scenario_names_a_bad_option():
    with pytest.raises(ValueError, match="release='random': must be one of task, softirq"):
        Scenario(release="random")


def test_a_charging_cpu_release_puts_every_uncharge_where_the_memcg_last_charged():
    spec = Scenario("softirq", "spread", "independent").spec(4, 500, 0)
    ops = netperf_paired(spec).ops
    body = ops[ops["op"] != 0]
    last = {}
    for op, cpu, memcg in zip(body["op"], body["cpu"], body["memcg"], strict=True):
        if op == 1:
            last.setdefault(int(memcg), []).append(int(cpu))
        else:
            assert int(cpu) in last[int(memcg)]


@pytest.fixture(scope="module")
def runs():
    return count_runs([4], scenarios(("task", "softirq"), ("paired",), ("together",)),
                      [0, 1], 1500)


def test_count_runs_match_a_direct_replay(runs):
    row = runs[(runs["scenario"] == "task/paired/together") & (runs["seed"] == 1)
               & (runs["model"] == "multi")].iloc[0]
    trace = netperf_paired(Scenario("task", "paired", "together").spec(4, 1500, 1))
    _, ev = replay_compiled(trace, model="multi", seed=1, events=True)
    assert row["walks"] == ev.total("walks") and row["drains"] == ev.total("drains")
    assert row["walks_per_1000"] == pytest.approx(1000 * ev.total("walks") / 1500)
    assert row["shared_per_msg"] + row["private_per_msg"] == \
        pytest.approx(ev.total("usage_transfers") / 1500)
    vec = CostParams().to_vector()
    assert float(np.asarray(row["coef"]) @ vec) == pytest.approx(
        cycles_per_op(ev, CostParams(), lines_per_scan=slot_scan_lines(7), slots=7))


def test_counts_rows(runs):
    rows = check_counts(counts(runs))
    assert len(rows) == 2 * 2 * 4
    assert rows[0]["configuration"] == "multi, netperf 4 clients, task/paired/together"
    assert rows[0]["quantity"] == "walks per 1000 charges" and rows[0]["study"] == "03"
    with pytest.raises(ValueError, match="clients=9: no runs; client counts: \\[4\\]"):
        counts(runs, clients=9)
