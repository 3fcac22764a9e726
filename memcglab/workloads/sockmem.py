"""Socket memory accounting over whole event arrays: the fast path of :mod:`memcglab.kernel.sock`.

A generator describes what a benchmark does to its sockets as a time-ordered list
of events; :func:`socket_pages` replays them through the rules of
:mod:`memcglab.kernel.sock` (``sk_forward_alloc``, in the ``eager`` or ``lazy``
era) and returns, per event, the pages the socket's memcg is charged (> 0) or
uncharged (< 0), 0 when the reserve absorbs it. It is a compiled loop, and a
differential test checks it against the faithful port on random event lists.

Events (``sched`` and ``amount`` are bytes):

* ``SCHEDULE``: ``sk_wmem_schedule``/``sk_rmem_schedule(sched)``, then
  ``sk_mem_charge(amount)``;
* ``FORCED``: ``sk_forced_mem_schedule(sched)``, then ``sk_mem_charge(amount)``
  (TCP's first skb on an idle connection);
* ``RECLAIM``: ``sk_mem_uncharge(amount)``, which reclaims per the era;
* ``UDP_ENQUEUE``: the reserve half of ``__udp_enqueue_schedule_skb`` for an skb of
  ``amount`` truesize;
* ``UDP_RELEASE``: ``udp_rmem_release(amount, partial=1)`` from recvmsg, ``sched``
  = 1 when the reader queue is empty afterwards;
* ``UDP_CLOSE``: ``udp_rmem_release(amount, partial=0)`` (``udp_destruct_common``);
* ``TCP_RCV``: a data segment reaching ``tcp_rcv_established`` whose ACK frees
  ``freed`` bytes of the socket's own sent skbs. The fast path (``truesize <=
  sk_forward_alloc``) charges the skb (``amount``) from the reserve first and then
  frees the acked skbs (``sk_mem_uncharge(freed)``); the slow path (``step5``)
  frees first (``tcp_ack``) and then schedules ``sched`` (``tcp_data_queue`` ->
  ``tcp_try_rmem_schedule``) and charges. Up to two memcg calls.

:func:`socket_calls` returns both calls of each event; :func:`socket_pages` their sum.

>>> ev = np.array([SCHEDULE, RECLAIM, SCHEDULE, RECLAIM], dtype=np.int8)
>>> size = np.full(4, 961)
>>> socket_pages(np.zeros(4), ev, size, size).tolist()
[1, -1, 1, -1]
>>> socket_pages(np.zeros(4), ev, size, size, era="lazy").tolist()
[1, 0, 0, 0]
"""

from __future__ import annotations

import numba
import numpy as np

from memcglab.kernel.sock import (
    ERAS,
    PAGE_SIZE,
    SK_RECLAIM_CHUNK,
    SK_RECLAIM_THRESHOLD,
    UDP_FORWARD_THRESHOLD,
    sk_mem_pages,
)

__all__ = ["SCHEDULE", "RECLAIM", "UDP_ENQUEUE", "UDP_RELEASE", "UDP_CLOSE", "FORCED",
           "TCP_RCV", "EVENTS", "socket_calls", "socket_pages", "pages_of"]

SCHEDULE, RECLAIM, UDP_ENQUEUE, UDP_RELEASE, UDP_CLOSE, FORCED, TCP_RCV = 0, 1, 2, 3, 4, 5, 6
#: event -> the kernel call it stands for
EVENTS = {
    SCHEDULE: "sk_wmem_schedule / sk_rmem_schedule(sched); sk_mem_charge(amount)",
    RECLAIM: "sk_mem_uncharge(amount)",
    UDP_ENQUEUE: "__udp_enqueue_schedule_skb: udp_rmem_schedule(amount)",
    UDP_RELEASE: "udp_rmem_release(amount, partial=1)",
    UDP_CLOSE: "udp_rmem_release(amount, partial=0)",
    FORCED: "sk_forced_mem_schedule(sched); sk_mem_charge(amount)",
    TCP_RCV: "tcp_rcv_established: charge amount (sk_rmem_schedule(sched) on the slow "
             "path) and sk_mem_uncharge(freed), in the path's order",
}


@numba.njit(cache=True)
def _schedule(fwd, s, size, page, lazy):  # pragma: no cover - jitted
    """Pages a schedule of ``size`` raises the reserve by (sk_wmem/rmem/forced)."""
    if lazy:
        if size > fwd[s]:  # v5.10: size <= fwd || __sk_mem_schedule(sk, size)
            amt = (size + page - 1) // page
            fwd[s] += amt * page
            return amt
        return 0
    delta = size - fwd[s]  # 6.18: the missing delta only
    if delta > 0:
        amt = (delta + page - 1) // page
        fwd[s] += amt * page
        return amt
    return 0


