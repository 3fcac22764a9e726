"""The project's promises about itself: dependencies in step, README commands, CI."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[ ;]", r.strip(), maxsplit=1)[0].lower() for r in requirements}


def test_environment_yml_lists_the_same_packages_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = _names(project["dependencies"]) | _names(project["optional-dependencies"]["test"])
    conda = []
    text = (ROOT / "environment.yml").read_text()
    for line in text.split("dependencies:", 1)[1].splitlines():
        m = re.match(r"  - ([A-Za-z0-9_.\-]+)(?:[<>=].*)?$", line)
        if m and m.group(1) not in ("python", "pip"):
            conda.append(m.group(1))
    assert _names(conda) == wanted


def readme_commands() -> list[str]:
    first_screen = "\n".join((ROOT / "README.md").read_text().splitlines()[:40])
    return re.findall(r"```sh\n(.+?)\n```", first_screen)


def test_readme_first_screen_has_exactly_two_commands_main_job_then_tests():
    commands = readme_commands()
    assert len(commands) == 2
    main_job, tests = commands
    assert "pip install" in main_job and "memcglab" in main_job.split("&&")[-1]
    assert "pip install" in tests and tests.split("&&")[-1].strip() == "pytest"


def test_ci_runs_the_readme_test_command():
    assert readme_commands()[1] in (ROOT / ".ci" / "run").read_text()


def test_licence_is_gpl_2_only():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "GPL-2.0-only"
    assert "GNU GENERAL PUBLIC LICENSE" in (ROOT / "LICENSE").read_text()
    assert "Version 2" in (ROOT / "LICENSE").read_text()
