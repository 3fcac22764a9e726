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
(:mod:`memcglab.kernel`) and the kernel version it ports. ``build_model`` makes a
fresh machine of that model.

>>> m = build_model("multi-rr", nr_cpus=2, slots=3)
>>> type(m).__name__, m.NR_MEMCG_STOCK, MODELS["multi-rr"].kernel_version
('MultiStock', 3, 'linux-mm 2026 (030321517fd4)')
>>> KERNEL_VERSIONS["multi"]
'v6.16 (6.18.y 312d9602fe3e)'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memcglab.kernel.memcg_stock_multi import MultiStock
from memcglab.kernel.memcg_stock_pcstock import PageCounterStockCharge
from memcglab.kernel.memcg_stock_pcstock_v4 import PageCounterStockV4Charge
from memcglab.kernel.memcg_stock_single import SingleStock
from memcglab.kernel.memcontrol import REFILLS, MemcgCharge
from memcglab.kernel.obj_stock_multi import ObjStockMulti, ObjStockMultiV4
from memcglab.kernel.obj_stock_pcp import E2, E3, E4_1, ObjStockSingleSlot
from memcglab.kernel.obj_stock_v615 import ObjStockV615
from memcglab.kernel.observer import Observer
from memcglab.kernel.random import RandomStream
from memcglab.kernel.victim import POLICIES
from memcglab.trace import STOCK_SLOTS_MAX

__all__ = ["ModelInfo", "MODELS", "MODEL_NAMES", "KERNEL_VERSIONS", "SLOTS_MAX", "BATCH_MAX",
           "MULTI_BATCH_MAX", "SEED_MAX", "REFILLS", "check_options", "check_refill",
           "build_model", "stock_slots", "per_memcg_bound", "OBJ_ERAS"]

SLOTS_MAX = 1 << 24
BATCH_MAX = 524287  # S32_MAX / PAGE_SIZE: BUILD_BUG_ON in mem_cgroup_init
MULTI_BATCH_MAX = 127  # S8_MAX: BUILD_BUG_ON in refill_stock (fix 1)
SEED_MAX = (1 << 64) - 1


@dataclass(frozen=True)
class ModelInfo:
    """One stock model of the replay contract: its name, kernel, builder and description."""

    name: str
    kernel_version: str
    multi: bool  # uses --slots and a victim policy
    build: Callable[[int, int, int, int, Observer], MemcgCharge]
    description: str


def _multi(policy: str, fix2: bool = False):
    def build(nr_cpus: int, slots: int, seed: int, batch: int, obs: Observer) -> MemcgCharge:
        return MultiStock(nr_cpus, slots, POLICIES[policy](slots, RandomStream(seed)), batch,
                          obs, fix2=fix2)
    return build


MODELS: dict[str, ModelInfo] = {m.name: m for m in (
    ModelInfo("single", "v6.15", False,
              lambda n, s, seed, b, o: SingleStock(n, b, o),
              "one cached memcg per CPU, before the multi-memcg patch"),
    ModelInfo("multi", "v6.16 (6.18.y 312d9602fe3e)", True, _multi("random"),
              "multi-memcg stock with fixes 1-4 and the memcg/obj split; random victim"),
    ModelInfo("multi-rr", "linux-mm 2026 (030321517fd4)", True,
              _multi("rr"), "the 2026 round-robin victim (uint8_t drain_idx)"),
    ModelInfo("multi-lru", "v6.16 + LRU victim (Shakeel Butt's 2025 LRU variant, never merged)",
              True, _multi("lru"), "least-recently-used victim"),
    ModelInfo("multi-fix2", "mm-unstable 2025-04-25 (fix 2, before fix 3)", True,
              _multi("random", fix2=True), "the historic bug: a new slot gets 0 pages"),
    ModelInfo("pcstock", "RFC 2026-04-10 (Joshua Hahn, patches 1-8)",
              False, lambda n, s, seed, b, o: PageCounterStockCharge(n, b, o),
              "per-page_counter per-CPU stock (cgroup v2)"),
    ModelInfo("pcstock-v4", "v4 2026-06-23 (Joshua Hahn, patches 1-5, on mm-new)",
              False, lambda n, s, seed, b, o: PageCounterStockV4Charge(n, b, o),
              "v4's lock-free atomic_t per-page_counter per-CPU stock (cgroup v2)"),
)}
MODEL_NAMES = tuple(MODELS)

#: The obj stock (objcg bytes) of each model, the kernel notes' §11 era tag and the
#: tree it ports (docs/trace-extensions.md gives the evidence for each mapping).
OBJ_ERAS: dict[str, str] = {
    "single": "E1: v6.15 memcg_stock_pcp (combined, one stock_lock)",
    "multi": "E3: v6.16 obj_stock_pcp (6952350/linux-6.18.y 312d9602fe3e)",
    "multi-lru": "E3: v6.16 obj_stock_pcp (6952350/linux-6.18.y 312d9602fe3e)",
    "multi-fix2": "E2: mm-unstable 25 Apr 2025, obj half of the multi-memcg memcg_stock_pcp",
    "multi-rr": "E4+: linux-mm 030321517fd4, NR_OBJ_STOCK=5, drain_idx, per-node objcgs",
    "pcstock": "E4-1: the RFC's base (Apr 2026), single slot, per-node objcgs",
    "pcstock-v4": "E4+ of v4's base (Jun 2026) with v4 4/5's obj_cgroup_uncharge_pages",
}
OBJ_STOCKS: dict[str, Callable] = {
    "single": lambda m, nodes: ObjStockV615(m, nodes),
    "multi": lambda m, nodes: ObjStockSingleSlot(m, E3, nodes),
    "multi-lru": lambda m, nodes: ObjStockSingleSlot(m, E3, nodes),
    "multi-fix2": lambda m, nodes: ObjStockSingleSlot(m, E2, nodes),
    "multi-rr": lambda m, nodes: ObjStockMulti(m, nodes),
    "pcstock": lambda m, nodes: ObjStockSingleSlot(m, E4_1, nodes),
    "pcstock-v4": lambda m, nodes: ObjStockMultiV4(m, nodes),
}
KERNEL_VERSIONS = {name: info.kernel_version for name, info in MODELS.items()}


