"""AF_UNIX stream sockets: lmbench bw_unix and lat_unix, hackbench's socket mode.

Each benchmark writes on ``socketpair(AF_UNIX, SOCK_STREAM)`` ends: bw_unix's writer
(the forked child of ``initialize``) writes 64 KiB ``XFERSIZE`` chunks the reader
(the benchmp child) reads; lat_unix ping-pongs one byte between the benchmp child
and its forked echo child; each hackbench sender writes ``datasize`` bytes to every
receiver of its group, ``loops`` times, each receiver reading its own socket.

What a write charges (v6.18.19): ``unix_create1`` sets ``sk->sk_allocation =
GFP_KERNEL_ACCOUNT`` and ``unix_stream_proto`` has no ``memory_allocated``, so there
is no ``sk_forward_alloc`` and no socket charge, but every buffer of every write is
kmem-charged to the *writer's* memcg (``current_obj_cgroup()`` at allocation):

* ``unix_stream_sendmsg`` cuts the write into skbs of at most ``SKB_MAX_HEAD(0) +
  UNIX_SKB_FRAGS_SZ`` bytes (and half the send buffer), the part above a page's head
  room in page frags;
* ``__alloc_skb`` takes the ``sk_buff`` from the CPU's ``napi_alloc_cache`` if it has
  one (uncharged) or from ``skbuff_head_cache`` with ``__GFP_ACCOUNT`` (an object
  charge of ``obj_full_size``): the ``napi_cache`` alternative;
* ``kmalloc_reserve`` skips the small-head cache for ``__GFP_ACCOUNT`` and charges
  the head from ``kmalloc-cg-N``;
* ``alloc_skb_with_frags`` charges each frag page (``__memcg_kmem_charge_page``).

The reader's ``consume_skb`` frees them on the reader's CPU: frags through
``__folio_put`` -> ``mem_cgroup_uncharge`` -> ``uncharge_batch`` (a direct
``memcg_uncharge`` per folio), then the head and the ``sk_buff`` through the obj
stock (``refill_obj_stock``), still charged to the writer's objcg.
"""

from __future__ import annotations

import numba
import numpy as np

from memcglab.workloads.catalogue.events import Events, fifo
from memcglab.workloads.catalogue.rows import (
    FOLIO_FREE,
    KMEM_PAGE,
    SKB_ALLOC,
    SKB_FREE,
    SLAB_ALLOC,
    SLAB_FREE,
    AccountingRow,
    Cite,
    kcite,
)
from memcglab.workloads.catalogue.sizes import (
    OBJCG_POINTER,
    SKBUFF_HEAD_OBJ,
    frag_orders,
    skb_head_kmalloc,
    unix_stream_chunks,
)
from memcglab.workloads.common import Streams, bounded_delay

__all__ = ["UNIX_ROWS", "unix_message", "unix_events", "hackbench_messages", "reader_lag",
           "batch_reads"]

_SEND = kcite("net/unix/af_unix.c", "unix_create1 / unix_stream_sendmsg")
_READ = kcite("net/unix/af_unix.c", "unix_stream_read_generic")
_PSKB = kcite("net/core/sock.c", "sock_alloc_send_pskb")
_FRAGS = kcite("net/core/skbuff.c", "alloc_skb_with_frags")
_NAPI = kcite("net/core/skbuff.c", "napi_skb_cache_get")
_APPS = {
    "bw_unix": Cite("intel/lmbench", "src/bw_unix.c", "941a0dcc0e7bdd9bb0dee05d7f620e77da8c43af",
                    "writer / reader"),
    "lat_unix": Cite("intel/lmbench", "src/lat_unix.c",
                     "941a0dcc0e7bdd9bb0dee05d7f620e77da8c43af", "initialize / benchmark"),
    "socket": Cite("woodsts/rt-tests (mirror of git.kernel.org utils/rt-tests)",
                   "src/hackbench/hackbench.c", "cadd661f984c0e6717e681fdaca1ce589b0ed964",
                   "sender / receiver"),
}
_ACCOUNT = "GFP_KERNEL_ACCOUNT (sk->sk_allocation)"
#: test -> [(row prefix, writer role, reader role)]
DIRECTIONS = {"bw_unix": [("", "writer", "reader")],
              "lat_unix": [("req_", "parent", "child"), ("rsp_", "child", "parent")],
              "socket": [("", "sender", "receiver")]}


