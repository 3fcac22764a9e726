"""The compiled engine's state: a few flat numpy arrays, grouped by what indexes them.

The C core (``memcglab/engine/native``) takes these arrays by their data pointers and
column counts (every array int64 and C-contiguous, ``rng`` uint64):

* ``g``: the replay's scalar counters and parameters (``G_*`` indices);
* ``mc[F_*, m]``: per memcg, by dense index (0 is the root memcg): the ``memory``
  page_counter (``F_USAGE``, ``F_WATERMARK``, ``F_MAX``),
  ``memory_events_local[MEMCG_MAX]`` (``F_MAXEV``), the pages the trace holds
  (``F_HELD``), the tree (``F_PARENT``, ``F_DEPTH`` and the child lists
  ``F_FIRST``/``F_LAST``/``F_NEXT`` in creation order, the css sibling order),
  ``F_ONLINE``, the CPU that last wrote ``usage`` (``F_LASTW``, for the
  cacheline-transfer event), the pcstock ``batch`` (``F_PCBATCH``) and a scratch
  row for the invariant check (``F_ACC``);
* ``sl[S_*, cpu * slots + i]``: the memcg stocks (``S_CACHED``: dense memcg or -1
  for NULL; ``S_NR``: ``nr_pages``; ``S_STAMP``: last use, the LRU victim only);
  ``single`` uses one slot per CPU;
* ``pcpu[P_*, cpu]``: per CPU, the scan bound ``P_HI`` and ``P_DRAIN_IDX``;
* ``pcs[m, cpu]``: ``pcstock`` and ``pcstock-v4``, CPU ``cpu``'s stock of memcg
  ``m``'s counter;
* ``ev[e, col]``: event ``e`` counts, columns ``0..cpus-1`` per CPU, then one per
  memcg (``cpus + m``);
* ``rng``: the one-element splitmix64 state;
* ``ob``, ``oc``, ``rn``: the obj stock's slots, objcgs and live-object runs (below);
* ``vs[m, k * cpus + cpu]``: obj-stock era ``v5.9`` only, the per-CPU stat counters
  of dense memcg ``m`` (``k`` 0: ``memcg->vmstats_percpu``, 1: the lruvec's
  ``lruvec_stat_cpu``) of ``NR_SLAB_UNRECLAIMABLE_B``.

Memcg-indexed arrays grow between chunks (:func:`grow`), never in compiled code.

>>> s = new_state(model=M_MULTI, cpus=2, slots=7, batch=64, seed=0, capacity=4)
>>> s.sl.shape, int(s.g[G_NSLOTS]), int(s.mc[F_MAX, 0]) == (2**63 - 1) // 4096
((2, 14), 7, True)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from memcglab.events import ALL_EVENT_NAMES, OBJ_ERA_EVENTS, V1_EVENTS
from memcglab.kernel.obj_memcg_caches import KMALLOC_SIZES
from memcglab.trace import PAGE_COUNTER_MAX

__all__ = ["State", "new_state", "grow", "grow_runs", "MODELS", "MODEL_CODES", "EV", "VICTIMS",
           "VICTIM_CODES", "OBJ_ERA_NAMES", "OBJ_ERA_CODES", "OBJ_ERA_G", "V1_G"]

# Model codes, in the contract's order: the engine's compiled models, by the name a
# registry entry gives as its ``compiled`` implementation (memcglab.registry).
M_SINGLE, M_MULTI, M_RR, M_LRU, M_FIX2, M_PCSTOCK, M_PCSTOCK_V4 = range(7)
MODELS = ("single", "multi", "multi-rr", "multi-lru", "multi-fix2", "pcstock", "pcstock-v4")
MODEL_CODES = {name: code for code, name in enumerate(MODELS)}

# Indices into g.
(G_OPS, G_FAILED, G_BUSY, G_SHORT, G_WARN, G_WALKS, G_HITS, G_EVICT, G_NCPUS, G_NSLOTS,
 G_BATCH, G_MODEL, G_NMEMCG, G_CLOCK, G_EVON, G_CHECK, G_REFILL,
 # the obj stock (docs/trace-extensions.md): its era, slots per CPU, NUMA nodes, whether
 # an object operation ran, the obj_counters of the output, the live-object runs' lists
 G_OBJERA, G_NOBJ, G_NODES, G_OBJUSED, G_OHITS, G_OMISS, G_OREFILL, G_ODRAIN, G_OEVICT,
 G_OFLUSH, G_OFAIL, G_OSHORT, G_RFREE, G_RUSED,
 # the victim policy of the multi* models (VICTIMS)
 G_VICTIM,
 # the older obj-stock eras (OBJ_ERA_NAMES): the trace's NUMA nodes (the node of a slab
 # page, whatever the objcgs), and the totals of memcglab.events.OBJ_ERA_EVENTS
 G_TNODES, G_OSTATE, G_OSTATUPD, G_OSTATFLUSH, G_OSLABCH, G_OSLABUNCH,
 # cgroup v1 (memcglab.kernel.memcontrol_v1): whether the machine is on v1, whether it
 # accounts memsw (swap), and the totals of memcglab.events.V1_EVENTS
 G_CGV1, G_SWAP, G_KMEMWALKS, G_MEMSWWALKS) = range(42)
G_SIZE = 42
#: memcglab.events.V1_EVENTS -> the g entry that counts its total
V1_G = dict(zip(V1_EVENTS, (G_KMEMWALKS, G_MEMSWWALKS), strict=True))

# g[G_VICTIM]: the compiled victim policies (memcglab.engine.victims), by the name a
# registry entry gives as its ``compiled`` implementation (memcglab.registry).
V_RANDOM, V_RR, V_LRU, V_FEWEST = range(4)
VICTIMS = ("random", "rr", "lru", "fewest")
VICTIM_CODES = {name: code for code, name in enumerate(VICTIMS)}
#: each model's own victim (single and the page_counter stocks have none: random, unused)
VICTIM_OF_MODEL = (V_RANDOM, V_RANDOM, V_RR, V_LRU, V_RANDOM, V_RANDOM, V_RANDOM)

# g[G_OBJERA]: the obj stock era of the model (memcglab.models.OBJ_ERAS), then the
# older eras an obj_stock option selects (memcglab.models.OBJ_STOCK_ERAS): memcg-caches
# (objstock_caches.c), v5.9, v5.14-vmstat, v5.14-refill, v5.14 (objstock_v5.c)
(OE_V615, OE_E2, OE_E3, OE_E41, OE_MULTI, OE_MULTI_V4,
 OE_MEMCG_CACHES, OE_V59, OE_V514_VMSTAT, OE_V514_REFILL, OE_V514) = range(11)
OBJ_ERA_OF_MODEL = (OE_V615, OE_E3, OE_MULTI, OE_E3, OE_E2, OE_E41, OE_MULTI_V4)
#: the obj-stock eras the compiled engine runs by ``obj_stock`` name, with their codes:
#: the models' own (v6.15 is single's, which no other model can take), then the older
OBJ_ERA_CODES = {"v6.15": OE_V615, "v6.16": OE_E3, "multi-objcg": OE_MULTI,
                 "pcstock-v4": OE_MULTI_V4, "memcg-caches": OE_MEMCG_CACHES, "v5.9": OE_V59,
                 "v5.14-vmstat": OE_V514_VMSTAT, "v5.14-refill": OE_V514_REFILL,
                 "v5.14": OE_V514}
OBJ_ERA_NAMES = tuple(OBJ_ERA_CODES)
#: memcglab.events.OBJ_ERA_EVENTS -> the g entry that counts its total
OBJ_ERA_G = dict(zip(OBJ_ERA_EVENTS, (G_OSTATE, G_OSTATUPD, G_OSTATFLUSH, G_OSLABCH,
                                      G_OSLABUNCH), strict=True))

# Rows of ob (per CPU x slot), oc (per objcg: dense memcg x nodes + node) and rn (runs).
# The v5 eras' slots also keep cached_pgdat (-1 for NULL) and nr_slab_unreclaimable_b;
# memcg-caches keeps, per objcg, its kmalloc objects' FIFO (entries of rn, as runs:
# RN_BYTES the object's size), the freed bytes short of an object, its kmalloc_large
# pages and, per kmalloc cache (KMALLOC_SIZES order), its slabs and objects in use.
OB_CACHED, OB_NR, OB_PGDAT, OB_SLABB = range(4)
OB_SIZE_V5 = 4
OC_NRCH, OC_KMEM, OC_LIVE, OC_ACC, OC_MEMCG = range(5)
OC_SIZE = 5
OC_KHEAD, OC_KTAIL, OC_PENDING, OC_LARGE = range(5, 9)
NR_KMALLOC_CACHES = len(KMALLOC_SIZES)
OC_SLABS = 9
OC_INUSE = OC_SLABS + NR_KMALLOC_CACHES
OC_SIZE_CACHES = OC_INUSE + NR_KMALLOC_CACHES
RN_OBJCG, RN_BYTES, RN_NEXT = range(3)

# g[G_REFILL]: the scenario contract's refill key, in memcglab.models.REFILLS order.
R_ALWAYS, R_NOT_IN_IRQ, R_NEVER = range(3)

# Rows of mc.
(F_PARENT, F_DEPTH, F_USAGE, F_WATERMARK, F_MAX, F_MAXEV, F_HELD, F_LASTW, F_PCBATCH,
 F_FIRST, F_LAST, F_NEXT, F_ONLINE, F_ACC, F_RHEAD, F_RTAIL, F_KMEM, F_OBJPAGES,
 # cgroup v1: memcg->kmem and memcg->memsw (usage, watermark); their max is always
 # PAGE_COUNTER_MAX (no trace sets it), so it is not stored
 F_KMEMC_USAGE, F_KMEMC_WM, F_MEMSW_USAGE, F_MEMSW_WM,
 # cgroup v1: the held pages that a ``charge ... kmem`` took (docs/trace-extensions.md)
 F_HELDKMEM) = range(23)
F_SIZE = 23
_F_MINUS_ONE = (F_PARENT, F_LASTW, F_FIRST, F_LAST, F_NEXT, F_RHEAD, F_RTAIL)

# Rows of sl and pcpu.
S_CACHED, S_NR, S_STAMP = range(3)
P_HI, P_DRAIN_IDX, P_OBJ_DRAIN_IDX = range(3)

# Event rows of ev, in memcglab.events.ALL_EVENT_NAMES order (checked below).
(E_CHARGES, E_UNCHARGES, E_UNCHARGES_DIRECT, E_STOCK_HITS, E_MISS_ABSENT, E_MISS_SHORT,
 E_MISS_BYPASS, E_EVICTIONS, E_WALKS, E_WALK_LEVELS, E_DRAINS, E_SLOTS_SCANNED,
 E_LRU_WRITES, E_USAGE_TRANSFERS, E_CSS_REF_OPS, E_FAILED_CHARGES,
 E_TRY_CHARGE_MEMCG, E_PC_TRY_CHARGE, E_PC_TRY_CHARGE_LEVELS, E_PC_UNCHARGE,
 E_PC_UNCHARGE_LEVELS, E_REFILL_STOCK, E_DRAIN_STOCK, E_OBJ_CGROUP_CHARGE,
 E_OBJ_CGROUP_UNCHARGE, E_OBJ_HITS, E_OBJ_MISSES, E_OBJ_REFILLS, E_OBJ_DRAINS,
 E_OBJ_EVICTIONS, E_OBJ_FLUSHES, E_OBJ_CHARGES, E_OBJ_UNCHARGES) = range(33)
EV = ("charges", "uncharges", "uncharges_direct", "stock_hits", "miss_absent", "miss_short",
      "miss_bypass", "evictions", "walks", "walk_levels", "drains", "slots_scanned",
      "lru_writes", "usage_transfers", "css_ref_ops", "failed_charges",
      "try_charge_memcg", "page_counter_try_charge", "page_counter_try_charge_levels",
      "page_counter_uncharge", "page_counter_uncharge_levels", "refill_stock", "drain_stock",
      "obj_cgroup_charge", "obj_cgroup_uncharge", "obj_hits", "obj_misses", "obj_refills",
      "obj_drains", "obj_evictions", "obj_flushes", "obj_charges", "obj_uncharges")
if EV != ALL_EVENT_NAMES:  # pragma: no cover - a changed interface must fail loudly
    raise ImportError("memcglab.events.ALL_EVENT_NAMES changed; update memcglab.engine.state")

#: usage never exceeds PAGE_COUNTER_MAX + 2^32 (the root's limit stops it), so a
#: limit above LONG_MAX compares exactly like LONG_MAX: limits are stored clamped.
LIMIT_CLAMP = 2**63 - 1


class State(NamedTuple):
    """The engine's whole state: globals, RNG, memcgs, slots, per-CPU, stocks, events, and
    the obj stock: its slots (``ob``), objcgs (``oc``), live-object runs (``rn``) and
    v5.9's per-CPU stat counters (``vs``)."""

    g: np.ndarray
    rng: np.ndarray
    mc: np.ndarray
    sl: np.ndarray
    pcpu: np.ndarray
    pcs: np.ndarray
    ev: np.ndarray
    ob: np.ndarray
    oc: np.ndarray
    rn: np.ndarray
    vs: np.ndarray


