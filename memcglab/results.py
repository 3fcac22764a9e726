"""Atomic result files: a reader sees the old file or the new one, never half of one.

Sweeps are killed mid-run (Ctrl-C, a lost node, SIGKILL) and then resumed; a result
file that exists must therefore be complete. Every writer here follows the same
recipe: write a temporary file in the destination's own directory (so the rename
cannot cross a file system), ``fsync`` it, ``os.replace`` it over the destination,
and ``fsync`` the directory so the rename itself survives a crash.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> p = write_json_atomic(d / "result.json", {"hits": 3, "ratio": 0.5})
>>> read_json(p)
{'hits': 3, 'ratio': 0.5}
>>> sorted(x.name for x in d.iterdir())   # no temporary file left behind
['result.json']
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_write", "read_json", "write_json_atomic", "write_parquet_atomic"]


def _fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable; a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], None]) -> Path:
    """Call ``write(file)`` on a temporary file and move it over ``path`` atomically.

    The temporary file lives next to ``path`` and is removed if ``write`` raises, so a
    failed write leaves the previous file (or none) in place.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.bin"
    >>> atomic_write(p, lambda f: f.write(b"abc")).read_bytes()
    b'abc'
    >>> import os, stat; umask = os.umask(0o022); _ = os.umask(umask)
    >>> oct(stat.S_IMODE(p.stat().st_mode)) == oct(0o666 & ~umask)
    True
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    # mkstemp creates 0600; give the result the mode a plain open() would (umask applies).
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(path.parent)
    return path


def write_json_atomic(path: str | os.PathLike[str], obj: Any, sort_keys: bool = False) -> Path:
    """Write ``obj`` as indented JSON (UTF-8, trailing newline) atomically.

    Keys keep their insertion order unless ``sort_keys``: a notebook's results become
    table columns in the order the notebook recorded them.
    """
    data = (json.dumps(obj, indent=2, sort_keys=sort_keys, ensure_ascii=False) + "\n").encode()
    return atomic_write(path, lambda f: f.write(data))


def read_json(path: str | os.PathLike[str]) -> Any:
    """Read a JSON file written by :func:`write_json_atomic`."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_parquet_atomic(path: str | os.PathLike[str], table: Any) -> Path:
    """Write a ``pyarrow.Table`` to ``path`` as Parquet, atomically.

    >>> import tempfile, pathlib, pyarrow as pa, pyarrow.parquet as pq
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.parquet"
    >>> pq.read_table(write_parquet_atomic(p, pa.table({"a": [1, 2]}))).to_pydict()
    {'a': [1, 2]}
    """
    import pyarrow.parquet as pq

    return atomic_write(path, lambda f: pq.write_table(table, f))
