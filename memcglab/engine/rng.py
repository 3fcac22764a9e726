"""Compiled random victims: splitmix64 and the constant-``ceil`` get_random_u32_below.

The replay contract fixes the stream ("Random victims"): one splitmix64 stream
seeded with ``--seed``, shared by all CPUs and consumed in trace order, whose top
8, 16 or 32 bits are ``get_random_u8/u16/u32``. On top of it sits the inline
``get_random_u32_below`` of include/linux/random.h (v6.2+, Jason A. Donenfeld,
"random: use rejection sampling for uniform bounded random integers") for a
compile-time constant ``ceil``, because ``NR_MEMCG_STOCK`` is a ``#define``.

The state lives in a one-element ``uint64`` array so that compiled callers can
advance it in place. Every constant and shift amount is a ``uint64``: numba
would otherwise mix ``int64`` and ``uint64`` into a float, and LLVM integer
arithmetic on ``uint64`` wraps mod 2^64 exactly as the contract asks.

>>> st = new_state(0)
>>> hex(int(splitmix64_next(st)))
'0xe220a8397b1dcdaf'
>>> get_random_u32_below(new_state(0), 7)
6
"""

from __future__ import annotations

import numpy as np

from memcglab.engine.jit import kernel

__all__ = ["new_state", "splitmix64_next", "get_random_u32_below"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)
_S32, _S48, _S56 = np.uint64(32), np.uint64(48), np.uint64(56)


def new_state(seed: int) -> np.ndarray:
    """The stream state for ``seed`` (0 to 2^64-1), as a one-element uint64 array."""
    if not 0 <= seed <= 2**64 - 1:
        raise ValueError(f"seed={seed}: must be between 0 and 2^64-1")
    return np.array([seed], dtype=np.uint64)


@kernel
def splitmix64_next(state):
    """Advance ``state[0]`` one splitmix64 step and return the 64-bit output."""
    s = state[0] + _GOLDEN
    state[0] = s
    z = (s ^ (s >> _S30)) * _MUL1
    z = (z ^ (z >> _S27)) * _MUL2
    return z ^ (z >> _S31)


@kernel
def get_random_u32_below(state, ceil):
    """Uniform integer in ``0..ceil-1``: the inline constant-``ceil`` kernel form.

    ``ceil <= 1`` returns 0 without a draw (the compiler folds it away). Otherwise
    the width follows ``ceil``: u8 up to 256, u16 up to 65536, u32 beyond; a draw
    is rejected while the low part of ``ceil * draw`` is below ``2^width mod
    ceil`` (a power-of-two ``ceil`` has threshold 0, so it never rejects).
    ``ceil`` is at most 2^24 here (the slot limit), so every product fits int64.
    """
    if ceil <= 1:
        return 0
    while True:
        if ceil <= 256:
            mult = ceil * np.int64(splitmix64_next(state) >> _S56)
            if (mult & 0xFF) >= 256 % ceil:
                return mult >> 8
        elif ceil <= 65536:
            mult = ceil * np.int64(splitmix64_next(state) >> _S48)
            if (mult & 0xFFFF) >= 65536 % ceil:
                return mult >> 16
        else:
            mult = ceil * np.int64(splitmix64_next(state) >> _S32)
            if (mult & 0xFFFFFFFF) >= 4294967296 % ceil:
                return mult >> 32
