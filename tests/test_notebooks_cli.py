"""``memcglab notebooks``: copy, leave identical copies, skip edited ones, --force, errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memcglab.cli import main
from memcglab.notebooks_cli import DEFAULT_DIR, MANIFEST
from memcglab.resources import study_notebooks

SHIPPED = study_notebooks()
NAMES = [p.name for p in SHIPPED]


def _tree(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


def test_copies_every_study_notebook_and_says_how_to_open_them(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["notebooks"]) == 0
    out = capsys.readouterr().out
    d = tmp_path / DEFAULT_DIR
    assert sorted(p.name for p in d.glob("*.ipynb")) == NAMES
    for src in SHIPPED:
        assert (d / src.name).read_bytes() == src.read_bytes()
    assert f"copied to {DEFAULT_DIR}: {', '.join(NAMES)}" in out
    assert out.strip().endswith(f"open them with: jupyter lab {DEFAULT_DIR}")
    recorded = json.loads((d / MANIFEST).read_text())
    assert sorted(recorded) == NAMES


def test_an_identical_copy_is_left_alone_silently(tmp_path, capsys):
    d = tmp_path / "nb"
    assert main(["notebooks", str(d)]) == 0
    before = {p.name: p.stat().st_mtime_ns for p in d.glob("*.ipynb")}
    capsys.readouterr()
    assert main(["notebooks", str(d)]) == 0
    out = capsys.readouterr().out
    assert "skipped" not in out and "copied" not in out
    assert f"already up to date: {', '.join(NAMES)}" in out
    assert {p.name: p.stat().st_mtime_ns for p in d.glob("*.ipynb")} == before


def test_an_edited_copy_is_skipped_and_named_then_force_overwrites_it(tmp_path, capsys):
    d = tmp_path / "nb"
    main(["notebooks", str(d)])
    edited = d / NAMES[1]
    edited.write_text(edited.read_text().replace("quick", "quick  # mine", 1))
    mine = edited.read_bytes()
    capsys.readouterr()
    assert main(["notebooks", str(d)]) == 0
    out = capsys.readouterr().out
    assert edited.read_bytes() == mine
    assert f"skipped, edited since they were copied (--force overwrites them): {NAMES[1]}" in out
    assert f"open them with: jupyter lab {d}" in out
    assert main(["notebooks", str(d), "--force"]) == 0
    out = capsys.readouterr().out
    assert edited.read_bytes() == SHIPPED[1].read_bytes()
    assert f"overwrote edited copies (--force): {NAMES[1]}" in out


def test_a_same_named_file_memcglab_never_wrote_counts_as_edited(tmp_path, capsys):
    d = tmp_path / "nb"
    d.mkdir()
    (d / NAMES[0]).write_text("{}")
    assert main(["notebooks", str(d)]) == 0
    assert (d / NAMES[0]).read_text() == "{}"
    assert f"(--force overwrites them): {NAMES[0]}" in capsys.readouterr().out


def test_an_untouched_old_copy_is_updated_when_the_shipped_notebook_changes(tmp_path, capsys):
    # What was copied last time is recorded: a copy still equal to it was not edited by
    # the user, so a newer shipped notebook replaces it without --force.
    d = tmp_path / "nb"
    main(["notebooks", str(d)])
    old = b'{"cells": [], "old": true}'
    (d / NAMES[0]).write_bytes(old)
    manifest = json.loads((d / MANIFEST).read_text())
    manifest[NAMES[0]] = __import__("hashlib").sha256(old).hexdigest()
    (d / MANIFEST).write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(["notebooks", str(d)]) == 0
    assert (d / NAMES[0]).read_bytes() == SHIPPED[0].read_bytes()
    assert f"copied to {d}: {NAMES[0]}" in capsys.readouterr().out


def test_dir_that_is_a_file_is_an_error_and_nothing_changes(tmp_path, capsys):
    f = tmp_path / "f"
    f.write_text("x")
    assert main(["notebooks", str(f)]) == 2
    err = capsys.readouterr().err
    assert err == f"memcglab notebooks: error: DIR {f}: exists and is not a directory\n"
    assert f.read_text() == "x" and sorted(os.listdir(tmp_path)) == ["f"]


def test_dir_under_a_file_is_an_error(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert main(["notebooks", str(tmp_path / "f" / "nb")]) == 2
    assert f"{tmp_path / 'f'} is not a directory" in capsys.readouterr().err


def test_a_notebook_name_taken_by_a_directory_is_an_error_before_any_write(tmp_path, capsys):
    d = tmp_path / "nb"
    (d / NAMES[-1]).mkdir(parents=True)
    before = _tree(d)
    assert main(["notebooks", str(d)]) == 2
    assert f"{NAMES[-1]} exists and is not a file" in capsys.readouterr().err
    assert _tree(d) == before == [NAMES[-1]]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_an_unwritable_dir_is_an_error(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        assert main(["notebooks", str(ro / "nb")]) == 2
        assert f"{ro} is not writable" in capsys.readouterr().err
    finally:
        ro.chmod(0o700)
