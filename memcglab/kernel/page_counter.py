"""Lockless hierarchical page accounting and limiting: a port of mm/page_counter.c.

Ports mm/page_counter.c and include/linux/page_counter.h as in the 2026 mm tree
(linux-mm/linux-mm page_counter.c at 0826bf00f15f, page_counter.h at 05bbc79d75c3),
function by function and in the kernel's order, plus the per-page_counter stock of
Joshua Hahn's RFC "mm/memcontrol, page_counter: move stock from mem_cgroup to
page_counter" (10 Apr 2026, patches 1-4; ``shared/seeds/003_*``).

Differences from the kernel, all deliberate:

* Atomics (``atomic_long_add_return``, ``xchg``, ...) are plain arithmetic: the
  simulation is sequential, so every read-modify-write is exact.
* ``WARN_ONCE`` on underflow is counted on every occurrence (``observer.warn``),
  as the replay contract's ``warnings`` asks.
* Per-CPU data (``struct page_counter_stock __percpu *``) is a list indexed by CPU,
  and "this CPU" is an explicit ``cpu`` argument, because the simulation has no
  current CPU of its own.
* Every hierarchy walk is reported to ``counter.observer`` so that the replay can
  count walks; the kernel has no such hook.

>>> root = PageCounter(); child = PageCounter(parent=root, max=10)
>>> page_counter_try_charge(child, 8)
(True, None)
>>> page_counter_try_charge(child, 8)[1] is child
True
>>> child.usage, root.usage, child.watermark
(8, 8, 8)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from memcglab.kernel.percpu import LocalTrylock, local_trylock, local_unlock

__all__ = [
    "PAGE_SIZE",
    "PAGE_COUNTER_MAX",
    "ENOMEM",
    "EBUSY",
    "EINVAL",
    "WalkObserver",
    "PageCounter",
    "PageCounterStock",
    "page_counter_init",
    "page_counter_read",
    "page_counter_cancel",
    "page_counter_charge",
    "page_counter_try_charge",
    "page_counter_uncharge",
    "page_counter_set_max",
    "page_counter_set_min",
    "page_counter_set_low",
    "memparse",
    "page_counter_memparse",
    "effective_protection",
    "page_counter_calculate_protection",
    "page_counter_cancel_hierarchy",
]

PAGE_SIZE = 4096
_LONG_MAX = (1 << 63) - 1
_ULONG_MASK = (1 << 64) - 1
#: LONG_MAX / PAGE_SIZE on 64-bit with 4 KiB pages: 2^51 - 1.
PAGE_COUNTER_MAX = _LONG_MAX // PAGE_SIZE
ENOMEM, EBUSY, EINVAL = 12, 16, 22


class WalkObserver(Protocol):
    """Simulation hook (not in the kernel): told about each walk and each underflow."""

    def walk(self, counter: PageCounter, nr_pages: int, kind: str) -> None: ...

    def warn(self, counter: PageCounter, new: int, nr_pages: int) -> None: ...

    def stock_hit(self, cpu: int, memcg_id: int, nr_pages: int) -> None: ...

    def note(self, *event: object) -> None: ...


class _Silent:
    def walk(self, counter: PageCounter, nr_pages: int, kind: str) -> None:
        pass

    def warn(self, counter: PageCounter, new: int, nr_pages: int) -> None:
        pass

    def stock_hit(self, cpu: int, memcg_id: int, nr_pages: int) -> None:
        pass

    def note(self, *event: object) -> None:
        pass


@dataclass(slots=True)
class PageCounterStock:
    """``struct page_counter_stock`` (RFC 1/8): a trylock and ``unsigned long nr_pages``."""

    lock: LocalTrylock = field(default_factory=LocalTrylock)
    nr_pages: int = 0


@dataclass(slots=True, eq=False)
class PageCounter:
    """``struct page_counter``, fields in the order of include/linux/page_counter.h (2026).

    ``owner`` names the object that embeds the counter (for a memcg's ``memory``
    counter, the memcg); the kernel finds it with ``container_of``.
    """

    usage: int = 0
    failcnt: int = 0
    # CACHELINE_PADDING(_pad1_)
    emin: int = 0
    min_usage: int = 0
    children_min_usage: int = 0
    elow: int = 0
    low_usage: int = 0
    children_low_usage: int = 0
    watermark: int = 0
    local_watermark: int = 0
    # CACHELINE_PADDING(_pad2_)
    protection_support: bool = False
    track_failcnt: bool = False
    min: int = 0
    low: int = 0
    high: int = PAGE_COUNTER_MAX
    max: int = PAGE_COUNTER_MAX
    parent: PageCounter | None = None
    # RFC 1/8 (and v4 1/5, whose stock is a lone atomic_t): per-CPU stock and its batch
    stock: list | None = None
    batch: int = 0
    # simulation only
    owner: object = None
    observer: WalkObserver = field(default_factory=_Silent)


def page_counter_init(counter: PageCounter, parent: PageCounter | None,
                      protection_support: bool) -> None:
    """Port of the inline page_counter_init() (include/linux/page_counter.h, 2026)."""
    counter.usage = 0
    counter.max = PAGE_COUNTER_MAX
    counter.parent = parent
    counter.protection_support = protection_support
    counter.track_failcnt = False


def page_counter_read(counter: PageCounter) -> int:
    """Port of page_counter_read(): ``atomic_long_read(&counter->usage)``."""
    return counter.usage


def _track_protection(c: PageCounter) -> bool:
    return c.protection_support


def _propagate_protected_usage(c: PageCounter, usage: int) -> None:
    """Port of propagate_protected_usage() (mm/page_counter.c, 2026)."""
    if c.parent is None:
        return
    protected = min(usage, c.min)
    if protected != c.min_usage:
        old_protected, c.min_usage = c.min_usage, protected  # atomic_long_xchg
        delta = protected - old_protected
        if delta:
            c.parent.children_min_usage += delta
    protected = min(usage, c.low)
    if protected != c.low_usage:
        old_protected, c.low_usage = c.low_usage, protected
        delta = protected - old_protected
        if delta:
            c.parent.children_low_usage += delta


def page_counter_cancel(counter: PageCounter, nr_pages: int) -> None:
    """Take pages out of the local counter: port of page_counter_cancel() (2026).

    Touches only this counter. An underflow warns (every time here, see the
    module note), and usage is clamped to 0.
    """
    counter.usage -= nr_pages
    new = counter.usage
    if new < 0:  # WARN_ONCE("page_counter underflow: %ld nr_pages=%lu\n")
        counter.observer.warn(counter, new, nr_pages)
        new = 0
        counter.usage = new
    if _track_protection(counter):
        _propagate_protected_usage(counter, new)


def _update_watermarks(c: PageCounter, new: int) -> None:
    # Two watermarks: local_watermark can be reset at a smaller scope, and both are
    # reset together globally, so watermark >= local_watermark holds.
    if new > c.local_watermark:
        c.local_watermark = new
        if new > c.watermark:
            c.watermark = new


def page_counter_charge(counter: PageCounter, nr_pages: int) -> None:
    """Hierarchically charge pages, ignoring limits: port of page_counter_charge() (2026)."""
    protection = _track_protection(counter)
    counter.observer.walk(counter, nr_pages, "charge")
    c = counter
    while c is not None:  # for (c = counter; c; c = c->parent)
        c.usage += nr_pages
        new = c.usage
        if protection:
            _propagate_protected_usage(c, new)
        _update_watermarks(c, new)
        c = c.parent


def page_counter_try_charge(counter: PageCounter, nr_pages: int, cpu: int = 0,
                            refill: bool = True) -> tuple[bool, PageCounter | None]:
    """Try to hierarchically charge ``nr_pages``: port of page_counter_try_charge().

    mm/page_counter.c (2026) with the stock of RFC 2/8 ("use page_counter_stock in
    page_counter_try_charge"): a stock-enabled counter first tries this CPU's
    stock, then charges ``max(batch, nr_pages)`` and keeps the surplus, retrying
    at the exact size on failure. The kernel returns bool and sets ``*fail``;
    here the pair ``(ok, fail)`` is returned. The 2026 tree's optional
    ``nr_charged`` out-parameter has no caller in this port and is left out.
    ``refill=False`` is the scenario contract's refill variant ported into the RFC,
    whose try_charge_memcg has no batch left: the batch is this function's
    ``max(batch, nr_pages)``, which becomes ``nr_pages`` (the stock is still used).
    """
    charge = nr_pages
    protection = _track_protection(counter)
    track_failcnt = counter.track_failcnt

    if counter.stock is not None and local_trylock(counter.stock[cpu].lock):
        stock = counter.stock[cpu]
        if stock.nr_pages >= charge:
            stock.nr_pages -= charge
            local_unlock(stock.lock)
            counter.observer.stock_hit(cpu, getattr(counter.owner, "id", counter.owner),
                                       nr_pages)
            return True, None
        local_unlock(stock.lock)

    charge = max(counter.batch, nr_pages) if refill else nr_pages

    while True:  # retry:
        counter.observer.walk(counter, charge, "try_charge")
        fail = None
        c = counter
        while c is not None:
            # Charge speculatively to avoid an expensive CAS; a failing bigger charge
            # may briefly lock out a smaller racing one (not possible here: sequential).
            c.usage += charge
            new = c.usage
            if new > c.max:
                c.usage -= charge
                if track_failcnt:
                    c.failcnt += 1
                fail = c
                break
            if protection:
                _propagate_protected_usage(c, new)
            _update_watermarks(c, new)
            c = c.parent

        if fail is None:
            # charge > nr_pages implies this page_counter has stock enabled
            if charge > nr_pages:
                stock = counter.stock[cpu]
                if local_trylock(stock.lock):
                    stock.nr_pages += charge - nr_pages
                    local_unlock(stock.lock)
                else:
                    page_counter_uncharge(counter, charge - nr_pages, cpu)
            return True, None

        # failed: the counters below *fail were charged; *fail was rolled back in place.
        c = counter
        while c is not fail:
            page_counter_cancel(c, charge)
            c = c.parent
        if charge > nr_pages:
            # Retry without trying to grab extra pages to refill stock
            charge = nr_pages
            continue
        return False, fail


def page_counter_cancel_hierarchy(counter: PageCounter, nr_pages: int) -> None:
    """Port of page_counter_cancel_hierarchy() (RFC 3/8): cancel on every ancestor."""
    counter.observer.walk(counter, nr_pages, "cancel")
    c = counter
    while c is not None:
        page_counter_cancel(c, nr_pages)
        c = c.parent


def page_counter_uncharge(counter: PageCounter, nr_pages: int, cpu: int = 0) -> None:
    """Hierarchically uncharge pages: port of page_counter_uncharge().

    Without a stock this is the 2026 loop of page_counter_cancel() up the tree
    (one walk). With the RFC 3/8 stock, the pages go to this CPU's stock and only
    the excess over ``batch`` walks, through page_counter_cancel_hierarchy().
    """
    charge = nr_pages
    if counter.stock is not None and local_trylock(counter.stock[cpu].lock):
        stock = counter.stock[cpu]
        stock.nr_pages += nr_pages
        if stock.nr_pages > counter.batch:
            charge = stock.nr_pages - counter.batch
            stock.nr_pages = counter.batch
            local_unlock(stock.lock)
        else:
            local_unlock(stock.lock)
            return
    if counter.stock is None:
        # The plain 2026 function: the same loop, reported as an uncharge walk.
        counter.observer.walk(counter, charge, "uncharge")
        c = counter
        while c is not None:
            page_counter_cancel(c, charge)
            c = c.parent
        return
    page_counter_cancel_hierarchy(counter, charge)


def page_counter_set_max(counter: PageCounter, nr_pages: int) -> int:
    """Set the limit: port of page_counter_set_max() (2026). Returns 0 or -EBUSY.

    The kernel loops until the usage it read is stable or the limit is being
    raised; with no concurrent charger the first pass always decides.
    """
    while True:
        usage = page_counter_read(counter)
        if usage > nr_pages:
            return -EBUSY
        old, counter.max = counter.max, nr_pages  # xchg
        if page_counter_read(counter) <= usage or nr_pages >= old:
            return 0
        counter.max = old  # cond_resched() and try again


def page_counter_set_min(counter: PageCounter, nr_pages: int) -> None:
    """Port of page_counter_set_min(): set min, re-propagate protected usage upwards."""
    counter.min = nr_pages
    c = counter
    while c is not None:
        _propagate_protected_usage(c, c.usage)
        c = c.parent


def page_counter_set_low(counter: PageCounter, nr_pages: int) -> None:
    """Port of page_counter_set_low(): set low, re-propagate protected usage upwards."""
    counter.low = nr_pages
    c = counter
    while c is not None:
        _propagate_protected_usage(c, c.usage)
        c = c.parent


def memparse(s: str) -> tuple[int, str]:
    """Port of memparse() (lib/cmdline.c): parse a size with an optional K/M/G/T/P/E suffix.

    Returns ``(value, rest)`` where ``rest`` is what follows the parsed part (the
    kernel's end pointer). The number is read by simple_strtoull with base 0
    (``0x`` hex, a leading ``0`` octal, else decimal); overflow wraps mod 2^64.

    >>> memparse("4k"), memparse("0x10M"), memparse("010"), memparse("1MB")
    ((4096, ''), (16777216, ''), (8, ''), (1048576, 'B'))
    """
    i, base = 0, 10
    if s[:1] == "0":
        if s[1:2] in ("x", "X") and s[2:3] and s[2:3] in "0123456789abcdefABCDEF":
            base, i = 16, 2
        else:
            base = 8
    digits = "0123456789abcdef"[:base]
    value = 0
    while i < len(s) and s[i].lower() in digits:
        value = (value * base + int(s[i], 16)) & _ULONG_MASK
        i += 1
    shift = {"e": 60, "p": 50, "t": 40, "g": 30, "m": 20, "k": 10}.get(s[i:i + 1].lower())
    if shift is not None:
        value = (value << shift) & _ULONG_MASK
        i += 1
    return value, s[i:]


def page_counter_memparse(buf: str, max_str: str = "max") -> tuple[int, int]:
    """Port of page_counter_memparse(): return ``(0, nr_pages)`` or ``(-EINVAL, 0)``.

    >>> page_counter_memparse("max")[1] == PAGE_COUNTER_MAX, page_counter_memparse("1G")
    (True, (0, 262144))
    >>> page_counter_memparse("1MB")
    (-22, 0)
    """
    if buf == max_str:
        return 0, PAGE_COUNTER_MAX
    nbytes, end = memparse(buf)
    if end != "":
        return -EINVAL, 0
    return 0, min(nbytes // PAGE_SIZE, PAGE_COUNTER_MAX)


def effective_protection(usage: int, parent_usage: int, setting: int, parent_effective: int,
                         siblings_protected: int, recursive_protection: bool) -> int:
    """Port of effective_protection() (mm/page_counter.c, 2026), unsigned long arithmetic.

    >>> effective_protection(100, 300, 80, 100, 200, False)  # overcommitted: 80*100/200
    40
    >>> effective_protection(100, 300, 50, 200, 100, True)   # 50 + (200-100)*(100-50)/(300-100)
    75
    """
    protected = min(usage, setting)
    if siblings_protected > parent_effective:
        return ((protected * parent_effective) & _ULONG_MASK) // siblings_protected
    ep = protected
    if not recursive_protection:
        return ep
    if (parent_effective > siblings_protected and parent_usage > siblings_protected
            and usage > protected):
        unclaimed = parent_effective - siblings_protected
        unclaimed = (unclaimed * (usage - protected)) & _ULONG_MASK
        unclaimed //= parent_usage - siblings_protected
        ep += unclaimed
    return ep


def page_counter_calculate_protection(root: PageCounter, counter: PageCounter,
                                      recursive_protection: bool) -> None:
    """Port of page_counter_calculate_protection() (2026): update emin/elow top-down."""
    parent = counter.parent
    if root is counter:
        return  # the reclaim target's own effective values may stay stale
    usage = page_counter_read(counter)
    if not usage:
        return
    if parent is root:
        counter.emin = counter.min
        counter.elow = counter.low
        return
    assert parent is not None
    parent_usage = page_counter_read(parent)
    counter.emin = effective_protection(usage, parent_usage, counter.min, parent.emin,
                                        parent.children_min_usage, recursive_protection)
    counter.elow = effective_protection(usage, parent_usage, counter.low, parent.elow,
                                        parent.children_low_usage, recursive_protection)
