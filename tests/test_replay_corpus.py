"""Traces without the new operations replay exactly as before them, in both engines.

``tests/fixtures/replay_corpus`` holds 40 random traces (every model, four option
sets, with and without ``--check``) and the outputs, and compiled event counts,
that the replay gave at commit 65139ef, before the obj stock, ``irq``, ``nodes``
and ``refill`` existed (see its ``make_corpus.py``). Every output must be the same
bytes, every event count the same numbers (new event names may be added).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcglab.engine import InvariantViolation as CompiledViolation
from memcglab.engine import replay_compiled
from memcglab.replay import InvariantViolation, dumps, replay
from memcglab.trace import read_trace

CORPUS = Path(__file__).parent / "fixtures" / "replay_corpus"
ROWS = [json.loads(line) for line in (CORPUS / "expected.jsonl").read_text().splitlines()]


def _outcome(fn, trace, row) -> str:
    try:
        return dumps(fn(trace, row["model"], row["slots"], row["seed"], row["batch"],
                        check=row["check"]))
    except (InvariantViolation, CompiledViolation) as exc:
        return f"violation {exc.index} {exc.line}: {exc}\n"


def test_corpus_is_complete() -> None:
    assert len(ROWS) == 560
    assert {r["model"] for r in ROWS} == {"single", "multi", "multi-rr", "multi-lru",
                                          "multi-fix2", "pcstock", "pcstock-v4"}


@pytest.mark.parametrize("block", range(4))
def test_corpus_outputs_unchanged(block: int) -> None:
    traces: dict[str, object] = {}
    bad = []
    for row in ROWS[block::4]:
        name = row["trace"]
        if name not in traces:
            traces[name] = read_trace(str(CORPUS / name), single=row["model"] == "single")
        trace = traces[name]
        for fn in (replay, replay_compiled):
            if _outcome(fn, trace, row) != row["output"]:
                bad.append((name, row["model"], row["check"], fn.__name__))
        if not row["check"]:
            _, events = replay_compiled(trace, row["model"], row["slots"], row["seed"],
                                        row["batch"], events=True)
            for name_ev, want in row["events_per_cpu"].items():
                if events.per_cpu[name_ev].tolist() != want:
                    bad.append((name, row["model"], name_ev, "per_cpu"))
            for name_ev, want in row["events_per_memcg"].items():
                if events.per_memcg[name_ev].tolist() != want:
                    bad.append((name, row["model"], name_ev, "per_memcg"))
    assert not bad, bad[:10]
