"""``memcglab notebooks [DIR]``: copy the study notebooks somewhere to open and edit them.

The notebooks ship inside the package (:func:`memcglab.resources.study_notebooks`);
this command copies them into ``DIR`` (default ``./memcglab-notebooks``) and says
how to open them. A copy is the user's: once it differs from what was last copied
there, the command calls it edited and leaves it alone unless ``--force``.

"Edited" is decided honestly, from content. Each copy's SHA-256 is recorded in
``DIR/.memcglab-notebooks.json``; an existing file that equals the shipped notebook
is left as it is, one that still equals what was last copied (the user did not
touch it, the shipped version changed) is updated, and anything else, including a
same-named file that memcglab never wrote, is skipped and named.

JupyterLab refuses to start as root unless given ``--allow-root``; in a container,
where one often is root, the command says so before the line that says how to open them.

Mistakes a user can make (``DIR`` is a file, cannot be created or written, one of the
notebook names is taken by a directory) exit with status 2 and one line on standard
error before anything is written. Every file is written to a temporary name first
and renamed into place only when all of them are written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from memcglab.resources import study_notebooks

__all__ = ["DEFAULT_DIR", "MANIFEST", "CopyPlan", "UsageError", "add_arguments", "copy_notebooks",
           "plan", "run"]

DEFAULT_DIR = Path("memcglab-notebooks")
#: file in DIR that records the SHA-256 of each notebook as last copied there
MANIFEST = ".memcglab-notebooks.json"


class UsageError(Exception):
    """A mistake on the command line: one line on stderr, exit status 2."""


@dataclass
class CopyPlan:
    """What :func:`copy_notebooks` will do in one directory, decided before any write."""

    directory: Path
    copy: list[Path] = field(default_factory=list)        # new, or an untouched old copy
    unchanged: list[Path] = field(default_factory=list)   # already equal to the shipped one
    edited: list[Path] = field(default_factory=list)      # differs from what was copied
    overwrite: list[Path] = field(default_factory=list)   # edited, but --force


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's arguments: ``DIR`` and ``--force``."""
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIR, metavar="DIR",
                        help=f"where to put the notebooks (default: ./{DEFAULT_DIR})")
    parser.add_argument("--force", action="store_true",
                        help="overwrite copies that were edited since they were copied")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _manifest(directory: Path) -> dict[str, str]:
    path = directory / MANIFEST
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def _writable_base(directory: Path) -> Path:
    """The directory that will be written in: ``directory`` or its deepest existing parent."""
    p = directory.absolute()
    while not p.exists():
        p = p.parent
    if not p.is_dir():
        raise UsageError(f"DIR {directory}: {p} is not a directory")
    if not os.access(p, os.W_OK | os.X_OK):
        raise UsageError(f"DIR {directory}: {p} is not writable")
    return p


def plan(directory: Path, force: bool = False, sources: list[Path] | None = None) -> CopyPlan:
    """Decide, without writing, what copying ``sources`` (the shipped notebooks) does.

    Raises :class:`UsageError` for a ``directory`` that cannot hold the copies.
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"DIR {directory}: exists and is not a directory")
    _writable_base(directory)
    sources = study_notebooks() if sources is None else sources
    recorded = _manifest(directory)
    out = CopyPlan(directory)
    for src in sources:
        dst = directory / src.name
        if not dst.exists():
            out.copy.append(src)
            continue
        if not dst.is_file():
            raise UsageError(f"DIR {directory}: {dst.name} exists and is not a file")
        have = _sha256(dst)
        if have == _sha256(src):
            out.unchanged.append(src)
        elif recorded.get(src.name) == have:
            out.copy.append(src)
        elif force:
            out.overwrite.append(src)
        else:
            out.edited.append(src)
    return out


def copy_notebooks(p: CopyPlan) -> None:
    """Carry out a :class:`CopyPlan`: write every copy, then rename them all into place."""
    p.directory.mkdir(parents=True, exist_ok=True)
    writes = [*p.copy, *p.overwrite]
    recorded = _manifest(p.directory)
    for src in [*writes, *p.unchanged]:
        recorded[src.name] = _sha256(src)
    staged: list[tuple[str, Path]] = []
    try:
        for src in writes:
            staged.append((_stage(p.directory, src.read_bytes()), p.directory / src.name))
        staged.append((_stage(p.directory, (json.dumps(recorded, indent=1, sort_keys=True)
                                            + "\n").encode()), p.directory / MANIFEST))
    except BaseException:
        for tmp, _ in staged:
            os.unlink(tmp)
        raise
    for tmp, dst in staged:
        os.replace(tmp, dst)


def _stage(directory: Path, data: bytes) -> str:
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".memcglab-", suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # the mode a plain open() would give
    return tmp


def _names(paths: list[Path]) -> str:
    return ", ".join(p.name for p in paths)


def run(args: argparse.Namespace) -> int:
    """Copy the notebooks as ``args`` say; print what was done and how to open them."""
    try:
        p = plan(args.directory, args.force)
    except UsageError as exc:
        print(f"memcglab notebooks: error: {exc}", file=sys.stderr)
        return 2
    try:
        copy_notebooks(p)
    except OSError as exc:
        print(f"memcglab notebooks: error: DIR {args.directory}: cannot write "
              f"({exc.strerror or exc})", file=sys.stderr)
        return 2
    d = args.directory
    if p.copy:
        print(f"copied to {d}: {_names(p.copy)}")
    if p.overwrite:
        print(f"overwrote edited copies (--force): {_names(p.overwrite)}")
    if p.unchanged:
        print(f"already up to date: {_names(p.unchanged)}")
    if p.edited:
        print(f"skipped, edited since they were copied (--force overwrites them): "
              f"{_names(p.edited)}")
    if _is_root():
        print(f"as root (in a container, say) jupyter lab also needs --allow-root: "
              f"jupyter lab --allow-root {d}")
    print(f"open them with: jupyter lab {d}")
    return 0


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
