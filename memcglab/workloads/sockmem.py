"""Socket memory accounting: which socket events reach the memcg, and how many pages.

A socket charges its memcg through ``sk->sk_forward_alloc``, a per-socket byte
reserve (include/net/sock.h, net/core/sock.c, v6.x as read for issue 10). Bytes are
taken from the reserve (``sk_mem_charge``) and given back (``sk_mem_uncharge``);
only when the reserve runs short or holds a whole page does the memcg see a call:

* ``__sk_mem_schedule`` (net/core/sock.c) raises the reserve by
  ``sk_mem_pages(delta)`` whole pages, ``delta = size - sk_forward_alloc``, when
  ``sk_wmem_schedule``/``sk_rmem_schedule`` (include/net/sock.h) find the reserve
  short; ``__sk_mem_raise_allocated`` then calls ``mem_cgroup_sk_charge`` ->
  ``try_charge_memcg`` for those pages (mm/memcontrol.c; cgroup v2): a trace
  ``charge``. TCP's ``sk_forced_mem_schedule`` (net/ipv4/tcp_output.c), used when
  the write queues are empty, charges the same ``sk_mem_pages(delta)``.
* ``sk_mem_uncharge`` calls ``sk_mem_reclaim``, which returns every whole page of
  the reserve (``reclaimable >= PAGE_SIZE`` -> ``__sk_mem_reclaim`` ->
  ``__sk_mem_reduce_allocated`` -> ``mem_cgroup_sk_uncharge`` -> ``refill_stock``):
  a trace ``uncharge``. ``sk_unused_reserved_mem`` is 0 (no SO_RESERVE_MEM).
* UDP receive has its own rules (net/ipv4/udp.c): ``__udp_enqueue_schedule_skb``
  raises the reserve with ``udp_rmem_schedule`` as above, but ``udp_rmem_release``
  (``partial`` = 1 on ``recvmsg``) defers the release while ``forward_deficit`` is
  below ``forward_threshold`` (``sk_rcvbuf >> 2``) and the reader queue is not
  empty, and then keeps one byte, so up to a whole page stays in the reserve:
  ``amt = (size + sk_forward_alloc - 1) & ~(PAGE_SIZE - 1)``. Only
  ``udp_destruct_common`` (close, ``partial`` = 0) gives the last page back.

The per-CPU ``per_cpu_fw_alloc`` batching of ``sk_memory_allocated_add``
(``net_hotdata.sysctl_mem_pcpu_rsv``, 1 MiB per CPU) batches only the protocol-wide
``memory_allocated`` counter: ``mem_cgroup_sk_charge`` is called on every
``__sk_mem_raise_allocated``, so that batching does not change the memcg's calls.

:func:`socket_pages` replays a time-ordered list of socket events through these
rules and returns, per event, the pages charged (positive) or uncharged (negative).

>>> import numpy as np
>>> ev = np.array([SCHEDULE, RECLAIM], dtype=np.int8)
>>> socket_pages(np.array([0, 0]), ev, np.array([1281, 0]), np.array([1281, 1281])).tolist()
[1, -1]
"""

from __future__ import annotations

import numba
import numpy as np

from memcglab.trace import OP_CHARGE, OP_UNCHARGE, Trace
from memcglab.workloads.common import PAGE_SIZE, from_columns

__all__ = ["SCHEDULE", "RECLAIM", "UDP_ENQUEUE", "UDP_RELEASE", "UDP_CLOSE", "socket_pages",
           "pages_of", "socket_trace", "SocketEvents"]

#: sk_{w,r}mem_schedule(sched) then sk_mem_charge(amount)
SCHEDULE = 0
#: sk_mem_uncharge(amount), which calls sk_mem_reclaim
RECLAIM = 1
#: __udp_enqueue_schedule_skb: udp_rmem_schedule(amount), then the reserve drops by amount
UDP_ENQUEUE = 2
#: udp_rmem_release(amount, partial=1): recvmsg's release; sched is 1 if the reader
#: queue is empty afterwards, else 0
UDP_RELEASE = 3
#: udp_rmem_release(amount, partial=0) from udp_destruct_common: the close
UDP_CLOSE = 4