def _memcg_block(cap: int) -> np.ndarray:
    mc = np.zeros((F_SIZE, cap), dtype=np.int64)
    mc[list(_F_MINUS_ONE)] = -1
    return mc


def new_state(model: int, cpus: int, slots: int, batch: int, seed: int, capacity: int = 16,
              events: bool = False, check: bool = False, refill: int = R_ALWAYS,
              nodes: int = 1, victim: int | None = None, obj_era: int | None = None,
              cgroup_version: int = 2, swap: bool = False) -> State:
    """A fresh engine: only the root memcg (dense index 0) exists, every stock empty.

    ``victim`` is the code of the multi* models' victim policy (:data:`VICTIMS`),
    by default the model's own; ``obj_era`` the code of the obj-stock era
    (:data:`OBJ_ERA_CODES`), by default the model's own; ``cgroup_version`` and ``swap``
    the machine's cgroup (memcglab.kernel.memcontrol_v1)."""
    g = np.zeros(G_SIZE, dtype=np.int64)
    g[G_CGV1], g[G_SWAP] = int(cgroup_version == 1), int(swap)
    g[G_REFILL] = refill
    victim = VICTIM_OF_MODEL[model] if victim is None else victim
    g[G_VICTIM] = victim
    era = OBJ_ERA_OF_MODEL[model] if obj_era is None else obj_era
    g[G_OBJERA] = era
    # NR_OBJ_STOCK: five slots in the 2026 tree; task_obj and irq_obj in v5.14; no byte
    # stock at all before v5.9
    g[G_NOBJ] = (5 if era in (OE_MULTI, OE_MULTI_V4) else 2 if era == OE_V514
                 else 0 if era == OE_MEMCG_CACHES else 1)
    g[G_NODES] = nodes if era in (OE_E41, OE_MULTI, OE_MULTI_V4) else 1  # per-node objcgs
    g[G_TNODES] = nodes
    g[G_RFREE] = -1
    g[G_NCPUS], g[G_NSLOTS], g[G_BATCH], g[G_MODEL] = cpus, slots, batch, model
    g[G_NMEMCG], g[G_EVON], g[G_CHECK] = 1, int(events), int(check)
    cap = max(capacity, 1)
    mc = _memcg_block(cap)
    mc[F_MAX, 0] = PAGE_COUNTER_MAX  # the root memcg: no limit
    mc[F_ONLINE, 0] = 1
    # css_online of the root enables its stock too; it never holds pages (never charged).
    mc[F_PCBATCH, 0] = batch
    if model in (M_PCSTOCK, M_PCSTOCK_V4):
        nslot = 1
    else:
        nslot = cpus * (1 if model == M_SINGLE else slots)
    sl = np.zeros((3 if victim == V_LRU else 2, nslot), dtype=np.int64)
    sl[S_CACHED] = -1
    return State(
        g=g, rng=np.array([seed], dtype=np.uint64), mc=mc, sl=sl,
        pcpu=np.zeros((3, cpus), dtype=np.int64),
        pcs=np.zeros((cap, cpus) if model in (M_PCSTOCK, M_PCSTOCK_V4) else (1, 1),
                     dtype=np.int64),
        ev=np.zeros((len(EV), cpus + cap if events else 1), dtype=np.int64),
        ob=_obj_slots(OB_SIZE_V5 if era >= OE_V59 else 2, cpus * int(g[G_NOBJ])),
        oc=_objcg_block(OC_SIZE_CACHES if era == OE_MEMCG_CACHES else OC_SIZE,
                        cap * int(g[G_NODES])),
        rn=np.zeros((3, 16), dtype=np.int64),
        vs=np.zeros((cap, 2 * cpus) if era == OE_V59 else (1, 1), dtype=np.int64),
    )


