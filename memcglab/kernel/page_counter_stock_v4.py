"""The per-page_counter stock of v4 of the series: a lone ``atomic_t`` per CPU (1/5, 3/5).

Ports the mm/page_counter.c side of Joshua Hahn's "[PATCH v4 0/5]
mm/memcontrol, page_counter: move stock from mem_cgroup to page_counter" (23 Jun
2026, lore 20260623180124.868655-1-joshua.hahnjy@gmail.com; patch N/5 is
``20260623180124.868655-(N+1)-...``), applied to the mm-new tree it was built on:

* 1/5 "mm/page_counter: introduce per-page_counter stock":
  ``struct page_counter_stock { atomic_t nr_pages; }``,
  :func:`page_counter_alloc_stock`, :func:`page_counter_drain_stock` (one CPU, by
  ``atomic_xchg``) and :func:`page_counter_free_stock`;
* 3/5 "mm/page_counter: introduce page_counter_try_charge_stock()":
  :func:`page_counter_try_charge_stock`.

v4 leaves ``page_counter_try_charge`` and ``page_counter_uncharge`` as the 2026
tree has them (v2 dropped the RFC's stock-aware uncharge). The port of those in
:mod:`memcglab.kernel.page_counter` carries the RFC's stock (RFC 2/8, 3/8), so the
plain 2026 functions are ported here once more, with the same loops and helpers.

Differences from the kernel, all deliberate:

* Atomics are plain arithmetic, and every ``atomic_try_cmpxchg`` succeeds at its
  first attempt: the simulation is sequential (contract item V2). The charging CPU
  is an explicit ``cpu`` argument; ``preempt_disable`` has nothing to protect.
* ``alloc_percpu`` never fails (contract item V1), so a counter whose memcg went
  online always has a stock.
* The per-CPU stock is a list indexed by CPU, as for the RFC.

>>> from memcglab.kernel.page_counter import PageCounter
>>> root = PageCounter(); child = PageCounter(parent=root)
>>> page_counter_alloc_stock(child, 64, nr_cpus=2)
0
>>> page_counter_try_charge_stock(child, 3, cpu=1)   # greedy: 64 charged, 61 stocked
(True, None, 64)
>>> page_counter_try_charge_stock(child, 5, cpu=1)   # a hit: nothing charged
(True, None, 0)
>>> [s.nr_pages for s in child.stock], child.usage, root.usage
([0, 56], 64, 64)
>>> page_counter_drain_stock(child, 1); child.usage
8
"""

from __future__ import annotations

from dataclasses import dataclass

from memcglab.kernel.page_counter import (
    PageCounter,
    _propagate_protected_usage,
    _track_protection,
    _update_watermarks,
    page_counter_cancel,
)

__all__ = [
    "PageCounterStockV4",
    "page_counter_try_charge",
    "page_counter_uncharge",
    "page_counter_try_charge_stock",
    "page_counter_drain_stock",
    "page_counter_alloc_stock",
    "page_counter_free_stock",
]


@dataclass(slots=True)
class PageCounterStockV4:
    """``struct page_counter_stock`` of v4 1/5: ``atomic_t nr_pages`` and nothing else.

    "Consumption/refills can only come from the owning cpu via atomic_cmpxchg.
    Remote access only happens on drain via atomic_xchg." (the 1/5 comment).
    """

    nr_pages: int = 0


def page_counter_try_charge(counter: PageCounter, nr_pages: int
                            ) -> tuple[bool, PageCounter | None]:
    """Port of page_counter_try_charge() of the 2026 tree, which v4 leaves unchanged.

    One hierarchical walk: add ``nr_pages`` to each level from ``counter`` up, update
    its watermarks, and stop at the first level over its max, which is rolled back
    in place (the speculative add); the levels below it are cancelled in the same
    walk, so their watermarks keep the attempt. Returns ``(ok, fail)``, the kernel's
    bool and ``*fail``. The 2026 tree's ``nr_charged`` out-parameter is unused here.
    """
    protection = _track_protection(counter)
    track_failcnt = counter.track_failcnt
    counter.observer.walk(counter, nr_pages, "try_charge")
    c: PageCounter | None = counter
    while c is not None:  # for (c = counter; c; c = c->parent)
        # Charge speculatively to avoid an expensive CAS. The kernel accepts that a
        # bigger failing charge can briefly lock out a smaller one; sequentially, none.
        c.usage += nr_pages
        new = c.usage
        if new > c.max:
            c.usage -= nr_pages  # atomic_long_sub(nr_pages, &c->usage)
            if track_failcnt:
                c.failcnt += 1
            fail = c
            # failed: cancel on the counters below *fail
            c = counter
            while c is not fail:
                page_counter_cancel(c, nr_pages)
                c = c.parent
            return False, fail
        if protection:
            _propagate_protected_usage(c, new)
        _update_watermarks(c, new)
        c = c.parent
    return True, None


