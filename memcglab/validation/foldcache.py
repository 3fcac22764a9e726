"""A cache of leave-one-source-out calibrations, so a second scoreboard does not refit.

A fold's calibration is deterministic: it depends only on the development set, the
source it holds out, the hardware data it reads and the code that fits it.
:func:`cached_fold` keys it (:func:`fold_key`) by the development set's digest, the
source, a digest of ``data/hardware/`` (:func:`hardware_digest`: the machine profiles the
cases run on, the hardware priors and the machine families the fit starts from) and a
digest of the modules whose code decides the fit (the scenario model, the pricing, the
workloads' generators, the engine and the calibration itself), and keeps it as a
calibration file in ``$MEMCGLAB_CACHE`` (default ``~/.cache/memcglab/calibrations``).
A corrupt or unreadable entry is refitted; writes are atomic, so an interrupted run
leaves no half file. ``MEMCGLAB_CACHE=off`` disables it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from memcglab.calibration.files import (
    CalibrationFile,
    CalibrationFileError,
    dump_calibration,
    read_calibration,
)

__all__ = ["cache_dir", "cached_fold", "code_digest", "fold_key", "hardware_digest"]

#: packages whose code changes a fit
_CODE = ("scenario", "pricing", "workloads", "engine", "kernel", "queueing", "calibration",
         "validation", "hardware", "cost.py", "events.py", "trace.py", "models.py")


def cache_dir() -> Path | None:
    """Where fold calibrations are kept (None when ``MEMCGLAB_CACHE=off``)."""
    where = os.environ.get("MEMCGLAB_CACHE", "")
    if where == "off":
        return None
    base = Path(where) if where else Path.home() / ".cache" / "memcglab"
    return base / "calibrations"


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 over the source of every module that decides a fit."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for part in _CODE:
        paths = [root / part] if part.endswith(".py") else sorted((root / part).rglob("*.py"))
        for p in paths:
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def hardware_digest(directory: Path | None = None) -> str:
    """SHA-256 over every file of ``data/hardware/`` (or ``directory``), each file's
    relative path, a NUL, its bytes and a NUL in sorted path order: a changed machine
    profile, prior or family changes it. Read afresh on every call (a few small files),
    so a profile edited while Python runs is not hidden behind a stale digest."""
    if directory is None:
        from memcglab.resources import data_dir

        directory = data_dir() / "hardware"
    root = Path(directory)
    h = hashlib.sha256()
    for p in sorted(q for q in root.rglob("*") if q.is_file() and "__pycache__" not in q.parts):
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def fold_key(devset: str, source: str, hardware: str | None = None, variant: str = "") -> str:
    """The cache key of the fold without ``source`` on development set ``devset``: it
    changes with the development set, the source, the hardware data (``hardware``: a
    :func:`hardware_digest`, by default of the data this package reads), the code and
    the model variant (``variant``: :meth:`memcglab.scenario.terms.Terms.key`)."""
    hw = hardware_digest() if hardware is None else hardware
    extra = f"\0{variant}" if variant else ""
    return hashlib.sha256(f"{devset}\0{source}\0{hw}\0{code_digest()}{extra}".encode()
                          ).hexdigest()[:32]


def cached_fold(devset: str, source: str, fit: Callable[[], CalibrationFile],
                variant: str = "") -> CalibrationFile:
    """The fold's calibration from the cache, or ``fit()`` and keep it."""
    where = cache_dir()
    if where is None:
        return fit()
    key = fold_key(devset, source, variant=variant)
    path = where / f"{key}.json"
    if path.exists():
        try:
            cf = read_calibration(path)
            if cf.devset_sha256 == devset and cf.left_out == (source,):
                return cf
        except CalibrationFileError:
            pass
    cf = fit()
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".fold.", dir=where)
        with os.fdopen(fd, "w") as f:
            f.write(dump_calibration(cf))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home: the fold is simply not kept
    return cf