def _rows(test: str) -> dict[str, AccountingRow]:
    app = _APPS[test]
    rows = {}
    for p, w, r in DIRECTIONS[test]:
        write = f"{w} write() -> unix_stream_sendmsg -> sock_alloc_send_pskb -> " \
                "alloc_skb_with_frags"
        rows[f"{p}skb_struct"] = AccountingRow(
            f"{p}skb_struct", "obj_charge",
            f"{write} -> alloc_skb -> __alloc_skb (napi_alloc_cache empty) -> "
            "kmem_cache_alloc_node(skbuff_head_cache) -> memcg_slab_post_alloc_hook -> "
            "__memcg_slab_post_alloc_hook -> obj_cgroup_charge_account", _ACCOUNT, "obj stock",
            w, w, "task", f"obj_full_size = {SKBUFF_HEAD_OBJ} B",
            (_SEND, _PSKB, SKB_ALLOC, _NAPI, SLAB_ALLOC, app),
            per_op="1 per skb, if napi_cache = empty")
        rows[f"{p}skb_head"] = AccountingRow(
            f"{p}skb_head", "obj_charge",
            f"{write} -> alloc_skb -> __alloc_skb -> kmalloc_reserve (__GFP_ACCOUNT skips "
            "skb_small_head_cache) -> kmalloc-cg-N -> __memcg_slab_post_alloc_hook -> "
            "obj_cgroup_charge_account", _ACCOUNT, "obj stock", w, w, "task",
            f"kmalloc size of SKB_HEAD_ALIGN(linear bytes) + {OBJCG_POINTER} B",
            (_SEND, SKB_ALLOC, SLAB_ALLOC, app), per_op="1 per skb")
        frag_when = "4 per 64 KiB write" if test == "bw_unix" else \
            "if a write exceeds SKB_MAX_HEAD(0) = 3776 B"
        rows[f"{p}skb_frag"] = AccountingRow(
            f"{p}skb_frag", "page_charge",
            f"{write} -> alloc_pages(__GFP_COMP, order <= 3) -> __alloc_pages -> "
            "__memcg_kmem_charge_page -> obj_cgroup_charge_pages -> try_charge_memcg",
            _ACCOUNT + " & ~__GFP_DIRECT_RECLAIM", "memcg stock", w, w, "task",
            "2^order pages per frag (8; 4, 2, 1 for a 64 KiB write)",
            (_SEND, _FRAGS, KMEM_PAGE, app), per_op=frag_when)
        rows[f"{p}free_frag"] = AccountingRow(
            f"{p}free_frag", "folio_uncharge",
            f"{r} read() -> unix_stream_read_generic -> consume_skb -> skb_release_data "
            "-> __skb_frag_unref -> put_page -> __folio_put -> mem_cgroup_uncharge -> "
            "uncharge_batch -> memcg_uncharge", "-", "direct folio uncharge", w, r, "task",
            "2^order pages per frag", (_READ, SKB_FREE, FOLIO_FREE, app),
            per_op=frag_when)
        rows[f"{p}free_head"] = AccountingRow(
            f"{p}free_head", "obj_uncharge",
            f"{r} read() -> consume_skb -> skb_release_data -> skb_free_head -> kfree -> "
            "memcg_slab_free_hook -> __memcg_slab_free_hook -> refill_obj_stock (the "
            f"{w}'s objcg)", "-", "obj stock", w, r, "task", "as charged",
            (_READ, SKB_FREE, SLAB_FREE, app), per_op="1 per skb")
        rows[f"{p}free_struct"] = AccountingRow(
            f"{p}free_struct", "obj_uncharge",
            f"{r} read() -> consume_skb -> kfree_skbmem -> kmem_cache_free(skbuff_head_cache)"
            f" -> __memcg_slab_free_hook -> refill_obj_stock (the {w}'s objcg)", "-",
            "obj stock", w, r, "task", f"{SKBUFF_HEAD_OBJ} B",
            (_READ, SKB_FREE, SLAB_FREE, app), per_op="1 per skb, if napi_cache = empty")
    return rows


UNIX_ROWS: dict[str, dict[str, AccountingRow]] = {t: _rows(t) for t in DIRECTIONS}


def unix_message(size: int) -> list[tuple[int, list[int]]]:
    """Per skb of a ``size``-byte write: the head's obj charge and each frag's pages.

    >>> unix_message(65536)
    [(4104, [8]), (1032, [4, 2, 1])]
    >>> unix_message(100)
    [(520, [])]
    """
    return [(skb_head_kmalloc(linear) + OBJCG_POINTER, [1 << o for o in frag_orders(paged)])
            for linear, paged in unix_stream_chunks(size)]


def _message(ev: Events, p: str, write: np.ndarray, read: np.ndarray, inst: np.ndarray,
             size: int, napi: str, w_member: np.ndarray | int = 0,
             r_member: np.ndarray | int = 0) -> None:
    """One write of ``size`` bytes at ``write`` and its read at ``read``."""
    sub = 0.0
    for head, frags in unix_message(size):
        if napi == "empty":
            ev.add(f"{p}skb_struct", write + sub, inst, arg=SKBUFF_HEAD_OBJ, member=w_member)
        ev.add(f"{p}skb_head", write + sub + 0.0001, inst, arg=head, member=w_member)
        for n, pages in enumerate(frags):
            ev.add(f"{p}skb_frag", write + sub + 0.0002 * (n + 1), inst, arg=pages,
                   member=w_member)
            ev.add(f"{p}free_frag", read + sub + 0.0002 * n, inst, arg=pages, member=w_member,
                   cpu_member=r_member)
        ev.add(f"{p}free_head", read + sub + 0.0019, inst, arg=head, member=w_member,
               cpu_member=r_member)
        if napi == "empty":
            ev.add(f"{p}free_struct", read + sub + 0.002, inst, arg=SKBUFF_HEAD_OBJ,
                   member=w_member, cpu_member=r_member)
        sub += 0.003


