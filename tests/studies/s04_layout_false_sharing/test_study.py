"""Study 4: stock layouts, the 0x88 placement, slots per line, seed 004's counts and price."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from memcglab.cost import CostParams
from memcglab.hardware import load_profile
from memcglab.published import load
from memcglab.stats import load_rules
from memcglab.studies import check_claims, check_counts
from memcglab.studies.s04_layout_false_sharing import study as ls
from memcglab.studies.s04_layout_false_sharing import views as lv
from memcglab.workloads import MremapPageoutSpec
from memcglab.workloads.mremap_stats import PATHS, READ_RANGE

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
        # the shared line is written once per event and only in the blamed layout
        assert runs.loc[(seed, "blamed"), "line_writes_per_event"] == 1.0
        assert runs.loc[(seed, "parent"), "line_transfers_per_event"] == 0.0
    assert (runs["reads_per_event"] == SMALL.stat_updates_per_event).all()


def test_the_sweep_grows_with_the_read_rate_under_its_ceiling():
    spec = dataclasses.replace(SMALL, duration=0.005)
    s = ls.read_sweep(spec, (2.0, 20.0, 200.0), seeds=1, eras=("parent", "blamed"))
    b = s[s["era"] == "blamed"].sort_values("reads_per_event")
    assert b["line_transfers_per_event"].is_monotonic_increasing
    assert (b["line_transfers_per_event"] <= b["ceiling_per_event"]).all()
    assert b["ceiling_per_event"].tolist() == [3.0, 16.0, 16.0]  # 1 + min(r, 15)
    assert (s[s["era"] == "parent"]["line_transfers_per_event"] == 0).all()


def test_params_validate_and_quick_shrinks():
    q = ls.LayoutParams.from_notebook(quick=True)
    assert q.seeds == 2 and q.stream.duration == 0.01 and q.samples == 256
    assert min(q.reads) <= READ_RANGE.low and max(q.reads) >= READ_RANGE.high
    with pytest.raises(ValueError, match="seeds=0"):
        ls.LayoutParams(seeds=0)
    with pytest.raises(ValueError, match="cpu_hz"):
        ls.LayoutParams(cpu_hz=0.0)
    with pytest.raises(ValueError, match=r"reads=\(10.0, 20.0\): must span the derived range"):
        ls.LayoutParams(reads=(10.0, 20.0))
    with pytest.raises(ValueError, match="samples=1000: must be a power of 2"):
        ls.LayoutParams(samples=1000)


@pytest.mark.parametrize("kwargs, match", [
    ({"profile": "no-such-box"},
     "hardware profile 'no-such-box': no file .*lkp-mremap-176cpu-1socket"),
    ({"seeds": "3"}, "seeds='3': must be an integer between 1 and 100"),
    ({"seeds": 2.5}, "seeds=2.5: must be an integer between 1 and 100"),
    ({"sweep_seeds": 0}, "sweep_seeds=0: must be an integer between 1 and 100"),
    ({"samples": 256.0}, "samples=256.0: must be a power of 2"),
])
def test_params_name_the_bad_input_before_running(kwargs, match):
    with pytest.raises((ValueError, FileNotFoundError), match=match):
        ls.LayoutParams(**kwargs)


@pytest.fixture(scope="module")
def results():
    p = ls.LayoutParams(stream=SMALL, seeds=2, reads=(READ_RANGE.low, 20.0, READ_RANGE.high),
                        sweep_duration=0.004, sweep_seeds=2, samples=128,
                        slots=tuple(range(1, 12)))
    return ls.run(p)


def test_the_price_carries_priors_alternatives_and_seeds(results):
    reg, fix = results.priced["regression"], results.priced["fixed_gap"]
    assert reg.sources == {"parameters", "alternatives", "seeds"}
    assert 0 < reg.low < reg.median < reg.high and reg.driver in reg.sobol_total.index
    assert fix.low == fix.high == 0.0 and results.fixed_identical  # fixed and parent alike
    assert set(results.derivation["path"]) == {p.path for p in PATHS}


def test_views_judge_the_claims_from_the_numbers(results):
    v = lv.verdict(results)
    words = load_rules().words
    assert set(v["verdict"]) <= set(words["measured"]) and v["rules_sha256"].nunique() == 1
    rows = check_claims(lv.claims(results, v, load("seed004_false_sharing").frame))
    assert [r["rule"] for r in rows] == ["exact"] * 4 + ["measured"] * 2 + ["exact"]
    assert [r["verdict"] for r in rows[:4]] == ["matches"] * 4
    assert rows[-1]["verdict"] == "not comparable" and "not stated" in rows[-1]["reason"]
    measured = [r for r in rows if r["rule"] == "measured"]
    assert [r["verdict"] for r in measured] == v["verdict"].tolist()
    reg = results.priced["regression"]
    assert measured[0]["low"] == reg.low and measured[0]["measurement"] == "4.38% ± 1.2"
    # the fix's gap is 0 by construction: never agreement
    assert measured[1]["verdict"] == "undetermined"
    assert measured[1]["reason"].startswith("degenerate")
    counts = check_counts(lv.counts(results))
    assert [c["value"] for c in counts[:3]] == pytest.approx(
        results.runs.groupby("era")["transfers_per_event"].mean()[list(ls.ERAS_004)].tolist())
    s = lv.summary(results)
    assert s["max_slots_one_line"] == 7 and s["fixed_gap_pct"] == 0.0
    assert s["regression_low_pct"] == reg.low
    assert 0.0 <= s["line_saturated_share"] <= 1.0


def test_the_conclusion_follows_the_verdict_table(results):
    v = lv.verdict(results)
    text = lv.conclusion(results, v)
    reg = v.set_index("quantity").loc["regression"]
    assert f"{reg['verdict']} ({reg['reason']})" in text
    assert results.priced["regression"].describe("{:.2g}") in text
    other = v.copy()
    other.loc[0, "verdict"], other.loc[0, "reason"] = "undetermined", "as if it overlapped"
    assert "undetermined (as if it overlapped)" in lv.conclusion(results, other)


def test_figures_have_labelled_axes_and_captions(results):
    import matplotlib.pyplot as plt

    fig, text = lv.figure_seed004(results)
    assert all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
    assert "What to see" in text and "ceiling" in text
    plt.close(fig)
    fig, text = lv.figure_sensitivity(results)
    assert "What to see" in text
    plt.close(fig)


def test_needed_finds_the_typical_value_at_the_typical_loss(results):
    profile = load_profile(results.params.profile)
    typical = float(results.priced["regression"].tornado["y_typical"].iloc[0])
    got = ls.needed(results.sweep, SMALL.cpus, profile, typical, names=("c2c_transfer",))
    assert got[0].value == pytest.approx(profile.priors["c2c_transfer"].typical, rel=1e-3)
    none = ls.needed(results.sweep, SMALL.cpus, profile, 99.99, names=("c2c_transfer",),
                     reach=1.0)
    assert none[0].value is None
    assert [t.name for t in results.needed] == ["c2c_transfer", "lock_waiters",
                                                "contended_rmw_per_sharer"]


def test_a_value_that_saturates_the_line_is_marked_infeasible(results):
    profile = load_profile(results.params.profile)
    got = ls.needed(results.sweep, SMALL.cpus, profile, 60.0, names=("c2c_transfer",))[0]
    if got.value is not None:
        counts = ls.CountTable.from_runs(results.sweep)
        space = ls.pricing_space(profile.priors, counts.seeds)
        from memcglab.uncertainty import at_fixed

        u = at_fixed(lambda d: ls.line_utilisation(counts, "blamed", d), space,
                     {"c2c_transfer": np.array([got.value])})[0]
        assert bool(got.infeasible) == (u >= 1.0)


def test_a_profile_file_prices_the_study(tmp_path, results):
    from memcglab.hardware import hardware_dir
    copy = tmp_path / "probed.toml"
    text = (hardware_dir() / "profiles" / "lkp-mremap-176cpu-1socket.toml").read_text()
    copy.write_text(text.replace('name = "lkp-mremap-176cpu-1socket"', 'name = "probed"'))
    p = ls.LayoutParams(profile=str(copy), samples=64)
    got = ls.priced(results.sweep, SMALL.cpus, load_profile(p.profile), p.samples)
    assert got["regression"].low <= got["regression"].high
