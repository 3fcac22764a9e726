"""Named stock models: which kernel era, which victim policy, which options.

Every result a sweep writes carries, per row, the kernel version its model ports
(:data:`KERNEL_VERSIONS`), so a table read months later still says which
``mm/memcontrol.c`` a number is about: v6.15 (before "memcg: multi-memcg percpu charge
cache", Shakeel Butt, April 2025), 6952350/linux-6.18.y at 312d9602fe3e (v6.16 to
v6.18), linux-mm/linux-mm at 030321517fd4 (the 2026 mm tree), mm-unstable of April
2025 for fix 2, and Joshua Hahn's page_counter-stock series (RFC, 10 Apr 2026; v4,
23 Jun 2026). Each model's obj stock (:data:`OBJ_ERAS`) is the one of the same tree;
``docs/trace-extensions.md`` gives the evidence for each mapping.

A model name (the replay contract's ``--model``) maps to a kernel charge path
(:mod:`memcglab.kernel`) and the kernel version it ports. This module registers the
contract's seven models and three victim policies in :mod:`memcglab.registry`, which
holds them with any a plugin adds (``docs/extending.md``); ``MODELS``, ``MODEL_NAMES``,
``KERNEL_VERSIONS`` and ``OBJ_ERAS`` are the registry's live views. ``build_model``
makes a fresh machine of any registered model.

>>> m = build_model("multi-rr", nr_cpus=2, slots=3)
>>> type(m).__name__, m.NR_MEMCG_STOCK, MODELS["multi-rr"].kernel_version
('MultiStock', 3, 'linux-mm 2026 (030321517fd4)')
>>> KERNEL_VERSIONS["multi"]
'v6.16 (6.18.y 312d9602fe3e)'
"""

from __future__ import annotations

from functools import partial

from memcglab import registry
from memcglab.events import ALL_EVENT_NAMES
from memcglab.kernel.memcg_stock_multi import MultiStock
from memcglab.kernel.memcg_stock_pcstock import PageCounterStockCharge
from memcglab.kernel.memcg_stock_pcstock_v4 import PageCounterStockV4Charge
from memcglab.kernel.memcg_stock_single import SingleStock
from memcglab.kernel.memcontrol import REFILLS, MemcgCharge
from memcglab.kernel.memcontrol_v1 import check_cgroup
from memcglab.kernel.obj_memcg_caches import ObjMemcgCaches
from memcglab.kernel.obj_stock_multi import ObjStockMulti, ObjStockMultiV4
from memcglab.kernel.obj_stock_pcp import E2, E3, E4_1, ObjStockSingleSlot
from memcglab.kernel.obj_stock_v5 import V5_9, V5_14, V5_14_REFILL, V5_14_VMSTAT, ObjStockV5
from memcglab.kernel.obj_stock_v615 import ObjStockV615
from memcglab.kernel.observer import Observer
from memcglab.kernel.random import RandomStream
from memcglab.kernel.victim import LruVictim, RandomVictim, RoundRobinVictim
from memcglab.registry import (
    KERNEL_VERSIONS,
    MODEL_NAMES,
    MODELS,
    OBJ_ERAS,
    OBJ_STOCK_ERAS,
    ModelEntry,
    ObjEraEntry,
)
from memcglab.trace import STOCK_SLOTS_MAX

__all__ = ["ModelInfo", "MODELS", "MODEL_NAMES", "KERNEL_VERSIONS", "SLOTS_MAX", "BATCH_MAX",
           "MULTI_BATCH_MAX", "SEED_MAX", "REFILLS", "check_options", "check_refill",
           "build_model", "stock_slots", "per_memcg_bound", "nested_allowed", "OBJ_ERAS",
           "OBJ_STOCK_ERAS", "obj_stock_era", "check_obj_stock", "check_cgroup_version"]

SLOTS_MAX = 1 << 24
BATCH_MAX = 524287  # S32_MAX / PAGE_SIZE: BUILD_BUG_ON in mem_cgroup_init
MULTI_BATCH_MAX = 127  # S8_MAX: BUILD_BUG_ON in refill_stock (fix 1)
SEED_MAX = (1 << 64) - 1

#: the name this module gave a model entry before the registry (memcglab.registry)
ModelInfo = ModelEntry

# The contract's policies, each the victim of the model named after it
# (docs/extending.md adds one).
registry.register_policy("random", RandomVictim, compiled="random", model="multi",
                         _builtin=True)
registry.register_policy("rr", RoundRobinVictim, compiled="rr", model="multi-rr", _builtin=True)
registry.register_policy("lru", LruVictim, compiled="lru", model="multi-lru",
                         events=("lru_writes",), _builtin=True)


def _events(*without: str) -> tuple[str, ...]:
    return tuple(e for e in ALL_EVENT_NAMES if e not in without)


