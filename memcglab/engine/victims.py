"""Compiled victim policies of the multi-memcg stock: which full slot refill_stock drains.

Each is the compiled twin of a faithful class of :mod:`memcglab.kernel.victim` (or of
a plugin's), selected by ``g[G_VICTIM]`` (:data:`memcglab.engine.state.VICTIMS`), so
any ``multi*`` model runs any of them (``replay_compiled(..., policy="lru")``). A
registry entry names its twin: ``register_policy("lru", LruVictim, compiled="lru")``.

* ``random``: ``get_random_u32_below(NR_MEMCG_STOCK)`` on the contract's stream
  (v6.16-v6.18, :class:`~memcglab.kernel.victim.RandomVictim`);
* ``rr``: ``drain_idx`` of "memcg: use round-robin victim selection in refill_stock"
  (Shakeel Butt, 21 May 2026, c0cafe24d3f6), a ``uint8_t``
  (:class:`~memcglab.kernel.victim.RoundRobinVictim`);
* ``lru``: the least recently used slot; the stamps are written by
  :func:`memcglab.engine.stocks.consume_stock` and ``refill_stock``, where the
  contract makes a slot most recently used (:class:`~memcglab.kernel.victim.LruVictim`);
* ``fewest``: the slot holding the fewest pages, the lowest such slot on a tie: the
  worked example of ``docs/extending.md``, whose faithful class the guide writes (no
  kernel tree has this policy; it is not registered unless the guide's plugin is).

Adding a compiled policy is a function here, a name in ``VICTIMS`` and a branch in
:func:`victim`; the differential test of ``docs/extending.md`` holds it to its
faithful class.
"""

from __future__ import annotations

from memcglab.engine.jit import hot, kernel
from memcglab.engine.rng import get_random_u32_below
from memcglab.engine.state import G_VICTIM, P_DRAIN_IDX, S_NR, S_STAMP, V_FEWEST, V_LRU, V_RR

__all__ = ["victim"]


@hot
def _round_robin(pcpu, cpu, nslots):
    i = pcpu[P_DRAIN_IDX, cpu]
    nxt = (i + 1) & 0xFF  # i = stock->drain_idx++ on a uint8_t
    if nxt == nslots:
        nxt = 0
    pcpu[P_DRAIN_IDX, cpu] = nxt
    return i


@hot
def _lowest(sl, row, base, nslots):
    # The first slot of this CPU whose sl[row] is smallest.
    best = 0
    for i in range(1, nslots):
        if sl[row, base + i] < sl[row, base + best]:
            best = i
    return best


@kernel
def victim(g, sl, pcpu, rng, cpu, base, nslots):
    """The slot of ``cpu`` (its slots start at ``base``) to evict; every slot is occupied."""
    policy = g[G_VICTIM]
    if policy == V_RR:
        return _round_robin(pcpu, cpu, nslots)
    if policy == V_LRU:
        return _lowest(sl, S_STAMP, base, nslots)
    if policy == V_FEWEST:
        return _lowest(sl, S_NR, base, nslots)
    return get_random_u32_below(rng, nslots)
