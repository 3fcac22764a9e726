"""The top-level ``memcglab`` command: --version, ``python -m memcglab``, lazy commands."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from memcglab.cli import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_version_prints_the_installed_distribution_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"memcglab {version('memcglab')}\n"


def test_python_dash_m_memcglab_is_the_memcglab_command(tmp_path):
    done = _run("-m", "memcglab", "--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"memcglab {version('memcglab')}\n"
    helped = _run("-m", "memcglab", "--help", cwd=tmp_path)
    assert helped.returncode == 0
    for name in COMMANDS:
        assert name in helped.stdout
    wrong = _run("-m", "memcglab", "nosuch", cwd=tmp_path)
    assert wrong.returncode == 2 and "invalid choice: 'nosuch'" in wrong.stderr


def test_python_dash_m_memcglab_runs_a_command(tmp_path):
    done = _run("-m", "memcglab", "notebooks", "nb", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "open them with: jupyter lab nb" in done.stdout
    assert (tmp_path / "nb" / "01_single_vs_multi.ipynb").is_file()


def test_notebooks_and_probe_are_registered():
    assert COMMANDS["notebooks"][0] == "memcglab.notebooks_cli"
    assert COMMANDS["probe"][0] == "memcglab.probe.cli"


def test_help_imports_no_command_module(tmp_path):
    # The parser lists every command without importing one: `memcglab --help` must work
    # even while a command's module (memcglab.probe.cli, say) is missing or broken.
    code = ("import sys\nfrom memcglab.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('memcglab.')))")
    done = _run("-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "['memcglab.cli']"


def test_every_command_has_help_text():
    parser = build_parser()
    text = parser.format_help()
    for name, (module, help_text) in COMMANDS.items():
        assert module.startswith("memcglab.") and help_text
        assert name in text