def _single(n: int, s: int, seed: int, b: int, obs: Observer, victim: None) -> MemcgCharge:
    return SingleStock(n, b, obs)


def _multi(n: int, s: int, seed: int, b: int, obs: Observer, victim, fix2: bool = False
           ) -> MemcgCharge:
    return MultiStock(n, s, victim, b, obs, fix2=fix2)


def _pcstock(n: int, s: int, seed: int, b: int, obs: Observer, victim: None) -> MemcgCharge:
    return PageCounterStockCharge(n, b, obs)


def _pcstock_v4(n: int, s: int, seed: int, b: int, obs: Observer, victim: None) -> MemcgCharge:
    return PageCounterStockV4Charge(n, b, obs)


def _obj(cls, *args):
    return lambda machine, nodes: cls(machine, *args, nodes)


# Each model's obj stock (objcg bytes), the kernel notes' §11 era tag and the tree it
# ports (docs/trace-extensions.md gives the evidence for each mapping).
_E1 = "E1: v6.15 memcg_stock_pcp (combined, one stock_lock)"
_E3 = "E3: v6.16 obj_stock_pcp (6952350/linux-6.18.y 312d9602fe3e)"
_MULTI = dict(build=_multi, policy="random", batch_max=MULTI_BATCH_MAX,
              batch_max_reason="uint8_t nr_pages[]; BUILD_BUG_ON(MEMCG_CHARGE_BATCH > S8_MAX)")
_PCSTOCK = dict(stock_view="counters", per_memcg="cpus", stock_kind="page_counter")
for _entry in (
    ModelEntry("single", "v6.15", "one cached memcg per CPU, before the multi-memcg patch",
               _single, _obj(ObjStockV615), _E1, compiled="single", nested=False,
               events=_events("lru_writes", "obj_evictions"), obj_stock_era="v6.15",
               colour="#949494"),
    ModelEntry("multi", "v6.16 (6.18.y 312d9602fe3e)",
               "multi-memcg stock with fixes 1-4 and the memcg/obj split; random victim",
               obj_stock=_obj(ObjStockSingleSlot, E3), obj_era=_E3, compiled="multi",
               events=_events("lru_writes", "obj_evictions"), obj_stock_era="v6.16",
               colour="#0173b2", **_MULTI),
    ModelEntry("multi-rr", "linux-mm 2026 (030321517fd4)",
               "the 2026 round-robin victim (uint8_t drain_idx)",
               obj_stock=_obj(ObjStockMulti),
               obj_era="E4+: linux-mm 030321517fd4, NR_OBJ_STOCK=5, drain_idx, per-node objcgs",
               compiled="multi-rr", events=_events("lru_writes"), per_memcg="nodes",
               obj_stock_era="multi-objcg", colour="#029e73", **(_MULTI | {"policy": "rr"})),
    ModelEntry("multi-lru",
               "v6.16 + LRU victim (Shakeel Butt's 2025 LRU variant, never merged)",
               "least-recently-used victim", obj_stock=_obj(ObjStockSingleSlot, E3),
               obj_era=_E3, compiled="multi-lru", events=_events("lru_writes", "obj_evictions"),
               obj_stock_era="v6.16", colour="#d55e00", **(_MULTI | {"policy": "lru"})),
    ModelEntry("multi-fix2", "mm-unstable 2025-04-25 (fix 2, before fix 3)",
               "the historic bug: a new slot gets 0 pages",
               obj_stock=_obj(ObjStockSingleSlot, E2),
               obj_era="E2: mm-unstable 25 Apr 2025, obj half of the multi-memcg memcg_stock_pcp",
               compiled="multi-fix2", events=_events("lru_writes", "obj_evictions"),
               in_scenarios=False, colour="#cc78bc",
               **(_MULTI | {"build": partial(_multi, fix2=True)})),
    ModelEntry("pcstock", "RFC 2026-04-10 (Joshua Hahn, patches 1-8)",
               "per-page_counter per-CPU stock (cgroup v2)", _pcstock,
               _obj(ObjStockSingleSlot, E4_1),
               "E4-1: the RFC's base (Apr 2026), single slot, per-node objcgs",
               compiled="pcstock", events=_events("evictions", "lru_writes", "css_ref_ops",
                                                  "refill_stock", "drain_stock", "obj_evictions"),
               colour="#de8f05", **_PCSTOCK),
    ModelEntry("pcstock-v4", "v4 2026-06-23 (Joshua Hahn, patches 1-5, on mm-new)",
               "v4's lock-free atomic_t per-page_counter per-CPU stock (cgroup v2)",
               _pcstock_v4, _obj(ObjStockMultiV4),
               "E4+ of v4's base (Jun 2026) with v4 4/5's obj_cgroup_uncharge_pages",
               compiled="pcstock-v4", stock_top=1,
               events=_events("miss_bypass", "evictions", "lru_writes", "css_ref_ops",
                              "refill_stock", "drain_stock"), obj_stock_era="pcstock-v4",
               colour="#ca9161", **_PCSTOCK),
):
    registry.register_model(ModelEntry(**{**_entry.__dict__, "builtin": True}))


