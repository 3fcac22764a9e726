"""Study 6's scenario files, and its predictions regenerated from them through memcglab predict."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from memcglab.scenario.predict import predict
from memcglab.scenario.spec import load_scenario
from memcglab.studies.s06_page_counter_stock_v4 import claims as v4_claims
from memcglab.studies.s06_page_counter_stock_v4 import scenarios
from memcglab.studies.s06_page_counter_stock_v4.counts import CASES


def test_the_files_are_every_workload_on_both_machines_for_both_pairs():
    files = scenarios.scenario_files()
    assert len(files) == 32
    seen = set()
    for f in files:
        workload, machine, pair = f.stem.split("-")
        sc = load_scenario(f)
        assert (sc.base.model, sc.new.model) == scenarios.PAIRS[pair], f
        profile = {"72cpu": "butt-netperf-72cpu", "224t": "lkp-2s-224t-spr"}[machine]
        assert sc.machine.profile == profile
        seen.add((workload, machine, pair))
    assert {w for w, _, _ in seen} == set(CASES)
    assert len(seen) == 32
    assert len(scenarios.scenario_files(scenarios.QUICK_SCENARIOS)) == 8


def test_a_regenerated_row_is_memcglab_predicts_answer(tmp_path):
    path = scenarios.scenario_dir() / "tcp_rr-72cpu-multi_vs_v4.toml"
    frame = scenarios.regenerate([path], points=16)
    assert tuple(frame.columns) == scenarios.PREDICTION_COLUMNS and len(frame) == 1
    row = frame.iloc[0]
    out = predict(path, points=16)
    assert (row["change_pct"], row["low"], row["high"]) == tuple(out["change_pct"].values())
    for k in ("base", "new"):
        for f in ("walks_per_op", "charges_per_op", "uncharges_per_op", "bottleneck"):
            assert row[f"{k}_{f}"] == out[k][f]
    assert row["calibration"] == out["calibration"] and row["calibration"].startswith("default:")
    assert (row["workload"], row["machine"], row["pair"]) == ("tcp_rr", "butt-netperf-72cpu",
                                                              "multi_vs_v4")
    pd.testing.assert_frame_equal(scenarios.regenerate([path], points=16), frame)
    scenarios.write_predictions(frame, tmp_path / "out")
    back = pd.read_parquet(tmp_path / "out" / scenarios.PREDICTIONS_FILE)
    pd.testing.assert_frame_equal(back, frame)
    scenarios.write_predictions(frame, "")  # "" writes nothing
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [scenarios.PREDICTIONS_FILE]


def test_a_file_whose_name_is_not_its_pair_is_refused(tmp_path):
    bad = tmp_path / "tcp_rr-72cpu-rfc_vs_v4.toml"
    shutil.copy(scenarios.scenario_dir() / "tcp_rr-72cpu-multi_vs_v4.toml", bad)
    with pytest.raises(ValueError, match=r"base/new models \('multi', 'pcstock-v4'\) are not"):
        scenarios.regenerate([bad], points=8)
    odd = tmp_path / "tcp_rr.toml"
    shutil.copy(bad, odd)
    with pytest.raises(ValueError, match="WORKLOAD-MACHINE-PAIR"):
        scenarios.regenerate([odd], points=8)


def _row(low, high, median=None, charges=1.0, alternatives=6):
    return pd.Series({"workload": "w", "low": low, "high": high,
                      "change_pct": median if median is not None else (low + high) / 2,
                      "alternatives": alternatives, "base_charges_per_op": charges,
                      "new_charges_per_op": charges, "base_uncharges_per_op": charges,
                      "new_uncharges_per_op": charges})


@pytest.mark.parametrize("low, high, charges, phrase", [
    (-40.0, -3.0, 1.0, "loss beyond 2%"),
    (3.0, 9.0, 1.0, "gain beyond 2%"),
    (-0.5, 0.4, 1.0, "within ±2%"),
    (-17.5, -0.45, 1.0, "no prediction (the interval spans ±2%)"),
    (0.0, 0.0, 0.0, "no prediction (zero by construction: w charges and uncharges nothing "
                    "per operation in either kernel)"),
    (0.0, 0.0, 1.0, "no prediction (zero by construction: both kernels price the same at "
                    "every point (0%))"),
])
def test_each_prediction_is_phrased_by_judge(low, high, charges, phrase):
    v = v4_claims.prediction(_row(low, high, charges=charges), 2.0)
    assert v.rule == "prediction" and v.word is None and v.prediction == phrase


def test_the_madvise_prediction_meets_the_tost():
    pred = pd.DataFrame([{"workload": "madvise_fault", "pair": "multi_vs_v4", "machine": "m",
                          "file": "f.toml", "change_pct": 0.02, "low": 0.0, "high": 0.05},
                         {"workload": "madvise_fault", "pair": "rfc_vs_v4", "machine": "m",
                          "file": "g.toml", "change_pct": -3.0, "low": -17.0, "high": -0.4}])
    tost = pd.DataFrame({"iterations": [50, 50, 15], "cgroups": [1, 4, 1],
                         "equivalent": [True, True, False], "delta_pct": [0.1, -0.2, 0.5]})
    cmp = v4_claims.comparison(pred, tost, 2.0)
    assert cmp["file"].tolist() == ["f.toml", "f.toml"]  # v4 vs multi only
    assert cmp.set_index("iterations")["agree"].to_dict() == {15: False, 50: True}
