"""Build step that ships the study notebooks, data/ and examples/ inside the package.

All metadata lives in pyproject.toml; this file only adds one thing setuptools
cannot express there: the repository keeps ``notebooks/``, ``data/`` and
``examples/`` at the top level (where a reader of a checkout looks for them), and
an installed package needs them beside its code. :class:`BuildPy` copies them into
the build as ``memcglab/_notebooks``, ``memcglab/_data`` and ``memcglab/_examples``;
``memcglab.resources`` finds them there with :mod:`importlib.resources`, and
falls back to the top-level directories in a checkout or an editable install
(which builds nothing: the code is used in place).

``data/`` is mapped whole and recursively, so a new data file cannot be left out;
only what :func:`shipped_files` skips (caches, checkpoints, local results) stays.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

#: top-level directory -> directory inside the package, and which files it ships
RESOURCES = {
    "notebooks": ("_notebooks", "*.ipynb"),
    "data": ("_data", "**/*"),
    "examples": ("_examples", "**/*"),
}
#: never shipped: caches and editor state anywhere, local sweep results (data/results/,
#: gitignored); hidden files are skipped too
SKIP_PARTS = frozenset({"__pycache__", ".ipynb_checkpoints"})
SKIP_DIRS = frozenset({("data", "results")})
SKIP_SUFFIXES = frozenset({".pyc", ".nbi", ".nbc"})


def shipped_files(root: Path) -> dict[str, Path]:
    """Every file the build ships: its path in the package -> its source under ``root``."""
    out = {}
    for top, (target, pattern) in RESOURCES.items():
        base = root / top
        for src in sorted(base.glob(pattern)):
            rel = src.relative_to(base)
            if (not src.is_file() or any(p.startswith(".") for p in rel.parts)
                    or SKIP_PARTS.intersection(rel.parts) or src.suffix in SKIP_SUFFIXES
                    or (top, rel.parts[0]) in SKIP_DIRS):
                continue
            out[(Path("memcglab") / target / rel).as_posix()] = src
    return out


def copy_resources(root: Path, build_lib: Path) -> list[str]:
    """Copy :func:`shipped_files` of ``root`` into ``build_lib``; return the written paths."""
    written = []
    for rel, src in shipped_files(root).items():
        dst = build_lib / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        written.append(str(dst))
    return written


class BuildPy(build_py):
    """``build_py`` plus the top-level notebooks, data and examples (see the module doc)."""

    def run(self) -> None:
        super().run()
        if not getattr(self, "editable_mode", False):  # editable: used in place
            self._resources = copy_resources(Path(__file__).resolve().parent,
                                             Path(self.build_lib))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), *getattr(self, "_resources", [])]


if __name__ == "__main__":  # setuptools.build_meta runs this file as __main__
    setup(cmdclass={"build_py": BuildPy})
