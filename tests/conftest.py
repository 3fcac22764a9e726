"""Fixtures shared across the test tree."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def quick_reproduce(tmp_path_factory) -> tuple[int, Path]:
    """One ``memcglab reproduce --quick`` run of every study notebook: its exit status and
    ``--out``. The notebook tests read their sidecars from it (``OUT/NN_name/``) and the
    reproduce tests its report, so CI executes each notebook once."""
    from memcglab.cli import main

    out = tmp_path_factory.mktemp("reproduce") / "results"
    rc = main(["reproduce", "--quick", "--no-progress", "--out", str(out)])
    return rc, out