def _obj_slots(rows: int, n: int) -> np.ndarray:
    ob = np.zeros((rows, n), dtype=np.int64)
    ob[OB_CACHED] = -1
    if rows > OB_PGDAT:
        ob[OB_PGDAT] = -1  # cached_pgdat = NULL
    return ob


def _objcg_block(rows: int, n: int) -> np.ndarray:
    oc = np.zeros((rows, n), dtype=np.int64)
    if rows > OC_KTAIL:
        oc[[OC_KHEAD, OC_KTAIL]] = -1  # memcg-caches: no kmalloc object yet
    return oc


def grow_runs(s: State, needed: int) -> State:
    """Return ``s`` with room for ``needed`` live-object runs (amortised doubling)."""
    cap = s.rn.shape[1]
    if needed <= cap:
        return s
    rn = np.zeros((3, max(needed, 2 * cap)), dtype=np.int64)
    rn[:, :cap] = s.rn
    return s._replace(rn=rn)


def grow(s: State, needed: int) -> State:
    """Return ``s`` with room for ``needed`` memcgs (amortised doubling)."""
    cap = s.mc.shape[1]
    if needed <= cap:
        return s
    new_cap = max(needed, 2 * cap)
    mc = _memcg_block(new_cap)
    mc[:, :cap] = s.mc
    nodes = int(s.g[G_NODES])
    oc = _objcg_block(s.oc.shape[0], new_cap * nodes)
    oc[:, :cap * nodes] = s.oc
    repl = {"mc": mc, "oc": oc}
    if int(s.g[G_OBJERA]) == OE_V59:
        vs = np.zeros((new_cap, s.vs.shape[1]), dtype=np.int64)
        vs[:cap] = s.vs
        repl["vs"] = vs
    if int(s.g[G_MODEL]) in (M_PCSTOCK, M_PCSTOCK_V4):
        pcs = np.zeros((new_cap, s.pcs.shape[1]), dtype=np.int64)
        pcs[:cap] = s.pcs
        repl["pcs"] = pcs
    if s.g[G_EVON]:
        ev = np.zeros((len(EV), int(s.g[G_NCPUS]) + new_cap), dtype=np.int64)
        ev[:, :s.ev.shape[1]] = s.ev
        repl["ev"] = ev
    return s._replace(**repl)
