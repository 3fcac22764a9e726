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
from typing import Any

from memcglab.kernel.memcontrol import GFP_KERNEL, MemcgCharge, MemcgEvent
from memcglab.kernel.observer import Observer
from memcglab.kernel.page_counter import page_counter_set_max
from memcglab.kernel.percpu import local_lock, local_unlock
from memcglab.models import build_model, check_options, check_refill, stock_slots
from memcglab.trace import (
    OP_CGROUP,
    OP_CHARGE,
    OP_CPU_DEAD,
    OP_DRAIN_ALL,
    OP_NAMES,
    OP_OFFLINE,
    OP_SET_MAX,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
    Trace,
    validate,
)

__all__ = ["InvariantViolation", "Replayer", "replay", "dumps", "conservation_violation"]


class InvariantViolation(Exception):
    """``--check`` found a broken invariant after operation ``index`` (trace ``line``)."""

    def __init__(self, index: int, line: int, message: str) -> None:
        super().__init__(message)
        self.index, self.line, self.message = index, line, message


def conservation_violation(machine: MemcgCharge, held: dict[int, int]) -> str | None:
    """Describe the first memcg whose usage is not held + stocked + children; or None."""
    stocked = machine.stocked_pages()
    for memcg_id, memcg in machine.memcgs.items():
        children = sum(c.memory.usage for c in memcg.children)
        expect = held.get(memcg_id, 0) + stocked.get(memcg_id, 0) + children
        if memcg.memory.usage != expect:
            return (f"memcg {memcg_id}: usage {memcg.memory.usage} != held "
                    f"{held.get(memcg_id, 0)} + stocked {stocked.get(memcg_id, 0)} "
                    f"+ children {children}")
    return machine.slot_violation()


class Replayer:
    """One replay in progress; feed it operations with :meth:`run`, read :meth:`result`."""

    def __init__(self, cpus: int, model: str = "multi", slots: int = 7, seed: int = 0,
                 batch: int = 64, check: bool = False, observer: Observer | None = None,
                 policy: str | None = None, refill: str = "always") -> None:
        check_options(model, slots, seed, batch)
        self.model, self.slots, self.seed, self.batch = model, slots, seed, batch
        self.refill = refill
        self.check = check
        self.observer = observer if observer is not None else Observer()
        self.machine = build_model(model, cpus, slots, seed, batch, self.observer, policy,
                                   refill)
        self.held: dict[int, int] = {0: 0}
        self.ops = self.failed_charges = self.set_max_busy = self.short_uncharges = 0

    def run(self, trace: Trace) -> None:
        """Replay every operation of ``trace`` (already validated) in order."""
        for index, row in enumerate(trace.ops.tolist()):
            op, nested, cpu, memcg_id, parent, arg, line, irq = row
            self.machine.in_task = not irq  # in_task() for this operation
            if nested and cpu >= 0:
                self._nested(op, cpu, memcg_id, parent, arg)
            else:
                self.step(op, cpu, memcg_id, parent, arg)
            self.machine.in_task = True
            if self.check:
                problem = conservation_violation(self.machine, self.held)
                if problem is not None:
                    name = OP_NAMES[op]
                    raise InvariantViolation(index, line, f"conservation broken after "
                                                          f"operation {index + 1} ({name}): "
                                                          f"{problem}")

    def _nested(self, op: int, cpu: int, memcg_id: int, parent: int, arg: int) -> None:
        # An interrupt arriving while this CPU is inside the stock's local lock: the
        # interrupted context holds the lock(s), so every local_trylock fails.
        locks = self.machine.stock_locks(cpu)
        for lock in locks:
            local_lock(lock)
        try:
            self.step(op, cpu, memcg_id, parent, arg)
        finally:
            for lock in locks:
                local_unlock(lock)

    def step(self, op: int, cpu: int, memcg_id: int, parent: int, arg: int) -> None:
        """One operation, as the contract defines it."""
        m = self.machine
        self.ops += 1
        if op == OP_CGROUP:
            memcg = m.mem_cgroup_css_alloc(memcg_id, m.memcgs[parent], arg)
            m.mem_cgroup_css_online(memcg)
            self.held[memcg_id] = 0
        elif op == OP_CHARGE:
            if m.try_charge(m.memcgs[memcg_id], GFP_KERNEL, arg, cpu) == 0:
                self.held[memcg_id] += arg
            else:
                self.failed_charges += 1
        elif op in (OP_UNCHARGE, OP_UNCHARGE_DIRECT):
            held = self.held[memcg_id]
            release = min(arg, held)
            self.short_uncharges += arg - release
            if release:
                self.held[memcg_id] = held - release
                if op == OP_UNCHARGE:
                    m.mem_cgroup_sk_uncharge(m.memcgs[memcg_id], release, cpu)
                else:
                    m.memcg_uncharge(m.memcgs[memcg_id], release, cpu)
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
        return out


def replay(trace: Trace, model: str = "multi", slots: int = 7, seed: int = 0, batch: int = 64,
           check: bool = False, observer: Observer | None = None,
           policy: str | None = None, refill: str = "always") -> dict[str, Any]:
    """Replay ``trace`` through ``model``; return the contract's JSON object.

    ``policy`` swaps a ``multi*`` model's victim policy for any registered one
    (see :func:`memcglab.models.build_model`). ``refill`` is the scenario contract's
    design key (``always``, ``not-in-irq``, ``never``); any value but ``always``
    adds a ``refill`` key to the output (docs/trace-extensions.md).

    Raises ValueError for invalid options, :class:`~memcglab.trace.TraceError` for
    an invalid trace (``single`` also rejects ``nested``), and
    :class:`InvariantViolation` when ``check`` finds a broken invariant.
    """
    check_options(model, slots, seed, batch)
    check_refill(refill)
    validate(trace, single=model == "single", slots=stock_slots(model, slots))
    replayer = Replayer(trace.cpus, model, slots, seed, batch, check, observer, policy, refill)
    replayer.run(trace)
    return replayer.result()


def dumps(obj: dict[str, Any]) -> str:
    """The contract's byte-exact rendering: sorted keys, no spaces, one newline."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n"
