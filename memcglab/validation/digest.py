"""The digest of the development set: what a calibration says it was fitted on.

SHA-256 over every file of ``data/validation/`` in sorted path order (each file's
relative path, a NUL, its bytes, a NUL), so any change to a case, a source table, a
scenario file or the scoring rules changes it. ``history/`` is left out: it holds the
scoreboards that runs wrote (outputs of a fit, never its inputs), and committing one
must not make the default calibration's recorded digest stale.

>>> len(devset_sha256())
64
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from memcglab.validation.devset import VALIDATION_DIR

__all__ = ["devset_sha256"]


def devset_sha256(directory: Path | None = None) -> str:
    """The development set's digest (module doc)."""
    root = Path(directory or VALIDATION_DIR)
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()
                       and "__pycache__" not in p.parts
                       and p.relative_to(root).parts[0] != "history"):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()
