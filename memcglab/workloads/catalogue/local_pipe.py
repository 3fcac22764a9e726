"""hackbench's pipe mode: anonymous pipes and their two cached pages.

Each receiver of a group reads its own pipe, which every sender of the group writes
(``fdpair`` -> ``pipe()``; hackbench.c). What a write charges (fs/pipe.c, v6.18.19):
``pipe_write`` merges a write's sub-page tail into the last buffer when the pipe is
not empty and the page has room (``PIPE_BUF_FLAG_CAN_MERGE``); otherwise it takes a
new buffer, whose page comes from ``pipe->tmp_page[]`` (two cached pages) or from
``alloc_page(GFP_HIGHUSER | __GFP_ACCOUNT)``, a kmem page charge of the writer's
memcg. ``pipe_read`` releases a buffer when it has read all of it:
``anon_pipe_put_page`` keeps the page in a free ``tmp_page`` slot, or ``put_page``
frees it through ``__folio_put`` -> ``mem_cgroup_uncharge`` (a direct uncharge).

So a pipe charges only when it holds more pages than its two cached ones can
cover: how far the reader falls behind decides everything. A receiver sleeps in
``pipe_read`` until woken and then drains its pipe (``batch_reads``; the
``queue_depth`` alternative is the mean messages per wake): on an oversubscribed
machine (the robot's 100% and 1600% threads) it waits a scheduling round while its
20 senders keep writing, hence its default. A pipe holds at most ``PIPE_DEF_BUFFERS``
(16) buffers: a writer that finds them taken sleeps in ``pipe_write`` and the reader
drains the pipe first.
"""

from __future__ import annotations

import numba
import numpy as np

from memcglab.workloads.catalogue.events import Events
from memcglab.workloads.catalogue.rows import FOLIO_FREE, KMEM_PAGE, AccountingRow, Cite, kcite
from memcglab.workloads.catalogue.sizes import PAGE_SIZE, PIPE_MAX_USAGE, PIPE_TMP_PAGES

__all__ = ["PIPE_ROWS", "pipe_pages", "pipe_events"]

_WRITE = kcite("fs/pipe.c", "pipe_write / anon_pipe_get_page")
_READ = kcite("fs/pipe.c", "pipe_read / anon_pipe_put_page")
_APP = Cite("woodsts/rt-tests (mirror of git.kernel.org utils/rt-tests)",
            "src/hackbench/hackbench.c", "cadd661f984c0e6717e681fdaca1ce589b0ed964",
            "sender / receiver")

PIPE_ROWS: dict[str, AccountingRow] = {
    "page": AccountingRow(
        "page", "page_charge",
        "sender write() -> pipe_write (no room to merge) -> anon_pipe_get_page (tmp_page[] "
        "empty) -> alloc_page -> __alloc_pages -> __memcg_kmem_charge_page -> "
        "obj_cgroup_charge_pages -> try_charge_memcg", "GFP_HIGHUSER | __GFP_ACCOUNT",
        "memcg stock", "sender", "sender", "task", "1 page",
        (_WRITE, KMEM_PAGE, _APP), per_op="when the pipe needs a third page"),
    "free": AccountingRow(
        "free", "folio_uncharge",
        "receiver read() -> pipe_read -> pipe_buf_release -> anon_pipe_buf_release -> "
        "anon_pipe_put_page (both tmp_page slots taken) -> put_page -> __folio_put -> "
        "mem_cgroup_uncharge -> uncharge_batch -> memcg_uncharge", "-",
        "direct folio uncharge", "sender", "receiver", "task", "1 page",
        (_READ, FOLIO_FREE, _APP), per_op="when a read empties a page and both cached slots "
                                          "are taken"),
}


