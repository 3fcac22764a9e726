"""Hand-worked event logs: one operation of each catalogue test, exact, and what the
replay makes of it (walks, stock hits, obj-stock bytes).

Each log is the first operation of one instance from fresh sockets and stocks, on a
4-CPU machine without SMT (the first task of the instance on CPU 0, the second on
CPU 1), in the ``lkp`` layout (memcg 2, below system.slice). The expectations are
worked by hand from the accounting rows; the comments show the arithmetic.
"""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.replay import replay
from memcglab.trace import OP_NAMES, Trace
from memcglab.workloads.catalogue import TESTS, BenchmarkSpec, Machine
from memcglab.workloads.catalogue.events import Events, Roles
from memcglab.workloads.catalogue.layout import cgroups

M = 2  # the lkp layout's service memcg


def one_operation(family: str, test: str, keys: dict, era: str = "eager",
                  alternatives: dict | None = None,
                  operations: int = 1) -> tuple[list[tuple], Trace]:
    """The trace rows of the first ``operations`` operations of one instance:
    (op, cpu, memcg, arg, irq, row)."""
    spec = BenchmarkSpec(family, test, keys, Machine(4), alternatives=alternatives or {})
    t = TESTS[(family, test)]
    k = spec.resolved_keys()
    members = t.members(k)
    cpus = (np.arange(len(t.roles) * members) % 4).reshape(1, len(t.roles), members)
    placement = {role: cpus[:, n, :] for n, role in enumerate(t.roles)}
    head, _, memcgs = cgroups("lkp", 2, 1)
    rows = t.rows(k)
    ev = Events(Roles(placement, {r: memcgs.server if r in t.server else memcgs.instance
                                  for r in t.roles}), rows)
    t.generate(ev, 1, operations, k, spec.resolved_alternatives(), np.random.default_rng(0))
    body, origin, _ = ev.build(era, 0.0)
    keys_of = list(rows)
    log = [(OP_NAMES[o["op"]], int(o["cpu"]), int(o["memcg"]), int(o["arg"]),
            bool(o["irq"]), keys_of[r]) for o, r in zip(body, origin, strict=True)]
    return log, Trace(4, np.concatenate([head, body]), f"<{test}>")


def counts(trace: Trace, model: str) -> tuple[int, int]:
    out = replay(trace, model=model, check=True)
    assert out["short_uncharges"] == 0 and out["warnings"] == 0
    return out["counters"]["walks"], out["counters"]["stock_hits"]


def test_tcp_rr_one_transaction():
    log, trace = one_operation("netperf", "TCP_RR", {"instances": 1})
    assert log == [
        ("charge", 0, M, 1, False, "req_skb"),   # forced 960 B: a page; 3136 left
        ("charge", 0, M, 1, True, "req_rx"),     # the server's empty reserve: slow path
        ("uncharge", 1, M, 1, False, "req_read"),  # 3135 + 961 = 4096 back
        ("charge", 1, M, 1, False, "rsp_skb"),   # forced again from 0
        # rsp_rx: 961 <= the client's 3135, fast path, and the ACK's 961 leave 3135
        ("uncharge", 0, M, 1, False, "rsp_read"),  # 3135 + 961: a page back
    ]
    # multi: the first charge walks (63 stocked on CPU 0), the softirq's is a hit; CPU 1
    # stocks its uncharge and takes the response's page from it
    assert counts(trace, "multi") == (1, 2)
    # v4: both CPUs' first charges walk (greedy 64), both uncharges walk
    assert counts(trace, "pcstock-v4") == (4, 1)


def test_tcp_rr_steady_state_is_one_charge_and_one_uncharge_per_end():
    from memcglab.workloads.catalogue import build
    bt = build(BenchmarkSpec("netperf", "TCP_RR", {"instances": 1}, Machine(4),
                             operations=5))
    body = bt.trace.ops[bt.warmup_rows:]
    log = [(OP_NAMES[o["op"]], int(o["cpu"]), int(o["arg"]), bool(o["irq"])) for o in body]
    assert log == [("charge", 0, 1, False), ("uncharge", 1, 1, False),
                   ("charge", 1, 1, False), ("uncharge", 0, 1, False)] * 5


def test_tcp_rr_lazy_keeps_the_reserve():
    log, _ = one_operation("netperf", "TCP_RR", {"instances": 1}, era="lazy")
    # v5.10: nothing is reclaimed below 2 MiB, so only the first page of each socket
    assert log == [("charge", 0, M, 1, False, "req_skb"), ("charge", 0, M, 1, True, "req_rx")]


def test_udp_rr_one_transaction():
    log, trace = one_operation("netperf", "UDP_RR", {"instances": 1})
    # 960 B datagrams: each receiver's first enqueue takes a page, and
    # udp_rmem_release keeps (960 + 3136 - 1) & ~4095 = 0: nothing comes back
    assert log == [("charge", 0, M, 1, True, "req_rx"), ("charge", 1, M, 1, True, "rsp_rx")]
    assert counts(trace, "multi") == (2, 0)


