"""Module-level (hence picklable) functions that ``run_grid`` tests send to workers."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    slots: int
    policy: str


def walks(spec: Point) -> dict:
    """A deterministic 'result' plus the pid that computed it (to see where it ran)."""
    return {"walks": spec.slots * 10 + len(spec.policy), "pid": os.getpid()}


def fail_on_three(spec: dict) -> dict:
    if spec["slots"] == 3:
        raise ValueError("three is not allowed")
    return {"double": 2 * spec["slots"]}
