"""One study notebook's outputs, read from the session's ``memcglab reproduce --quick`` run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def study_outputs(quick_reproduce: tuple[int, Path], stem: str) -> tuple[Path, dict]:
    """``OUT/stem`` and its ``result.json``; a failed or missing run fails with its error."""
    rc, out = quick_reproduce
    run_file = out / stem / "run.json"
    if not run_file.is_file():
        pytest.fail(f"memcglab reproduce --quick (exit status {rc}) left no {stem}/run.json")
    record = json.loads(run_file.read_text())
    if record["status"] != "ok":
        pytest.fail(f"{stem}.ipynb failed under memcglab reproduce --quick: {record['error']}")
    return out / stem, json.loads((out / stem / "result.json").read_text())
