"""``memcglab sweep NAME``: a short name that is not a file means a shipped study notebook."""

from __future__ import annotations

import pytest

from memcglab.cli import main
from memcglab.resources import notebooks_dir
from memcglab.sweep.cli import UsageError, resolve_notebook

SHIPPED = str(notebooks_dir() / "02_policy_and_slots.ipynb")


@pytest.mark.parametrize("name", ["02_policy_and_slots", "02_policy_and_slots.ipynb", "02"])
def test_a_short_name_resolves_to_the_shipped_notebook(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_notebook(name) == SHIPPED


def test_an_existing_file_wins_over_the_shipped_notebook(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "02_policy_and_slots.ipynb").write_text("{}")
    assert resolve_notebook("02_policy_and_slots.ipynb") == "02_policy_and_slots.ipynb"


def test_a_path_with_a_directory_is_never_resolved(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_notebook("mine/02_policy_and_slots.ipynb") == "mine/02_policy_and_slots.ipynb"


def test_a_name_with_another_suffix_is_left_for_the_suffix_check(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_notebook("02.txt") == "02.txt"


def test_an_unknown_name_lists_the_shipped_notebooks(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as err:
        resolve_notebook("99_nosuch")
    assert str(err.value).startswith("notebook '99_nosuch': no such file, and not a shipped")
    assert "01_single_vs_multi, 02_policy_and_slots" in str(err.value)


def test_the_command_checks_parameters_against_the_shipped_notebook(tmp_path, monkeypatch,
                                                                    capsys):
    # Resolution happens before validation: the parameter error names the shipped
    # notebook's own parameters, and nothing is written.
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "02_policy_and_slots", "-p", "slot", "1", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert "unknown parameter 'slot'" in err and "slots (int)" in err
    assert not (tmp_path / "out").exists()
    assert main(["sweep", "nosuch", "-p", "slots", "1", "--out", "out"]) == 2
    assert "memcglab sweep: error: notebook 'nosuch': no such file" in capsys.readouterr().err
