"""Socket memory accounting: ``sk_forward_alloc`` and the memcg socket charge, in two eras.

A socket of a protocol with ``memory_allocated`` (TCP, UDP, SCTP; not AF_UNIX) keeps
a per-socket byte reserve, ``sk->sk_forward_alloc``. Buffers are taken from it
(``sk_mem_charge``) and given back (``sk_mem_uncharge``); the memcg sees a call only
when the reserve is raised by whole pages (``__sk_mem_schedule`` ->
``__sk_mem_raise_allocated`` -> ``mem_cgroup_sk_charge`` -> ``try_charge_memcg``) or
whole pages are reclaimed from it (``__sk_mem_reclaim`` ->
``__sk_mem_reduce_allocated`` -> ``mem_cgroup_sk_uncharge`` -> ``refill_stock``).

Two eras, the scenario contract's ``sk_reclaim`` key:

* ``"eager"``: v6.0 on, as in the v6.18.19 tree (6952350/linux-6.18.y at
  312d9602fe3e: include/net/sock.h, net/core/sock.c, net/ipv4/tcp_output.c,
  net/ipv4/udp.c). Eric Dumazet's net-next series merged as
  "net-reduce-tcp_memory_allocated-inflation" (posted in June 2022, message-id
  ``20220609063412.2205738-7-eric.dumazet@gmail.com`` for patch 6/7, after
  v5.19-rc1, so first released in v6.0: a v5.19 tree, yishangzhang/linux-5.19 at
  4a8550523ce9, still has ``SK_RECLAIM_THRESHOLD`` in ``sk_mem_uncharge`` and the
  whole-size ``sk_wmem_schedule``) made ``sk_mem_uncharge`` call ``sk_mem_reclaim``, which
  returns every whole page ("net: keep sk->sk_forward_alloc as small as possible"),
  made ``sk_wmem_schedule``/``sk_rmem_schedule`` raise the reserve by the missing
  ``delta`` only ("net: fix sk_wmem_schedule() and sk_rmem_schedule() errors", a fix
  the stable branches took too: unifreq/linux-5.15.y at 5c88653f6cce, v5.15.215,
  schedules the delta and still reclaims at 2 MiB) and removed ``SK_MEM_QUANTUM``
  ("net: remove SK_MEM_QUANTUM and SK_MEM_QUANTUM_SHIFT"); v6.18.19 has no
  ``sk_mem_reclaim_partial`` either.
* ``"lazy"``: the code before it, as in v5.10 (torvalds/linux tag v5.10,
  2c85ebc57b3e; read in wqhot/linux-5.10 at 2d901b1cb612, v5.10 with the -rt17
  patch, which touches none of these functions). ``sk_mem_uncharge`` reclaims only
  when the reserve reaches 2 MiB, and then 1 MiB; ``sk_wmem_schedule`` raises the
  reserve by ``sk_mem_pages(size)``, the whole size, whenever ``size`` exceeds it.
  v5.10 writes the 2 MiB and 1 MiB as literals; "tcp: define macros for a couple
  reclaim thresholds" (Paolo Abeni, 26 Oct 2021, net-next,
  ``20211026232916.179450-2-mathew.j.martineau@linux.intel.com``) named them
  ``SK_RECLAIM_THRESHOLD`` and ``SK_RECLAIM_CHUNK``, the names used here.

Differences from the kernel, all deliberate:

* The protocol-wide ``memory_allocated`` and its ``sysctl_mem`` limits are not
  modelled: the machine is assumed under ``tcp_mem[0]``, the "Under limit" branch
  of ``__sk_mem_raise_allocated``, so no memory pressure and no suppression. Only
  the memcg's answer can fail a schedule.
* ``sk->sk_memcg`` is an injected :class:`SkMemcg` (``None`` for a socket with no
  memcg: the root, or one created outside task context), so the port runs without
  the memcg layer; :class:`MemcgCalls` records the calls.
* ``SO_RESERVE_MEM`` is kept (``sk_reserved_mem``, ``sk_unused_reserved_mem``) but
  no benchmark sets it; v5.10 has no such option.

>>> sk = Sock(era="eager", memcg=MemcgCalls())
>>> sk_wmem_schedule(sk, 961), sk.sk_forward_alloc
(True, 4096)
>>> sk_mem_charge(sk, 961); sk_mem_uncharge(sk, 961)
>>> sk.memcg.calls, sk.sk_forward_alloc
([('charge', 1), ('uncharge', 1)], 0)
>>> lazy = Sock(era="lazy", memcg=MemcgCalls())
>>> sk_wmem_schedule(lazy, 961); sk_mem_charge(lazy, 961); sk_mem_uncharge(lazy, 961)
True
>>> lazy.memcg.calls, lazy.sk_forward_alloc
([('charge', 1)], 4096)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "ERAS",
    "PAGE_SHIFT",
    "PAGE_SIZE",
    "SK_MEM_QUANTUM",
    "SK_MEM_QUANTUM_SHIFT",
    "SK_MEM_RECV",
    "SK_MEM_SEND",
    "SK_RECLAIM_CHUNK",
    "SK_RECLAIM_THRESHOLD",
    "UDP_FORWARD_THRESHOLD",
    "MemcgCalls",
    "SkMemcg",
    "Sock",
    "sk_mem_pages",
    "sk_has_account",
    "sk_wmem_schedule",
    "sk_rmem_schedule",
    "sk_unused_reserved_mem",
    "sk_mem_reclaim",
    "sk_mem_reclaim_partial",
    "sk_mem_charge",
    "sk_mem_uncharge",
    "sk_forced_mem_schedule",
    "udp_rmem_schedule",
    "udp_rmem_release",
    "udp_enqueue_schedule",
]

PAGE_SHIFT = 12
PAGE_SIZE = 1 << PAGE_SHIFT
#: v5.10 include/net/sock.h: "We used to have PAGE_SIZE here"; 4096, so equal to
#: PAGE_SIZE on x86-64 and the two eras round alike.
SK_MEM_QUANTUM = 4096
SK_MEM_QUANTUM_SHIFT = 12
SK_MEM_SEND, SK_MEM_RECV = 0, 1
#: lazy era: sk_mem_uncharge reclaims SK_RECLAIM_CHUNK once the reserve reaches this
SK_RECLAIM_THRESHOLD = 1 << 21
SK_RECLAIM_CHUNK = 1 << 20
#: udp_lib_init_sock (6.18): forward_threshold = sk_rcvbuf >> 2, with sk_rcvbuf the
#: net.core.rmem_default of 212992 bytes (sock_init_data); v5.10 tests sk_rcvbuf >> 2
#: directly, the same value.
UDP_FORWARD_THRESHOLD = 212992 >> 2

ERAS = {
    "eager": "v6.0 on (v6.18.19): every sk_mem_uncharge returns all whole pages of "
             "sk_forward_alloc; schedules raise it by the missing delta",
    "lazy": "v5.10: the reserve is kept until it reaches SK_RECLAIM_THRESHOLD (2 MiB) "
            "or an explicit sk_mem_reclaim; schedules raise it by sk_mem_pages(size)",
}


class SkMemcg(Protocol):
    """``sk->sk_memcg`` as the socket code uses it (mm/memcontrol.c, v6.18.19)."""

    def charge(self, nr_pages: int) -> bool:
        """``mem_cgroup_sk_charge``: ``try_charge_memcg``; False if it did not fit."""
        ...

    def uncharge(self, nr_pages: int) -> None:
        """``mem_cgroup_sk_uncharge``: ``refill_stock``."""
        ...


@dataclass(slots=True)
class MemcgCalls:
    """A memcg that records every call and always fits (the contract's machine has
    no limit on the benchmark's memcgs)."""

    calls: list[tuple[str, int]] = field(default_factory=list)

    def charge(self, nr_pages: int) -> bool:
        self.calls.append(("charge", nr_pages))
        return True

    def uncharge(self, nr_pages: int) -> None:
        self.calls.append(("uncharge", nr_pages))


@dataclass(slots=True)
class Sock:
    """The accounting fields of ``struct sock`` (and ``struct udp_sock``) a benchmark moves."""

    era: str = "eager"
    #: sk->sk_memcg; None when the socket has none (root, or created in softirq)
    memcg: SkMemcg | None = None
    #: sk_has_account(): the protocol has memory_allocated (TCP, UDP, SCTP)
    has_account: bool = True
    sk_forward_alloc: int = 0
    sk_reserved_mem: int = 0
    sk_wmem_queued: int = 0
    sk_rmem_alloc: int = 0
    #: struct udp_sock: bytes released by recvmsg but not yet given back
    forward_deficit: int = 0
    forward_threshold: int = UDP_FORWARD_THRESHOLD

    def __post_init__(self) -> None:
        if self.era not in ERAS:
            raise ValueError(f"era={self.era!r}: must be one of {', '.join(ERAS)}")


def sk_mem_pages(amt: int) -> int:
    """Whole pages (quanta) covering ``amt`` bytes: ``sk_mem_pages`` in include/net/sock.h.

    6.18.19 rounds to PAGE_SIZE, v5.10 to SK_MEM_QUANTUM; both are 4096 on x86-64.

    >>> sk_mem_pages(1), sk_mem_pages(4096), sk_mem_pages(4097), sk_mem_pages(0)
    (1, 1, 2, 0)
    """
    return (amt + PAGE_SIZE - 1) >> PAGE_SHIFT


def sk_has_account(sk: Sock) -> bool:
    """``sk_has_account``: the protocol supports memory accounting (``memory_allocated``)."""
    return sk.has_account


def __sk_mem_raise_allocated(sk: Sock, size: int, amt: int, kind: int) -> bool:
    """``__sk_mem_raise_allocated`` (net/core/sock.c): the memcg charge of ``amt`` pages.

    Both eras charge the socket's memcg first (6.18: ``mem_cgroup_sk_charge``; v5.10:
    ``mem_cgroup_charge_skmem``) and fail the schedule if it does not fit. The
    protocol's limits are not modelled (module docstring): the "Under limit" return.
    A failed memcg charge goes to ``suppress_allocation``, whose forced charge of a
    stream socket under its sndbuf is not modelled either: nothing fails here.
    """
    del size, kind  # only the protocol-limit branches, not modelled, read them
    if sk.memcg is not None and not sk.memcg.charge(amt):
        return False
    return True


def __sk_mem_schedule(sk: Sock, size: int, kind: int) -> bool:
    """``__sk_mem_schedule``: raise ``sk_forward_alloc`` by ``sk_mem_pages(size)`` pages.

    The same code in both eras (v5.10 shifts by SK_MEM_QUANTUM_SHIFT, 6.18 by
    PAGE_SHIFT); the callers differ in the ``size`` they pass.
    """
    amt = sk_mem_pages(size)
    sk.sk_forward_alloc += amt << PAGE_SHIFT
    ret = __sk_mem_raise_allocated(sk, size, amt, kind)
    if not ret:
        sk.sk_forward_alloc -= amt << PAGE_SHIFT
    return ret


def __sk_mem_reduce_allocated(sk: Sock, amount: int) -> None:
    """``__sk_mem_reduce_allocated``: uncharge ``amount`` pages from the socket's memcg."""
    if sk.memcg is not None:
        sk.memcg.uncharge(amount)


def __sk_mem_reclaim(sk: Sock, amount: int) -> None:
    """``__sk_mem_reclaim``: give back ``amount`` bytes rounded down to whole pages."""
    amount >>= PAGE_SHIFT
    sk.sk_forward_alloc -= amount << PAGE_SHIFT
    if amount:
        # The kernel calls __sk_mem_reduce_allocated(sk, 0) too when amount rounds
        # to 0 (never from sk_mem_reclaim, which tests >= a page first); a zero
        # uncharge changes nothing, so it is not reported.
        __sk_mem_reduce_allocated(sk, amount)


def sk_wmem_schedule(sk: Sock, size: int) -> bool:
    """``sk_wmem_schedule`` (include/net/sock.h): make room for ``size`` send bytes.

    eager: raise by the missing ``delta = size - sk_forward_alloc`` only; lazy (v5.10):
    ``size <= sk_forward_alloc ||`` raise by ``sk_mem_pages(size)``.
    """
    if not sk_has_account(sk):
        return True
    if sk.era == "lazy":
        return size <= sk.sk_forward_alloc or __sk_mem_schedule(sk, size, SK_MEM_SEND)
    delta = size - sk.sk_forward_alloc
    return delta <= 0 or __sk_mem_schedule(sk, delta, SK_MEM_SEND)


def sk_rmem_schedule(sk: Sock, size: int, pfmemalloc: bool = False) -> bool:
    """``sk_rmem_schedule`` (``__sk_rmem_schedule`` in 6.18): room for ``size`` receive bytes.

    The same rule as :func:`sk_wmem_schedule` per era, and a pfmemalloc skb is
    always accepted.
    """
    if not sk_has_account(sk):
        return True
    if sk.era == "lazy":
        return (size <= sk.sk_forward_alloc or __sk_mem_schedule(sk, size, SK_MEM_RECV)
                or pfmemalloc)
    delta = size - sk.sk_forward_alloc
    return delta <= 0 or __sk_mem_schedule(sk, delta, SK_MEM_RECV) or pfmemalloc


def sk_unused_reserved_mem(sk: Sock) -> int:
    """``sk_unused_reserved_mem`` (6.18; SO_RESERVE_MEM): reserved bytes not in use."""
    if not sk.sk_reserved_mem:
        return 0
    unused_mem = sk.sk_reserved_mem - sk.sk_wmem_queued - sk.sk_rmem_alloc
    return unused_mem if unused_mem > 0 else 0


def sk_mem_reclaim(sk: Sock) -> None:
    """``sk_mem_reclaim``: give back every whole page of the reserve.

    eager: ``reclaimable = sk_forward_alloc - sk_unused_reserved_mem``, reclaimed
    when at least a page; lazy (v5.10): the whole reserve, when at least a quantum.
    """
    if not sk_has_account(sk):
        return
    if sk.era == "lazy":
        if sk.sk_forward_alloc >= SK_MEM_QUANTUM:
            __sk_mem_reclaim(sk, sk.sk_forward_alloc)
        return
    reclaimable = sk.sk_forward_alloc - sk_unused_reserved_mem(sk)
    if reclaimable >= PAGE_SIZE:
        __sk_mem_reclaim(sk, reclaimable)


def sk_mem_reclaim_partial(sk: Sock) -> None:
    """``sk_mem_reclaim_partial`` (v5.10): reclaim all but the last partial quantum.

    v6.18.19 has no such function, so the eager era has no such call: asking for it
    is an error rather than a silent no-op.
    """
    if sk.era != "lazy":
        raise ValueError("sk_mem_reclaim_partial: the eager era (v6.18.19) has no such "
                         "function; valid only with era='lazy'")
    if not sk_has_account(sk):
        return
    if sk.sk_forward_alloc > SK_MEM_QUANTUM:
        __sk_mem_reclaim(sk, sk.sk_forward_alloc - 1)


def sk_mem_charge(sk: Sock, size: int) -> None:
    """``sk_mem_charge``: take ``size`` bytes from the reserve (no memcg call)."""
    if not sk_has_account(sk):
        return
    sk.sk_forward_alloc -= size


def sk_mem_uncharge(sk: Sock, size: int) -> None:
    """``sk_mem_uncharge``: give ``size`` bytes back to the reserve.

    eager: then ``sk_mem_reclaim`` (every whole page goes back to the memcg);
    lazy (v5.10): only when the reserve reaches SK_RECLAIM_THRESHOLD, and then
    SK_RECLAIM_CHUNK ("If we reach 2 MBytes, reclaim 1 MBytes right now").
    """
    if not sk_has_account(sk):
        return
    sk.sk_forward_alloc += size
    if sk.era == "lazy":
        if sk.sk_forward_alloc >= SK_RECLAIM_THRESHOLD:
            __sk_mem_reclaim(sk, SK_RECLAIM_CHUNK)
        return
    sk_mem_reclaim(sk)


def sk_forced_mem_schedule(sk: Sock, size: int) -> None:
    """``sk_forced_mem_schedule`` (net/ipv4/tcp_output.c): room for an skb that must be sent.

    TCP uses it for the first skb of an idle connection (``tcp_stream_alloc_skb``
    with both queues empty) and for a FIN. eager: ``delta = size - sk_forward_alloc``,
    charged as ``sk_mem_pages(delta)`` with ``__GFP_NOFAIL``; lazy (v5.10): nothing if
    ``size <= sk_forward_alloc``, else ``sk_mem_pages(size)``. It cannot fail.
    """
    if sk.era == "lazy":
        if size <= sk.sk_forward_alloc:
            return
        amt = sk_mem_pages(size)
    else:
        delta = size - sk.sk_forward_alloc
        if delta <= 0:
            return
        amt = sk_mem_pages(delta)
    sk.sk_forward_alloc += amt << PAGE_SHIFT
    if sk.memcg is not None:
        sk.memcg.charge(amt)  # __GFP_NOFAIL: the charge is forced through


def udp_rmem_schedule(sk: Sock, size: int) -> bool:
    """``udp_rmem_schedule`` (net/ipv4/udp.c, 6.18.19): raise the reserve by the missing delta."""
    delta = size - sk.sk_forward_alloc
    return not (delta > 0 and not __sk_mem_schedule(sk, delta, SK_MEM_RECV))


def udp_enqueue_schedule(sk: Sock, size: int) -> bool:
    """The reserve half of ``__udp_enqueue_schedule_skb`` for one skb of ``size`` truesize.

    eager (6.18.19): ``udp_rmem_schedule(sk, size)``, then ``sk_forward_alloc -= size``.
    lazy (v5.10): ``if (size >= sk_forward_alloc)`` raise by ``sk_mem_pages(size)``
    (a ``>=``, and the whole size); then the same subtraction. The receive-buffer
    checks before it (``sk_rcvbuf``) are the caller's.
    """
    if sk.era == "lazy":
        if size >= sk.sk_forward_alloc:
            amt = sk_mem_pages(size)
            if not __sk_mem_raise_allocated(sk, amt << PAGE_SHIFT, amt, SK_MEM_RECV):
                return False
            sk.sk_forward_alloc += amt << PAGE_SHIFT
    elif not udp_rmem_schedule(sk, size):
        return False
    sk.sk_forward_alloc -= size
    sk.sk_rmem_alloc += size
    return True


def udp_rmem_release(sk: Sock, size: int, partial: int, reader_queue_empty: bool) -> None:
    """``udp_rmem_release`` (net/ipv4/udp.c): give back a dequeued skb's ``size`` bytes.

    With ``partial`` (recvmsg), the release is deferred while the deficit is below
    ``forward_threshold`` and the reader queue still holds skbs, and then one byte
    is kept, so up to a page stays in the reserve; ``partial = 0`` (close) keeps
    nothing. 6.18.19: ``amt = (size + sk_forward_alloc - partial) & ~(PAGE_SIZE - 1)``;
    v5.10 adds ``size`` to the reserve first and rounds ``sk_forward_alloc - partial``
    to SK_MEM_QUANTUM: the same arithmetic.
    """
    if partial:
        sk.forward_deficit += size
        size = sk.forward_deficit
        if size < sk.forward_threshold and not reader_queue_empty:
            return
    else:
        size += sk.forward_deficit
    sk.forward_deficit = 0
    amt = (size + sk.sk_forward_alloc - partial) & ~(PAGE_SIZE - 1)
    sk.sk_forward_alloc += size - amt
    if amt:
        __sk_mem_reduce_allocated(sk, amt >> PAGE_SHIFT)
    sk.sk_rmem_alloc -= size
