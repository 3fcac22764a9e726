"""memcglab predict: the scenario contract's command, output keys, errors and determinism."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memcglab.scenario.output import PROFILE_FUNCTIONS
from memcglab.scenario.predict import predict

SMALL = """schema = 1
name = "netperf TCP_RR, 8 instances"
[machine]
cpus = 16
sockets = 2
threads_per_core = 2
family = "ice-lake"
[workload]
family = "netperf"
test = "TCP_RR"
instances = 8
[base]
model = "multi"
[new]
model = "pcstock-v4"
"""
KERNEL_KEYS = {"ops_per_s", "walks_per_op", "charges_per_op", "uncharges_per_op", "profile",
               "bottleneck"}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memcglab", "predict", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    f = tmp_path_factory.mktemp("s") / "small.toml"
    f.write_text(SMALL)
    return f


@pytest.fixture(scope="module")
def answer(small):
    return predict(small, points=32)


def band_ok(b):
    return set(b) == {"median", "low", "high"} and b["low"] <= b["median"] <= b["high"]


def test_output_has_the_contract_keys_in_order(answer, small):
    assert list(answer) == ["schema", "name", "file", "metric", "change_pct", "base", "new",
                            "band", "calibration", "points", "seed", "memcglab"]
    # revision 2: the band's variance shares by input group, each a total Sobol index
    assert list(answer["band"]) == ["model_error", "alternatives", "hardware", "work"]
    assert all(0.0 <= x <= 1.0 for x in answer["band"].values())
    assert answer["base"]["conditioning"] == "none" and "conditioning" not in answer["new"]
    assert answer["schema"] == 1 and answer["metric"] == "ops_per_s"
    assert answer["file"] == str(small) and answer["points"] == 32 and answer["seed"] == 0
    assert answer["calibration"].startswith("default:")
    assert band_ok(answer["change_pct"])
    for k in ("base", "new"):
        kern = {key: x for key, x in answer[k].items() if key != "conditioning"}
        assert set(kern) == KERNEL_KEYS
        assert band_ok(kern["ops_per_s"]) and kern["ops_per_s"]["low"] > 0
        assert set(kern["profile"]) == set(PROFILE_FUNCTIONS)
        assert all(band_ok(b) and 0 <= b["low"] and b["high"] <= 100
                   for b in kern["profile"].values())
        assert isinstance(kern["bottleneck"], str) and kern["bottleneck"]


def test_counts_are_exact_and_v4_walks_on_every_uncharge(answer):
    # TCP_RR charges and uncharges pages every transaction; v4 uncharges never stock
    base, new = answer["base"], answer["new"]
    assert base["charges_per_op"] == new["charges_per_op"] > 0
    assert new["walks_per_op"] >= new["uncharges_per_op"] > base["walks_per_op"]
    assert new["profile"]["refill_stock"]["high"] == 0.0  # v4 has no refill_stock
    # every charge walks through try_charge_memcg, every v4 uncharge walks
    assert new["profile"]["page_counter_uncharge"]["median"] > 0
    assert new["profile"]["try_charge_memcg"]["median"] >= \
        new["profile"]["page_counter_try_charge"]["median"] > 0
    assert answer["change_pct"]["median"] < 0


def test_cli_prints_one_line_per_scenario_deterministically(small, tmp_path):
    a = cli(str(small), str(small), "--points", "32")
    b = cli(str(small), str(small), "--points", "32")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    lines = a.stdout.splitlines()
    assert len(lines) == 2 and lines[0] == lines[1]
    assert json.loads(lines[0])["name"] == "netperf TCP_RR, 8 instances"
    out = tmp_path / "p.json"
    c = cli(str(small), "--points", "32", "--out", str(out))
    assert c.returncode == 0 and c.stdout == ""
    assert json.loads(out.read_text()) == [json.loads(lines[0])]


def test_root_memcg_charges_nothing(tmp_path):
    f = tmp_path / "root.toml"
    f.write_text(SMALL.replace('model = "multi"', 'model = "none"'))
    r = predict(f, points=16)
    assert r["base"]["walks_per_op"] == r["base"]["charges_per_op"] == 0
    assert all(b["high"] == 0 for b in r["base"]["profile"].values())
    assert r["change_pct"]["median"] < 0


def test_calibration_none_is_labelled(small):
    assert predict(small, points=16, calibration="none")["calibration"] == "none"


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace("instances = 8", "instances = 0"), "workload.instances: 0 is out"),
    (lambda t: t.replace('family = "ice-lake"', 'family = "m1"'), "machine.family: 'm1'"),
    (lambda t: t + "[extra]\n", "extra: unknown key"),
])
def test_bad_file_exits_2_with_one_line_and_writes_nothing(tmp_path, small, edit, message):
    bad = tmp_path / "bad.toml"
    bad.write_text(edit(SMALL))
    out = tmp_path / "never.json"
    r = cli(str(small), str(bad), "--out", str(out))
    assert r.returncode == 2 and r.stdout == "" and not out.exists()
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{bad}: ") and message in lines[0]
    assert "(valid: " in lines[0]


@pytest.mark.parametrize("args", [["--points", "0"], ["--points", "100000"],
                                  ["--calibration", "/no/such.json"], ["--seed", "-1"]])
def test_bad_options_exit_2(small, args):
    r = cli(str(small), *args)
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1


def test_a_probed_profile_file_prices_a_scenario(tmp_path):
    from memcglab.hardware import load_profile

    probed = load_profile("generic-x86-64")
    f = tmp_path / "probed.toml"
    f.write_text(probed.to_toml().replace('name = "generic-x86-64"', 'name = "my-box"'))
    s = tmp_path / "mine.toml"
    s.write_text(SMALL.replace('cpus = 16\nsockets = 2\nthreads_per_core = 2\n'
                               'family = "ice-lake"', f'profile = "{f}"'))
    r = predict(s, points=16)
    assert r["change_pct"]["median"] < 0
    broken = tmp_path / "broken.toml"
    broken.write_text(f.read_text().replace("cpus = ", "cpus = -"))
    s.write_text(s.read_text().replace(str(f), str(broken)))
    res = cli(str(s))
    assert res.returncode == 2 and str(broken) in res.stderr and "machine.cpus" in res.stderr