def test_sctp_rr_one_transaction():
    log, trace = one_operation("netperf", "SCTP_RR", {"instances": 1})
    assert log == [
        ("charge", 0, M, 1, False, "req_send"),    # schedule 1 B: a page, then -960
        ("charge", 0, M, 1, True, "req_rx"),       # schedule 17 B, charge 1 + 232
        ("uncharge", 1, M, 1, False, "req_read"),  # 3863 + 233 = 4096
        ("charge", 1, M, 1, False, "rsp_send"),
        ("uncharge", 1, M, 1, True, "rsp_sack"),   # the request's chunk: 3136 + 960
        ("charge", 1, M, 1, True, "rsp_rx"),
        ("uncharge", 0, M, 1, False, "rsp_read"),
    ]
    # multi: CPU 0 walks once and hits; CPU 1 stocks, hits, stocks, hits
    assert counts(trace, "multi") == (1, 3)


def test_tcp_stream_one_send():
    log, trace = one_operation("netperf", "TCP_STREAM", {"instances": 1})
    assert log == [
        ("charge", 0, M, 1, False, "skb"),    # the 960 B head: 3136 left
        ("charge", 0, M, 4, False, "copy"),   # 16384 - 3136 = 13248: 4 pages
        ("charge", 0, M, 5, True, "rx"),      # the 17344 B skb on the sender's CPU
        ("uncharge", 1, M, 5, False, "read"),  # 3136 + 17344 = 20480: 5 pages back
        ("uncharge", 0, M, 5, False, "ack"),   # the sender's skb, from its backlog
    ]
    # multi: CPU 0 walks for the head, hits for the copy and the softirq (63 -> 59
    # -> 54), takes 5 back (59); CPU 1 stocks 5
    assert counts(trace, "multi") == (1, 2)


def test_tcp_stream_alternatives_move_the_receive_and_the_ack():
    log, _ = one_operation("netperf", "TCP_STREAM", {"instances": 1},
                           alternatives={"rx": "backlog", "ack": "softirq"})
    assert [(op, cpu, irq, row) for op, cpu, _, _, irq, row in log][2:] == [
        ("charge", 1, False, "rx_backlog"), ("uncharge", 1, False, "read"),
        ("uncharge", 1, True, "ack_softirq")]


def test_sctp_stream_many_one_send():
    log, _ = one_operation("netperf", "SCTP_STREAM_MANY", {"instances": 1})
    # schedule 16384 (4 pages), charge the 33024 B chunk (-16640 left); receive:
    # schedule 16400, charge 16616 (5 pages); read it back; the SACK of packet 1
    # comes after the trace's single packet, so the chunk is never freed here
    assert log == [("charge", 0, M, 4, False, "send"), ("charge", 0, M, 5, True, "rx"),
                   ("uncharge", 1, M, 5, False, "read")]


def test_bw_unix_one_write():
    log, trace = one_operation("lmbench", "bw_unix", {"instances": 1})
    # the writer is the second task (CPU 1), the reader the first (CPU 0)
    assert log == [
        ("obj_charge", 1, M, 264, False, "skb_struct"),
        ("obj_charge", 1, M, 4104, False, "skb_head"),   # kmalloc-cg-4k + 8
        ("charge", 1, M, 8, False, "skb_frag"),          # order 3
        ("obj_charge", 1, M, 264, False, "skb_struct"),
        ("obj_charge", 1, M, 1032, False, "skb_head"),   # kmalloc-cg-1k + 8
        ("charge", 1, M, 4, False, "skb_frag"),
        ("charge", 1, M, 2, False, "skb_frag"),
        ("charge", 1, M, 1, False, "skb_frag"),
        ("uncharge_direct", 0, M, 8, False, "free_frag"),
        ("obj_uncharge", 0, M, 4104, False, "free_head"),
        ("obj_uncharge", 0, M, 264, False, "free_struct"),
        ("uncharge_direct", 0, M, 4, False, "free_frag"),
        ("uncharge_direct", 0, M, 2, False, "free_frag"),
        ("uncharge_direct", 0, M, 1, False, "free_frag"),
        ("obj_uncharge", 0, M, 1032, False, "free_head"),
        ("obj_uncharge", 0, M, 264, False, "free_struct"),
    ]
    out = replay(trace, model="multi", check=True)
    # the first obj charge walks (a page, 63 stocked); the 4104 B head misses its
    # 3832 bytes and takes 2 pages from the stock; the frags take 8, 4, 2, 1: five
    # hits. The reader's 4 folio frees walk; its obj stock flushes one page of the
    # 4104 B head into CPU 0's memcg stock and keeps 8 + 264 + 1032 + 264 bytes.
    assert (out["counters"]["walks"], out["counters"]["stock_hits"]) == (5, 5)
    assert out["obj_stocks"][1][0][2] == 8192 + 4096 - 264 - 4104 - 264 - 1032
    assert out["obj_stocks"][0][0][2] == 8 + 264 + 1032 + 264
    # v4: obj_cgroup_uncharge_pages walks instead of stocking the flushed page
    assert counts(trace, "pcstock-v4")[0] == 6


