"""The numba decorator of the engine's trace reader, and a guard against stale numba caches.

The replay itself is C (:mod:`memcglab.engine.native`); numba compiles only the text
scanner (:mod:`memcglab.engine.scan`) and the chunk validator
(:mod:`memcglab.engine.validate`), a few seconds from cold.

``kernel`` is ``numba.njit(cache=True)`` (compiled once, then loaded from the cache
by every fresh process) without numba's reference counting (``_nrt=False``): these
functions never allocate, and without the runtime numba passes arrays as plain
borrowed arguments, whereas with it every call of a function with branches
increments and decrements each array argument atomically. ``_nrt`` is an underscore
option of numba; if a numba release refuses it, ``kernel`` falls back to plain
``njit(cache=True)``: slower, identical results.

Numba checks a cached function against its own source file only, so a cached
caller would keep running the old code of a callee edited in another module, or
old constants of ``memcglab.trace`` (operation codes, limits), which compiled code
freezes. At import, :func:`drop_stale_caches` hashes every module of this package
and ``memcglab/trace.py`` and clears the package's numba cache files when the
hash changed.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba
from numba import njit
from numba.core.cpu import CPUTargetOptions

__all__ = ["kernel", "drop_stale_caches"]

_HERE = Path(__file__).resolve().parent


def _cache_dirs(here: Path) -> list[Path]:
    dirs = [here / "__pycache__"]
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:  # numba mirrors the source directory's absolute path under it
        dirs.append(Path(user) / str(here).lstrip(os.sep))
    return dirs


def drop_stale_caches(here: Path = _HERE) -> bool:
    """Delete the numba cache files of ``here`` if a source they depend on changed."""
    digest = hashlib.sha256(numba.__version__.encode())
    for path in [*sorted(here.glob("*.py")), here.parent / "trace.py"]:
        if path.exists():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    stamp_text = digest.hexdigest()
    dropped = False
    for cache in _cache_dirs(here):
        stamp = cache / "memcglab-engine.sha256"
        try:
            if stamp.read_text() == stamp_text:
                continue
        except OSError:
            pass
        try:
            for stale in cache.glob("*.nb[ic]"):
                stale.unlink(missing_ok=True)
                dropped = True
            cache.mkdir(parents=True, exist_ok=True)
            stamp.write_text(stamp_text)
        except OSError:  # a read-only install: its sources cannot change either
            pass
    return dropped


drop_stale_caches()

_OPTIONS: dict = {"cache": True}
if hasattr(CPUTargetOptions, "_nrt"):
    _OPTIONS["_nrt"] = False

kernel = njit(**_OPTIONS)
