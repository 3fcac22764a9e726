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
20 senders keep writing, hence its default. The pipe's 16 buffers are not a limit
here (the writers' blocking on a full pipe is not modelled).
"""

from __future__ import annotations

import numba
import numpy as np

from memcglab.workloads.catalogue.events import Events
from memcglab.workloads.catalogue.local_unix import batch_reads, hackbench_messages
from memcglab.workloads.catalogue.rows import FOLIO_FREE, KMEM_PAGE, AccountingRow, Cite, kcite
from memcglab.workloads.catalogue.sizes import PAGE_SIZE, PIPE_TMP_PAGES

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
def _pipes(kind, pipe, nbytes, npipes, page, tmp_max):  # pragma: no cover - jitted
    cap = 4096  # buffers a pipe may hold here (more than the kernel's 16: not modelled)
    fill = np.zeros((npipes, cap), dtype=np.int64)
    unread = np.zeros((npipes, cap), dtype=np.int64)
    head = np.zeros(npipes, dtype=np.int64)
    tail = np.zeros(npipes, dtype=np.int64)
    tmp = np.zeros(npipes, dtype=np.int64)
    out = np.zeros(len(kind), dtype=np.int64)
    for e in range(len(kind)):
        p = pipe[e]
        size = nbytes[e]
        if kind[e] == 0:  # pipe_write
            chars = size & (page - 1)
            if chars and head[p] != tail[p]:
                last = (head[p] - 1) % cap
                if fill[p, last] + chars <= page:
                    fill[p, last] += chars
                    unread[p, last] += chars
                    size -= chars
            while size > 0:
                n = min(size, page)
                if tmp[p] > 0:
                    tmp[p] -= 1
                else:
                    out[e] += 1  # alloc_page(GFP_HIGHUSER | __GFP_ACCOUNT)
                slot = head[p] % cap
                fill[p, slot] = n
                unread[p, slot] = n
                head[p] += 1
                size -= n
        else:  # pipe_read of `size` bytes
            while size > 0 and head[p] != tail[p]:
                slot = tail[p] % cap
                c = min(size, unread[p, slot])
                unread[p, slot] -= c
                size -= c
                if unread[p, slot] == 0:
                    tail[p] += 1
                    if tmp[p] < tmp_max:
                        tmp[p] += 1
                    else:
                        out[e] += 1  # put_page -> __folio_put -> mem_cgroup_uncharge
    return out


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
    """Add the first ``nops`` messages of every group and the page traffic they cause."""
    i, s, r, t = hackbench_messages(ninst, nops, fds, rng)
    pipe = i * fds + r
    read = batch_reads(pipe, t, ninst * fds, int(alternatives["queue_depth"]), rng)
    n = len(t)
    when = np.concatenate([t, read])
    order = np.argsort(when, kind="stable")
    kind = np.repeat(np.array([0, 1], dtype=np.int8), n)[order]
    pages = pipe_pages(kind, np.tile(pipe, 2)[order], np.full(2 * n, datasize))
    msg = np.tile(np.arange(n), 2)[order]
    for k, key in ((0, "page"), (1, "free")):
        sel = np.flatnonzero((kind == k) & (pages > 0))
        sel = np.repeat(sel, pages[sel])  # one alloc_page / put_page per page
        m = msg[sel]
        ev.add(key, when[order][sel], i[m], arg=1, member=s[m],
               cpu_member=s[m] if k == 0 else r[m])
