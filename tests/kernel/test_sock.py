"""memcglab.kernel.sock: sk_forward_alloc and its memcg calls in the eager and lazy eras."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.kernel import sock as k


def fresh(era: str) -> k.Sock:
    return k.Sock(era=era, memcg=k.MemcgCalls())


def test_eager_schedules_the_missing_delta_and_reclaims_every_whole_page():
    sk = fresh("eager")
    assert k.sk_wmem_schedule(sk, 5000) and sk.sk_forward_alloc == 8192  # 2 pages
    k.sk_mem_charge(sk, 5000)
    assert k.sk_wmem_schedule(sk, 4000) and sk.sk_forward_alloc == 3192 + 4096  # delta 808
    k.sk_mem_charge(sk, 4000)
    k.sk_mem_uncharge(sk, 5000)  # 3288 + 5000 = 8288: 2 pages back, 96 kept
    assert sk.sk_forward_alloc == 96
    assert sk.memcg.calls == [("charge", 2), ("charge", 1), ("uncharge", 2)]


def test_lazy_schedules_the_whole_size_and_keeps_the_reserve():
    sk = fresh("lazy")
    k.sk_wmem_schedule(sk, 5000)
    k.sk_mem_charge(sk, 5000)
    k.sk_wmem_schedule(sk, 4000)  # 4000 > 3192: sk_mem_pages(4000) = 1, not the delta
    k.sk_mem_charge(sk, 4000)
    k.sk_mem_uncharge(sk, 5000)
    assert sk.sk_forward_alloc == 8288 and sk.memcg.calls == [("charge", 2), ("charge", 1)]
    # v5.10's sk_wmem_schedule: 5000 more need ceil(5000/4096) = 2 pages although the
    # reserve is only 712 short; 6.18 charges the delta, one page
    lazy, eager = fresh("lazy"), fresh("eager")
    for sk in (lazy, eager):
        sk.sk_forward_alloc = 4288
        k.sk_wmem_schedule(sk, 5000)
    assert lazy.memcg.calls == [("charge", 2)] and eager.memcg.calls == [("charge", 1)]


def test_lazy_reclaims_a_chunk_only_at_the_threshold():
    sk = fresh("lazy")
    sk.sk_forward_alloc = k.SK_RECLAIM_THRESHOLD - 1
    k.sk_mem_uncharge(sk, 0)
    assert sk.memcg.calls == []
    k.sk_mem_uncharge(sk, 1)
    assert sk.memcg.calls == [("uncharge", 256)]
    assert sk.sk_forward_alloc == k.SK_RECLAIM_THRESHOLD - k.SK_RECLAIM_CHUNK
    assert (k.SK_RECLAIM_THRESHOLD, k.SK_RECLAIM_CHUNK) == (1 << 21, 1 << 20)


def test_reclaim_and_partial_reclaim():
    sk = fresh("lazy")
    sk.sk_forward_alloc = 3 * 4096
    k.sk_mem_reclaim_partial(sk)  # __sk_mem_reclaim(fwd - 1): 12287 rounds down to 2 pages
    assert sk.sk_forward_alloc == 4096 and sk.memcg.calls == [("uncharge", 2)]
    k.sk_mem_reclaim(sk)  # every whole page
    assert sk.sk_forward_alloc == 0 and sk.memcg.calls[-1] == ("uncharge", 1)
    sk.sk_forward_alloc = 3 * 4096 + 5
    k.sk_mem_reclaim_partial(sk)  # 12292 rounds down to 3 pages: 5 bytes kept
    assert sk.sk_forward_alloc == 5
    sk.sk_forward_alloc = 4096
    k.sk_mem_reclaim_partial(sk)  # needs more than a quantum
    assert sk.sk_forward_alloc == 4096
    with pytest.raises(ValueError, match="the eager era .v6.18.19. has no such function"):
        k.sk_mem_reclaim_partial(fresh("eager"))


def test_reserved_memory_is_kept_back_from_reclaim():
    sk = fresh("eager")
    sk.sk_forward_alloc, sk.sk_reserved_mem = 3 * 4096, 4096 + 100
    k.sk_mem_reclaim(sk)  # reclaimable = 12288 - 4196 = 8092: one page
    assert sk.memcg.calls == [("uncharge", 1)] and sk.sk_forward_alloc == 8192


def test_forced_schedule_cannot_fail_and_follows_the_era():
    class Full:
        calls: list = []

        def charge(self, n):
            self.calls.append(n)
            return False

        def uncharge(self, n):
            raise AssertionError

    sk = k.Sock(era="eager", memcg=Full())
    k.sk_forced_mem_schedule(sk, 960)
    assert sk.sk_forward_alloc == 4096 and Full.calls == [1]  # __GFP_NOFAIL
    assert not k.sk_wmem_schedule(sk, 9000)  # a failing memcg fails a normal schedule
    assert sk.sk_forward_alloc == 4096
    lazy = fresh("lazy")
    lazy.sk_forward_alloc = 960
    k.sk_forced_mem_schedule(lazy, 960)  # size <= fwd: nothing
    k.sk_forced_mem_schedule(lazy, 961)  # else sk_mem_pages(size)
    assert lazy.memcg.calls == [("charge", 1)] and lazy.sk_forward_alloc == 960 + 4096


def test_a_socket_without_accounting_or_memcg_makes_no_call():
    sk = k.Sock(has_account=False, memcg=k.MemcgCalls())
    assert k.sk_wmem_schedule(sk, 10**6) and sk.sk_forward_alloc == 0
    k.sk_mem_uncharge(sk, 10**6)
    assert sk.memcg.calls == []
    root = k.Sock()
    assert k.sk_rmem_schedule(root, 5000) and root.sk_forward_alloc == 8192


def test_udp_eras_schedule_differently_and_release_alike():
    eager, lazy = fresh("eager"), fresh("lazy")
    for sk in (eager, lazy):
        sk.sk_forward_alloc = 1000
        k.udp_enqueue_schedule(sk, 1000)
    # 6.18: delta 0, nothing; v5.10: size >= fwd, sk_mem_pages(1000) = 1 page
    assert eager.memcg.calls == [] and lazy.memcg.calls == [("charge", 1)]
    sk = fresh("eager")
    k.udp_enqueue_schedule(sk, 900)
    k.udp_rmem_release(sk, 900, 1, reader_queue_empty=True)  # keeps (900+3196-1) & ~4095
    assert sk.sk_forward_alloc == 4096 and sk.memcg.calls == [("charge", 1)]
    k.udp_rmem_release(sk, 0, 0, reader_queue_empty=True)  # close: everything back
    assert sk.memcg.calls[-1] == ("uncharge", 1) and sk.sk_forward_alloc == 0


def test_udp_defers_below_the_threshold_while_the_reader_queue_holds_more():
    sk = fresh("eager")
    sk.forward_threshold = 10_000
    k.udp_enqueue_schedule(sk, 5000)
    k.udp_enqueue_schedule(sk, 5000)
    k.udp_rmem_release(sk, 5000, 1, reader_queue_empty=False)
    assert sk.forward_deficit == 5000 and sk.memcg.calls == [("charge", 2), ("charge", 1)]
    k.udp_rmem_release(sk, 5000, 1, reader_queue_empty=True)
    assert sk.forward_deficit == 0 and sk.memcg.calls[-1] == ("uncharge", 2)


def test_an_unknown_era_is_refused():
    with pytest.raises(ValueError, match="era='v4.19': must be one of eager, lazy"):
        k.Sock(era="v4.19")


_STEPS = st.lists(st.tuples(st.sampled_from(["w", "r", "f", "u", "reclaim", "partial"]),
                            st.integers(0, 3 << 20)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["eager", "lazy"]), _STEPS)
def test_the_memcg_holds_the_reserve_plus_the_bytes_in_use(era, steps):
    """Pages charged minus uncharged, in bytes, equal sk_forward_alloc plus what is
    charged to buffers and not yet given back; and no call is for 0 pages."""
    sk = fresh(era)
    in_use = 0
    for what, n in steps:
        if what in ("w", "r", "f"):
            ok = {"w": k.sk_wmem_schedule, "r": k.sk_rmem_schedule}.get(
                what, lambda s, x: k.sk_forced_mem_schedule(s, x) or True)(sk, n)
            if ok:
                k.sk_mem_charge(sk, n)
                in_use += n
        elif what == "u" and in_use:
            n = min(n, in_use)
            k.sk_mem_uncharge(sk, n)
            in_use -= n
        elif what == "reclaim":
            k.sk_mem_reclaim(sk)
        elif what == "partial" and era == "lazy":
            k.sk_mem_reclaim_partial(sk)
        pages = sum(p if c == "charge" else -p for c, p in sk.memcg.calls)
        assert pages * k.PAGE_SIZE == sk.sk_forward_alloc + in_use
        assert all(p > 0 for _, p in sk.memcg.calls)
    if era == "eager":
        assert sk.sk_forward_alloc < k.PAGE_SIZE or not steps or steps[-1][0] in "wrf"
