"""Calibration files: a fitted posterior on disk, and the pinned default ``memcglab predict`` uses.

A calibration file is JSON (``schema``, ``kind``, the parameters with their priors and
sources, the posterior's mode and covariance in the unconstrained coordinates, the
cases it was fitted on, ``devset_sha256``: the digest of the development set it saw, and
``tau``: the spread of hold-time deviations between machine families, for a family
the file has no data on). ``memcglab validate --calibrate`` writes one; the default
(``data/calibration/default.json``) is pinned by :data:`DEFAULT_SHA256`, so a changed
file is an error until the pin is updated together with it.

>>> cal, label = load_calibration("none")
>>> cal is None, label
(True, 'none')
>>> cal, label = load_calibration("default")
>>> label.startswith("default:") and len(label) == len("default:") + 64
True
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memcglab.calibration.posterior import Calibration, Param
from memcglab.resources import data_dir

__all__ = ["DEFAULT_SHA256", "CalibrationFile", "CalibrationFileError", "default_path",
           "dump_calibration", "load_calibration", "read_calibration"]

#: SHA-256 of data/calibration/default.json; update it together with the file
DEFAULT_SHA256 = "9db0e154263f64af87fb2a2fdeaadd3b81b3dbcc85aa9b8fcc73ba434fd75732"
_KIND = "memcglab calibration"


class CalibrationFileError(ValueError):
    """A calibration file is missing, malformed or not the pinned one; names the file."""


@dataclass(frozen=True)
class CalibrationFile:
    """A calibration and what it was fitted on."""

    calibration: Calibration
    devset_sha256: str
    tau: float
    left_out: tuple[str, ...]
    families: tuple[str, ...]
    note: str


def default_path() -> Path:
    """``data/calibration/default.json`` (installed or in a checkout)."""
    return data_dir() / "calibration" / "default.json"


def dump_calibration(cf: CalibrationFile) -> str:
    """The JSON text of a calibration file (stable key order, one value per line)."""
    cal = cf.calibration
    doc: dict[str, Any] = {
        "schema": 1, "kind": _KIND, "devset_sha256": cf.devset_sha256, "tau": cf.tau,
        "left_out": list(cf.left_out), "families": list(cf.families), "note": cf.note,
        "cases": list(cal.cases), "converged": cal.converged,
        "log_posterior": round(cal.log_posterior, 6),
        "params": [{"name": p.name, "unit": p.unit, "prior_median": p.prior_median,
                    "prior_sd": p.prior_sd, "positive": p.positive, "source": p.source}
                   for p in cal.params],
        "mode_u": [round(float(x), 10) for x in cal.mode_u],
        "cov_u": [[round(float(x), 12) for x in row] for row in cal.cov_u],
    }
    return json.dumps(doc, indent=1) + "\n"


def read_calibration(path: str | Path) -> CalibrationFile:
    """Read and check a calibration file; :class:`CalibrationFileError` names what is wrong."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except FileNotFoundError:
        raise CalibrationFileError(f"{p}: no such calibration file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CalibrationFileError(f"{p}: not a calibration file ({e})") from None
    if not isinstance(doc, dict) or doc.get("kind") != _KIND or doc.get("schema") != 1:
        raise CalibrationFileError(f"{p}: kind/schema: not a memcglab calibration file "
                                   "(valid: a file memcglab validate --calibrate wrote)")
    try:
        params = tuple(Param(q["name"], q["unit"], float(q["prior_median"]),
                             float(q["prior_sd"]), q["source"], bool(q["positive"]))
                       for q in doc["params"])
        mode = np.array(doc["mode_u"], dtype=float)
        cov = np.array(doc["cov_u"], dtype=float)
        if mode.shape != (len(params),) or cov.shape != (len(params), len(params)):
            raise ValueError(f"mode_u/cov_u shapes {mode.shape}/{cov.shape} for "
                             f"{len(params)} params")
        np.linalg.cholesky(cov)
        cal = Calibration(params, mode, cov, tuple(doc["cases"]),
                          float(doc["log_posterior"]), bool(doc["converged"]))
        return CalibrationFile(cal, str(doc["devset_sha256"]), float(doc["tau"]),
                               tuple(doc["left_out"]), tuple(doc["families"]),
                               str(doc.get("note", "")))
    except (KeyError, TypeError, ValueError, np.linalg.LinAlgError) as e:
        raise CalibrationFileError(f"{p}: malformed calibration ({e.__class__.__name__}: "
                                   f"{e})") from None


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_calibration(which: str | Path) -> tuple[CalibrationFile | None, str]:
    """``default``, ``none`` or a file's path: the calibration and predict's label for it.

    The label is ``none``, ``default:<sha256 of the development set>`` or
    ``file:<sha256 of the file>``.
    """
    if str(which) == "none":
        return None, "none"
    if str(which) == "default":
        path = default_path()
        if not path.exists():
            raise CalibrationFileError(f"{path}: the default calibration is missing")
        digest = _sha(path)
        if digest != DEFAULT_SHA256:
            raise CalibrationFileError(f"{path}: sha256 {digest} is not the pinned "
                                       f"{DEFAULT_SHA256} (memcglab.calibration.files)")
        cf = read_calibration(path)
        return cf, f"default:{cf.devset_sha256}"
    path = Path(which)
    cf = read_calibration(path)
    return cf, f"file:{_sha(path)}"
