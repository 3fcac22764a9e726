"""A relative ``--out`` means relative to where the user runs the command.

Papermill runs each notebook in the notebooks' directory, so a relative output
directory handed through unchanged would land beside the notebooks instead.
"""

from __future__ import annotations

import json

from memcglab.cli import main


def test_relative_out_is_resolved_against_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc = main(["reproduce", "--quick", "--only", "05", "--out", "rel/results", "--no-progress"])
    assert rc == 0
    result = json.loads((tmp_path / "rel/results/05_history/result.json").read_text())
    assert result["conclusion"]
    assert "| study | source | claim |" in (tmp_path / "rel/results/report.md").read_text()