def test_lat_unix_one_transaction():
    log, trace = one_operation("lmbench", "lat_unix", {"instances": 1})
    one = [("obj_charge", 264, "skb_struct"), ("obj_charge", 520, "skb_head"),
           ("obj_uncharge", 520, "free_head"), ("obj_uncharge", 264, "free_struct")]
    assert [(op, arg, row) for op, _, _, arg, _, row in log] == \
        [(op, arg, "req_" + row) for op, arg, row in one] + \
        [(op, arg, "rsp_" + row) for op, arg, row in one]
    # parent (CPU 0) writes, child (CPU 1) reads, then the other way round
    assert [cpu for _, cpu, *_ in log] == [0, 0, 1, 1, 1, 1, 0, 0]
    out = replay(trace, model="multi", check=True)
    # CPU 0: a page for 264 B (one walk, 3832 left), 520 from them; CPU 1 caches the
    # 784 B coming back and pays the echo's 264 + 520 from exactly those; CPU 0 then
    # takes 784 back: 4096, not above PAGE_SIZE, so nothing is flushed
    assert (out["counters"]["walks"], out["counters"]["stock_hits"]) == (1, 0)
    assert out["obj_stocks"][0][0][2] == 4096 and out["obj_stocks"][1][0][2] == 0


def test_hackbench_socket_one_message():
    log, trace = one_operation("hackbench", "socket", {"groups": 1, "fds": 1})
    # one receiver (CPU 0), one sender (CPU 1): the sender's 100 B write
    assert log == [("obj_charge", 1, M, 264, False, "skb_struct"),
                   ("obj_charge", 1, M, 520, False, "skb_head"),
                   ("obj_uncharge", 0, M, 520, False, "free_head"),
                   ("obj_uncharge", 0, M, 264, False, "free_struct")]
    out = replay(trace, model="multi", check=True)
    assert out["counters"]["walks"] == 1
    assert out["obj_stocks"][1][0][2] == 4096 - 264 - 520  # the sender's CPU
    assert out["obj_stocks"][0][0][2] == 520 + 264          # the receiver's CPU


def test_hackbench_socket_napi_cache_warm_charges_only_the_head():
    log, _ = one_operation("hackbench", "socket", {"groups": 1, "fds": 1},
                           alternatives={"napi_cache": "warm"})
    assert [(op, arg) for op, _, _, arg, _, _ in log] == [("obj_charge", 520),
                                                          ("obj_uncharge", 520)]


def test_hackbench_pipe_first_message_charges_the_pipes_first_page():
    log, trace = one_operation("hackbench", "pipe", {"groups": 1, "fds": 1})
    # the empty pipe's first write allocates (no cached page); one message never
    # frees: the read keeps the emptied page in tmp_page[]
    assert log == [("charge", 1, M, 1, False, "page")]
    assert counts(trace, "multi") == (1, 0)


def test_madvise_one_iteration():
    log, trace = one_operation("madvise", "fault_release", {"cgroups": 1, "pages": 40})
    # the first fault allocates the region's PTE page (its 40 pages lie in one 2 MiB);
    # the zap frees the mmu_gather's on-stack 7, then 24 of the next folio_batch of
    # 31: the last 9 faults are still in the CPU's lru_add batch (its 31st fault moved
    # the first 31 to the LRU), and the batch [38, 39] holds only such folios
    assert [(op, arg, row) for op, _, _, arg, _, row in log] == \
        [("charge", 1, "pte_alloc")] + [("charge", 1, "fault")] * 40 + \
        [("uncharge_direct", 7, "zap"), ("uncharge_direct", 24, "zap")]
    # multi: the PTE page's charge walks (64 charged, 63 stocked), the 40 faults hit
    # (23 left); the zap's two batches walk
    assert counts(trace, "multi") == (3, 40)


@pytest.mark.parametrize("family, test, keys", [
    ("netperf", "TCP_SENDFILE", {"instances": 1}),
    ("netperf", "TCP_MAERTS", {"instances": 1}),
    ("lmbench", "lat_tcp", {"instances": 1}),
    ("lmbench", "bw_tcp", {"instances": 1}),
])
def test_the_other_tcp_tests_follow_their_siblings(family, test, keys):
    log, _ = one_operation(family, test, keys)
    rows = [row for *_, row in log]
    if test == "lat_tcp":
        assert log == one_operation("netperf", "TCP_RR", {"instances": 1})[0]
    elif test == "TCP_SENDFILE":
        # sendfile: the same schedules as TCP_STREAM's first send (no frag cut at 16 KiB)
        assert log == one_operation("netperf", "TCP_STREAM", {"instances": 1})[0]
    else:
        # MAERTS and bw_tcp send from the server: its CPU (1) charges the copies
        sends = [cpu for op, cpu, _, _, _, row in log if row in ("skb", "copy")]
        assert set(sends) == {1} and "rx" in rows and "read" in rows
