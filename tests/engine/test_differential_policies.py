"""Differential test of victim policies given by name: any multi* model, any compiled policy.

``policy=`` replaces a model's own victim (faithful: :func:`memcglab.models.build_model`;
compiled: ``g[G_VICTIM]``), so every (model, policy) pair must give the same bytes in
both engines, ``--check`` included, and a model run with its own policy named must
give its plain output plus the ``policy`` key.
"""

from __future__ import annotations

import pytest

from memcglab import registry
from memcglab.engine import replay_compiled
from memcglab.replay import InvariantViolation, dumps, replay

from .tracegen import random_obj_trace, random_trace

MULTI = [m for m in registry.compiled_models() if registry.model(m).multi]
POLICIES = registry.compiled_policies()
BATCHES = (64, 8, 3)


def _outcome(fn, *args, **kwargs) -> str | tuple:
    try:
        return dumps(fn(*args, **kwargs))
    except InvariantViolation as exc:
        return ("violation", exc.index, exc.line, str(exc))


@pytest.mark.parametrize("model", MULTI)
def test_every_compiled_policy_matches_the_faithful_port(model: str) -> None:
    mismatches = []
    for number in range(40):
        batch = BATCHES[number % len(BATCHES)]
        trace = random_trace(number, batch=batch, bursts=number % 2 == 1)
        for policy in POLICIES:
            for slots in (1, 2, 7):
                want = dumps(replay(trace, model, slots, number, batch, policy=policy))
                got = dumps(replay_compiled(trace, model, slots, number, batch, policy=policy))
                if got != want:
                    mismatches.append((number, policy, slots))
            want = _outcome(replay, trace, model, 2, number, batch, check=True, policy=policy)
            got = _outcome(replay_compiled, trace, model, 2, number, batch, check=True,
                           policy=policy)
            if got != want:
                mismatches.append((number, policy, "check"))
    assert not mismatches, f"(trace seed, policy, slots): {mismatches[:10]}"


@pytest.mark.parametrize("model", MULTI)
def test_naming_the_models_own_policy_only_adds_the_key(model: str) -> None:
    own = registry.model(model).policy
    for number in range(10):
        trace = random_obj_trace(number)
        for fn in (replay, replay_compiled):
            plain = fn(trace, model, 2, number)
            assert fn(trace, model, 2, number, policy=own) == plain | {"policy": own}
            assert "policy" not in plain


def test_lru_named_on_multi_counts_its_recency_writes() -> None:
    trace = random_trace(3, batch=8)
    _, own = replay_compiled(trace, "multi-lru", 2, 3, 8, events=True)
    _, named = replay_compiled(trace, "multi", 2, 3, 8, events=True, policy="lru")
    assert named.total("lru_writes") == own.total("lru_writes") > 0
    _, random = replay_compiled(trace, "multi", 2, 3, 8, events=True)
    assert random.total("lru_writes") == 0


def test_policy_errors_name_the_model_and_the_valid_choices() -> None:
    trace = random_trace(0)
    with pytest.raises(ValueError, match="policy='lru': only the multi\\* models .* not "
                                         "'pcstock'"):
        replay_compiled(trace, "pcstock", policy="lru")
    with pytest.raises(ValueError, match="policy='clock': unknown; valid: random, rr, lru"):
        replay_compiled(trace, "multi", policy="clock")
