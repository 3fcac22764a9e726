"""cgroup v1's extra counters on the charge path: ``memcg->kmem`` and ``memcg->memsw``.

On cgroup v1 (``!cgroup_subsys_on_dfl(memory_cgrp_subsys)``; the robot's 2020-21 jobs
ran on it) every memcg has two more page_counters that the charge path walks:

* ``memcg->kmem`` (kmem.usage_in_bytes) takes every page-level kernel-memory charge and
  uncharge, with **no per-CPU stock**: each one walks the counter through every level.
  6.x: ``memcg1_account_kmem()`` of mm/memcontrol-v1.c (torvalds/linux, read at the
  2024 split; the same body as ``memcg_account_kmem()`` of v5.16-v6.10 in
  mm/memcontrol.c), a ``page_counter_charge`` or ``page_counter_uncharge`` of
  ``memcg->kmem``, called beside every ``MEMCG_KMEM`` stat update of the page side
  (``obj_cgroup_charge_pages``, ``obj_cgroup_uncharge_pages``, ``drain_obj_stock``,
  ``memcg_uncharge_kmem``). v5.x: ``__memcg_kmem_charge()`` (torvalds/linux
  mm/memcontrol.c 5458985533ba) and v5.13's ``obj_cgroup_charge_pages()`` charge with
  ``page_counter_try_charge(&memcg->kmem, ...)`` after ``try_charge`` and call
  ``cancel_charge`` when it fails; ``__memcg_kmem_uncharge()`` and v5.13's
  ``obj_cgroup_uncharge_pages()`` ``page_counter_uncharge(&memcg->kmem, ...)`` first.
  v5.4-v5.8's ``__memcg_kmem_charge_memcg`` / ``__memcg_kmem_charge`` have the v5.x
  form too.
* ``memcg->memsw`` (memory+swap), with ``do_memsw_account()``: v1 with swap
  accounting. ``try_charge_memcg`` (``try_charge`` in v5.x) charges it before
  ``memory``, for every batch (:meth:`memcglab.kernel.try_charge.ChargePath.charge_counters`),
  and ``memcg_uncharge`` (v5.x: ``drain_stock``, ``cancel_charge``, ``uncharge_batch``)
  uncharges it after ``memory``. The memcg stock holds pages charged to both.

Neither counter can refuse a charge in a replay: ``kmem.limit_in_bytes`` is deprecated
("memcg, kmem: further deprecate kmem.limit_in_bytes", Shakeel Butt, 2021: writes have
no effect) and was never set by a trace, and a trace sets only ``memory.max`` (the
contract's ``max=`` and ``set_max``), so ``memsw.max`` stays ``PAGE_COUNTER_MAX``. The
failure branches are ported all the same, in the kernel's order.

Not ported: v1's socket counter ``memcg->tcpmem`` (``memcg1_charge_skmem``): the trace's
``uncharge`` is the contract's refill_stock uncharge (socket *and* objcg), and no
operation charges a socket, so on v1 it keeps its contract meaning (refill_stock).
The page_counter-stock models (``pcstock``, ``pcstock-v4``) have a memsw stock of their
own on v1 (RFC 6/8; v4 3/5), which is not ported: they are refused on v1.

Simulation-only: the walks over these counters are counted apart from the contract's
``walks`` (which counts walks over the memory counter): :class:`V1CounterObserver`
counts them as the events ``kmem_walks`` and ``memsw_walks``
(:data:`memcglab.events.V1_EVENTS`); an underflow warns as any page_counter does.
"""

from __future__ import annotations

from typing import Any

from memcglab.kernel.memcontrol_h import MemCgroup
from memcglab.kernel.page_counter import (
    ENOMEM,
    PageCounter,
    page_counter_charge,
    page_counter_try_charge,
    page_counter_uncharge,
)

__all__ = ["CGROUP_VERSIONS", "V1CounterObserver", "check_cgroup", "cgroup_subsys_on_dfl",
           "do_memsw_account", "memcg1_account_kmem", "memcg1_kmem_try_charge",
           "memcg_kmem_charge_page", "memcg_kmem_uncharge_page", "uncharge_batch_kmem",
           "v1_json", "v1_violation"]

#: the scenario contract's ``[cgroups] version``
CGROUP_VERSIONS = (1, 2)


