"""The development set: every figure re-derived, every scenario parsed, every corruption named."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from memcglab import published
from memcglab.scenario.spec import load_scenario
from memcglab.validation import devset
from memcglab.validation.devset import (
    DevsetError,
    calibration_point,
    case_profile,
    check,
    load_cases,
    load_source,
    source_ids,
)

CASES = load_cases()
BY_ID = {c.case_id: c for c in CASES}


def _pct(old: float, new: float) -> float:
    return (new / old - 1) * 100


def test_the_whole_set_checks():
    summary = check()
    assert summary == {"sources": len(source_ids()), "cases": len(CASES), "calibration_rows": 4}
    assert {c.source for c in CASES} == {s for s in source_ids()
                                         if load_source(s).role == "cases"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.case_id)
def test_every_case_figure_is_rederived_from_its_printed_values(case):
    b, n = case.base_value, case.new_value
    exact = _pct(b, n) if case.direction == "higher-is-better" else _pct(n, b)
    assert case.digits_low <= exact <= case.digits_high
    if case.change_origin == "derived":
        assert round(exact, case.change_decimals) == case.measured_change_pct
    elif case.change_origin == "printed":
        # the source's own figure: within one unit of its last digit of the values' change
        # (rounded or truncated, as the source prints it)
        assert abs(exact - case.measured_change_pct) < 10.0**-case.change_decimals
    else:
        assert case.change_origin == "inverted"
        assert abs(exact - case.measured_change_pct) < 0.5  # the author used unrounded means


def test_seed_cases_are_the_published_tables():
    t000 = published.load("seed000_netperf").frame.set_index("clients")
    t003 = published.load("seed003_madvise").frame.set_index("cgroups")
    for c in CASES:
        # only the seed sources' conditions are "column=N"; others name a printed row label
        key = int(c.condition.split("=")[1]) if c.source in ("multi_memcg_stock",
                                                             "page_counter_stock_rfc") else None
        if c.source == "multi_memcg_stock":
            row = t000.loc[key]
            assert (c.base_value, c.new_value) == (row["without_mbps"], row["with_mbps"])
            assert c.measured_change_pct == row["improvement_pct"]
        elif c.source == "page_counter_stock_rfc":
            row = t003.loc[key]
            assert (c.base_value, c.new_value) == (row["before_ms"], row["after_ms"])
            assert c.measured_change_pct == round(100 * (100 / (100 + row["delta_pct"]) - 1), 3)
            assert c.noise_pct == round(100 * row["stddev_ms"] / row["before_ms"], 3)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.case_id)
def test_every_scenario_file_is_a_contract_scenario_of_its_case(case):
    s = load_scenario(case.scenario)
    if case.condition.startswith("clients="):
        assert s.workload.keys["instances"] == int(case.condition.split("=")[1])
    if case.condition.startswith("cgroups="):
        assert s.workload.keys["cgroups"] == int(case.condition.split("=")[1])
    assert s.base != s.new, "a case compares two different designs"


def test_noise_is_the_sources_own():
    refill = BY_ID["stock_refill_regression/tcp_maerts_64"]
    assert (refill.noise_pct, refill.noise_origin) == (2.0, "printed")
    lazy = BY_ID["sk_forward_alloc_regression/lazy_vs_eager"]
    assert (lazy.noise_pct, lazy.noise_hidden_below_pct) == (None, 2.0)
    assert all(c.noise_pct is None and c.noise_hidden_below_pct is None
               for c in CASES if c.source in ("multi_memcg_stock", "optimize_charge_codepath"))


def test_profiles_of_the_sctp_cases():
    lazy = case_profile(BY_ID["sk_forward_alloc_regression/lazy_vs_eager"])
    assert lazy["new"]["children"]["try_charge_memcg"] == 3.41
    assert lazy["new"]["self"]["page_counter_uncharge"] == 1.96
    assert lazy["base"]["children"]["page_counter_try_charge"] == 0.0
    b64 = case_profile(BY_ID["sk_forward_alloc_regression/aligned_batch32_vs_64"])
    assert set(b64["base"]) == {"self"}  # the follow-ups tabulate self shares only
    assert (b64["base"]["self"]["page_counter_try_charge"],
            b64["new"]["self"]["page_counter_try_charge"]) == (2.60, 0.58)
    assert case_profile(BY_ID["multi_memcg_stock/clients06"]) == {"base": {}, "new": {}}


def test_the_calibration_point_and_its_hold_times():
    p = calibration_point()
    assert (p.threads, p.machine["cpus"], p.machine["sockets"]) == (96, 96, 2)
    assert p.provenance["message_id"] == "20210506150007.16288-1-longman@redhat.com"
    rows = {(r.kernel, r.quantity): r for r in p.rows}
    v1 = rows["1-3", "v1 kops/s"]
    assert v1.kops_per_s == 4731 and v1.rmw_per_op == (1.75, 2.0)
    assert v1.hold_time_ns == pytest.approx((1e9 / (2 * 4731e3), 1e9 / (1.75 * 4731e3)))
    assert rows["accounting disabled", "kmalloc/kfree rate"].hold_time_ns is None
    assert p.other_work_ns == pytest.approx(96e9 / 1481291e3)


def test_shakeel_2022_figures_are_truncated_not_rounded():
    src = load_source("optimize_charge_codepath")
    assert src.tables["results"].change_rounding == "truncate"
    assert src.row("results", "", "average throughput of netperf", "6.0-rc1").change_printed \
        == "-51.6%"


# -- a corrupted copy fails, naming the file and the field --------------------------------

def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "validation"
    shutil.copytree(devset.VALIDATION_DIR, d)
    return d


def _edit_text(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    assert text.count(old) >= count, f"the edit must change {path.name}"
    path.write_text(text.replace(old, new, count))


def _edit_json(path: Path, edit) -> None:
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc, ensure_ascii=False))


def _edit_case(d: Path, case_id: str, column: str, value: str) -> None:
    path = d / "cases.csv"
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    (row,) = [r for r in rows if r["case_id"] == case_id]
    row[column] = value
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


SFA = "sk_forward_alloc_regression"

CORRUPTIONS = {
    "a_transposed_digit_in_the_csv": (
        lambda d: _edit_text(d / f"{SFA}.csv", ",4854,4854,", ",4584,4584,"),
        r"sk_forward_alloc_regression.csv: table 2022-06-19 line 0: .*'4584' is not printed"),
    "a_change_the_values_do_not_give": (
        lambda d: (_edit_text(d / f"{SFA}.csv", "-57.8%", "-56.8%"),
                   _edit_text(d / f"{SFA}.json", "-57.8%", "-56.8%")),
        r"table 2022-06-19 netperf.time.system_time 4890b686f4088c90432149bd6de: printed "
        r"change '-56.8%' does not follow"),
    "rounding_where_the_author_truncated": (
        lambda d: _edit_json(d / "optimize_charge_codepath.json", lambda m: m["tables"][
            "results"].update(change_rounding="round")),
        r"average throughput of netperf 6.0-rc1: printed change '-51.6%' does not follow"),
    "a_profile_share_off_by_a_hundredth": (
        lambda d: _edit_text(d / f"{SFA}.csv", ",0.58,0.58,", ",0.59,0.59,"),
        r"table 2022-07-03 line 7: .*'0.59' is not printed"),
    "missing_message_id": (
        lambda d: _edit_json(d / f"{SFA}.json", lambda m: m["tables"]["2022-07-03"][
            "source"].pop("message_id")),
        r"tables.2022-07-03.source: lacks provenance message_id"),
    "a_date_not_iso": (
        lambda d: _edit_json(d / "kmemcache_accounting.json", lambda m: m["tables"][
            "96-thread"]["source"].update(date="6 May 2021")),
        r"tables.96-thread.source.date: '6 May 2021' must be YYYY-MM-DD"),
    "a_kernel_label_not_printed": (
        lambda d: _edit_json(d / "optimize_charge_codepath.json", lambda m: m["tables"][
            "results"]["kernels"].update({"6.0-rc2": "x"})),
        r"tables.results.kernels: '6.0-rc2' is not printed in the excerpt"),
    "a_derived_case_change_off_by_one_digit": (
        lambda d: _edit_case(d, f"{SFA}/aligned_batch32_vs_64", "measured_change_pct", "19.23"),
        r"cases.csv: row \d+ \(sk_forward_alloc_regression/aligned_batch32_vs_64\) "
        r"measured_change_pct: 19.23 does not follow from the source \(derived: 19.22\)"),
    "a_printed_case_change_altered": (
        lambda d: _edit_case(d, "multi_memcg_stock/clients24", "measured_change_pct", "88.56"),
        r"\(multi_memcg_stock/clients24\) measured_change_pct: 88.56 does not follow"),
    "a_case_value_not_the_sources": (
        lambda d: _edit_case(d, "optimize_charge_codepath/root_vs_v6.0-rc1", "base_value",
                             "21649.8"),
        r"\(optimize_charge_codepath/root_vs_v6.0-rc1\) base_value: 21649.8 Mbps is not the "
        r"source's 21694.8 Mbps"),
    "a_noise_the_source_does_not_print": (
        lambda d: _edit_case(d, "stock_refill_regression/tcp_maerts_64", "noise_pct", "3"),
        r"noise_pct: '3' is not a noise the source prints"),
    "an_lkp_case_without_its_reporting_rule": (
        lambda d: _edit_case(d, f"{SFA}/lazy_vs_eager", "noise_hidden_below_pct", ""),
        r"noise_hidden_below_pct: '' must be the table's reporting rule \(2\)"),
    "children_shares_claimed_where_none_are_printed": (
        lambda d: _edit_case(d, f"{SFA}/aligned_batch64_vs_128", "profile", "self+children"),
        r"profile: table 2022-07-03 prints no children shares for \"Eric's patch \+ batch-64\""),
    "a_missing_scenario_file": (
        lambda d: (d / "scenarios" / "multi_memcg_stock" / "clients18.toml").unlink(),
        r"clients18.toml: scenario: does not exist"),
    "an_unknown_top_level_key": (
        lambda d: _edit_text(d / "scenarios" / SFA / "lazy_vs_eager.toml", "schema = 1",
                             "schema = 1\nmeasured_change_pct = -69.4"),
        r"lazy_vs_eager.toml: measured_change_pct: is not a key of the scenario contract"),
    "a_scenario_that_is_not_toml": (
        lambda d: _edit_text(d / "scenarios" / "page_counter_stock_rfc" / "cgroups04.toml",
                             "[new]", "[new"),
        r"cgroups04.toml: scenario: not valid TOML"),
    "a_scenario_without_its_workload": (
        lambda d: _edit_text(d / "scenarios" / "stock_refill_regression" / "tcp_maerts_64.toml",
                             "[workload]", "[workloads]"),
        r"tcp_maerts_64.toml: workloads: is not a key of the scenario contract"),
    "a_calibration_row_without_its_update_count": (
        lambda d: _edit_json(d / "kmemcache_accounting.json", lambda m: m["calibration"][
            "rows"][0].update(rmw_per_op=[])),
        r"calibration.rows\[0\].rmw_per_op: \[\]: a hold-time row needs"),
    "a_csv_with_a_column_too_few": (
        lambda d: _edit_text(d / "optimize_charge_codepath.csv", ",excerpt_line\n", "\n"),
        r"optimize_charge_codepath.csv: header: columns"),
    "a_source_sidecar_renamed_inside": (
        lambda d: _edit_json(d / "stock_refill_regression.json",
                             lambda m: m.update(source_id="refill")),
        r"stock_refill_regression.json: source_id: 'refill' must be 'stock_refill_regression'"),
}


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_a_corrupted_copy_fails_naming_file_and_field(tmp_path, name):
    d = _copy(tmp_path)
    edit, message = CORRUPTIONS[name]
    edit(d)
    with pytest.raises(DevsetError, match=message):
        check(d)


def test_an_orphan_scenario_file_is_named(tmp_path):
    d = _copy(tmp_path)
    extra = d / "scenarios" / "multi_memcg_stock" / "clients42.toml"
    shutil.copy(d / "scenarios" / "multi_memcg_stock" / "clients36.toml", extra)
    with pytest.raises(DevsetError, match="clients42.toml: scenario: no case of cases.csv"):
        check(d)


def test_the_untouched_copy_checks(tmp_path):
    assert check(_copy(tmp_path)) == check()
