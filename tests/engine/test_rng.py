"""The C core's splitmix64 stream and get_random_u32_below (memcglab/engine/native/rng.c,
through its exported functions) against pure-Python references."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.engine.native import get_random_u32_below, splitmix64_next
from memcglab.kernel.random import RandomStream

MASK = 2**64 - 1


def new_state(seed: int) -> np.ndarray:
    return np.array([seed], dtype=np.uint64)  # the engine's rng array (memcglab.engine.state)


def reference_splitmix64(state: int) -> tuple[int, int]:
    # Written from the contract's five lines, with Python's unbounded ints masked.
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def test_vigna_test_vector_for_seed_0():
    st_ = new_state(0)
    assert [int(splitmix64_next(st_)) for _ in range(3)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


@given(st.integers(0, MASK))
@settings(max_examples=200, deadline=None)
def test_stream_wraps_mod_2_64_like_the_reference(seed):
    state, compiled = seed, new_state(seed)
    for _ in range(20):
        state, out = reference_splitmix64(state)
        assert int(splitmix64_next(compiled)) == out
        assert int(compiled[0]) == state


@given(st.integers(0, MASK), st.sampled_from([1, 2, 3, 5, 7, 16, 255, 256, 257, 1000, 65535,
                                               65536, 65537, 99991, 2**24 - 1, 2**24]))
@settings(max_examples=300, deadline=None)
def test_below_matches_the_faithful_stream_draw_for_draw(seed, ceil):
    compiled, faithful = new_state(seed), RandomStream(seed)
    for _ in range(50):
        assert get_random_u32_below(compiled, ceil) == faithful.get_random_u32_below(ceil)
    assert int(compiled[0]) == faithful.state


def test_a_single_slot_draws_nothing():
    s = new_state(123)
    assert get_random_u32_below(s, 1) == 0
    assert int(s[0]) == 123


def test_seed_out_of_range_is_refused():
    from memcglab.engine import replay_compiled
    from memcglab.trace import parse_text

    trace = parse_text("memcglab-trace 1\ncpus 1\n")
    for bad in (-1, 2**64):
        try:
            replay_compiled(trace, seed=bad)
        except ValueError as exc:
            assert "seed=" in str(exc)
        else:
            raise AssertionError(f"seed {bad} accepted")
