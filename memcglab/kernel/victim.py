"""Victim choice for the multi-memcg stock: which full slot ``refill_stock`` drains.

A policy is asked only when no slot matches the memcg and no slot is empty, so
policies can differ only when a stock must evict: when more memcgs were used since they
were cached than there are slots, stale ones (of tasks that moved away) included.
Each policy is one small class, built as ``cls(slots, random)`` (``random`` is the
replay's shared :class:`~memcglab.kernel.random.RandomStream`, for policies that
draw); ``POLICIES`` maps the names of the ones this module ports to their classes.
The lab's registry of policies is :mod:`memcglab.registry`: a new policy (FIFO, CLOCK,
...) is a class with ``victim`` and ``touch`` and one ``register_policy("fifo",
FifoVictim)`` call, and then the faithful replay runs it with ``replay(trace,
model="multi", policy="fifo")``, ``memcglab replay --policy fifo`` too
(``docs/extending.md``; tests/kernel/test_policies.py).

>>> stock = type("S", (), {"cpu": 0, "drain_idx": 0})()
>>> rr = RoundRobinVictim(slots=3)
>>> [rr.victim(stock) for _ in range(4)]
[0, 1, 2, 0]
"""

from __future__ import annotations

from typing import Protocol

from memcglab.kernel.random import RandomStream

__all__ = ["VictimPolicy", "RandomVictim", "RoundRobinVictim", "LruVictim", "POLICIES"]


class VictimPolicy(Protocol):
    def victim(self, stock) -> int:
        """The slot to evict; every slot is occupied."""
        ...

    def touch(self, stock, slot: int) -> None:
        """``slot`` was found or filled by consume_stock or refill_stock."""
        ...


class RandomVictim:
    """``get_random_u32_below(NR_MEMCG_STOCK)`` (v6.16-v6.18: fix 2 of "memcg: multi-memcg
    percpu charge cache", Shakeel Butt, 25 Apr 2025), over the replay's shared stream."""

    def __init__(self, slots: int, random: RandomStream | None = None) -> None:
        self.slots = slots
        self.random = random if random is not None else RandomStream(0)

    def victim(self, stock) -> int:
        return self.random.get_random_u32_below(self.slots)

    def touch(self, stock, slot: int) -> None:
        pass


class RoundRobinVictim:
    """The per-CPU ``uint8_t drain_idx`` of "memcg: use round-robin victim selection in
    refill_stock" (Shakeel Butt, 21 May 2026; upstream c0cafe24d3f6).

    ``i = stock->drain_idx++; if (stock->drain_idx == NR_MEMCG_STOCK) drain_idx = 0;``
    The index is a ``uint8_t``, so with more than 256 slots it wraps at 256 first and
    only slots 0..255 are ever evicted, exactly as the C would do.
    """

    def __init__(self, slots: int, random: RandomStream | None = None) -> None:
        self.slots = slots

    def victim(self, stock) -> int:
        i = stock.drain_idx
        stock.drain_idx = (stock.drain_idx + 1) & 0xFF
        if stock.drain_idx == self.slots:
            stock.drain_idx = 0
        return i

    def touch(self, stock, slot: int) -> None:
        pass


class LruVictim:
    """Least recently used: the variant the multi-memcg patch's changelog reports as
    1-3% worse than random ("the dumb one was always better", seed 000); never merged.

    A slot becomes most recently used whenever consume_stock or refill_stock finds
    the memcg in it or inserts the memcg into it (the replay contract's rule).
    """

    def __init__(self, slots: int, random: RandomStream | None = None) -> None:
        self.slots = slots
        self.clock = 0
        self.stamps: dict[int, list[int]] = {}  # cpu -> last-use stamp per slot

    def _stamps(self, stock) -> list[int]:
        stamps = self.stamps.get(stock.cpu)
        if stamps is None:
            stamps = self.stamps[stock.cpu] = [0] * self.slots
        return stamps

    def victim(self, stock) -> int:
        stamps = self._stamps(stock)
        return min(range(self.slots), key=stamps.__getitem__)

    def touch(self, stock, slot: int) -> None:
        self.clock += 1
        self._stamps(stock)[slot] = self.clock


#: the policies of this module, by the registry name :mod:`memcglab.models` gives them
POLICIES = {
    "random": RandomVictim,
    "rr": RoundRobinVictim,
    "lru": LruVictim,
}
