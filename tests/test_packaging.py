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


# --- what the wheel ships -------------------------------------------------------------
# .ci/wheel_check.sh builds the real wheel and runs it from an empty directory; these
# checks keep setup.py's mapping complete so that a new data file cannot be forgotten.

def _setup_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("memcglab_setup", ROOT / "setup.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # not __main__: defines the build step, builds nothing
    return mod


def _git_files(*tops: str) -> set[str] | None:
    import subprocess

    try:
        done = subprocess.run(["git", "ls-files", "-z", "--", *tops], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    if done.returncode != 0:
        return None
    return {p for p in done.stdout.split("\0") if p and (ROOT / p).is_file()}


def test_the_wheel_ships_every_notebook_data_and_example_file():
    shipped = _setup_module().shipped_files(ROOT)
    sources = {src.relative_to(ROOT).as_posix() for src in shipped.values()}
    on_disk = {p.relative_to(ROOT).as_posix() for top in ("data", "examples")
               for p in (ROOT / top).rglob("*") if p.is_file()}
    on_disk |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "notebooks").glob("*.ipynb")}
    skipped = on_disk - sources
    # only what is never the project's own: caches, checkpoints, local results, dotfiles
    assert all(p.startswith("data/results/") or "/." in f"/{p}" or "__pycache__" in p
               or p.endswith((".pyc", ".nbi", ".nbc")) for p in skipped), sorted(skipped)
    tracked = _git_files("notebooks", "data", "examples")
    if tracked is not None:  # a checkout: every tracked file is shipped
        tracked = {p for p in tracked if not p.startswith("notebooks/") or p.endswith(".ipynb")}
        assert tracked <= sources, sorted(tracked - sources)


def test_the_wheel_ships_what_the_studies_and_commands_read():
    from memcglab import published
    from memcglab.reproduce import EXPECTED

    shipped = set(_setup_module().shipped_files(ROOT))
    for name in published.table_names():
        assert f"memcglab/_data/published/{name}.csv" in shipped
        assert f"memcglab/_data/published/{name}.json" in shipped
    numbers = {Path(p).name[:2] for p in shipped if p.startswith("memcglab/_notebooks/")}
    assert set(EXPECTED) <= numbers
    assert "memcglab/_examples/example.trace" in shipped


def test_the_build_step_copies_the_mapping_byte_for_byte(tmp_path):
    setup = _setup_module()
    shipped = setup.shipped_files(ROOT)
    written = setup.copy_resources(ROOT, tmp_path)
    assert sorted(written) == sorted(str(tmp_path / rel) for rel in shipped)
    for rel, src in shipped.items():
        assert (tmp_path / rel).read_bytes() == src.read_bytes()


def test_the_sdist_carries_what_the_build_step_maps():
    manifest = (ROOT / "MANIFEST.in").read_text().split()
    for top in _setup_module().RESOURCES:
        assert ["graft", top] in [manifest[i:i + 2] for i in range(len(manifest) - 1)]


def test_ci_builds_the_wheel_and_the_docs():
    ci = (ROOT / ".ci" / "run").read_text()
    assert ".ci/wheel_check.sh" in ci and ".ci/docs.sh" in ci
    assert "sphinx-build -W" in (ROOT / ".ci" / "docs.sh").read_text()


def test_every_non_python_file_inside_the_package_is_package_data():
    import fnmatch

    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["*"]
    stray = [p.relative_to(ROOT).as_posix() for p in (ROOT / "memcglab").rglob("*")
             if p.is_file() and p.suffix not in (".py", ".pyc", ".nbi", ".nbc")
             and "__pycache__" not in p.parts and not p.name.startswith(".")
             and not any(fnmatch.fnmatch(p.name, pat) for pat in patterns)]
    assert stray == [], f"not shipped in the wheel (add a pattern to package-data): {stray}"
