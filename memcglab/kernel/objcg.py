"""Object cgroups and the page side of the obj stock: what every era shares.

``struct obj_cgroup`` and the functions that move whole pages between an objcg
and its memcg, as in mm/memcontrol.c: ``obj_cgroup_charge_pages`` (charge through
``try_charge_memcg``), ``obj_cgroup_uncharge_pages`` (whole pages back through
``refill_stock``; v4 4/5: ``memcg_uncharge``), ``memcg_uncharge_kmem`` (2026 tree),
and ``__obj_cgroup_charge`` (Johannes Weiner, "mm: memcg: simplify objcg charge size
and stock remainder math", 2 Mar 2026). The byte stock of each era is a subclass
(:mod:`~memcglab.kernel.obj_stock_v615`, :mod:`~memcglab.kernel.obj_stock_pcp`,
:mod:`~memcglab.kernel.obj_stock_multi`) attached to a machine as ``machine.obj``.

Sources: 6952350/linux-6.18.y mm/memcontrol.c 312d9602fe3e (E3) and
linux-mm/linux-mm mm/memcontrol.c 030321517fd4 (2026); v6.15 from the "before"
side of "[PATCH v2 0/9] memcg: cleanup per-cpu stock" (Shakeel Butt, 3 Apr 2025,
20250404013913.1663035-1-shakeel.butt@linux.dev).

Differences from the kernel, all deliberate:

* Which objcg an operation uses is given by the trace (its memcg, and in the 2026
  tree the node of its CPU), not found by ``current_obj_cgroup``; ``obj_charge`` of
  the root is a trace error, as the slab hooks return before charging it.
* Reference counts are not kept: no trace operation can drop an objcg's last
  reference (a trace cannot free an offlined memcg's objects), so
  ``obj_cgroup_release`` is unreachable. Offlining reparents objcgs as the kernel
  does (``memcg_reparent_objcgs``, before the offline's drain_all_stock), so later
  page releases of a dead memcg's objcg go to its parent.
* ``atomic_t nr_charged_bytes`` is kept exact; the kernel's would wrap past 2^31 - 1
  bytes, which takes about 500,000 contended operations of one objcg with no switch.
* ``kmem_pages`` and ``live_bytes`` are the replay's bookkeeping of an objcg (its net
  ``MEMCG_KMEM`` pages and the bytes of the trace's live objects), and
  ``MemCgroup.obj_pages`` the pages objcgs hold in a memcg's counter, for ``--check``.
"""

from __future__ import annotations

from dataclasses import dataclass

from memcglab.kernel.memcontrol_h import Gfp, MemCgroup
from memcglab.kernel.memcontrol_v1 import memcg1_account_kmem, memcg1_kmem_try_charge
from memcglab.kernel.page_counter import PAGE_SIZE

__all__ = ["PAGE_SHIFT", "ObjCgroup", "ObjCgroupPath", "PAGE_ALIGN"]

PAGE_SHIFT = 12


def PAGE_ALIGN(size: int) -> int:  # noqa: N802 - the kernel's macro
    """PAGE_ALIGN(): ``size`` rounded up to a whole page."""
    return (size + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1)


@dataclass(slots=True, eq=False)
class ObjCgroup:
    """``struct obj_cgroup``: its memcg and ``atomic_t nr_charged_bytes`` (plus bookkeeping).

    ``node`` is the node of a per-node objcg (2026 tree, "mm: memcontrol: convert
    objcg to be per-memcg per-node type"); 0 in the eras with one objcg per memcg.
    """

    memcg: MemCgroup  # objcg->memcg: rewritten to the parent when reparented
    node: int = 0
    owner: MemCgroup | None = None  # simulation: the memcg it was allocated for
    nr_charged_bytes: int = 0  # atomic_t
    kmem_pages: int = 0  # simulation: net MEMCG_KMEM pages charged for this objcg
    live_bytes: int = 0  # simulation: bytes of live objects of the trace

    def __repr__(self) -> str:
        return f"ObjCgroup({self.memcg.id}, node {self.node})"


