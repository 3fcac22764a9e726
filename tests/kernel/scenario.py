"""Helpers for hand-worked kernel scenarios: replay a short trace, get its event log."""

from __future__ import annotations

from memcglab.kernel.observer import Observer
from memcglab.replay import replay
from memcglab.trace import parse_text


def run_log(body: str, **options) -> tuple[list[tuple], dict]:
    """Replay ``body`` (trace lines after the header) and return (event log, result)."""
    observer = Observer(log=[])
    result = replay(parse_text("memcglab-trace 1\n" + body), observer=observer, **options)
    return observer.log, result


def walks(log: list[tuple]) -> list[tuple]:
    return [e for e in log if e[0] == "walk"]