@numba.njit(cache=True)
def _pipe_write(fill, unread, head, tail, tmp, p, size, page, cap):  # pragma: no cover
    """pipe_write of ``size`` bytes into pipe ``p``: the pages it allocates."""
    pages = 0
    chars = size & (page - 1)
    if chars and head[p] != tail[p]:
        last = (head[p] - 1) % cap
        if fill[p, last] + chars <= page:  # PIPE_BUF_FLAG_CAN_MERGE and room
            fill[p, last] += chars
            unread[p, last] += chars
            size -= chars
    while size > 0:
        n = min(size, page)
        if tmp[p] > 0:  # anon_pipe_get_page: a cached page
            tmp[p] -= 1
        else:
            pages += 1  # alloc_page(GFP_HIGHUSER | __GFP_ACCOUNT)
        slot = head[p] % cap
        fill[p, slot] = n
        unread[p, slot] = n
        head[p] += 1
        size -= n
    return pages


@numba.njit(cache=True)
def _pipe_read(unread, head, tail, tmp, p, size, cap, tmp_max):  # pragma: no cover
    """pipe_read of ``size`` bytes from pipe ``p``: the pages it frees."""
    pages = 0
    while size > 0 and head[p] != tail[p]:
        slot = tail[p] % cap
        c = min(size, unread[p, slot])
        unread[p, slot] -= c
        size -= c
        if unread[p, slot] == 0:
            tail[p] += 1
            if tmp[p] < tmp_max:  # anon_pipe_put_page keeps it in tmp_page[]
                tmp[p] += 1
            else:
                pages += 1  # put_page -> __folio_put -> mem_cgroup_uncharge
    return pages


_CAP = 4096  # buffers pipe_pages lets a pipe hold (its callers' pipes stay small)


@numba.njit(cache=True)
def _pipes(kind, pipe, nbytes, npipes, page, tmp_max):  # pragma: no cover - jitted
    fill = np.zeros((npipes, _CAP), dtype=np.int64)
    unread = np.zeros((npipes, _CAP), dtype=np.int64)
    head = np.zeros(npipes, dtype=np.int64)
    tail = np.zeros(npipes, dtype=np.int64)
    tmp = np.zeros(npipes, dtype=np.int64)
    out = np.zeros(len(kind), dtype=np.int64)
    for e in range(len(kind)):
        if kind[e] == 0:
            out[e] = _pipe_write(fill, unread, head, tail, tmp, pipe[e], nbytes[e], page, _CAP)
        else:
            out[e] = _pipe_read(unread, head, tail, tmp, pipe[e], nbytes[e], _CAP, tmp_max)
    return out