class ObjCgroupPath:
    """The obj side of one machine: its objcgs and the page moves every era shares.

    ``m`` is the machine (:class:`memcglab.kernel.memcontrol.MemcgCharge`);
    ``per_node`` says whether objcgs are per memcg per node (the 2026 tree);
    ``node_of`` maps a CPU to its node. Subclasses port one era's byte stock.
    """

    #: slots per CPU of this era's byte stock
    nr_obj_stock = 1
    #: cgroup v1: the v5.x form of the kmem charge (``page_counter_try_charge`` of
    #: ``memcg->kmem`` after try_charge, ``cancel_charge`` on failure) instead of 6.x's
    #: memcg1_account_kmem() (memcglab.kernel.memcontrol_v1)
    kmem_try_charge = False
    #: the era's page-level kmem charge (the trace's ``charge ... kmem``) is v5.x's
    #: ``__memcg_kmem_charge`` (try_charge, then page_counter_try_charge of memcg->kmem)
    #: rather than 6.x's obj_cgroup_charge_pages (memcglab.kernel.memcontrol_v1)
    kmem_page_v5 = False

    def __init__(self, machine, per_node: bool = False, nodes: int = 1) -> None:
        self.m = machine
        self.per_node = per_node
        self.nodes = nodes if per_node else 1
        self.cpus_per_node = machine.nr_cpus // nodes
        self.objcgs: dict[tuple[int, int], ObjCgroup] = {}

    # ------------------------------------------------------------ objcgs

    def node_of(self, cpu: int) -> int:
        """numa_node_id() on ``cpu``: CPUs in ``nodes`` equal contiguous blocks."""
        return cpu // self.cpus_per_node if self.per_node else 0

    def objcg(self, memcg: MemCgroup, cpu: int) -> ObjCgroup:
        """The objcg an operation of ``memcg`` on ``cpu`` uses: current_obj_cgroup() of a
        task that resolved its objcg on this CPU's node.

        The kernel allocates objcgs at css_online (memcg_online_kmem in E1-E3, one per
        node in the 2026 tree's mem_cgroup_css_online); here on first use, which no
        operation can observe. The root's are never charged.
        """
        key = (memcg.id, self.node_of(cpu))
        objcg = self.objcgs.get(key)
        if objcg is None:
            objcg = self.objcgs[key] = ObjCgroup(memcg, key[1], owner=memcg)
        return objcg

    def memcg_reparent_objcgs(self, memcg: MemCgroup) -> None:
        """Port of memcg_reparent_objcgs() as far as charges go (6.18.y; per node in the
        2026 tree): every objcg now pointing at ``memcg`` (its own, and those it took
        from offlined children) points at the parent. Called from css_offline before
        drain_all_stock, which therefore finds none of them in the dying subtree."""
        for objcg in self.objcgs.values():
            if objcg.memcg is memcg:
                objcg.memcg = memcg.parent

    # ------------------------------------------------------------ pages

    def obj_cgroup_charge_pages(self, objcg: ObjCgroup, gfp: Gfp, nr_pages: int,
                                cpu: int) -> int:
        """Port of obj_cgroup_charge_pages() (every era): try_charge_memcg, then MEMCG_KMEM.

        try_charge_memcg, not try_charge: there is no root short cut (none is needed:
        the root is never charged here).
        """
        memcg = objcg.memcg  # get_mem_cgroup_from_objcg(objcg)
        ret = self.m.try_charge_memcg(memcg, gfp, nr_pages, cpu)
        if ret:
            return ret
        if self.kmem_try_charge:  # v5.13's form (and v5.9's __memcg_kmem_charge)
            ret = memcg1_kmem_try_charge(self.m, memcg, nr_pages, cpu)
            if ret:
                return ret
        memcg.kmem += nr_pages  # account_kmem_nmi_safe(memcg, nr_pages)
        if not self.kmem_try_charge:
            memcg1_account_kmem(self.m, memcg, nr_pages)
        memcg.obj_pages += nr_pages
        objcg.kmem_pages += nr_pages
        return 0

    def uncharge_pages(self, memcg: MemCgroup, nr_pages: int, cpu: int) -> None:
        """Where obj_cgroup_uncharge_pages() sends whole pages: ``refill_stock`` (E1 to
        the 2026 tree); v4 4/5 overrides it with ``memcg_uncharge``."""
        self.m.refill_stock(memcg, nr_pages, cpu)

    def obj_cgroup_uncharge_pages(self, objcg: ObjCgroup, nr_pages: int, cpu: int) -> None:
        """Port of obj_cgroup_uncharge_pages(): MEMCG_KMEM down, pages to the memcg stock.

        The root check is there from v6.15 on ("memcg: avoid refill_stock for root
        memcg", Shakeel Butt, 12 Mar 2025).
        """
        memcg = objcg.memcg
        self.m.observer.obj_event("obj_flushes", cpu, memcg.id, nr_pages)
        memcg.kmem -= nr_pages  # account_kmem_nmi_safe(memcg, -nr_pages)
        # memcg1_account_kmem(memcg, -nr_pages); v5.13: page_counter_uncharge(&memcg->kmem)
        memcg1_account_kmem(self.m, memcg, -nr_pages)
        objcg.kmem_pages -= nr_pages
        if memcg is not self.m.root_mem_cgroup:
            memcg.obj_pages -= nr_pages
            self.uncharge_pages(memcg, nr_pages, cpu)

    def memcg_uncharge_kmem(self, objcg: ObjCgroup, nr_pages: int, cpu: int) -> None:
        """memcg_uncharge_kmem() (linux-mm 030321517fd4; inline in drain_obj_stock of
        6.18.y): MEMCG_KMEM down and a direct uncharge, unless the memcg is the root."""
        memcg = objcg.memcg
        memcg.kmem -= nr_pages  # mod_memcg_state(memcg, MEMCG_KMEM, -nr_pages)
        # memcg1_account_kmem(memcg, -nr_pages); v5.9's __memcg_kmem_uncharge:
        # page_counter_uncharge(&memcg->kmem) first
        memcg1_account_kmem(self.m, memcg, -nr_pages)
        objcg.kmem_pages -= nr_pages
        if memcg is not self.m.root_mem_cgroup:
            memcg.obj_pages -= nr_pages
            self.m.memcg_uncharge(memcg, nr_pages, cpu)

    def obj_cgroup_charge_size(self, objcg: ObjCgroup, gfp: Gfp, size: int, cpu: int
                               ) -> tuple[int, int]:
        """Port of __obj_cgroup_charge() (Weiner 2/5): ``(ret, remainder)``. (Python
        would mangle the kernel's leading underscores inside a class.)

        Numerically the E1-E3 arithmetic too: ``size >> PAGE_SHIFT`` pages, one more
        for a sub-page part, whose complement ``PAGE_SIZE - nr_bytes`` is the remainder.
        """
        charge_size = PAGE_ALIGN(size)
        ret = self.obj_cgroup_charge_pages(objcg, gfp, charge_size >> PAGE_SHIFT, cpu)
        return ret, (charge_size - size if not ret else 0)

    # ------------------------------------------------------------ the era's byte stock

    def obj_cgroup_charge(self, objcg: ObjCgroup, gfp: Gfp, size: int, cpu: int) -> int:
        """obj_cgroup_charge(objcg, gfp, size) on ``cpu``: 0 or -ENOMEM."""
        raise NotImplementedError

    def obj_cgroup_uncharge(self, objcg: ObjCgroup, size: int, cpu: int) -> None:
        """obj_cgroup_uncharge(objcg, size) on ``cpu``: refill_obj_stock(..., true)."""
        raise NotImplementedError

    def drain_cpu_if_needed(self, cpu: int, root_memcg: MemCgroup) -> None:
        """drain_all_stock()'s obj part for ``cpu`` (E3 on): flag, flush_required, drain."""
        raise NotImplementedError

    def drain_dead_cpu(self, cpu: int) -> None:
        """memcg_hotplug_cpu_dead()'s obj part: drain_obj_stock() of the dead CPU."""
        raise NotImplementedError

    def locks(self, cpu: int) -> list:
        """The obj stock locks a ``nested`` operation on ``cpu`` finds held."""
        return []

    def slots(self, cpu: int) -> list[tuple[ObjCgroup | None, int]]:
        """``(cached objcg, nr_bytes)`` of each of ``cpu``'s slots (for JSON and --check)."""
        raise NotImplementedError

    # ------------------------------------------------------------ replay views

    def stocked_bytes(self) -> dict[ObjCgroup, int]:
        """Bytes of each objcg in all per-CPU byte stocks."""
        out: dict[ObjCgroup, int] = {}
        for cpu in range(self.m.nr_cpus):
            for objcg, nbytes in self.slots(cpu):
                if objcg is not None:
                    out[objcg] = out.get(objcg, 0) + nbytes
        return out

    def violation(self) -> str | None:
        """The first objcg whose bytes do not add up (kernel notes §11.11, byte identity),
        or an empty slot that holds bytes; None if all hold."""
        for cpu in range(self.m.nr_cpus):
            for i, (objcg, nbytes) in enumerate(self.slots(cpu)):
                if objcg is None and nbytes:
                    return f"cpu {cpu} obj slot {i} is empty but holds {nbytes} bytes"
                if nbytes < 0:
                    return f"cpu {cpu} obj slot {i} holds {nbytes} bytes"
        stocked = self.stocked_bytes()
        for objcg in self._in_order():
            have = objcg.live_bytes + stocked.get(objcg, 0) + objcg.nr_charged_bytes
            if PAGE_SIZE * objcg.kmem_pages != have:
                return (f"objcg of memcg {objcg.owner.id} node {objcg.node}: "
                        f"{PAGE_SIZE} x {objcg.kmem_pages} kmem pages != live "
                        f"{objcg.live_bytes} + stocked {stocked.get(objcg, 0)} + "
                        f"nr_charged_bytes {objcg.nr_charged_bytes}")
        return None

    def _in_order(self) -> list[ObjCgroup]:
        # memcgs in creation order, nodes ascending (the compiled engine's dense order)
        return [self.objcgs[(mid, node)] for mid in self.m.memcgs for node in range(self.nodes)
                if (mid, node) in self.objcgs]

    def kmem_pages(self) -> dict[int, int]:
        """Pages objcgs hold in each memcg's own counter (by id): charged there through an
        objcg and not yet released from it (kernel notes §11.11, usage identity)."""
        return {memcg_id: memcg.obj_pages for memcg_id, memcg in self.m.memcgs.items()
                if memcg.obj_pages}

    def stocks_json(self) -> list:
        """Per CPU, per slot: ``[memcg, node, nr_bytes]`` or null (docs/trace-extensions.md)."""
        return [[[o.owner.id, o.node, b] if o is not None else None for o, b in self.slots(c)]
                for c in range(self.m.nr_cpus)]

    def objcgs_json(self) -> dict:
        """Per memcg but the root: its objcgs' (one per node) bytes and its kmem pages."""
        out: dict[str, dict] = {}
        for memcg_id, memcg in self.m.memcgs.items():
            if memcg is self.m.root_mem_cgroup:
                continue
            objs = [self.objcgs.get((memcg_id, node), ObjCgroup(memcg, node, owner=memcg))
                    for node in range(self.nodes)]
            out[str(memcg_id)] = {"kmem": memcg.kmem,
                                  "live_bytes": [o.live_bytes for o in objs],
                                  "nr_charged_bytes": [o.nr_charged_bytes for o in objs]}
        return out