# The scenario contract's obj_stock eras (revision 2): the four the models already port,
# then the older ones (memcglab.kernel.obj_stock_v5, obj_memcg_caches). One entry each;
# docs/trace-extensions.md documents each port and where it differs from the kernel.
_V5 = "runs beside any model but single and multi-fix2 (their memcg stock owns the obj half)"
for _era in (
    ObjEraEntry("v6.15", _E1, "the single memcg_stock_pcp's objcg half (model single's own)",
                _obj(ObjStockV615), models=("single",)),
    ObjEraEntry("v6.16", _E3, "struct obj_stock_pcp, one slot, its own trylock",
                _obj(ObjStockSingleSlot, E3)),
    ObjEraEntry("multi-objcg", "E4+: linux-mm 030321517fd4",
                "five slots, drain_idx round robin, per-node objcgs", _obj(ObjStockMulti)),
    ObjEraEntry("pcstock-v4", "E4+ of v4's base with v4 4/5's obj_cgroup_uncharge_pages",
                "five slots; whole pages leave by one direct walk", _obj(ObjStockMultiV4)),
    ObjEraEntry("memcg-caches", "v5.8 and before (per-memcg kmem caches)",
                "no per-object charge: a slab page charged or uncharged when a memcg cache "
                f"needs or frees one; {_V5}", _obj(ObjMemcgCaches)),
    ObjEraEntry(V5_9, "v5.9-v5.13 (Roman Gushchin's slab controller; torvalds 5458985533ba)",
                "per-object byte charge through the per-CPU stock and a per-object "
                "mod_objcg_state; an overflow drains into objcg->nr_charged_bytes; "
                + _V5, _obj(ObjStockV5, V5_9)),
    ObjEraEntry(V5_14_VMSTAT, "68ac5b3c8db2 mm/memcg: cache vmstat data in percpu "
                "memcg_stock_pcp (Waiman Long)", "as v5.9, stat bytes cached in the stock; "
                + _V5, _obj(ObjStockV5, V5_14_VMSTAT)),
    ObjEraEntry(V5_14_REFILL, "5387c90490f7 mm/memcg: improve refill_obj_stock() "
                "performance (Waiman Long)", "as v5.14-vmstat; an overflow uncharges whole "
                "pages and keeps the rest; " + _V5, _obj(ObjStockV5, V5_14_REFILL)),
    ObjEraEntry(V5_14, "559271146efc mm/memcg: optimize user context object stock access "
                "(Waiman Long) to v6.14", "as v5.14-refill, separate task and irq stocks; "
                + _V5, _obj(ObjStockV5, V5_14)),
):
    # every built-in era has its compiled twin under its own name (engine/native)
    registry.register_obj_era(ObjEraEntry(**{**_era.__dict__, "builtin": True,
                                             "compiled": _era.name}))


def obj_stock_era(name: str) -> ObjEraEntry:
    """The port of obj-stock era ``name`` (the scenario contract's ``obj_stock``):
    ``entry.build(machine, nodes)`` makes it for a built machine; ValueError names the
    registered eras. :func:`build_model` takes the name as ``obj_stock``.

    >>> obj_stock_era("v5.14-refill").build.__name__
    '<lambda>'
    >>> obj_stock_era("v5.14").kernel_version.split()[0]
    '559271146efc'
    """
    return registry.obj_era(name)


def check_obj_stock(model: str, obj_stock: str | None) -> None:
    """Raise ValueError unless obj-stock era ``obj_stock`` (None: the model's own) can run
    beside ``model``, naming the models it can run with."""
    if obj_stock is None:
        return
    runs = registry.obj_era_models(obj_stock)
    if model not in runs:
        raise ValueError(f"obj_stock={obj_stock!r} cannot run with model={model!r}: its obj "
                         f"stock is part of the model's memcg stock; valid models: "
                         f"{', '.join(runs)}")


def check_options(model: str, slots: int, seed: int, batch: int) -> None:
    """Raise ValueError naming the first invalid option and what is valid."""
    entry = registry.model(model)
    if not 1 <= slots <= SLOTS_MAX:
        raise ValueError(f"slots={slots}: must be between 1 and {SLOTS_MAX} (2^24)")
    if not 0 <= seed <= SEED_MAX:
        raise ValueError(f"seed={seed}: must be between 0 and 2^64-1")
    if not 1 <= batch <= BATCH_MAX:
        raise ValueError(f"batch={batch}: must be between 1 and {BATCH_MAX} "
                         "(S32_MAX / PAGE_SIZE)")
    if entry.batch_max is not None and batch > entry.batch_max:
        raise ValueError(f"batch={batch}: the {model} model allows at most {entry.batch_max} "
                         f"({entry.batch_max_reason})")


