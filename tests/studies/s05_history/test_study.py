"""Study 5: the fix-2 leak, fix 3, and the > batch release, on hand-worked and generated traces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.studies import CLAIM_KEYS, check_claims, check_counts
from memcglab.studies.s05_history import study as hs
from memcglab.studies.s05_history import views as hv
from memcglab.trace import OP_CGROUP, OP_CHARGE, OP_UNCHARGE, parse_text
from memcglab.workloads import NetperfRxSpec, netperf_rx

FIX2 = parse_text(hs.FIX2_DEMO)
BATCH = parse_text(hs.BATCH_DEMO)


def test_the_checker_stops_fix2_at_the_first_refill_into_a_new_slot():
    v = hs.first_violation(FIX2)
    assert (v["op_number"], v["line"], v["operation"]) == (2, 4, "charge 0 1 3")
    assert v["message"].endswith("memcg 1: usage 64 != held 3 + stocked 0 + children 0")
    assert hs.first_violation(FIX2, "multi") is None


def test_walkthrough_leaks_each_new_slot_refill_under_fix2_only():
    w = hs.walkthrough(FIX2)
    fix2, fix3 = (w[w["model"] == m] for m in ("multi-fix2", "multi"))
    # charge: 61 surplus lost; charge: stocked properly (slot matches); release on cpu 1:
    # its 3 pages lost; charge on cpu 1: the slot matches again.
    assert fix2["leaked"].tolist() == [0, 61, 61, 64, 64]
    assert fix3["leaked"].tolist() == [0, 0, 0, 0, 0]
    assert (w["usage"] == w["held"] + w["stocked"] + w["leaked"]).all()


def test_batch_demo_single_drains_everything_multi_keeps_its_stock():
    log = hs.step_log(BATCH).set_index(["model", "op_number"])
    assert log.loc[("single", 4), "stocked"] == 0 and log.loc[("multi", 4), "stocked"] == 61
    assert "drain" in log.loc[("single", 4), "events"]
    assert "drain" not in log.loc[("multi", 4), "events"]
    # the next 3-page charge walks with single and hits with multi
    assert log.loc[("single", 5), "walks"] == 4 and log.loc[("multi", 5), "walks"] == 3
    assert log.loc[("multi", 5), "events"].startswith("consume")


def test_limit_tenants_changes_only_the_leaves():
    t = netperf_rx(NetperfRxSpec(cpus=4, clients=3, messages=50, ancestors=2))
    lim = hs.limit_tenants(t, 77)
    cg = lim.ops[lim.ops["op"] == OP_CGROUP]
    leaves = set(hs.tenants(t).tolist())
    assert len(leaves) == 3
    for row in cg:
        assert (row["arg"] == 77) == (int(row["memcg"]) in leaves)
    others = t.ops["op"] != OP_CGROUP
    assert np.array_equal(lim.ops[others], t.ops[others])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), cpus=st.integers(1, 6), clients=st.integers(1, 5),
       limit=st.integers(8, 400))
def test_the_fix2_leak_never_shrinks_and_fix3_never_leaks(seed, cpus, clients, limit):
    trace = hs.limit_tenants(netperf_rx(NetperfRxSpec(cpus=cpus, clients=clients,
                                                      messages=300, seed=seed)), limit)
    growth, first = hs.leak_growth(trace, points=40)
    fix2, fix3 = (growth[growth["model"] == m] for m in ("multi-fix2", "multi"))
    assert (np.diff(fix2["leaked"]) >= 0).all()
    assert (fix3["leaked"] == 0).all()
    assert (fix2["oom_events"] >= fix2["failed_charges"]).all()
    if first["multi-fix2"] is not None:
        assert fix2["failed_charges"].iloc[-1] > 0


def test_leak_growth_samples_the_first_failed_charge_and_the_last_operation():
    trace = hs.limit_tenants(netperf_rx(NetperfRxSpec(cpus=4, clients=4, messages=1001)), 32)
    growth, first = hs.leak_growth(trace, points=7)
    for _, g in growth.groupby("model"):
        assert g["ops"].is_monotonic_increasing and g["ops"].is_unique
        assert g["ops"].iloc[-1] == len(trace.ops)
    fix2 = growth[growth["model"] == "multi-fix2"].set_index("ops")
    assert first["multi-fix2"] is not None
    assert fix2.loc[first["multi-fix2"], "failed_charges"] == 1


def test_model_walks_counts_the_batch_demo_by_hand():
    # charge 100 walks; charge 3 walks and stocks 61; the 100-page release walks (single
    # adds it to the stock and drains all 161, multi bypasses the stock); the last charge 3
    # walks with single and hits the 61 with multi.
    w = hs.model_walks(BATCH, [("single", 1), ("multi", 1), ("multi", 7)]).set_index("config")
    assert w["charges"].tolist() == [3, 3, 3]
    assert w["walks"].tolist() == [4, 3, 3] and w["stock_hits"].tolist() == [0, 1, 1]
    assert w["drains"].tolist() == [1, 0, 0] and w["evictions"].tolist() == [0, 0, 0]
    assert (w["refills_over_batch"] == 1).all()
    assert np.allclose(w["walks_per_message"], w["walks"] / w["charges"])


def test_a_generous_limit_never_fails_fix3_but_fix2_hits_it():
    trace = hs.limit_tenants(netperf_rx(NetperfRxSpec(cpus=8, clients=8, messages=8000)), 256)
    growth, first = hs.leak_growth(trace)
    assert first["multi"] is None and first["multi-fix2"] is not None
    assert growth[growth["model"] == "multi"]["failed_charges"].max() == 0


@pytest.mark.parametrize("share", [0.0, 0.25, 1.0])
def test_size_mix_keeps_each_flow_paired_at_one_size(share):
    spec = NetperfRxSpec(cpus=4, clients=8, messages=2000)
    t = hs.netperf_size_mix(spec, 10 * 1024, 1 << 20, share)
    ops = t.ops
    sizes = set()
    for m in hs.tenants(t):
        mine = ops[ops["memcg"] == m]
        charged = mine["arg"][mine["op"] == OP_CHARGE]
        released = mine["arg"][mine["op"] == OP_UNCHARGE]
        assert charged.sum() == released.sum() and len(set(charged.tolist())) <= 1
        sizes |= set(charged.tolist())
    large = hs.refill_sizes(t)["releases_over_batch"] / hs.refill_sizes(t)["releases"]
    assert sizes <= {3, 256}
    assert (share == 0) == (large == 0) and (share == 1) == (large == 1)


def test_size_mix_refuses_bad_inputs():
    spec = NetperfRxSpec(cpus=2, clients=2, messages=10)
    with pytest.raises(ValueError, match="large_share=1.5"):
        hs.netperf_size_mix(spec, 1024, 4096, 1.5)
    with pytest.raises(ValueError, match="small_bytes=0"):
        hs.netperf_size_mix(spec, 0, 4096, 0.5)


def test_single_and_one_slot_multi_differ_only_on_releases_above_the_batch():
    spec = NetperfRxSpec(cpus=8, clients=12, messages=4000)
    configs = [("single", 1), ("multi", 1)]
    none = hs.model_walks(hs.netperf_size_mix(spec, 10 * 1024, 1 << 20, 0.0), configs)
    some = hs.model_walks(hs.netperf_size_mix(spec, 10 * 1024, 1 << 20, 0.5), configs)
    assert none["walks_per_message"].nunique() == 1 and none["hit_ratio"].nunique() == 1
    single, multi = some["walks_per_message"]
    assert single > multi
    assert (some["refills_over_batch"] > 0).all() and (none["refills_over_batch"] == 0).all()


def test_params_validate_and_quick_shrinks_the_mix():
    q = hs.HistoryParams.from_notebook(quick=True, mix_messages=50_000)
    assert q.mix.messages == 20_000 and len(q.large_shares) == 4
    with pytest.raises(ValueError, match="large_shares"):
        hs.HistoryParams(large_shares=(0.5, 2.0))
    with pytest.raises(ValueError, match="tenant_max_pages=0"):
        hs.HistoryParams(tenant_max_pages=0)
    with pytest.raises(ValueError, match="large_kib=0: must be an integer >= 1"):
        hs.HistoryParams.from_notebook(large_kib=0)
    with pytest.raises(ValueError, match="large_bytes=0: must be >= 1"):
        hs.HistoryParams(large_bytes=0)


@pytest.fixture(scope="module")
def results():
    return hs.run(hs.HistoryParams.from_notebook(quick=True, leak_messages=8000,
                                                 tenant_max_pages=256, mix_messages=4000))


def test_views_summarise_judge_and_conclude_from_the_numbers(results):
    s = hv.summary(results)
    assert s["demo_violation_op"] == 2 and s["fix3_passes_check"]
    assert s["fix2_failed_charges"] > 0 and s["fix3_failed_charges"] == 0
    assert s["batch_demo_stocked_multi"] == 61 and s["batch_demo_stocked_single"] == 0
    rows = check_claims(hv.claims(results))
    assert [r["verdict"] for r in rows[:3]] == ["shown in the port"] * 3
    text = hv.conclusion(results)
    assert f"leaks {s['fix2_leaked_pages']} pages" in text
    assert f"operation {s['fix2_first_failed_op']}" in text


def test_the_verdicts_follow_the_numbers(results):
    growth = results.growth.copy()
    growth.loc[growth["model"] == "multi", "failed_charges"] = 3  # pretend fix 3 failed too
    broken = hs.HistoryResults(**{**results.__dict__, "growth": growth})
    assert hv.claims(broken)[0]["verdict"] == "not shown in the port"
    flat = results.mix.copy()
    flat["walks_per_message"] = 1.0  # no cost from the full drain
    rows = hv.claims(hs.HistoryResults(**{**results.__dict__, "mix": flat}))
    assert rows[3]["verdict"] == "not shown in the port"


def test_claims_are_behaviours_of_the_port_never_priced(results):
    rows = check_claims(hv.claims(results))
    assert [r["rule"] for r in rows] == ["port"] * 4
    assert all(set(r) == set(CLAIM_KEYS) | {"verdict"} for r in rows)
    assert all(r["reason"].startswith("shown when") for r in rows)


def _count(rows, quantity, configuration_start):
    found = [r for r in rows if r["quantity"] == quantity
             and r["configuration"].startswith(configuration_start)]
    assert len(found) == 1, (quantity, configuration_start, found)
    return found[0]


def test_count_rows_on_the_demos_are_the_hand_worked_numbers(results):
    rows = check_counts(hv.counts(results))
    assert {r["study"] for r in rows} == {"05"}
    stop = "operations replayed before the invariant check stops (count)"
    assert _count(rows, stop, "multi-fix2, FIX2_DEMO")["value"] == 1  # stops at operation 2
    assert _count(rows, stop, "multi, FIX2_DEMO")["value"] == 5  # all five pass
    leaked = "leaked pages after the last operation (4 KiB pages)"
    assert _count(rows, leaked, "multi-fix2, FIX2_DEMO")["value"] == 64
    assert _count(rows, leaked, "multi, FIX2_DEMO")["value"] == 0
    kept = "pages left stocked after a release above the batch (4 KiB pages)"
    assert _count(rows, kept, "single, BATCH_DEMO")["value"] == 0
    assert _count(rows, kept, "multi, BATCH_DEMO")["value"] == 61
    assert all(isinstance(r["value"], int) for r in rows
               if r["quantity"] in (stop, leaked, kept))


def test_count_rows_equal_the_study_frames(results):
    r, rows = results, check_counts(hv.counts(results))
    s = hv.summary(r)
    trace = _count(rows, "operations replayed before the invariant check stops (count)",
                   "multi-fix2, netperf_rx")
    assert trace["value"] == s["trace_violation_op"] - 1
    fix2 = "multi-fix2, netperf_rx"
    assert _count(rows, "failed charges (count)", fix2)["value"] == s["fix2_failed_charges"]
    assert _count(rows, "memcg OOM events (count)", fix2)["value"] == s["fix2_oom_events"]
    assert _count(rows, "leaked pages (4 KiB pages)", fix2)["value"] == s["fix2_leaked_pages"]
    assert _count(rows, "failed charges (count)", "multi, netperf_rx")["value"] == 0
    first = _count(rows, "operation of the first failed charge (1-based)", fix2)["value"]
    assert first == r.first_failure["multi-fix2"]
    at = r.growth[(r.growth["model"] == "multi-fix2") & (r.growth["ops"] == first)]
    assert _count(rows, "leaked pages at the first failed charge (4 KiB pages)",
                  fix2)["value"] == int(at["leaked"].iloc[0])
    per_1000 = [x for x in rows if x["quantity"] == "page_counter walks per 1000 charges"]
    assert len(per_1000) == len(r.mix)
    for row, (_, m) in zip(per_1000, r.mix.iterrows(), strict=True):
        assert row["configuration"].startswith(m["config"] + ", ")
        assert f" {m['large_share']:.0%} of flows" in row["configuration"]
        assert row["value"] == 1000 * m["walks"] / m["charges"]
    extra = [x["value"] for x in rows if x["quantity"] == "walk increase of the full drain (%)"]
    assert max(extra) == s["max_extra_walks_pct"] and extra[0] == s["extra_walks_pct_no_bulk"]


def test_count_rows_on_the_batch_demo_as_a_mix(results):
    # BATCH_DEMO as the "mix": single walks 4 times on 3 charges, multi 3 (hand-worked above)
    mix = hs.model_walks(BATCH, results.params.configs).assign(
        large_share=1.0, pages_share_over_batch=hs.refill_sizes(BATCH)["pages_share_over_batch"])
    rows = hv.counts(hs.HistoryResults(**{**results.__dict__, "mix": mix}))
    walks = "page_counter walks per 1000 charges"
    assert _count(rows, walks, "single (v6.15),")["value"] == 4000 / 3
    assert _count(rows, walks, "multi, 1 slot,")["value"] == 1000
    assert _count(rows, "stock drains per 1000 charges", "single (v6.15),")["value"] == 1000 / 3
    increase = _count(rows, "walk increase of the full drain (%)", "single (v6.15) over")
    assert increase["value"] == pytest.approx(100 / 3)
    assert increase["note"] == "4 against 3 walks on the same charges"
    assert _count(rows, "refill_stock calls above the batch (count)",
                  "multi, 7 slots,")["value"] == 1