def check_cgroup(cgroup_version: int, swap: bool, counters_view: bool = False) -> None:
    """Validate the cgroup options; ``counters_view`` is whether the model is a
    page_counter-stock model (its v1 memsw stock is not ported)."""
    if cgroup_version not in CGROUP_VERSIONS or isinstance(cgroup_version, bool):
        raise ValueError(f"cgroup_version={cgroup_version!r}: must be 1 or 2")
    if swap not in (True, False):
        raise ValueError(f"swap={swap!r}: must be true or false")
    if swap and cgroup_version != 1:
        raise ValueError("swap=True: the memsw counter is cgroup v1's (cgroup_version=1); "
                         "cgroup v2's swap counter is not on the charge path")
    if cgroup_version == 1 and counters_view:
        raise ValueError("cgroup_version=1: the page_counter-stock models (pcstock, "
                         "pcstock-v4) keep a memsw stock of their own on v1 (RFC 6/8, v4 "
                         "3/5), which is not ported; use single or a multi* model")


class V1CounterObserver:
    """The walk hook of a memcg's kmem or memsw counter (simulation only): a walk is
    counted as the event ``name`` (not in the contract's ``walks``); an underflow is a
    warning as on every page_counter."""

    __slots__ = ("base", "name")

    def __init__(self, base: Any, name: str) -> None:
        self.base, self.name = base, name

    def walk(self, counter: PageCounter, nr_pages: int, kind: str) -> None:
        self.base.call(self.name)
        if self.base.log is not None:
            self.base.log.append((self.name[:-1], counter.owner.id, nr_pages, kind))

    def warn(self, counter: PageCounter, new: int, nr_pages: int) -> None:
        self.base.warn(counter, new, nr_pages)

    def stock_hit(self, cpu: int, memcg_id: int, nr_pages: int) -> None:
        pass  # these counters have no stock

    def note(self, *event: object) -> None:
        self.base.note(*event)


def cgroup_subsys_on_dfl(machine) -> bool:
    """``cgroup_subsys_on_dfl(memory_cgrp_subsys)``: the memory controller is on cgroup v2."""
    return machine.cgroup_version == 2


def do_memsw_account(machine) -> bool:
    """Port of do_memsw_account(): ``!cgroup_subsys_on_dfl(memory_cgrp_subsys)`` (and, in
    v5.x, ``do_swap_account``: swap accounting on), i.e. v1 with swap."""
    return not cgroup_subsys_on_dfl(machine) and machine.swap


def memcg1_account_kmem(machine, memcg: MemCgroup, nr_pages: int) -> None:
    """Port of memcg1_account_kmem() (mm/memcontrol-v1.c): on v1, charge (``nr_pages >
    0``) or uncharge ``memcg->kmem``; one walk either way, no stock."""
    if not cgroup_subsys_on_dfl(machine):
        if nr_pages > 0:
            page_counter_charge(memcg.kmem_counter, nr_pages)
        else:
            page_counter_uncharge(memcg.kmem_counter, -nr_pages)


def memcg1_kmem_try_charge(machine, memcg: MemCgroup, nr_pages: int, cpu: int) -> int:
    """The v5.x kmem step after ``try_charge`` succeeded (``__memcg_kmem_charge`` of
    5458985533ba; ``obj_cgroup_charge_pages`` of v5.13): 0, or -ENOMEM after
    ``cancel_charge`` when ``memcg->kmem`` refuses.

    ``gfp`` is GFP_KERNEL in a replay, so the ``__GFP_NOFAIL`` forced charge is not
    taken; ``cancel_charge`` (root check, then ``page_counter_uncharge`` of memory and,
    with do_memsw_account(), memsw) is :meth:`ChargePath.memcg_uncharge` behind the root
    check. Unreachable in a replay (see the module note), ported for fidelity.
    """
    if not cgroup_subsys_on_dfl(machine):
        ok, _counter = page_counter_try_charge(memcg.kmem_counter, nr_pages, cpu)
        if not ok:
            if memcg is not machine.root_mem_cgroup:  # cancel_charge(memcg, nr_pages)
                machine.memcg_uncharge(memcg, nr_pages, cpu)
            return -ENOMEM
    return 0