def check_refill(refill: str) -> None:
    """Raise ValueError unless ``refill`` is one of :data:`REFILLS` (the scenario
    contract's ``refill`` key: ``always``, ``not-in-irq``, ``never``)."""
    if refill not in REFILLS:
        raise ValueError(f"refill={refill!r}: unknown; valid: {', '.join(REFILLS)}")


def check_cgroup_version(model: str, cgroup_version: int, swap: bool) -> None:
    """Raise ValueError unless ``model`` runs on cgroup ``cgroup_version`` with ``swap``
    (the scenario contract's ``[cgroups] version`` and ``swap``; v1 needs a model
    without a page_counter stock: :func:`memcglab.kernel.memcontrol_v1.check_cgroup`)."""
    check_cgroup(cgroup_version, swap, registry.model(model).stock_view == "counters")


def per_memcg_bound(model: str) -> str | None:
    """What ``model`` keeps per memcg that grows with an argument: ``"cpus"`` (a stock per
    CPU per memcg counter: ``pcstock``, ``pcstock-v4``), ``"nodes"`` (per-node objcgs:
    ``multi-rr``), or None. The argument of :func:`memcglab.trace.check_per_memcg`."""
    return registry.model(model).per_memcg


def stock_slots(model: str, slots: int) -> int | None:
    """The ``--slots`` that sizes ``model``'s memcg stocks, or None for a model without
    slots (the argument of :func:`memcglab.trace.check_stock_slots`)."""
    return slots if registry.model(model).multi else None


def nested_allowed(model: str) -> bool:
    """Whether a trace replayed by ``model`` may use ``nested`` (v6.15's ``single`` takes
    the stock lock with interrupts off, so nothing nests: the trace's ``single=True``)."""
    return registry.model(model).nested


def build_model(model: str = "multi", nr_cpus: int = 1, slots: int = 7, seed: int = 0,
                batch: int = 64, observer: Observer | None = None,
                policy: str | None = None, refill: str = "always", nodes: int = 1,
                obj_stock: str | None = None, cgroup_version: int = 2,
                swap: bool = False) -> MemcgCharge:
    """A fresh machine of ``model`` with ``nr_cpus`` CPUs and an empty root memcg.

    ``policy`` replaces the victim policy of a ``multi*`` model with any registered one
    (:data:`memcglab.registry.POLICIES`, plugins included; the faithful port runs every
    one of them). ``refill`` is the scenario contract's design key (:data:`REFILLS`),
    ported into every model's charge path
    (:meth:`memcglab.kernel.try_charge.ChargePath.charge_batch`). ``nodes`` splits the
    CPUs into NUMA nodes (the trace's ``nodes K``); only the 2026 eras' per-node objcgs
    see it. The machine's obj stock is ``machine.obj``, of the era in :data:`OBJ_ERAS`,
    or of the obj-stock era ``obj_stock`` (:data:`OBJ_STOCK_ERAS`, :func:`obj_stock_era`).
    ``cgroup_version=1`` walks v1's kmem counter beside every page-level kmem charge and
    uncharge, and ``swap=True`` its memsw counter beside memory
    (:mod:`memcglab.kernel.memcontrol_v1`); the default is cgroup v2.
    """
    check_options(model, slots, seed, batch)
    check_refill(refill)
    check_obj_stock(model, obj_stock)
    check_cgroup_version(model, cgroup_version, swap)
    if not (1 <= nodes <= nr_cpus and nr_cpus % nodes == 0):
        raise ValueError(f"nodes={nodes}: must divide nr_cpus={nr_cpus} into equal blocks")
    entry = registry.model(model)
    if entry.multi and nr_cpus * slots > STOCK_SLOTS_MAX:
        raise ValueError(f"nr_cpus={nr_cpus} with slots={slots}: {nr_cpus}×{slots} stock slots "
                         "exceed 2^24 (cpus x slots)")
    victim = registry.resolve_policy(model, policy)
    obs = observer if observer is not None else Observer()
    machine = entry.build(nr_cpus, slots, seed, batch, obs,
                          None if victim is None else victim.cls(slots, RandomStream(seed)))
    machine.refill = refill
    # before any memcg but the root, whose counters do not depend on the version
    machine.cgroup_version, machine.swap = cgroup_version, swap
    build_obj = entry.obj_stock if obj_stock is None else registry.obj_era(obj_stock).build
    machine.obj = build_obj(machine, nodes)
    return machine
