"""Random victims: ``get_random_u32_below`` over a seeded splitmix64 stream.

The kernel draws eviction victims from its ChaCha-based batched entropy; a
simulation needs a reproducible stream instead. The replay contract fixes it: one
splitmix64 stream seeded with ``--seed``, shared by all CPUs and consumed in trace
order, whose top 8, 16 or 32 bits feed ``get_random_u8/u16/u32``. On top of it,
``get_random_u32_below`` is the inline constant-``ceil`` form of
include/linux/random.h (v6.2+, Jason A. Donenfeld, "random: use rejection sampling
for uniform bounded random integers"), because ``NR_MEMCG_STOCK`` is a build-time
constant.

>>> r = RandomStream(0)
>>> hex(r.next_u64())
'0xe220a8397b1dcdaf'
>>> [RandomStream(0).get_random_u32_below(7) for _ in range(1)]
[6]
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RandomStream", "splitmix64"]

_MASK64 = (1 << 64) - 1


def splitmix64(state: int) -> tuple[int, int]:
    """One splitmix64 step: return ``(new_state, output)``, all mod 2^64."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return state, z ^ (z >> 31)


@dataclass(slots=True)
class RandomStream:
    """The replay's deterministic stand-in for the kernel's random number batch."""

    state: int = 0
    draws: int = 0  # values consumed, for tests and event counts

    def __post_init__(self) -> None:
        if not 0 <= self.state <= _MASK64:
            raise ValueError(f"seed={self.state}: must be between 0 and 2^64-1")

    def next_u64(self) -> int:
        self.state, out = splitmix64(self.state)
        self.draws += 1
        return out

    def get_random_u8(self) -> int:
        return self.next_u64() >> 56

    def get_random_u16(self) -> int:
        return self.next_u64() >> 48

    def get_random_u32(self) -> int:
        return self.next_u64() >> 32

    def get_random_u32_below(self, ceil: int) -> int:
        """Port of the inline get_random_u32_below() for a compile-time constant ``ceil``.

        include/linux/random.h (v6.2+): a multiply-shift with rejection whose
        width follows ``ceil`` (u8 up to 256, u16 up to 65536, u32 beyond), so the
        result is exactly uniform over ``0..ceil-1``.

        >>> r = RandomStream(42)
        >>> sorted({r.get_random_u32_below(7) for _ in range(200)})
        [0, 1, 2, 3, 4, 5, 6]
        """
        if ceil <= 0:
            # BUILD_BUG_ON(!ceil) in the kernel: a constant ceil of 0 does not compile.
            raise ValueError(f"ceil={ceil}: must be at least 1")
        if ceil <= 1:
            return 0
        power_of_2 = ceil & (ceil - 1) == 0
        while True:
            if ceil <= 1 << 8:
                mult = ceil * self.get_random_u8()
                if power_of_2 or (mult & 0xFF) >= (1 << 8) % ceil:
                    return mult >> 8
            elif ceil <= 1 << 16:
                mult = ceil * self.get_random_u16()
                if power_of_2 or (mult & 0xFFFF) >= (1 << 16) % ceil:
                    return mult >> 16
            else:
                mult = ceil * self.get_random_u32()
                # The kernel writes the threshold as -ceil % ceil in u32, i.e. 2^32 mod ceil.
                if (mult & 0xFFFFFFFF) >= (1 << 32) % ceil:
                    return mult >> 32
