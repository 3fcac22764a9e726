"""Study 4: stock layouts per era, the 0x88 placement, slots per line, seed 004's pricing."""

from __future__ import annotations

import pandas as pd
import pytest

from memcglab.cost import CostParams
from memcglab.published import load
from memcglab.stats import verdict_004
from memcglab.studies import check_claims
from memcglab.studies import layout_study as ls
from memcglab.studies import layout_views as lv
from memcglab.workloads import MremapPageoutSpec

SMALL = MremapPageoutSpec(cpus=16, duration=0.01, swap_fail_rate=2e5)


def test_placements_are_the_published_objdump_lines_and_others_are_refused():
    pub = load(ls.PLACEMENTS).frame
    p = ls.placements()
    assert p["definition"].tolist() == pub["definition"].tolist()
    assert [int(a, 16) for a in p["address"]] == [int(a, 16) for a in pub["address"]]
    assert p["objdump_size"].tolist() == pub["size"].tolist()
    for d, a in zip(pub["definition"], pub["address"], strict=True):
        assert ls.placement_address(d) == int(a, 16)
    with pytest.raises(ValueError, match="definition='DEFINE_PER_CPU_FIRST': the placements"):
        ls.placement_address("DEFINE_PER_CPU_FIRST")


def test_stock_sizes_per_era_follow_the_kernel_notes():
    e = ls.stock_eras().set_index("era")
    # kernel-notes section 7: E0 88, E1 96, E2 136 (0x88), E3 104, E4 112
    assert e["sizeof"].to_dict() == {"v6.14": 88, "v6.15": 96, "2025-04": 136, "v6.16": 104,
                                     "2026": 112}
    assert (e["lines_aligned"] == 1).all() and (e["lines_unaligned_worst"] == 2).all()
    assert e.loc["v6.16", "lookup_bytes"] == 64  # 1 + 7 + 7 * 8: exactly one line
    assert e.loc["v6.15", "definition"] == "DEFINE_PER_CPU"


def test_the_0x60_placement_splits_the_first_64_bytes_and_alignment_joins_them():
    p = ls.placements().set_index("definition")
    assert p.loc["DEFINE_PER_CPU", "phase_bytes"] == 32
    assert p.loc["DEFINE_PER_CPU", "first_64_bytes_lines"] == 2
    assert p.loc["DEFINE_PER_CPU", "lookup_lines"] == 2
    assert p.loc["DEFINE_PER_CPU_ALIGNED", "phase_bytes"] == 0
    assert p.loc["DEFINE_PER_CPU_ALIGNED", "lookup_lines"] == 1
    assert (p["layout_size"] == p["objdump_size"]).all()


def test_transfers_are_coherence_misses_plus_upgrades():
    assert ls.transfers({"coherence_misses": 5, "upgrades": 2, "hitm": 100}) == 7


def test_regressions_price_the_extra_transfers_against_the_stressors_work():
    spec = MremapPageoutSpec(cpus=4, swap_fail_rate=4e3)  # work: 4 * 1e9 / 4e3 = 1e6 cycles
    runs = pd.DataFrame({"seed": [0, 0, 0], "era": ["parent", "blamed", "fixed"],
                         "transfers_per_event": [10.0, 110.0, 10.0]})
    r = ls.regressions(runs, spec, cpu_hz=1e9, cost=CostParams(c2c_transfer=100.0))
    # blamed adds 100 transfers * 100 cycles = 1e4 cycles to 1e6 per event
    assert r.loc[0, "regression_pct"] == pytest.approx((1 - 1e6 / 1.01e6) * 100)
    assert r.loc[0, "fixed_gap_pct"] == pytest.approx(0.0)
    assert r.loc[0, "extra_transfers_per_event"] == pytest.approx(100.0)


def test_the_blamed_layout_adds_transfers_and_the_fix_removes_them():
    runs = ls.coherence_runs(SMALL, seeds=2).set_index(["seed", "era"])
    for seed in (0, 1):
        parent, blamed, fixed = (runs.loc[(seed, e), "transfers"] for e in ls.ERAS_004)
        assert blamed > parent and fixed == parent
        assert runs.loc[(seed, "blamed"), "same_line"]
        assert not runs.loc[(seed, "parent"), "same_line"]


def test_more_stat_loads_cost_more_but_a_cpu_misses_at_most_once_per_remote_write():
    s = ls.sensitivity(SMALL, (1, 10, 100), cpu_hz=2.5e9, cost=CostParams())
    assert s["regression_pct"].is_monotonic_increasing
    writes_per_event = 1 + 2 * SMALL.ancestors  # memory_events_local, memory_events per level
    assert (s["extra_transfers_per_event"] <= 100 * writes_per_event).all()


def test_params_validate_and_quick_shrinks():
    q = ls.LayoutParams.from_notebook(quick=True)
    assert q.seeds == 2 and q.stream.duration == 0.02 and q.loads == (3, 30, 300)
    with pytest.raises(ValueError, match="seeds=0"):
        ls.LayoutParams(seeds=0)
    with pytest.raises(ValueError, match="cpu_hz"):
        ls.LayoutParams(cpu_hz=0.0)


@pytest.fixture(scope="module")
def results():
    p = ls.LayoutParams(stream=SMALL, seeds=2, loads=(3, 30), slots=tuple(range(1, 12)))
    return ls.run(p)


def test_views_judge_the_claims_from_the_numbers(results):
    v = verdict_004(*lv.verdict_rows(results))
    rows = check_claims(lv.claims(results, v, load("seed004_false_sharing").frame))
    verdicts = [r["verdict"] for r in rows]
    assert verdicts[:4] == ["reproduced", "confirmed: 7 is the most that fit", "reproduced",
                            "reproduced"]
    assert verdicts[4] == v.loc[0, "verdict"] and verdicts[5] == v.loc[1, "verdict"]
    s = lv.summary(results)
    assert s["max_slots_one_line"] == 7 and s["fixed_gap_pct"] == 0.0
    assert f"{s['regression_pct']:.3f}%" in lv.conclusion(results, v)


def test_the_conclusion_follows_the_verdict_table(results):
    v = verdict_004(*lv.verdict_rows(results))
    far = lv.conclusion(results, v)
    assert "far outside" in far and "would have to cost" in far
    near = v.copy()
    near.loc[0, "published_pct"] = near.loc[0, "simulated_mean_pct"]  # as if it matched
    text = lv.conclusion(results, near)
    assert "within the published" in text and "would have to cost" not in text
