"""memcglab.resources finds the notebooks, data and example trace, installed or not."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import memcglab
from memcglab import resources

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(memcglab.__file__).resolve().parent


def _setup_module():
    spec = importlib.util.spec_from_file_location("memcglab_setup", ROOT / "setup.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # not __main__: defines the helpers, builds nothing
    return mod


def _installed_copy(tmp_path: Path) -> Path:
    """A site-packages-like directory: the package plus what the wheel build adds."""
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "memcglab",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    _setup_module().copy_resources(ROOT, site)
    return site


def _python(code: str, site: Path, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_checkout_uses_its_top_level_directories():
    assert resources.notebooks_dir() == ROOT / "notebooks"
    assert resources.data_dir() == ROOT / "data"
    assert resources.example_trace() == ROOT / "examples" / "example.trace"
    assert resources.study_notebooks() == sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_an_installed_package_uses_its_shipped_copies_from_any_directory(tmp_path):
    site = _installed_copy(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = _python(
        "import memcglab, memcglab.resources as r, memcglab.published as p, "
        "memcglab.reproduce as rep\n"
        "print(memcglab.__file__)\n"
        "print(r.notebooks_dir()); print(r.data_dir()); print(r.example_trace())\n"
        "print(p.PUBLISHED_DIR); print(rep.NOTEBOOKS_DIR)\n"
        "print(len(rep.discover(rep.NOTEBOOKS_DIR)[0]), rep.discover(rep.NOTEBOOKS_DIR)[1])\n"
        "print(p.load('seed003_madvise').frame.shape[0] > 0)\n",
        site, elsewhere).splitlines()
    pkg = site / "memcglab"
    assert out[0] == str(pkg / "__init__.py")
    assert out[1:6] == [str(pkg / "_notebooks"), str(pkg / "_data"),
                        str(pkg / "_examples" / "example.trace"),
                        str(pkg / "_data" / "published"), str(pkg / "_notebooks")]
    from memcglab.reproduce import EXPECTED
    assert out[6] == f"{len(EXPECTED)} []"
    assert out[7] == "True"


def test_a_package_without_either_copy_names_both_places(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "memcglab", ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import memcglab.resources as r\n"
            "try:\n    r.notebooks_dir()\nexcept FileNotFoundError as e:\n    print(e)\n")
    msg = _python(code, site, tmp_path)
    assert "notebooks/" in msg and "_notebooks" in msg and str(site / "notebooks") in msg
    assert "reinstall memcglab" in msg


@pytest.mark.parametrize("name", ["notebooks", "data", "examples"])
def test_the_shipped_copy_wins_over_a_checkout_directory(tmp_path, name):
    # A wheel installed into a directory that happens to have data/ beside it must still
    # read its own copy, not whatever is beside site-packages.
    site = _installed_copy(tmp_path)
    (site / name).mkdir()
    out = _python(f"import memcglab.resources as r; print(r._locate({name!r}))", site, tmp_path)
    assert out.strip() == str(site / "memcglab" / f"_{name}")
