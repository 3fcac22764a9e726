"""Replay a trace through a stock model: the faithful engine of the replay contract.

``replay`` runs every operation of a :class:`~memcglab.trace.Trace` through a fresh
machine of the chosen model (:mod:`memcglab.models`), tracks the pages each memcg
holds (successful charges not yet uncharged), optionally checks the conservation
invariant after every operation, and returns the contract's JSON object; ``dumps``
renders it byte for byte.

>>> from memcglab.trace import parse_text
>>> t = parse_text("memcglab-trace 1\\ncpus 2\\ncgroup 1 0\\ncharge 0 1 3\\n")
>>> out = replay(t)
>>> out["counters"], out["stocks"][0][0]
({'walks': 1, 'stock_hits': 0, 'evictions': 0}, [1, 61])
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from memcglab.events import CALL_EVENTS, OBJ_ERA_EVENTS, V1_EVENTS
from memcglab.kernel.memcontrol import GFP_KERNEL, MemcgCharge, MemcgEvent
from memcglab.kernel.memcontrol_v1 import (
    memcg_kmem_charge_page,
    memcg_kmem_uncharge_page,
    uncharge_batch_kmem,
    v1_json,
    v1_violation,
)
from memcglab.kernel.observer import Observer
from memcglab.kernel.page_counter import page_counter_set_max
from memcglab.kernel.percpu import local_lock, local_unlock
from memcglab.models import (
    build_model,
    check_cgroup_version,
    check_obj_stock,
    check_options,
    check_refill,
    nested_allowed,
    per_memcg_bound,
    stock_slots,
)
from memcglab.registry import resolve_policy
from memcglab.trace import (
    OP_CGROUP,
    OP_CHARGE,
    OP_CPU_DEAD,
    OP_DRAIN_ALL,
    OP_NAMES,
    OP_OBJ_CHARGE,
    OP_OBJ_UNCHARGE,
    OP_OFFLINE,
    OP_SET_MAX,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
    Trace,
    validate,
)

__all__ = ["InvariantViolation", "Replayer", "replay", "dumps", "conservation_violation",
           "OBJ_COUNTERS"]

#: the obj_counters of the output (docs/trace-extensions.md), besides failed_obj_charges
OBJ_COUNTERS = ("obj_hits", "obj_misses", "obj_refills", "obj_drains", "obj_evictions",
                "obj_flushes")


class InvariantViolation(Exception):
    """``--check`` found a broken invariant after operation ``index`` (trace ``line``)."""

    def __init__(self, index: int, line: int, message: str) -> None:
        super().__init__(message)
        self.index, self.line, self.message = index, line, message


def conservation_violation(machine: MemcgCharge, held: dict[int, int],
                           held_kmem: dict[int, int] | None = None) -> str | None:
    """Describe the first memcg whose usage is not held + stocked + kmem + children, the
    first stock slot out of bounds, or the first objcg whose bytes do not add up; or None.

    ``kmem`` (the pages charged through objcgs, kernel notes §11.11) is 0 in a trace
    without object operations, so the message then is the contract's. ``held_kmem``
    (the page-level kmem pages among ``held``, cgroup v1 only) enters the v1 check.
    """
    stocked = machine.stocked_pages()
    kmem = machine.obj.kmem_pages() if machine.obj is not None else {}
    for memcg_id, memcg in machine.memcgs.items():
        children = sum(c.memory.usage for c in memcg.children)
        k = kmem.get(memcg_id, 0)
        expect = held.get(memcg_id, 0) + stocked.get(memcg_id, 0) + k + children
        if memcg.memory.usage != expect:
            return (f"memcg {memcg_id}: usage {memcg.memory.usage} != held "
                    f"{held.get(memcg_id, 0)} + stocked {stocked.get(memcg_id, 0)} "
                    + (f"+ kmem {k} " if k else "") + f"+ children {children}")
    problem = machine.slot_violation()
    if problem is None and machine.obj is not None:
        problem = machine.obj.violation()
    if problem is None and machine.cgroup_version == 1:
        problem = v1_violation(machine, held_kmem)
    return problem


class Replayer:
    """One replay in progress; feed it operations with :meth:`run`, read :meth:`result`."""

    def __init__(self, cpus: int, model: str = "multi", slots: int = 7, seed: int = 0,
                 batch: int = 64, check: bool = False, observer: Observer | None = None,
                 policy: str | None = None, refill: str = "always", nodes: int = 1,
                 obj_stock: str | None = None, cgroup_version: int = 2,
                 swap: bool = False) -> None:
        check_options(model, slots, seed, batch)
        self.model, self.slots, self.seed, self.batch = model, slots, seed, batch
        self.refill, self.policy, self.obj_stock = refill, policy, obj_stock
        self.check = check
        self.cgroup_version, self.swap = cgroup_version, swap
        self.observer = observer if observer is not None else Observer()
        self.machine = build_model(model, cpus, slots, seed, batch, self.observer, policy,
                                   refill, nodes, obj_stock, cgroup_version, swap)
        self.held: dict[int, int] = {0: 0}
        # docs/trace-extensions.md, "Page-level kmem charges": on cgroup v1, the pages
        # of held that a ``kmem`` charge took (never the root's; always 0 on v2)
        self.held_kmem: dict[int, int] = {0: 0}
        self.ops = self.failed_charges = self.set_max_busy = self.short_uncharges = 0
        self.counts = {"charges": 0, "uncharges": 0, "uncharges_direct": 0,
                       "obj_charges": 0, "obj_uncharges": 0}
        # docs/trace-extensions.md: the live objects of each memcg, oldest first, as
        # [objcg, bytes] runs (a free releases the oldest bytes), and the extra keys
        self.live: dict[int, deque] = {}
        self.obj_used = False
        self.failed_obj_charges = self.short_obj_uncharges = 0

    def run(self, trace: Trace) -> None:
        """Replay every operation of ``trace`` (already validated) in order."""
        for index, row in enumerate(trace.ops.tolist()):
            op, nested, cpu, memcg_id, parent, arg, line, irq, kmem = row
            self.machine.in_task = not irq  # in_task() for this operation
            if nested and cpu >= 0:
                self._nested(op, cpu, memcg_id, parent, arg, kmem)
            else:
                self.step(op, cpu, memcg_id, parent, arg, kmem)
            self.machine.in_task = True
            if self.check:
                problem = conservation_violation(self.machine, self.held, self.held_kmem)
                if problem is not None:
                    name = OP_NAMES[op]
                    raise InvariantViolation(index, line, f"conservation broken after "
                                                          f"operation {index + 1} ({name}): "
                                                          f"{problem}")

    def _nested(self, op: int, cpu: int, memcg_id: int, parent: int, arg: int,
                kmem: int = 0) -> None:
        # An interrupt arriving while this CPU is inside the stock's local lock: the
        # interrupted context holds the lock(s), so every local_trylock fails.
        locks = self.machine.stock_locks(cpu)
        for lock in locks:
            local_lock(lock)
        try:
            self.step(op, cpu, memcg_id, parent, arg, kmem)
        finally:
            for lock in locks:
                local_unlock(lock)

    def step(self, op: int, cpu: int, memcg_id: int, parent: int, arg: int,
             kmem: int = 0) -> None:
        """One operation, as the contract defines it; ``kmem`` is the row's kmem field
        (docs/trace-extensions.md: read on cgroup v1 only, and never for the root)."""
        m = self.machine
        self.ops += 1
        if kmem and (self.cgroup_version != 1 or memcg_id == 0):
            kmem = 0  # v2 walks no memcg->kmem; the kernel charges no kmem page to the root
        if op == OP_CGROUP:
            memcg = m.mem_cgroup_css_alloc(memcg_id, m.memcgs[parent], arg)
            m.mem_cgroup_css_online(memcg)
            self.held[memcg_id] = 0
            self.held_kmem[memcg_id] = 0
        elif op == OP_CHARGE:
            self.counts["charges"] += 1
            memcg = m.memcgs[memcg_id]
            if kmem:
                ret = memcg_kmem_charge_page(m, memcg, GFP_KERNEL, arg, cpu)
            else:
                ret = m.try_charge(memcg, GFP_KERNEL, arg, cpu)
            if ret == 0:
                self.held[memcg_id] += arg
                self.held_kmem[memcg_id] += kmem
            else:
                self.failed_charges += 1
        elif op in (OP_UNCHARGE, OP_UNCHARGE_DIRECT):
            held, held_kmem = self.held[memcg_id], self.held_kmem[memcg_id]
            # kmem pages come out of the held kmem pages, the others out of the rest;
            # each part is clipped to what is held of its kind (short_uncharges)
            release_kmem = min(kmem, held_kmem)
            release = release_kmem + min(arg - kmem, held - held_kmem)
            self.short_uncharges += arg - release
            if release:
                self.held[memcg_id] = held - release
                self.held_kmem[memcg_id] = held_kmem - release_kmem
                self.counts["uncharges" if op == OP_UNCHARGE else "uncharges_direct"] += 1
                memcg = m.memcgs[memcg_id]
                if op == OP_UNCHARGE and kmem:
                    memcg_kmem_uncharge_page(m, memcg, release, cpu)
                elif op == OP_UNCHARGE:
                    m.mem_cgroup_sk_uncharge(memcg, release, cpu)
                elif kmem:
                    uncharge_batch_kmem(m, memcg, release, release_kmem, cpu)
                else:
                    m.memcg_uncharge(memcg, release, cpu)
        elif op == OP_OBJ_CHARGE or op == OP_OBJ_UNCHARGE:
            self._obj(op, cpu, m.memcgs[memcg_id], arg)
        elif op == OP_DRAIN_ALL:
            m.drain_all_stock(m.memcgs[memcg_id], cpu)
        elif op == OP_CPU_DEAD:
            m.memcg_hotplug_cpu_dead(cpu)
        elif op == OP_SET_MAX:
            if page_counter_set_max(m.memcgs[memcg_id].memory, arg):
                self.set_max_busy += 1
        elif op == OP_OFFLINE:
            m.mem_cgroup_css_offline(m.memcgs[memcg_id])
        else:
            raise ValueError(f"unknown operation code {op}")

    def _obj(self, op: int, cpu: int, memcg, nbytes: int) -> None:
        """obj_charge: obj_cgroup_charge() of the objcg of ``memcg`` on ``cpu``'s node;
        obj_uncharge: obj_cgroup_uncharge() of the oldest live bytes (clipped)."""
        self.obj_used = True
        obj = self.machine.obj
        live = self.live.setdefault(memcg.id, deque())
        if op == OP_OBJ_CHARGE:
            self.counts["obj_charges"] += 1
            objcg = obj.objcg(memcg, cpu)
            if obj.obj_cgroup_charge(objcg, GFP_KERNEL, nbytes, cpu):
                self.failed_obj_charges += 1
                return
            objcg.live_bytes += nbytes
            if live and live[-1][0] is objcg:
                live[-1][1] += nbytes
            else:
                live.append([objcg, nbytes])
            return
        left = nbytes
        while left and live:
            objcg, have = live[0]
            take = min(left, have)
            if take == have:
                live.popleft()
            else:
                live[0][1] = have - take
            left -= take
            objcg.live_bytes -= take
            self.counts["obj_uncharges"] += 1
            obj.obj_cgroup_uncharge(objcg, take, cpu)
        self.short_obj_uncharges += left

    def result(self) -> dict[str, Any]:
        """The contract's output object."""
        m, obs = self.machine, self.observer
        out = {
            "model": self.model, "slots": self.slots, "batch": self.batch, "seed": self.seed,
            "ops": self.ops,
            "failed_charges": self.failed_charges,
            "set_max_busy": self.set_max_busy,
            "short_uncharges": self.short_uncharges,
            "warnings": obs.warnings,
            "memcgs": {
                str(i): {"usage": c.memory.usage, "watermark": c.memory.watermark,
                         "max_events": c.memory_events_local[MemcgEvent.MEMCG_MAX],
                         "online": c.online}
                for i, c in m.memcgs.items()
            },
            "stocks": m.stocks_json(),
            "counters": {"walks": obs.walks, "stock_hits": obs.stock_hits,
                         "evictions": obs.evictions},
        }
        if self.refill != "always":  # docs/trace-extensions.md: only when not the default
            out["refill"] = self.refill
        if self.policy is not None:  # docs/extending.md: only when a policy was given
            out["policy"] = self.policy
        if self.obj_stock is not None:  # docs/trace-extensions.md: only when chosen
            out["obj_stock"] = self.obj_stock
        if self.obj_used:  # docs/trace-extensions.md: only with object operations
            calls = obs.calls
            out["obj_stocks"] = m.obj.stocks_json()
            out["objcgs"] = m.obj.objcgs_json()
            out["obj_counters"] = {name: calls.get(name, 0) for name in OBJ_COUNTERS}
            out["obj_counters"]["failed_obj_charges"] = self.failed_obj_charges
            out["short_obj_uncharges"] = self.short_obj_uncharges
        if self.cgroup_version == 1:  # docs/trace-extensions.md: only on cgroup v1
            out["cgroup_version"] = 1
            out["swap"] = self.swap
            out["v1_counters"] = {name: obs.calls.get(name, 0) for name in V1_EVENTS}
            out["v1_memcgs"] = v1_json(m, self.swap)
        return out