@numba.njit(cache=True)
def _uncharge(fwd, s, size, page, lazy, reclaim_threshold,
              reclaim_chunk):  # pragma: no cover - jitted
    """Pages sk_mem_uncharge(size) reclaims (as a positive number)."""
    fwd[s] += size
    if lazy:
        if fwd[s] >= reclaim_threshold:
            amt = reclaim_chunk // page
            fwd[s] -= amt * page
            return amt
        return 0
    if fwd[s] >= page:
        amt = fwd[s] // page
        fwd[s] -= amt * page
        return amt
    return 0


@numba.njit(cache=True)
def _calls(sock, event, sched, amount, freed, threshold, nsock, page, lazy,
           reclaim_threshold, reclaim_chunk):  # pragma: no cover - jitted
    fwd = np.zeros(nsock, dtype=np.int64)
    deficit = np.zeros(nsock, dtype=np.int64)
    out = np.zeros((len(sock), 2), dtype=np.int64)
    for i in range(len(sock)):
        s = sock[i]
        e = event[i]
        if e == SCHEDULE or e == FORCED:
            out[i, 0] = _schedule(fwd, s, sched[i], page, lazy)
            fwd[s] -= amount[i]
        elif e == RECLAIM:
            out[i, 0] = -_uncharge(fwd, s, amount[i], page, lazy, reclaim_threshold,
                                   reclaim_chunk)
        elif e == TCP_RCV:
            if amount[i] > fwd[s]:  # slow path: tcp_ack, then tcp_data_queue
                if freed[i]:
                    out[i, 0] = -_uncharge(fwd, s, freed[i], page, lazy, reclaim_threshold,
                                           reclaim_chunk)
                out[i, 1] = _schedule(fwd, s, sched[i], page, lazy)
                fwd[s] -= amount[i]
            else:  # fast path: tcp_queue_rcv, then tcp_ack
                fwd[s] -= amount[i]
                if freed[i]:
                    out[i, 0] = -_uncharge(fwd, s, freed[i], page, lazy, reclaim_threshold,
                                           reclaim_chunk)
        elif e == UDP_ENQUEUE:
            size = amount[i]
            if lazy:
                if size >= fwd[s]:  # v5.10: size >= fwd, sk_mem_pages(size)
                    amt = (size + page - 1) // page
                    fwd[s] += amt * page
                    out[i, 0] = amt
            else:
                out[i, 0] = _schedule(fwd, s, size, page, False)
            fwd[s] -= size
        else:  # UDP_RELEASE, UDP_CLOSE
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
            out[i, 0] = -(amt // page)
    return out


def socket_calls(sock: np.ndarray, event: np.ndarray, sched: np.ndarray, amount: np.ndarray,
                 freed: np.ndarray | None = None, threshold: np.ndarray | None = None,
                 era: str = "eager") -> np.ndarray:
    """The memcg calls of each event, in order: shape (events, 2), pages signed (> 0 a
    charge, < 0 an uncharge, 0 no call); the second column is only ``TCP_RCV``'s slow path.

    ``sock`` numbers the sockets from 0 (each starts with an empty reserve);
    ``freed`` is ``TCP_RCV``'s acked bytes (0 elsewhere); ``threshold`` each socket's
    UDP ``forward_threshold`` (default: the kernel's for the default receive buffer);
    ``era`` is ``eager`` or ``lazy`` (:data:`memcglab.kernel.sock.ERAS`).
    """
    if era not in ERAS:
        raise ValueError(f"era={era!r}: must be one of {', '.join(ERAS)}")
    sock = np.ascontiguousarray(sock, dtype=np.int64)
    nsock = int(sock.max()) + 1 if len(sock) else 0
    if threshold is None:
        threshold = np.full(nsock, UDP_FORWARD_THRESHOLD, dtype=np.int64)
    if freed is None:
        freed = np.zeros(len(sock), dtype=np.int64)
    return _calls(sock, np.ascontiguousarray(event, dtype=np.int8),
                  np.ascontiguousarray(sched, dtype=np.int64),
                  np.ascontiguousarray(amount, dtype=np.int64),
                  np.ascontiguousarray(freed, dtype=np.int64),
                  np.ascontiguousarray(threshold, dtype=np.int64), nsock, PAGE_SIZE,
                  era == "lazy", SK_RECLAIM_THRESHOLD, SK_RECLAIM_CHUNK)


def socket_pages(sock: np.ndarray, event: np.ndarray, sched: np.ndarray, amount: np.ndarray,
                 threshold: np.ndarray | None = None, era: str = "eager") -> np.ndarray:
    """Net pages each event charges (> 0) or uncharges (< 0): :func:`socket_calls` summed."""
    return socket_calls(sock, event, sched, amount, None, threshold, era).sum(axis=1)


def pages_of(nbytes: int) -> int:
    """``sk_mem_pages``: whole pages covering ``nbytes``.

    >>> pages_of(1), pages_of(4096), pages_of(4097)
    (1, 1, 2)
    """
    return sk_mem_pages(nbytes)
