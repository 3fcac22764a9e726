"""Study 6's predictions, regenerated from its scenario files through ``memcglab predict``.

The predictions are scenario files of the contract (``data/scenarios/study06/``, see
``data/scenarios/README.md``): eight workloads on two machines, v4 of the page_counter
stock against v6.16's multi-memcg stock (``multi_vs_v4``) and against the RFC
(``rfc_vs_v4``). :func:`regenerate` prices each file with :mod:`memcglab.scenario.predict`
at the default calibration, as ``memcglab predict FILE`` does, so what the study shows is
always the prediction this version of memcglab makes from the file, beside its band's
driver found at the same points (:func:`memcglab.validation.drivers.band_driver`);
:func:`write_predictions` writes them (:data:`PREDICTIONS_FILE`) before any claim row is
built from them. A file is named ``WORKLOAD-MACHINE-PAIR.toml``; its designs must be the
pair its name says.

>>> [f.stem for f in scenario_files("tcp_rr-224t-*")]
['tcp_rr-224t-multi_vs_v4', 'tcp_rr-224t-rfc_vs_v4']
>>> scenario_files("nope*")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: scenarios='nope*': matches no file in data/scenarios/study06 (valid: ...)
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa

from memcglab.calibration.files import load_calibration
from memcglab.resources import data_dir
from memcglab.results import write_parquet_atomic
from memcglab.scenario.model import ScenarioModel
from memcglab.scenario.predict import predict_scenario
from memcglab.scenario.spec import load_scenario
from memcglab.validation.drivers import CHANGE_PCT, DRIVER_COLUMNS, band_driver

__all__ = ["PAIRS", "PREDICTIONS_FILE", "PREDICTION_COLUMNS", "QUICK_SCENARIOS",
           "regenerate", "scenario_dir", "scenario_files", "write_predictions"]

#: the file the predictions go to, in the notebook's output directory
PREDICTIONS_FILE = "predictions.parquet"
#: each file name's pair and the (base, new) models it stands for
PAIRS: dict[str, tuple[str, str]] = {"multi_vs_v4": ("multi", "pcstock-v4"),
                                     "rfc_vs_v4": ("pcstock", "pcstock-v4")}
#: the quick run's files: v4 against the multi stock on the 224-thread server
QUICK_SCENARIOS = "*-224t-multi_vs_v4"
_KERNEL = ("walks_per_op", "charges_per_op", "uncharges_per_op", "bottleneck")
#: columns of predictions.parquet, one row per scenario file
PREDICTION_COLUMNS: tuple[str, ...] = (
    "file", "workload", "machine", "pair", "baseline", "model", "change_pct", "low", "high",
    *(f"{k}_{f}" for k in ("base", "new") for f in _KERNEL),
    "alternatives", "points", "seed", "calibration", *DRIVER_COLUMNS)
#: a band of zero width has no driver: its driver columns
_NO_DRIVER = {"driver": None, "driver_st": float("nan"), "driver_unit": None,
              "driver_low": float("nan"), "driver_high": float("nan"),
              "driver_median": float("nan"), "reach_values": [], "reach_medians": []}


def scenario_dir() -> Path:
    """``data/scenarios/study06`` (installed or in a checkout)."""
    return data_dir() / "scenarios" / "study06"


def scenario_files(pattern: str = "*") -> list[Path]:
    """The study's scenario files whose stem matches ``pattern``, in name order."""
    files = sorted(scenario_dir().glob(f"{pattern}.toml"))
    if not files:
        raise ValueError(f"scenarios={pattern!r}: matches no file in data/scenarios/study06 "
                         "(valid: a glob over the stems, e.g. '*' or '*-224t-multi_vs_v4')")
    return files


def _row(path: Path, points: int, seed: int, calibration: str) -> dict:
    parts = path.stem.split("-")
    if len(parts) != 3:
        raise ValueError(f"{path}: a study 6 scenario is named WORKLOAD-MACHINE-PAIR.toml")
    workload, pair = parts[0], parts[2]
    sc = load_scenario(path)
    designs = (sc.base.model, sc.new.model)
    if PAIRS.get(pair) != designs:
        raise ValueError(f"{path}: base/new models {designs} are not the pair its name says "
                         f"({pair!r}; valid: " + ", ".join(f"{k} = {v}" for k, v in
                                                          PAIRS.items()) + ")")
    cal, label = load_calibration(calibration)
    model = ScenarioModel(sc, seed=seed)
    out = predict_scenario(sc, points, seed, cal, label, model=model)
    ch = out["change_pct"]
    drive = band_driver(model, cal, points, seed, CHANGE_PCT)
    return {"file": path.name, "workload": workload,
            "machine": sc.machine.profile or f"{sc.machine.cpus} CPUs", "pair": pair,
            "baseline": designs[0], "model": designs[1], "change_pct": ch["median"],
            "low": ch["low"], "high": ch["high"],
            **{f"{k}_{f}": out[k][f] for k in ("base", "new") for f in _KERNEL},
            "alternatives": len(model.combos), "points": points, "seed": seed,
            "calibration": out["calibration"],
            **(drive.columns() if drive is not None else _NO_DRIVER)}


def regenerate(files: list[Path], points: int, seed: int = 0,
               calibration: str = "default") -> pd.DataFrame:
    """Each file's ``memcglab predict`` answer, one row per file (:data:`PREDICTION_COLUMNS`)."""
    rows = [_row(Path(f), points, seed, calibration) for f in files]
    return pd.DataFrame(rows, columns=list(PREDICTION_COLUMNS))


def write_predictions(frame: pd.DataFrame, output_dir: str | Path) -> None:
    """``predictions.parquet`` in ``output_dir``, atomically ("" writes nothing)."""
    if output_dir:
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        write_parquet_atomic(Path(output_dir) / PREDICTIONS_FILE,
                             pa.Table.from_pandas(frame, preserve_index=False))
