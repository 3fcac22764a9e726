"""Fixtures shared across the test tree."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def quick_reproduce(tmp_path_factory) -> tuple[int, Path]:
    """One ``memcglab reproduce --quick`` run of every study notebook: its exit status and
    ``--out``. The notebook tests read their sidecars from it (``OUT/NN_name/``) and the
    reproduce tests its report, so CI executes each notebook once.

    Under pytest-xdist (the project's default, two workers) the workers share one run:
    the first to need it runs it in the session's common temporary directory, holding a
    lock; the other waits on the lock and reads the same output. The consumers only
    read it."""
    from memcglab.cli import main

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the directory every worker's basetemp is made in
    out = root / "quick-reproduce" / "results"
    status = root / "quick-reproduce.rc"
    with open(root / "quick-reproduce.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if status.exists():
            return int(status.read_text()), out
        out.parent.mkdir(exist_ok=True)
        rc = main(["reproduce", "--quick", "--no-progress", "--out", str(out)])
        status.write_text(str(rc))
    return rc, out