def check_options(model: str, slots: int, seed: int, batch: int) -> None:
    """Raise ValueError naming the first invalid option and what is valid."""
    if model not in MODELS:
        raise ValueError(f"model={model!r}: unknown; valid: {', '.join(MODEL_NAMES)}")
    if not 1 <= slots <= SLOTS_MAX:
        raise ValueError(f"slots={slots}: must be between 1 and {SLOTS_MAX} (2^24)")
    if not 0 <= seed <= SEED_MAX:
        raise ValueError(f"seed={seed}: must be between 0 and 2^64-1")
    if not 1 <= batch <= BATCH_MAX:
        raise ValueError(f"batch={batch}: must be between 1 and {BATCH_MAX} "
                         "(S32_MAX / PAGE_SIZE)")
    if MODELS[model].multi and batch > MULTI_BATCH_MAX:
        raise ValueError(f"batch={batch}: the {model} model allows at most {MULTI_BATCH_MAX} "
                         "(uint8_t nr_pages[]; BUILD_BUG_ON(MEMCG_CHARGE_BATCH > S8_MAX))")


def check_refill(refill: str) -> None:
    """Raise ValueError unless ``refill`` is one of :data:`REFILLS` (the scenario
    contract's ``refill`` key: ``always``, ``not-in-irq``, ``never``)."""
    if refill not in REFILLS:
        raise ValueError(f"refill={refill!r}: unknown; valid: {', '.join(REFILLS)}")


def per_memcg_bound(model: str) -> str | None:
    """What ``model`` keeps per memcg that grows with an argument: ``"cpus"`` (a stock per
    CPU per memcg counter: ``pcstock``, ``pcstock-v4``), ``"nodes"`` (per-node objcgs:
    ``multi-rr``), or None. The argument of :func:`memcglab.trace.check_per_memcg`."""
    if model in ("pcstock", "pcstock-v4"):
        return "cpus"
    return "nodes" if model == "multi-rr" else None


def stock_slots(model: str, slots: int) -> int | None:
    """The ``--slots`` that sizes ``model``'s memcg stocks, or None for a model without
    slots (the argument of :func:`memcglab.trace.check_stock_slots`)."""
    return slots if MODELS[model].multi else None


def build_model(model: str = "multi", nr_cpus: int = 1, slots: int = 7, seed: int = 0,
                batch: int = 64, observer: Observer | None = None,
                policy: str | None = None, refill: str = "always", nodes: int = 1
                ) -> MemcgCharge:
    """A fresh machine of ``model`` with ``nr_cpus`` CPUs and an empty root memcg.

    ``policy`` replaces the victim policy of a ``multi*`` model with any entry of
    :data:`memcglab.kernel.victim.POLICIES`, including ones registered after import
    (the faithful port only; the compiled engine knows the contract's models).
    ``refill`` is the scenario contract's design key (:data:`REFILLS`), ported into
    every model's charge path (:meth:`memcglab.kernel.try_charge.ChargePath.charge_batch`).
    ``nodes`` splits the CPUs into NUMA nodes (the trace's ``nodes K``); only the 2026
    eras' per-node objcgs see it. The machine's obj stock is ``machine.obj``, of the
    era in :data:`OBJ_ERAS`.
    """
    check_options(model, slots, seed, batch)
    check_refill(refill)
    if not (1 <= nodes <= nr_cpus and nr_cpus % nodes == 0):
        raise ValueError(f"nodes={nodes}: must divide nr_cpus={nr_cpus} into equal blocks")
    machine = _build(model, nr_cpus, slots, seed, batch, observer, policy)
    machine.refill = refill
    machine.obj = OBJ_STOCKS[model](machine, nodes)
    return machine


def _build(model: str, nr_cpus: int, slots: int, seed: int, batch: int,
           observer: Observer | None, policy: str | None) -> MemcgCharge:
    if MODELS[model].multi and nr_cpus * slots > STOCK_SLOTS_MAX:
        raise ValueError(f"nr_cpus={nr_cpus} with slots={slots}: {nr_cpus}×{slots} stock slots "
                         "exceed 2^24 (cpus x slots)")
    obs = observer if observer is not None else Observer()
    if policy is None:
        return MODELS[model].build(nr_cpus, slots, seed, batch, obs)
    if not MODELS[model].multi:
        raise ValueError(f"policy={policy!r}: only the multi* models have a victim policy, "
                         f"not {model!r}")
    if policy not in POLICIES:
        raise ValueError(f"policy={policy!r}: unknown; valid: {', '.join(POLICIES)}")
    return _multi(policy, fix2=model == "multi-fix2")(nr_cpus, slots, seed, batch, obs)
