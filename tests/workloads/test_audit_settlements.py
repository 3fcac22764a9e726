"""What the comparison with the second reading changed: each settlement's rows, worked by
hand, the v6.18 release model's conservation, every new alternative value in every
test, and the disagreements table itself.

The hand-worked logs use the helpers of ``test_catalogue_logs`` (one instance on a
4-CPU machine, the first task on CPU 0, the second on CPU 1, the ``lkp`` memcg 2).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.kernel.sock import ERAS
from memcglab.replay import replay
from memcglab.trace import OP_CHARGE, OP_NAMES, validate
from memcglab.workloads.catalogue import ALTERNATIVES, TESTS, BenchmarkSpec, Machine, build
from memcglab.workloads.catalogue.audit import render
from memcglab.workloads.catalogue.audit_second import DISAGREEMENTS, VERDICTS
from memcglab.workloads.catalogue.dontneed import (
    FAULT,
    GATHER_BATCH,
    GATHER_BATCHES,
    GATHER_LOCAL,
    LRU_BATCH,
    LRU_DRAIN,
    PTE_ALLOC,
    PTE_FREE,
    ZAP,
    v618_release,
)
from memcglab.workloads.catalogue.net_stream import stream_layout
from memcglab.workloads.catalogue.spec import TEST_ALTERNATIVES, TEST_DEFAULTS
from memcglab.workloads.madvise import MadviseFaultSpec, fault_release_ops
from tests.workloads.test_catalogue_logs import M, counts, one_operation


def rows_of(log: list[tuple]) -> list[tuple]:
    return [(op, cpu, arg, irq, row) for op, cpu, _, arg, irq, row in log]


def test_tcp_stream_two_sends_coalesced_make_one_skb():
    log, _ = one_operation("netperf", "TCP_STREAM", {"instances": 1}, operations=2)
    # the 960 B head: a page (3136 left); each 16384 B copy: 13248 missing, 4 pages;
    # one skb of 32768 B (truesize 33728): the server's empty reserve takes 9 pages,
    # and the read and the ACK give 3136 + 33728 = 36864 back, 9 pages each
    assert rows_of(log) == [
        ("charge", 0, 1, False, "skb"), ("charge", 0, 4, False, "copy"),
        ("charge", 0, 4, False, "copy"), ("charge", 0, 9, True, "rx"),
        ("uncharge", 1, 9, False, "read"), ("uncharge", 0, 9, False, "ack")]


def test_tcp_stream_two_sends_per_send_make_two_skbs():
    log, trace = one_operation("netperf", "TCP_STREAM", {"instances": 1}, operations=2,
                               alternatives={"segments": "per_send"})
    # send 0 as above, its 17344 B skb received at once (5 pages, 3136 left); send 1's
    # head fits the client's 3136 (2176 left), its copy needs 14208: 4 pages; its skb
    # takes 17344 - 3136 = 14208 from the server: 4 pages. The reads and ACKs come later,
    # oldest first: 2176 + 17344 = 19520 gives 4 pages back, then 3136 + 17344 gives 5
    assert rows_of(log) == [
        ("charge", 0, 1, False, "skb"), ("charge", 0, 4, False, "copy"),
        ("charge", 0, 5, True, "rx"), ("charge", 0, 4, False, "copy"),
        ("charge", 0, 4, True, "rx"), ("uncharge", 1, 4, False, "read"),
        ("uncharge", 0, 4, False, "ack"), ("uncharge", 1, 5, False, "read"),
        ("uncharge", 0, 5, False, "ack")]
    replay(trace, model="multi", check=True)


def test_stream_layout_per_send_cuts_every_send():
    # 64 KiB writes over one MSS: coalesced skbs hold 65484 B of the stream; per send,
    # each write is an MSS and a 52-byte tail
    coalesced = stream_layout(3, 65536, 65484, True)[3]
    per_send = stream_layout(3, 65536, 65484, True, per_send=True)[3]
    assert coalesced.tolist() == [65484, 65484, 65484, 156]
    assert per_send.tolist() == [65484, 52] * 3
    assert coalesced.sum() == per_send.sum() == 3 * 65536


def test_sctp_rr_backlog_moves_the_receive_to_the_receiver():
    log, trace = one_operation("netperf", "SCTP_RR", {"instances": 1},
                               alternatives={"rr_rx": "backlog"})
    # the same pages as in softirq (test_sctp_rr_one_transaction), but the request's
    # charge runs on the server's CPU and the response's SACK and charge on the
    # client's, all in task context
    assert rows_of(log) == [
        ("charge", 0, 1, False, "req_send"), ("charge", 1, 1, False, "req_rx_backlog"),
        ("uncharge", 1, 1, False, "req_read"), ("charge", 1, 1, False, "rsp_send"),
        ("uncharge", 0, 1, False, "rsp_sack_backlog"),
        ("charge", 0, 1, False, "rsp_rx_backlog"), ("uncharge", 0, 1, False, "rsp_read")]
    # multi: each CPU walks for its first charge and then hits its own stock once
    assert counts(trace, "multi") == (2, 2)


def test_sctp_stream_many_backlog_receives_on_the_readers_cpu():
    log, _ = one_operation("netperf", "SCTP_STREAM_MANY", {"instances": 1},
                           alternatives={"rx": "backlog"})
    assert [(op, cpu, arg, irq, row) for op, cpu, memcg, arg, irq, row in log
            if memcg == M] == [("charge", 0, 4, False, "send"),
                               ("charge", 1, 5, False, "rx_backlog"),
                               ("uncharge", 1, 5, False, "read")]


def test_madvise_two_iterations_free_the_held_folios_at_the_next_drain():
    log, trace = one_operation("madvise", "fault_release", {"cgroups": 1, "pages": 40},
                               operations=2)
    # iteration 1's 22nd fault fills the lru_add batch (9 held + 22): the 9 zapped
    # folios are uncharged then; its zap frees 7 and 15 (faults 22..39 are held)
    assert [(op, arg, row) for op, _, _, arg, _, row in log if row != "fault"] == [
        ("charge", 1, "pte_alloc"), ("uncharge_direct", 7, "zap"),
        ("uncharge_direct", 24, "zap"), ("uncharge_direct", 9, "lru_drain"),
        ("uncharge_direct", 7, "zap"), ("uncharge_direct", 15, "zap")]
    drain = [k for k, (*_, row) in enumerate(log) if row == "lru_drain"][0]
    assert [row for *_, row in log[:drain]].count("fault") == 40 + 22
    # multi: the PTE page's charge walks (63 stocked), 40 faults hit (23 left); the two
    # zaps walk; iteration 1's faults hit 23 times around the drain (a walk), the 24th
    # walks for a new batch of 64, 16 more hit; its two zaps walk: 7 walks, 79 hits
    assert counts(trace, "multi") == (7, 79)


def test_madvise_whole_pmd_frees_and_recharges_its_pte_page():
    log, trace = one_operation("madvise", "fault_release", {"cgroups": 1, "pages": 512},
                               operations=2)
    other = [(op, arg, irq, row) for op, _, _, arg, irq, row in log if row != "fault"]
    # one PTE page per iteration: charged at the first fault, freed into the stock by the
    # RCU callback after the zap (softirq)
    assert [r for r in other if r[3].startswith("pte")] == [
        ("charge", 1, False, "pte_alloc"), ("uncharge", 1, True, "pte_free"),
        ("charge", 1, False, "pte_alloc"), ("uncharge", 1, True, "pte_free")]
    zap0 = [arg for op, arg, _, row in other[:other.index(("uncharge", 1, True, "pte_free"))]
            if row == "zap"]
    # 512 faults leave 512 mod 31 = 16 in the lru_add batch; the zap frees the other 496:
    # the on-stack 7, fifteen batches of 31, then 24 of the last mixed batch
    assert zap0 == [7] + [31] * 15 + [24] and sum(zap0) == 512 - 16
    assert ("uncharge_direct", 16, False, "lru_drain") in other
    out = replay(trace, model="multi", check=True)
    assert out["short_uncharges"] == 0


def _schedule(jobs: int, cpus: int, pages: int, iterations: int, seed: int):
    spec = MadviseFaultSpec(cpus=cpus, cgroups=jobs, region_pages=pages,
                            iterations=iterations, trials=1, placement="pinned",
                            migration_rate=0.0)
    op, cpu, task, nr = fault_release_ops(spec, np.random.default_rng(seed),
                                          pinned=np.arange(jobs) % cpus)
    return spec, np.where(op == OP_CHARGE, 0, 1), cpu, task


@settings(max_examples=60, deadline=None)
@given(jobs=st.integers(1, 3), cpus=st.integers(1, 2), pages=st.integers(1, 1100),
       iterations=st.integers(1, 4), memcgs=st.integers(1, 2), seed=st.integers(0, 99),
       aligned=st.booleans())
def test_v618_release_frees_every_folio_once(jobs, cpus, pages, iterations, memcgs, seed,
                                             aligned):
    spec, op, cpu, task = _schedule(jobs, cpus, pages, iterations, seed)
    assert (op == 0).sum() == jobs * pages * iterations
    per_zap = spec.ops_per_iteration - pages
    memcg = np.arange(jobs) % memcgs
    offset = np.zeros(jobs, np.int64) if aligned else (np.arange(jobs) * 97 + 5) % 512
    kind, _, job, nr, at = v618_release(op, cpu, task, pages, per_zap, memcg, offset, cpus)
    assert (np.diff(at) >= 0).all()
    assert ((kind == FAULT) == (nr == 1))[kind == FAULT].all()
    freeing = (kind == ZAP) | (kind == LRU_DRAIN)
    assert (nr[freeing] >= 1).all() and (nr[freeing] <= LRU_BATCH).all()
    # every folio is freed once: all but those the lru_add batches hold at the end
    held = jobs * pages * iterations - nr[freeing].sum()
    assert 0 <= held <= (LRU_BATCH - 1) * cpus
    # PTE pages: at most one per 2 MiB slot is live, and none is freed unallocated
    live = (kind == PTE_ALLOC).sum() - (kind == PTE_FREE).sum()
    assert 0 <= live <= jobs * (pages // 512 + 2)


def test_v618_release_forces_a_flush_after_nineteen_batch_pages():
    pages = GATHER_LOCAL + GATHER_BATCHES * GATHER_BATCH + 100  # one more gather round
    spec, op, cpu, task = _schedule(1, 1, pages, 1, 0)
    kind, _, _, nr, _ = v618_release(op, cpu, task, pages, spec.ops_per_iteration - pages,
                                     np.zeros(1, np.int64), np.full(1, 7, np.int64), 1)
    zap = nr[kind == ZAP]
    # the first round: 7, then 19 batches of 509 (16 batches of 31 and one of 13 each);
    # the forced flush starts again from the on-stack 7
    first = [GATHER_LOCAL] + ([31] * 16 + [13]) * GATHER_BATCHES
    assert zap[:len(first)].tolist() == first
    assert zap[len(first)] == GATHER_LOCAL


@pytest.mark.parametrize("family, test", sorted(TESTS))
def test_every_alternative_value_builds_a_trace_its_rows_describe(family, test):
    """The drift check of test_catalogue, for every non-default value of every
    alternative the test reads."""
    keys = {"netperf": {"instances": 2}, "lmbench": {"instances": 2},
            "hackbench": {"groups": 2, "fds": 3}, "madvise": {"cgroups": 2, "pages": 40},
            "will-it-scale": {"instances": 2}}
    own = TEST_DEFAULTS.get((family, test), {})
    for name in TEST_ALTERNATIVES[(family, test)]:
        alt = ALTERNATIVES[name]
        for value in alt.values:
            if value == own.get(name, alt.default):
                continue
            bt = build(BenchmarkSpec(family, test, dict(keys[family]), Machine(8, 2, 2),
                                     operations=300 if family == "hackbench" else 12,
                                     alternatives={name: value}))
            validate(bt.trace)
            body = bt.origin >= 0
            ops, origin = bt.trace.ops[body], bt.origin[body]
            for k, row in enumerate(bt.rows):
                mine = ops[origin == k]
                assert {OP_NAMES[o] for o in mine["op"]} <= set(row.trace_op.split(", "))
                assert (mine["irq"] == row.irq).all(), (name, value, row.key)
                assert set(mine["cpu"].tolist()) <= set(bt.placement[row.cpu].ravel().tolist())


def test_the_disagreements_are_settled_from_pinned_sources():
    assert len(DISAGREEMENTS) >= 15
    for d in DISAGREEMENTS:
        assert d.verdict in VERDICTS and d.first and d.second and d.source and d.change
        assert d.cites, d.test
        for c in d.cites:
            assert re.fullmatch(r"[0-9a-f]{40}", c.commit) and c.path and c.function, c
    section = render().split("## Second reading and disagreements", 1)[1]
    table = [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(table) == len(DISAGREEMENTS)
    assert "(audit/second-reading.md)" in section


def test_the_eager_era_is_v6_0_on():
    # v5.19 still reclaims at SK_RECLAIM_THRESHOLD (the first settlement)
    assert ERAS["eager"].startswith("v6.0 on")
