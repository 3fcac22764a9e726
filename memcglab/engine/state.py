"""The compiled engine's state: flat numpy arrays in one named tuple.

Numba passes a ``NamedTuple`` of arrays to compiled functions as one argument and
resolves its fields at compile time, so the kernel-side code reads like the C
(``s.usage[c]``) while every field stays a flat, cache-friendly array:

* ``g``: the replay's scalar counters and parameters (``G_*`` indices);
* per memcg, indexed by dense index (0 is the root memcg): the ``memory``
  page_counter (``usage``, ``watermark``, ``maxv``), ``memory_events_local[MEMCG_MAX]``
  (``maxev``), the pages the trace holds (``held``), the tree (``parent``, ``depth``
  and the child lists ``first``/``last``/``nxt`` in creation order, which is the
  kernel's css sibling order), ``online``, the CPU that last wrote ``usage``
  (``lastw``, for the cacheline-transfer event) and the pcstock ``batch``;
* per CPU x slot for the ``multi*`` models (``cached``/``nrp``, ``cpus * slots``
  flat), the LRU stamps, the scan bound ``hi`` and the round-robin ``didx``;
* per memcg x CPU for ``pcstock`` (``pcs``);
* the event matrices ``evc`` (event x CPU) and ``evm`` (event x memcg).

Memcg arrays grow between chunks (:func:`grow`), never inside compiled code.

>>> s = new_state(model=M_MULTI, cpus=2, slots=7, batch=64, seed=0, capacity=4)
>>> s.cached.shape, int(s.g[G_NSLOTS]), int(s.maxv[0]) == (2**63 - 1) // 4096
((14,), 7, True)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from memcglab.events import EVENT_NAMES
from memcglab.trace import PAGE_COUNTER_MAX

__all__ = ["State", "new_state", "grow", "MODELS", "MODEL_CODES", "EV"]

# Model codes, in the contract's order.
M_SINGLE, M_MULTI, M_RR, M_LRU, M_FIX2, M_PCSTOCK = range(6)
MODELS = ("single", "multi", "multi-rr", "multi-lru", "multi-fix2", "pcstock")
MODEL_CODES = {name: code for code, name in enumerate(MODELS)}

# Indices into State.g.
(G_OPS, G_FAILED, G_BUSY, G_SHORT, G_WARN, G_WALKS, G_HITS, G_EVICT, G_NCPUS, G_NSLOTS,
 G_BATCH, G_MODEL, G_NMEMCG, G_CLOCK, G_EVON, G_CHECK) = range(16)
G_SIZE = 16

# Event rows of evc/evm, in memcglab.events.EVENT_NAMES order (checked below).
(E_CHARGES, E_UNCHARGES, E_UNCHARGES_DIRECT, E_STOCK_HITS, E_MISS_ABSENT, E_MISS_SHORT,
 E_MISS_BYPASS, E_EVICTIONS, E_WALKS, E_WALK_LEVELS, E_DRAINS, E_SLOTS_SCANNED,
 E_LRU_WRITES, E_USAGE_TRANSFERS, E_CSS_REF_OPS, E_FAILED_CHARGES) = range(16)
EV = ("charges", "uncharges", "uncharges_direct", "stock_hits", "miss_absent", "miss_short",
      "miss_bypass", "evictions", "walks", "walk_levels", "drains", "slots_scanned",
      "lru_writes", "usage_transfers", "css_ref_ops", "failed_charges")
if EV != EVENT_NAMES:  # pragma: no cover - a changed interface must fail loudly
    raise ImportError("memcglab.events.EVENT_NAMES changed; update memcglab.engine.state")

#: usage never exceeds PAGE_COUNTER_MAX + 2^32 (the root's limit stops it), so a
#: limit above LONG_MAX compares exactly like LONG_MAX: store limits clamped.
LIMIT_CLAMP = 2**63 - 1

_MEMCG_FIELDS = ("parent", "depth", "usage", "watermark", "maxv", "maxev", "held", "lastw",
                 "pcbatch", "first", "last", "nxt", "online")


class State(NamedTuple):
    g: np.ndarray
    rng: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    usage: np.ndarray
    watermark: np.ndarray
    maxv: np.ndarray
    maxev: np.ndarray
    held: np.ndarray
    lastw: np.ndarray
    pcbatch: np.ndarray
    first: np.ndarray
    last: np.ndarray
    nxt: np.ndarray
    online: np.ndarray
    cached: np.ndarray
    nrp: np.ndarray
    stamp: np.ndarray
    hi: np.ndarray
    didx: np.ndarray
    pcs: np.ndarray
    evc: np.ndarray
    evm: np.ndarray


def new_state(model: int, cpus: int, slots: int, batch: int, seed: int, capacity: int = 16,
              events: bool = False, check: bool = False) -> State:
    """A fresh engine: only the root memcg (dense index 0) exists, every stock empty."""
    g = np.zeros(G_SIZE, dtype=np.int64)
    g[G_NCPUS], g[G_NSLOTS], g[G_BATCH], g[G_MODEL] = cpus, slots, batch, model
    g[G_NMEMCG], g[G_EVON], g[G_CHECK] = 1, int(events), int(check)
    multi = model not in (M_SINGLE, M_PCSTOCK)
    nslot = cpus * (slots if multi else 1) if model != M_PCSTOCK else 1
    cap = max(capacity, 1)
    arrays = {name: np.zeros(cap, dtype=np.int64) for name in _MEMCG_FIELDS}
    for name in ("parent", "lastw", "first", "last", "nxt"):
        arrays[name][:] = -1
    arrays["maxv"][0] = PAGE_COUNTER_MAX  # the root memcg: no limit
    arrays["online"][0] = 1
    # css_online of the root enables its stock too; it never holds pages (never charged).
    arrays["pcbatch"][0] = batch
    return State(
        g=g, rng=np.array([seed], dtype=np.uint64), **arrays,
        cached=np.full(nslot, -1, dtype=np.int32),
        nrp=np.zeros(nslot, dtype=np.uint32),
        stamp=np.zeros(nslot if model == M_LRU else 1, dtype=np.int64),
        hi=np.zeros(cpus, dtype=np.int64),
        didx=np.zeros(cpus, dtype=np.int64),
        pcs=np.zeros((cap, cpus) if model == M_PCSTOCK else (1, 1), dtype=np.int64),
        evc=np.zeros((len(EV), cpus if events else 1), dtype=np.int64),
        evm=np.zeros((len(EV), cap if events else 1), dtype=np.int64),
    )


def grow(s: State, needed: int) -> State:
    """Return ``s`` with room for ``needed`` memcgs (amortised doubling)."""
    cap = s.usage.shape[0]
    if needed <= cap:
        return s
    new_cap = max(needed, 2 * cap)
    repl = {}
    for name in _MEMCG_FIELDS:
        old = getattr(s, name)
        arr = np.full(new_cap, -1 if name in ("parent", "lastw", "first", "last", "nxt") else 0,
                      dtype=np.int64)
        arr[:cap] = old
        repl[name] = arr
    if s.pcs.shape[0] > 1 or int(s.g[G_MODEL]) == M_PCSTOCK:
        pcs = np.zeros((new_cap, s.pcs.shape[1]), dtype=np.int64)
        pcs[:cap] = s.pcs
        repl["pcs"] = pcs
    if int(s.g[G_EVON]):
        evm = np.zeros((len(EV), new_cap), dtype=np.int64)
        evm[:, :cap] = s.evm
        repl["evm"] = evm
    return s._replace(**repl)