@numba.njit(cache=True)
def _pages(sock, event, sched, amount, threshold, nsock, page):  # pragma: no cover - jitted
    fwd = np.zeros(nsock, dtype=np.int64)
    deficit = np.zeros(nsock, dtype=np.int64)
    out = np.zeros(len(sock), dtype=np.int64)
    for i in range(len(sock)):
        s = sock[i]
        e = event[i]
        if e == SCHEDULE or e == UDP_ENQUEUE:
            need = sched[i] if e == SCHEDULE else amount[i]
            delta = need - fwd[s]
            if delta > 0:
                amt = (delta + page - 1) // page  # sk_mem_pages(delta)
                fwd[s] += amt * page
                out[i] = amt
            fwd[s] -= amount[i]
        elif e == RECLAIM:
            fwd[s] += amount[i]
            if fwd[s] >= page:  # sk_mem_reclaim -> __sk_mem_reclaim
                amt = fwd[s] // page
                fwd[s] -= amt * page
                out[i] = -amt
        else:
            size = amount[i]
            partial = 1 if e == UDP_RELEASE else 0
            if partial == 1:
                deficit[s] += size
                size = deficit[s]
                if size < threshold[s] and sched[i] == 0:
                    continue
            else:
                size += deficit[s]
            deficit[s] = 0
            amt = (size + fwd[s] - partial) // page * page
            fwd[s] += size - amt
            out[i] = -(amt // page)
    return out


def socket_pages(sock: np.ndarray, event: np.ndarray, sched: np.ndarray, amount: np.ndarray,
                 threshold: np.ndarray | None = None) -> np.ndarray:
    """Pages each event charges (> 0) or uncharges (< 0), in the given (time) order.

    ``sock`` numbers the sockets from 0; ``event`` is one of the constants above;
    ``sched`` and ``amount`` are bytes (see each constant); ``threshold`` is each
    socket's UDP ``forward_threshold`` (unused by the other events).
    """
    sock = np.ascontiguousarray(sock, dtype=np.int64)
    nsock = int(sock.max()) + 1 if len(sock) else 0
    if threshold is None:
        threshold = np.zeros(nsock, dtype=np.int64)
    return _pages(sock, np.ascontiguousarray(event, dtype=np.int8),
                  np.ascontiguousarray(sched, dtype=np.int64),
                  np.ascontiguousarray(amount, dtype=np.int64),
                  np.ascontiguousarray(threshold, dtype=np.int64), nsock, PAGE_SIZE)


def pages_of(nbytes: int) -> int:
    """``sk_mem_pages``: whole pages covering ``nbytes``.

    >>> pages_of(1), pages_of(4096), pages_of(4097)
    (1, 1, 2)
    """
    return -(-nbytes // PAGE_SIZE)


def socket_trace(cpus: int, head: np.ndarray, time: np.ndarray, sock: np.ndarray,
                 event: np.ndarray, sched: np.ndarray, amount: np.ndarray, cpu: np.ndarray,
                 sock_memcg: np.ndarray, source: str,
                 threshold: np.ndarray | None = None) -> Trace:
    """The trace of socket events: sorted by ``time`` (stable), accounted with
    :func:`socket_pages`, and only the events that reach the memcg kept, each as a
    ``charge`` or ``uncharge`` of its socket's memcg (``sock_memcg[sock]``) on ``cpu``."""
    order = np.argsort(time, kind="stable")
    sock, cpu = np.asarray(sock)[order], np.asarray(cpu)[order]
    pages = socket_pages(sock, np.asarray(event)[order], np.asarray(sched)[order],
                         np.asarray(amount)[order], threshold)
    keep = pages != 0
    op = np.where(pages[keep] > 0, OP_CHARGE, OP_UNCHARGE).astype(np.uint8)
    return from_columns(cpus, head, op, cpu[keep], np.asarray(sock_memcg)[sock[keep]],
                        np.abs(pages[keep]).astype(np.uint64), source)


class SocketEvents:
    """Socket events gathered a batch at a time, then made a trace by :func:`socket_trace`.

    A batch gives each column (time, socket, event, sched, amount, CPU) as an array,
    or as one value for the whole batch.

    >>> ev = SocketEvents()
    >>> ev.add(np.array([0.5, 1.5]), 0, SCHEDULE, 100, 100, np.array([1, 2]))
    >>> ev.add(2.0, 0, RECLAIM, 0, 100, 1, size=1)
    >>> [c.tolist() for c in ev.columns()]
    [[0.5, 1.5, 2.0], [0, 0, 0], [0, 0, 1], [100, 100, 0], [100, 100, 100], [1, 2, 1]]
    """

    def __init__(self) -> None:
        self._cols: list[list[np.ndarray]] = [[] for _ in range(6)]

    def add(self, time: np.ndarray | float, sock: np.ndarray | int, event: int,
            sched: np.ndarray | int, amount: np.ndarray | int, cpu: np.ndarray | int, *,
            size: int | None = None, where: np.ndarray | None = None) -> None:
        """Add ``size`` events (``len(time)`` unless given), only those ``where`` is true."""
        n = np.shape(time)[0] if size is None else size
        for col, value in zip(self._cols, (time, sock, event, sched, amount, cpu), strict=True):
            column = np.broadcast_to(value, (n,))
            col.append(column if where is None else column[where])

    def columns(self) -> tuple[np.ndarray, ...]:
        """``(time, sock, event, sched, amount, cpu)``, the batches in the order added."""
        return tuple(np.concatenate(col) for col in self._cols)

    def trace(self, cpus: int, head: np.ndarray, sock_memcg: np.ndarray, source: str,
              threshold: np.ndarray | None = None) -> Trace:
        """:func:`socket_trace` of the events added so far."""
        return socket_trace(cpus, head, *self.columns(), sock_memcg, source, threshold)