def page_counter_uncharge(counter: PageCounter, nr_pages: int) -> None:
    """Port of page_counter_uncharge() of the 2026 tree (v4 leaves it unchanged).

    One walk of page_counter_cancel() from ``counter`` to the root; no stock is
    touched, whatever the counter has.
    """
    counter.observer.walk(counter, nr_pages, "uncharge")
    c: PageCounter | None = counter
    while c is not None:
        page_counter_cancel(c, nr_pages)
        c = c.parent


def page_counter_try_charge_stock(counter: PageCounter, nr_pages: int, cpu: int,
                                  refill: bool = True) -> tuple[bool, PageCounter | None, int]:
    """Port of page_counter_try_charge_stock() (v4 3/5): ``(ok, fail, nr_charged)``.

    First this CPU's stock, by an ``atomic_try_cmpxchg`` loop while it holds at
    least ``nr_pages`` (a hit charges nothing: ``nr_charged = 0``, no limit check,
    no watermark). On a miss, greedily charge ``max(batch, nr_pages)`` when that is
    more than ``nr_pages`` and put the surplus into this CPU's stock with
    ``atomic_add``; if that fails, or there is no surplus to gain, charge exactly
    ``nr_pages`` (``charge_exact:``). ``fail`` is the counter of the last walk.
    ``refill=False`` is the scenario contract's refill variant ported into v4, whose
    try_charge_memcg has no batch left: the greedy ``max(batch, nr_pages)`` becomes
    ``nr_pages``, so the charge goes straight to ``charge_exact``.
    """
    fail: PageCounter | None = None
    charge = 0
    exact = counter.stock is None  # if (!counter->stock) goto charge_exact;
    if not exact:
        assert counter.stock is not None
        stock = counter.stock[cpu]  # preempt_disable(); this_cpu_ptr(counter->stock)
        old = stock.nr_pages  # atomic_read()
        if old >= nr_pages:  # while ((unsigned long)old >= nr_pages): cmpxchg succeeds
            stock.nr_pages = old - nr_pages
            return True, None, charge  # out_success: *nr_charged = 0
        charge = max(counter.batch, nr_pages)  # max_t(unsigned long, READ_ONCE(batch), ..)
        if not refill:
            charge = nr_pages  # the refill variant: no surplus for the stock
        exact = charge <= nr_pages
        if not exact:
            ok, fail = page_counter_try_charge(counter, charge)
            if ok:
                # The kernel re-reads this_cpu_ptr() here: the task may have migrated.
                # The replay's charging CPU stays the same (contract V2).
                stock = counter.stock[cpu]
                stock.nr_pages += charge - nr_pages  # atomic_add((int)(charge - nr_pages))
                counter.observer.note("refill", cpu, getattr(counter.owner, "id", None),
                                      charge - nr_pages)
                return True, None, charge
    # charge_exact: stock is not enabled, no need for surplus, or greedy charge failed
    charge = nr_pages
    ok, fail = page_counter_try_charge(counter, charge)
    if not ok:
        return False, fail, 0
    return True, None, charge


def page_counter_drain_stock(counter: PageCounter, cpu: int) -> None:
    """Port of page_counter_drain_stock(counter, cpu) (v4 1/5).

    Takes CPU ``cpu``'s whole stock with ``atomic_xchg(&stock->nr_pages, 0)``, from
    any CPU, and uncharges it with one walk if it held pages. No lock, no work item.
    """
    if counter.stock is None:
        return
    stock = counter.stock[cpu]  # per_cpu_ptr(counter->stock, cpu)
    nr_pages, stock.nr_pages = stock.nr_pages, 0  # atomic_xchg(&stock->nr_pages, 0)
    if nr_pages:
        counter.observer.note("drain", cpu, getattr(counter.owner, "id", None), nr_pages)
        page_counter_uncharge(counter, nr_pages)


def page_counter_alloc_stock(counter: PageCounter, batch: int, nr_cpus: int) -> int:
    """Port of page_counter_alloc_stock() (v4 1/5): a zeroed stock per CPU, and ``batch``.

    ``alloc_percpu`` can fail in the kernel (-ENOMEM; the counter then charges without
    a stock); here it never does (contract V1). ``nr_cpus`` stands for the possible CPUs.
    """
    counter.stock = [PageCounterStockV4() for _ in range(nr_cpus)]
    counter.batch = batch
    return 0


def page_counter_free_stock(counter: PageCounter) -> None:
    """Port of page_counter_free_stock() (v4 1/5): drain every possible CPU, then free.

    Called from mem_cgroup_free(), which a replay never reaches (contract V3).
    """
    if counter.stock is None:
        return
    for cpu in range(len(counter.stock)):  # for_each_possible_cpu(cpu)
        page_counter_drain_stock(counter, cpu)
    counter.stock = None
