"""The per-page_counter stock API of the RFC: lifecycle and drains (patches 1/8, 4/8).

Ports the functions Joshua Hahn's "[PATCH 0/8 RFC] mm/memcontrol, page_counter:
move stock from mem_cgroup to page_counter" (10 Apr 2026, ``shared/seeds/003_*``)
adds to mm/page_counter.c besides its changes to try_charge and uncharge, which
live in :mod:`memcglab.kernel.page_counter`: enable, disable and free the per-CPU
stock (1/8, as changed by 3/8), and drain it on every online CPU or on a dead one
(4/8). Per-CPU data is a list indexed by CPU; ``work_on_cpu`` runs synchronously.
"""

from __future__ import annotations

from memcglab.kernel.page_counter import (
    PageCounter,
    PageCounterStock,
    page_counter_cancel_hierarchy,
)
from memcglab.kernel.percpu import local_lock, local_unlock

__all__ = [
    "page_counter_enable_stock",
    "page_counter_disable_stock",
    "page_counter_free_stock",
    "page_counter_drain_stock",
    "page_counter_drain_cpu",
]


def page_counter_enable_stock(counter: PageCounter, batch: int, nr_cpus: int) -> int:
    """Port of page_counter_enable_stock() (RFC 1/8). ``alloc_percpu`` cannot fail here."""
    counter.stock = [PageCounterStock() for _ in range(nr_cpus)]
    counter.batch = batch
    return 0


def page_counter_disable_stock(counter: PageCounter) -> None:
    """Port of page_counter_disable_stock() (RFC 1/8, as changed by 3/8).

    Sums the stock of every possible CPU without locks (called at css_offline) and
    cancels it hierarchically; the RFC does not zero the per-CPU values. Setting
    ``batch = 0`` stops further deposits.
    """
    if counter.stock is None:
        return
    stock_to_drain = sum(s.nr_pages for s in counter.stock)
    if stock_to_drain:
        page_counter_cancel_hierarchy(counter, stock_to_drain)
    counter.batch = 0


def page_counter_free_stock(counter: PageCounter) -> None:
    """Port of page_counter_free_stock() (RFC 1/8)."""
    if counter.stock is None:
        return
    counter.stock = None


def _page_counter_drain_stock_cpu(counter: PageCounter, cpu: int) -> None:
    """Port of page_counter_drain_stock_cpu() (RFC 4/8), run on ``cpu`` by work_on_cpu()."""
    assert counter.stock is not None
    stock = counter.stock[cpu]
    local_lock(stock.lock)
    nr_pages = stock.nr_pages
    stock.nr_pages = 0
    local_unlock(stock.lock)
    if nr_pages:
        page_counter_cancel_hierarchy(counter, nr_pages)


def page_counter_drain_stock(counter: PageCounter, online_cpus: range | list[int]) -> None:
    """Port of page_counter_drain_stock() (RFC 4/8): drain every online CPU synchronously."""
    if counter.stock is None:
        return
    for cpu in online_cpus:  # cpus_read_lock(); for_each_online_cpu(): work_on_cpu()
        _page_counter_drain_stock_cpu(counter, cpu)


def page_counter_drain_cpu(counter: PageCounter, cpu: int) -> None:
    """Port of page_counter_drain_cpu() (RFC 4/8): a dead CPU's stock, without a lock."""
    if counter.stock is None:
        return
    stock = counter.stock[cpu]
    nr_pages = stock.nr_pages
    if nr_pages:
        stock.nr_pages = 0
        page_counter_cancel_hierarchy(counter, nr_pages)