def unix_events(ev: Events, test: str, ninst: int, nops: int, size: int, alternatives: dict,
                rng: np.random.Generator, fds: int = 1) -> None:
    """Add ``nops`` operations of every instance (round ``j``: operation ``j`` of each)."""
    napi = alternatives["napi_cache"]
    if test == "lat_unix":
        i = np.repeat(np.arange(ninst, dtype=np.int64), nops)
        t = np.tile(np.arange(nops, dtype=np.float64), ninst) + 0.5 * rng.random(len(i))
        _message(ev, "req_", t, t + 0.1, i, size, napi)
        _message(ev, "rsp_", t + 0.2, t + 0.3, i, size, napi)
        return
    depth = int(alternatives["queue_depth"])
    if test == "bw_unix":
        i = np.repeat(np.arange(ninst, dtype=np.int64), nops)
        j = np.tile(np.arange(nops, dtype=np.int64), ninst)
        t = j + 0.5 * rng.random(len(i))
        read = fifo(i, j + bounded_delay(rng, len(i), depth) + 0.5 + 0.5 * rng.random(len(i)))
        _message(ev, "", t, read, i, size, napi)
        return
    # hackbench: operation j of a group is the j-th message of its rounds of
    # fds x fds writes, in a random order within each round
    i, s, r, t = hackbench_messages(ninst, nops, fds, rng)
    read = batch_reads(i * fds + r, t, ninst * fds, depth, rng)
    _message(ev, "", t, read, i, size, napi, w_member=s, r_member=r)


def hackbench_messages(ninst: int, nops: int, fds: int,
                       rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """(group, sender, receiver, time) of each group's first ``nops`` messages, time-sorted.

    A round is every sender's write to every receiver (one iteration of the senders'
    ``loops``), in a random order; a group's time counts its messages, so message
    ``k`` of every group falls in ``[k, k + 1)`` and the groups interleave.
    """
    per_round = fds * fds
    i = np.repeat(np.arange(ninst, dtype=np.int64), nops)
    full, part = divmod(nops, per_round)

    def group() -> np.ndarray:
        # whole rounds as permutations; the last, partial round as a sample of it
        rounds = [rng.permutation(per_round) for _ in range(full)]
        if part:
            rounds.append(rng.choice(per_round, part, replace=False))
        return np.concatenate(rounds)

    pair = np.concatenate([group() for _ in range(ninst)])
    t = np.tile(np.arange(nops, dtype=np.float64), ninst) + 0.5 * rng.random(len(i))
    order = np.argsort(t, kind="stable")
    return i[order], (pair // fds)[order], (pair % fds)[order], t[order]


def reader_lag(stream: np.ndarray, t: np.ndarray, streams: int, depth: int,
               rng: np.random.Generator) -> np.ndarray:
    """When each message (time-sorted ``t``) is read: just before the arrival of the
    message ``1..2*depth-1`` later in its reader's stream, or after the last."""
    s = Streams.of(stream, streams)
    later = s.step(stream, s.rank() + bounded_delay(rng, len(t), depth))
    end = t[-1] if len(t) else 0.0
    inside = later < len(t)
    read = np.where(inside, t[np.minimum(later, len(t) - 1)] - 1e-6,
                    end + (later - len(t) + 1) * 1e-3)
    return fifo(stream, read)


@numba.njit(cache=True)
def _next_wake(stream, wake, t):  # pragma: no cover - jitted
    """Per message (stream-sorted): the time of its stream's first wake at or after it."""
    out = np.empty(len(t), dtype=np.float64)
    nxt = np.inf
    for k in range(len(t) - 1, -1, -1):
        if k == len(t) - 1 or stream[k] != stream[k + 1]:
            nxt = np.inf
        if wake[k]:
            nxt = t[k]
        out[k] = nxt
    return out


def batch_reads(stream: np.ndarray, t: np.ndarray, streams: int, depth: int,
                rng: np.random.Generator) -> np.ndarray:
    """When each message (time-sorted ``t``) is read by a reader that sleeps until
    woken and then drains its queue: a hackbench receiver on an oversubscribed machine.

    After each message the reader wakes with probability ``1 / depth`` (so it reads
    ``depth`` messages per wake on average) and reads everything queued; the last
    messages are read after the end.
    """
    s = Streams.of(stream, streams)
    wake = rng.random(len(t)) < 1.0 / depth
    order = s.order
    nxt = _next_wake(np.asarray(stream)[order], wake[order], np.asarray(t)[order])
    end = (t[-1] if len(t) else 0.0) + 1.0
    read = np.empty(len(t), dtype=np.float64)
    read[order] = np.where(np.isfinite(nxt), nxt + 1e-6, end)
    return read
