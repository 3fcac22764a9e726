"""Shared helpers for the sweep tests: the fixture notebook and notebook builders."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "notebooks"
SWEEP_NOTEBOOK = FIXTURES / "sweep_fixture.ipynb"


def make_notebook(path: Path, parameters: str, *body: str) -> Path:
    """Write a notebook: a cell tagged ``parameters``, then one code cell per ``body``."""
    params = nbformat.v4.new_code_cell(parameters)
    params.metadata["tags"] = ["parameters"]
    cells = [params] + [nbformat.v4.new_code_cell(b) for b in body]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)
    return path


def read_run(out: Path, run_id: str) -> dict:
    return json.loads((out / "runs" / run_id / "run.json").read_text())


@pytest.fixture
def notebook() -> Path:
    return SWEEP_NOTEBOOK


@pytest.fixture
def spawnable(monkeypatch) -> None:
    """Let spawned worker processes import ``sweep.points`` (pytest imported it by path).

    A spawned child starts with its parent's ``sys.path``, so prepending here suffices.
    """
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))