def memcg_kmem_charge_page(machine, memcg: MemCgroup, gfp, nr_pages: int, cpu: int) -> int:
    """The trace's ``charge ... kmem`` on v1: the memcg side of
    ``__memcg_kmem_charge_page()`` for a non-root memcg (the kernel charges no kmem page
    to the root: v5.x tests ``!mem_cgroup_is_root(memcg)``, 6.x's current_obj_cgroup()
    finds no objcg there; a trace cannot ``charge`` the root). 0 or -ENOMEM.

    6.x (every era but the v5.x obj-stock ones): ``obj_cgroup_charge_pages()`` =
    ``try_charge_memcg`` then (MEMCG_KMEM and) ``memcg1_account_kmem(memcg, +nr)``.
    v5.x (``machine.obj.kmem_page_v5``): ``__memcg_kmem_charge()`` of 5458985533ba =
    ``try_charge``, then ``page_counter_try_charge(&memcg->kmem)``, ``cancel_charge``
    if it refuses. The MEMCG_KMEM stat of these pages is not kept: the replay counts
    them as held kmem pages instead (``Replayer.held_kmem``).
    """
    ret = machine.try_charge(memcg, gfp, nr_pages, cpu)  # non-root: try_charge_memcg
    if ret:
        return ret
    if machine.obj is not None and machine.obj.kmem_page_v5:
        return memcg1_kmem_try_charge(machine, memcg, nr_pages, cpu)
    memcg1_account_kmem(machine, memcg, nr_pages)
    return 0


def memcg_kmem_uncharge_page(machine, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
    """The trace's ``uncharge ... kmem`` on v1: ``__memcg_kmem_uncharge_page()`` ->
    ``obj_cgroup_uncharge_pages()`` (6.x: ``memcg1_account_kmem(memcg, -nr)``; v5.x's
    ``__memcg_kmem_uncharge``: ``page_counter_uncharge(&memcg->kmem)``), then the
    trace's refill_stock uncharge, in that order in both eras."""
    memcg1_account_kmem(machine, memcg, -nr_pages)
    machine.mem_cgroup_sk_uncharge(memcg, nr_pages, cpu)


def uncharge_batch_kmem(machine, memcg: MemCgroup, nr_pages: int, nr_kmem: int,
                        cpu: int) -> None:
    """The trace's ``uncharge_direct ... kmem=K``: ``uncharge_batch()`` with
    ``ug->nr_kmem``: memory (and memsw) first, then, when ``nr_kmem`` and on v1,
    ``memcg->kmem`` (5458985533ba: ``page_counter_uncharge(&ug->memcg->kmem)`` when
    ``!cgroup_subsys_on_dfl``; 6.x: ``memcg1_account_kmem(ug->memcg, -ug->nr_kmem)``)."""
    machine.memcg_uncharge(memcg, nr_pages, cpu)
    if nr_kmem:
        memcg1_account_kmem(machine, memcg, -nr_kmem)


def v1_json(machine, swap: bool) -> dict[str, dict[str, int]]:
    """``v1_memcgs`` of the output (docs/trace-extensions.md): per memcg, its kmem counter
    and, with ``swap``, its memsw counter."""
    out: dict[str, dict[str, int]] = {}
    for memcg_id, memcg in machine.memcgs.items():
        entry = {"kmem_usage": memcg.kmem_counter.usage,
                 "kmem_watermark": memcg.kmem_counter.watermark}
        if swap:
            entry["memsw_usage"] = memcg.memsw.usage
            entry["memsw_watermark"] = memcg.memsw.watermark
        out[str(memcg_id)] = entry
    return out


def v1_violation(machine, held_kmem: dict[int, int] | None = None) -> str | None:
    """The v1 part of ``--check``, or None: for every memcg M, in creation order,
    ``kmem(M) = MEMCG_KMEM(M) + held kmem pages(M) + Σ kmem(children)``
    (memcg1_account_kmem() runs beside every MEMCG_KMEM update, with the same memcg and
    count; ``held_kmem`` are the trace's page-level kmem pages, ``charge ... kmem``)
    and, with do_memsw_account(), ``memsw(M) = memory(M)`` (every memory charge,
    stocked or not, is a memsw charge and nothing swaps)."""
    v1 = not cgroup_subsys_on_dfl(machine)
    held_kmem = held_kmem or {}
    for memcg_id, memcg in machine.memcgs.items():
        if v1:
            children = sum(c.kmem_counter.usage for c in memcg.children)
            pages = held_kmem.get(memcg_id, 0)
            if memcg.kmem_counter.usage != memcg.kmem + pages + children:
                return (f"memcg {memcg_id}: kmem counter {memcg.kmem_counter.usage} != "
                        f"MEMCG_KMEM {memcg.kmem} + "
                        + (f"held kmem pages {pages} + " if pages else "")
                        + f"children {children}")
        if do_memsw_account(machine) and memcg.memsw.usage != memcg.memory.usage:
            return (f"memcg {memcg_id}: memsw {memcg.memsw.usage} != memory "
                    f"{memcg.memory.usage}")
    return None