def replay(trace: Trace, model: str = "multi", slots: int = 7, seed: int = 0, batch: int = 64,
           check: bool = False, observer: Observer | None = None,
           policy: str | None = None, refill: str = "always",
           counts: dict[str, int] | None = None, obj_stock: str | None = None,
           cgroup_version: int = 2, swap: bool = False) -> dict[str, Any]:
    """Replay ``trace`` through ``model``; return the contract's JSON object.

    ``policy`` swaps a ``multi*`` model's victim policy for any registered one
    (:mod:`memcglab.registry`; see :func:`memcglab.models.build_model`) and adds a
    ``policy`` key to the output (docs/extending.md). ``refill`` is the scenario contract's
    design key (``always``, ``not-in-irq``, ``never``); any value but ``always``
    adds a ``refill`` key to the output (docs/trace-extensions.md). A ``counts`` dict
    is filled with what the JSON does not carry: the operations replayed
    (``charges``, ``uncharges``, ``uncharges_direct``: those that released pages,
    ``obj_charges``, ``obj_uncharges``) and the calls of the charge-path functions
    and obj-stock events (:data:`memcglab.events.CALL_EVENTS`). ``obj_stock`` runs an
    obj-stock era of :data:`memcglab.models.OBJ_STOCK_ERAS` beside the model, adds an
    ``obj_stock`` key to the output, and adds that era's own events
    (:data:`memcglab.events.OBJ_ERA_EVENTS`) to ``counts``. ``cgroup_version=1`` runs
    the machine on cgroup v1 (its kmem counter; with ``swap=True`` its memsw counter,
    :mod:`memcglab.kernel.memcontrol_v1`), adds the keys ``cgroup_version``, ``swap``,
    ``v1_counters`` and ``v1_memcgs`` to the output and the walks of
    :data:`memcglab.events.V1_EVENTS` to ``counts`` (docs/trace-extensions.md).

    >>> from memcglab.trace import parse_text
    >>> c = {}
    >>> t = parse_text("memcglab-trace 1\\ncpus 1\\ncgroup 1 0\\ncharge 0 1 3\\nuncharge 0 1 3\\n")
    >>> replay(t, counts=c)["counters"]["walks"], c["charges"], c["uncharges"], c["refill_stock"]
    (1, 1, 1, 2)

    Raises ValueError for invalid options, :class:`~memcglab.trace.TraceError` for
    an invalid trace (``single`` also rejects ``nested``), and
    :class:`InvariantViolation` when ``check`` finds a broken invariant.
    """
    check_options(model, slots, seed, batch)
    check_refill(refill)
    resolve_policy(model, policy)  # argument errors before trace errors
    check_obj_stock(model, obj_stock)
    check_cgroup_version(model, cgroup_version, swap)
    validate(trace, single=not nested_allowed(model), slots=stock_slots(model, slots),
             per_memcg=per_memcg_bound(model))
    replayer = Replayer(trace.cpus, model, slots, seed, batch, check, observer, policy, refill,
                        trace.nodes, obj_stock, cgroup_version, swap)
    replayer.run(trace)
    if counts is not None:
        counts.update(replayer.counts)
        counts.update({name: replayer.observer.calls.get(name, 0) for name in CALL_EVENTS})
        if obj_stock is not None:
            counts.update({name: replayer.observer.calls.get(name, 0)
                           for name in OBJ_ERA_EVENTS})
        if cgroup_version == 1:
            counts.update({name: replayer.observer.calls.get(name, 0) for name in V1_EVENTS})
    return replayer.result()


def dumps(obj: dict[str, Any]) -> str:
    """The contract's byte-exact rendering: sorted keys, no spaces, one newline."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n"
