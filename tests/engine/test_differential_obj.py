"""Differential test with object operations: the compiled engine against the faithful port.

Random traces with obj_charge / obj_uncharge, the irq word and a nodes line
(tests/engine/tracegen.py ``random_obj_trace``) x every model x slots {1, 7}, byte
for byte as ``memcglab.replay.dumps``, with ``--check`` too (same first violation),
under each refill variant; and the charge-path function and obj-stock events that
both engines count (``memcglab.events.CALL_EVENTS``) agree in total.
"""

from __future__ import annotations

import pytest

from memcglab.engine import replay_compiled
from memcglab.events import CALL_EVENTS
from memcglab.kernel.observer import Observer
from memcglab.replay import InvariantViolation, dumps, replay

from .tracegen import MODELS, random_obj_trace, without_nested

TRACES = 160


def _outcome(fn, *args, **kwargs) -> str | tuple:
    try:
        return dumps(fn(*args, **kwargs))
    except InvariantViolation as exc:
        return ("violation", exc.index, exc.line, str(exc))


@pytest.mark.parametrize("block", range(8))
def test_compiled_equals_faithful_with_object_operations(block: int) -> None:
    mismatches = []
    for number in range(block * TRACES // 8, (block + 1) * TRACES // 8):
        batch = (64, 8, 64, 3)[number % 4]
        refill = ("always", "always", "not-in-irq", "never")[number % 4]
        trace = random_obj_trace(number, batch=batch)
        for model in MODELS:
            t = without_nested(trace) if model == "single" else trace
            for slots in (1, 7):
                args = (t, model, slots, number, batch)
                want = _outcome(replay, *args, refill=refill)
                if _outcome(replay_compiled, *args, refill=refill) != want:
                    mismatches.append((number, model, slots, refill))
                want = _outcome(replay, *args, check=True, refill=refill)
                got = _outcome(replay_compiled, *args, check=True, refill=refill)
                if got != want:
                    mismatches.append((number, model, slots, refill, "check"))
                if model != "multi-fix2" and isinstance(want, tuple):
                    mismatches.append((number, model, slots, refill, "invariant", want))
    assert not mismatches, f"(trace seed, model, slots, refill): {mismatches[:10]}"


@pytest.mark.parametrize("model", MODELS)
def test_function_and_obj_event_totals_agree(model: str) -> None:
    bad = []
    for number in range(40):
        trace = random_obj_trace(1000 + number)
        t = without_nested(trace) if model == "single" else trace
        obs = Observer()
        replay(t, model, 7, number, 64, observer=obs)
        _, events = replay_compiled(t, model, 7, number, 64, events=True)
        for name in CALL_EVENTS:
            if obs.calls.get(name, 0) != events.total(name):
                bad.append((number, name, obs.calls.get(name, 0), events.total(name)))
        assert events.total("walks") == obs.walks
        assert events.total("walks") == (events.total("page_counter_try_charge")
                                         + events.total("page_counter_uncharge"))
    assert not bad, bad[:10]


def test_obj_traces_exercise_every_obj_path() -> None:
    # The generator is strong enough: over the traces, every obj event happens.
    totals: dict[str, int] = {}
    for number in range(40):
        for model in ("multi", "multi-rr", "pcstock-v4"):
            _, events = replay_compiled(random_obj_trace(number), model, 7, 0, 8, events=True)
            for name in ("obj_hits", "obj_misses", "obj_drains", "obj_evictions", "obj_flushes"):
                totals[name] = totals.get(name, 0) + events.total(name)
    assert all(v > 0 for v in totals.values()), totals
