"""sockmem: the forward-allocation rules, one socket event at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.trace import OP_CHARGE, OP_UNCHARGE
from memcglab.workloads.common import hierarchy
from memcglab.workloads.sockmem import (
    RECLAIM,
    SCHEDULE,
    UDP_CLOSE,
    UDP_ENQUEUE,
    UDP_RELEASE,
    SocketEvents,
    socket_pages,
)


def pages(events, threshold=None):
    sock, event, sched, amount = (np.array(c) for c in zip(*events, strict=True))
    return socket_pages(sock, event, sched, amount, threshold).tolist()


def test_a_schedule_charges_only_the_shortfall_in_whole_pages():
    # 5000 bytes: 2 pages; 3000 more fit in the 3192 left; 500 more need 1 page.
    assert pages([(0, SCHEDULE, 5000, 5000), (0, SCHEDULE, 3000, 3000),
                  (0, SCHEDULE, 500, 500)]) == [2, 0, 1]


def test_sk_mem_uncharge_reclaims_every_whole_page():
    assert pages([(0, SCHEDULE, 9000, 9000), (0, RECLAIM, 0, 4000),
                  (0, RECLAIM, 0, 5000)]) == [3, -1, -2]  # 3288 + 4000 bytes: one page back


def test_sockets_keep_separate_reserves():
    assert pages([(0, SCHEDULE, 100, 100), (1, SCHEDULE, 100, 100),
                  (0, RECLAIM, 0, 100), (1, RECLAIM, 0, 100)]) == [1, 1, -1, -1]


def test_udp_keeps_a_page_until_close():
    small = [(0, UDP_ENQUEUE, 0, 900), (0, UDP_RELEASE, 1, 900)]
    got = pages(small * 3 + [(0, UDP_CLOSE, 0, 0)])
    assert got == [1, 0, 0, 0, 0, 0, -1]


def test_udp_defers_a_release_below_the_threshold_while_more_is_queued():
    threshold = np.array([10_000])
    got = pages([(0, UDP_ENQUEUE, 0, 5000), (0, UDP_ENQUEUE, 0, 5000),
                 (0, UDP_RELEASE, 0, 5000), (0, UDP_RELEASE, 1, 5000)], threshold)
    assert got == [2, 1, 0, -2]  # the second release sees an empty reader queue


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 70_000), st.integers(0, 5000)),
                min_size=1, max_size=60))
def test_every_socket_returns_what_it_charged(sends):
    """Schedule then release each message: the pages net to zero and never go negative."""
    events = [(s, SCHEDULE, size + extra, size) for s, size, extra in sends]
    events += [(s, RECLAIM, 0, size) for s, size, _ in sends]
    got = np.array(pages(events))
    sock = np.array([e[0] for e in events])
    for s in np.unique(sock):
        held = np.cumsum(got[sock == s])
        assert held[-1] == 0 and held.min() >= 0


def test_socket_events_keep_the_masked_batches_in_order_and_sort_them_by_time():
    ev = SocketEvents()
    # a reclaim added first but timed after the schedule it gives back
    ev.add(2.0, 0, RECLAIM, 0, 5000, 1, size=1)
    ev.add(np.array([1.0, 1.5]), 0, SCHEDULE, 5000, 5000, np.array([3, 4]),
           where=np.array([True, False]))
    assert [c.tolist() for c in ev.columns()] == [[2.0, 1.0], [0, 0], [RECLAIM, SCHEDULE],
                                                  [0, 5000], [5000, 5000], [1, 3]]
    head, tenants = hierarchy(1, 0)
    body = ev.trace(8, head, tenants, "<t>").ops[len(head):]
    assert body["op"].tolist() == [OP_CHARGE, OP_UNCHARGE]
    assert body["cpu"].tolist() == [3, 1] and body["arg"].tolist() == [2, 2]
