"""sockmem: the compiled sk_forward_alloc rules against the faithful port, event by event."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.kernel import sock as k
from memcglab.workloads.sockmem import (
    FORCED,
    RECLAIM,
    SCHEDULE,
    TCP_RCV,
    UDP_CLOSE,
    UDP_ENQUEUE,
    UDP_RELEASE,
    socket_calls,
    socket_pages,
)


def pages(events, threshold=None, era="eager"):
    sock, event, sched, amount = (np.array(c) for c in zip(*events, strict=True))
    return socket_pages(sock, event, sched, amount, threshold, era).tolist()


def test_a_schedule_charges_only_the_shortfall_in_whole_pages():
    # 5000 bytes: 2 pages; 3000 more fit in the 3192 left; 500 more need 1 page.
    assert pages([(0, SCHEDULE, 5000, 5000), (0, SCHEDULE, 3000, 3000),
                  (0, SCHEDULE, 500, 500)]) == [2, 0, 1]


def test_lazy_schedules_the_whole_size_whenever_it_does_not_fit():
    # v5.10's sk_wmem_schedule: size <= fwd || sk_mem_pages(size): 500 > 192 -> 1 page
    assert pages([(0, SCHEDULE, 5000, 5000), (0, SCHEDULE, 3000, 3000),
                  (0, SCHEDULE, 500, 500)], era="lazy") == [2, 0, 1]
    assert pages([(0, SCHEDULE, 5000, 5000), (0, SCHEDULE, 3100, 3100),
                  (0, SCHEDULE, 4000, 4000)], era="lazy") == [2, 0, 1]
    assert pages([(0, SCHEDULE, 5000, 5000), (0, SCHEDULE, 3100, 3100),
                  (0, SCHEDULE, 4000, 4000)]) == [2, 0, 1]


def test_sk_mem_uncharge_reclaims_every_whole_page_eagerly_and_nothing_lazily():
    events = [(0, SCHEDULE, 9000, 9000), (0, RECLAIM, 0, 4000), (0, RECLAIM, 0, 5000)]
    assert pages(events) == [3, -1, -2]  # 3288 + 4000 bytes: one page back
    assert pages(events, era="lazy") == [3, 0, 0]


def test_lazy_reclaims_a_chunk_at_the_threshold():
    got = pages([(0, SCHEDULE, 2 << 20, 2 << 20), (0, RECLAIM, 0, 2 << 20)], era="lazy")
    assert got == [512, -256]


def test_udp_keeps_a_page_until_close():
    small = [(0, UDP_ENQUEUE, 0, 900), (0, UDP_RELEASE, 1, 900)]
    got = pages(small * 3 + [(0, UDP_CLOSE, 0, 0)])
    assert got == [1, 0, 0, 0, 0, 0, -1]


def test_udp_defers_a_release_below_the_threshold_while_more_is_queued():
    threshold = np.array([10_000])
    got = pages([(0, UDP_ENQUEUE, 0, 5000), (0, UDP_ENQUEUE, 0, 5000),
                 (0, UDP_RELEASE, 0, 5000), (0, UDP_RELEASE, 1, 5000)], threshold)
    assert got == [2, 1, 0, -2]  # the second release sees an empty reader queue


def test_tcp_rcv_takes_the_fast_path_when_the_reserve_covers_the_skb():
    # 4096 reserve after a forced 960: the 961-byte skb fits, then its ACK frees 961
    calls = socket_calls(np.zeros(3, int), np.array([FORCED, SCHEDULE, TCP_RCV]),
                         np.array([960, 1, 961]), np.array([960, 1, 961]),
                         np.array([0, 0, 961]))
    assert calls.tolist() == [[1, 0], [0, 0], [0, 0]]


def test_tcp_rcv_frees_before_it_schedules_on_the_slow_path():
    # 192 bytes left: tcp_ack frees 4000 (4192: one page back, 96 left), then the
    # 5000-byte skb needs 2 pages
    calls = socket_calls(np.zeros(2, int), np.array([SCHEDULE, TCP_RCV]),
                         np.array([8000, 5000]), np.array([8000, 5000]), np.array([0, 4000]))
    assert calls.tolist() == [[2, 0], [-1, 2]]


def test_an_unknown_era_is_an_error():
    with pytest.raises(ValueError, match="era='v6': must be one of eager, lazy"):
        socket_pages(np.zeros(1, int), np.zeros(1, int), np.ones(1, int), np.ones(1, int),
                     era="v6")


def _faithful(events, era):
    """The same events through memcglab.kernel.sock, one Sock per socket."""
    socks: dict[int, k.Sock] = {}
    out = []
    for s, e, sched, amount, freed, empty in events:
        sk = socks.setdefault(s, k.Sock(era=era, memcg=k.MemcgCalls()))
        before = len(sk.memcg.calls)
        if e == SCHEDULE:
            k.sk_wmem_schedule(sk, sched)
            k.sk_mem_charge(sk, amount)
        elif e == FORCED:
            k.sk_forced_mem_schedule(sk, sched)
            k.sk_mem_charge(sk, amount)
        elif e == RECLAIM:
            k.sk_mem_uncharge(sk, amount)
        elif e == TCP_RCV:
            if amount > sk.sk_forward_alloc:
                if freed:
                    k.sk_mem_uncharge(sk, freed)
                k.sk_rmem_schedule(sk, sched)
                k.sk_mem_charge(sk, amount)
            else:
                k.sk_mem_charge(sk, amount)
                if freed:
                    k.sk_mem_uncharge(sk, freed)
        elif e == UDP_ENQUEUE:
            k.udp_enqueue_schedule(sk, amount)
        else:
            k.udp_rmem_release(sk, amount, 1 if e == UDP_RELEASE else 0, bool(empty))
        out.append([n if kind == "charge" else -n for kind, n in sk.memcg.calls[before:]])
    return out


_EVENT = st.tuples(st.integers(0, 2), st.sampled_from([SCHEDULE, FORCED, RECLAIM, TCP_RCV]),
                   st.integers(1, 70_000), st.integers(1, 70_000), st.integers(0, 70_000),
                   st.just(0))
_UDP = st.tuples(st.integers(0, 2), st.sampled_from([UDP_ENQUEUE, UDP_RELEASE, UDP_CLOSE]),
                 st.just(0), st.integers(1, 70_000), st.just(0), st.integers(0, 1))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["eager", "lazy"]),
       st.one_of(st.lists(_EVENT, min_size=1, max_size=80), st.lists(_UDP, min_size=1,
                                                                     max_size=80)))
def test_the_compiled_rules_match_the_faithful_port(era, events):
    sock, event, sched, amount, freed, empty = (np.array(c) for c in zip(*events, strict=True))
    # UDP_RELEASE reads "reader queue empty" from sched
    sched = np.where(np.isin(event, [UDP_RELEASE, UDP_CLOSE]), empty, sched)
    got = socket_calls(sock, event, sched, amount, freed, era=era).tolist()
    # the trace gets each event's calls in column order, the empty ones left out
    assert [[n for n in row if n] for row in got] == _faithful(events, era)


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(["eager", "lazy"]),
       st.lists(st.tuples(st.integers(0, 2), st.integers(1, 70_000), st.integers(0, 5000)),
                min_size=1, max_size=60))
def test_a_socket_never_gives_back_more_than_it_was_charged(era, sends):
    """Schedule then release each message: the net pages never go negative."""
    events = [(s, SCHEDULE, size + extra, size) for s, size, extra in sends]
    events += [(s, RECLAIM, 0, size) for s, size, _ in sends]
    got = np.array(pages(events, era=era))
    sock = np.array([e[0] for e in events])
    for s in np.unique(sock):
        held = np.cumsum(got[sock == s])
        assert held.min() >= 0
        if era == "eager":
            assert held[-1] == 0 or held[-1] <= (sum(x for x, _, _ in sends) // 4096 + 1)