@numba.njit(cache=True)
def _hackbench_pipes(npipes, fds, per_pipe, size, depth, seed, page, tmp_max,
                     max_usage):  # pragma: no cover - jitted
    """Every pipe's messages, rounds of ``fds`` (one per sender, in a random order at
    random times of the round), a reader that wakes after a message with probability
    1/depth and drains the pipe, or when a write finds the pipe's ``max_usage``
    buffers taken (the writer sleeps in pipe_write and wakes the reader); returns the
    page events (kind, pipe, message, time, sender, pages)."""
    np.random.seed(seed)
    per_round = fds * fds
    ring = max_usage + 2 * ((size + page - 1) // page) + 2  # slots a pipe can need
    fill = np.zeros((npipes, ring), dtype=np.int64)
    unread = np.zeros((npipes, ring), dtype=np.int64)
    head = np.zeros(npipes, dtype=np.int64)
    tail = np.zeros(npipes, dtype=np.int64)
    tmp = np.zeros(npipes, dtype=np.int64)
    cap = 1024
    ev_kind = np.zeros(cap, dtype=np.int64)
    ev_pipe = np.zeros(cap, dtype=np.int64)
    ev_msg = np.zeros(cap, dtype=np.int64)
    ev_time = np.zeros(cap, dtype=np.float64)
    ev_sender = np.zeros(cap, dtype=np.int64)
    ev_pages = np.zeros(cap, dtype=np.int64)
    n = 0
    for p in range(npipes):
        queued = 0
        for rnd in range((per_pipe + fds - 1) // fds):
            times = np.sort(np.random.random(fds)) * per_round + rnd * per_round
            senders = np.random.permutation(fds)
            for k in range(fds):
                q = rnd * fds + k
                if q >= per_pipe:
                    break
                need = (size + page - 1) // page
                full = head[p] - tail[p] + need > max_usage
                for kind in range(3):
                    if kind == 0:  # a full pipe: the reader drains it first
                        if not full or queued == 0:
                            continue
                        pages = _pipe_read(unread, head, tail, tmp, p, size * queued, ring,
                                           tmp_max)
                        queued = 0
                        when = times[k] - 1e-6
                    elif kind == 1:
                        pages = _pipe_write(fill, unread, head, tail, tmp, p, size, page,
                                            ring)
                        queued += 1
                        when = times[k]
                    else:
                        if np.random.random() >= 1.0 / depth:
                            continue
                        pages = _pipe_read(unread, head, tail, tmp, p, size * queued, ring,
                                           tmp_max)
                        queued = 0
                        when = times[k] + 1e-6
                    if pages == 0:
                        continue
                    if n == cap:
                        cap *= 2
                        ev_kind = np.concatenate((ev_kind, np.zeros_like(ev_kind)))
                        ev_pipe = np.concatenate((ev_pipe, np.zeros_like(ev_pipe)))
                        ev_msg = np.concatenate((ev_msg, np.zeros_like(ev_msg)))
                        ev_time = np.concatenate((ev_time, np.zeros_like(ev_time)))
                        ev_sender = np.concatenate((ev_sender, np.zeros_like(ev_sender)))
                        ev_pages = np.concatenate((ev_pages, np.zeros_like(ev_pages)))
                    ev_kind[n] = 0 if kind == 1 else 1
                    ev_pipe[n] = p
                    ev_msg[n] = q
                    ev_time[n] = when
                    ev_sender[n] = senders[k]
                    ev_pages[n] = pages
                    n += 1
    return ev_kind[:n], ev_pipe[:n], ev_msg[:n], ev_time[:n], ev_sender[:n], ev_pages[:n]


def pipe_pages(kind: np.ndarray, pipe: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
    """Pages each time-ordered write (kind 0) charges or read (kind 1) frees.

    >>> w, r = 0, 1
    >>> pipe_pages(np.array([w, w, r, r]), np.zeros(4, int), np.array([100, 100, 100, 100]))
    array([1, 0, 0, 0])
    """
    pipe = np.ascontiguousarray(pipe, dtype=np.int64)
    npipes = int(pipe.max()) + 1 if len(pipe) else 0
    return _pipes(np.ascontiguousarray(kind, dtype=np.int8), pipe,
                  np.ascontiguousarray(nbytes, dtype=np.int64), npipes, PAGE_SIZE,
                  PIPE_TMP_PAGES)


def pipe_events(ev: Events, ninst: int, nops: int, fds: int, datasize: int,
                alternatives: dict, rng: np.random.Generator) -> None:
    """Add the page traffic of the first ``nops`` messages of every group.

    A group's messages are its pipes' in turn: each receiver's pipe gets one message
    per sender per round, so pipe ``r`` holds ``nops / fds`` of them; message ``q`` of
    a pipe belongs to round ``q // fds`` and the group's time counts its messages.
    Only the writes and reads that move a page make events, so the group's
    messages are never all held in memory.
    """
    per_pipe = -(-nops // fds)
    kind, pipe, _msg, when, sender, pages = _hackbench_pipes(
        ninst * fds, fds, per_pipe, datasize, int(alternatives["queue_depth"]),
        int(rng.integers(0, 2**31 - 1)), PAGE_SIZE, PIPE_TMP_PAGES, PIPE_MAX_USAGE)
    group, receiver = pipe // fds, pipe % fds
    for k, key in ((0, "page"), (1, "free")):
        sel = np.flatnonzero(kind == k)
        sel = np.repeat(sel, pages[sel])  # one alloc_page / put_page per page
        ev.add(key, when[sel], group[sel], arg=1, member=sender[sel],
               cpu_member=sender[sel] if k == 0 else receiver[sel])
