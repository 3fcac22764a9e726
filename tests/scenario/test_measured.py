"""Contract revision 2, first part: ``[base.measured]``, ``band``, ``--draws``."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from memcglab.scenario.errors import draw_y, log_density
from memcglab.scenario.predict import predict, weighted_quantiles
from memcglab.scenario.spec import ScenarioError, load_scenario

BASE = """schema = 1
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
{measured}
[new]
model = "pcstock-v4"
"""


def scenario(tmp_path, measured: str, name: str = "s.toml"):
    f = tmp_path / name
    f.write_text(BASE.format(measured=measured))
    return f


def test_the_base_band_contains_the_given_throughput(tmp_path):
    f = scenario(tmp_path, "[base.measured]\nthroughput = 250000.0\nunit = \"tps\"")
    out = predict(f, points=32)
    ops = out["base"]["ops_per_s"]
    assert out["base"]["conditioning"] == "met"
    # rounded to 4 significant digits, as every rate is printed
    assert ops["low"] <= 250000.0 <= ops["high"]
    assert ops["high"] - ops["low"] <= 0.002 * 250000.0


def test_per_instance_throughput_is_times_the_instances(tmp_path):
    f = scenario(tmp_path, "[base.measured]\nthroughput = 31250.0\nper = \"instance\"")
    ops = predict(f, points=16)["base"]["ops_per_s"]
    assert ops["low"] <= 8 * 31250.0 <= ops["high"]


def test_a_throughput_the_charge_path_cannot_reach_is_unmet(tmp_path):
    f = scenario(tmp_path, "[base.measured]\nthroughput = 1.0e14")
    out = predict(f, points=16)
    assert out["base"]["conditioning"].startswith("unmet: ")


def test_conditioning_moves_the_prediction(tmp_path):
    free = predict(scenario(tmp_path, "", "a.toml"), points=32)
    slow = predict(scenario(tmp_path, "[base.measured]\nthroughput = 2000.0", "b.toml"),
                   points=32)
    # a base run 100x slower than the model's own means far more work outside memcg,
    # so the charge path's change is diluted
    assert abs(slow["change_pct"]["median"]) < abs(free["change_pct"]["median"])


def test_a_profile_weights_the_points(tmp_path):
    f = scenario(tmp_path, "[base.measured]\nthroughput = 250000.0\n"
                 "profile = { try_charge_memcg = 1.0 }")
    out = predict(f, points=64)
    assert out["base"]["conditioning"] == "met"
    b = out["base"]["profile"]["try_charge_memcg"]
    # the weighted band of the share is pulled towards the given 1%
    unweighted = predict(scenario(tmp_path, "[base.measured]\nthroughput = 250000.0",
                                  "u.toml"), points=64)["base"]["profile"]["try_charge_memcg"]
    assert abs(np.log(b["median"] / 1.0)) <= abs(np.log(unweighted["median"] / 1.0))


@pytest.mark.parametrize("text, key", [
    ("[base.measured]\nthroughput = -1.0", "base.measured.throughput"),
    ("[base.measured]\nunit = \"tps\"", "base.measured.throughput"),
    ("[base.measured]\nthroughput = 1.0\nper = \"core\"", "base.measured.per"),
    ("[base.measured]\nthroughput = 1.0\nprofile = { memcg_charge = 1.0 }",
     "base.measured.profile.memcg_charge"),
    ("[base.measured]\nthroughput = 1.0\nprofile = { drain_stock = 101 }",
     "base.measured.profile.drain_stock"),
    ("[base.measured]\nthroughput = 1.0\nprofile_kind = \"total\"",
     "base.measured.profile_kind"),
    ("[base.measured]\nthroughput = 1.0\nidle_pct = 100", "base.measured.idle_pct"),
    ("[base.measured]\nthroughput = 1.0\nnew_throughput = 2.0", "base.measured.new_throughput"),
])
def test_bad_measured_values_are_one_line_errors(tmp_path, text, key):
    with pytest.raises(ScenarioError) as e:
        load_scenario(scenario(tmp_path, text))
    assert f": {key}: " in str(e.value) and "\n" not in str(e.value)


def test_draws_file_has_every_point(tmp_path):
    f = scenario(tmp_path, "")
    draws = tmp_path / "draws.csv"
    r = subprocess.run([sys.executable, "-m", "memcglab", "predict", str(f), "--points", "16",
                        "--draws", str(draws)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert obj["draws"] == str(draws) and list(obj).index("draws") == list(obj).index("band") + 1
    rows = list(csv.DictReader(draws.open()))
    assert len(rows) == 16 and {row["file"] for row in rows} == {str(f)}
    change = np.array([float(row["change_pct"]) for row in rows])
    lo, hi = obj["change_pct"]["low"], obj["change_pct"]["high"]
    assert change.min() <= lo + 0.01 and change.max() >= hi - 0.01


def test_draws_into_a_missing_directory_is_refused(tmp_path):
    f = scenario(tmp_path, "")
    r = subprocess.run([sys.executable, "-m", "memcglab", "predict", str(f), "--draws",
                        str(tmp_path / "no" / "d.csv")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--draws" in r.stderr


def test_lognormal_error_never_flips_a_sign():
    L = np.full(1000, 0.2)
    v = {"sigma_rel": np.full(1000, 3.0)}
    z = np.linspace(-6, 6, 1000)
    assert np.all(draw_y("lognormal", L, v, z, z) > 0)
    assert np.any(draw_y("scaled", L, v, z, z) < 0)


def test_log_density_integrates_to_one():
    v = {"sigma_rel": np.array([0.4]), "sigma_add": np.array([0.02])}
    y = np.linspace(-2.0, 3.0, 20001)
    for error in ("scaled", "lognormal", "lognormal+additive", "student"):
        dens = np.array([np.exp(log_density(error, float(t), np.array([[0.5]]), v, 0.03))[0]
                         for t in y[::10]])
        assert np.trapezoid(dens, y[::10]) == pytest.approx(1.0, abs=0.02), error


def test_weighted_quantiles_match_numpy_for_equal_weights():
    x = np.random.default_rng(0).normal(size=4001)
    got = weighted_quantiles(x, np.ones_like(x), [0.05, 0.5, 0.95])
    assert np.allclose(got, np.quantile(x, [0.05, 0.5, 0.95]), atol=0.01)
