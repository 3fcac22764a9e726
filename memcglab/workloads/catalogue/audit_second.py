"""The accounting audit's comparison: every disagreement between the two readings, settled.

The first reading is this catalogue's rows as they stood when the second reading was
written (``docs/accounting.md`` before this section existed); the second is
``docs/audit/second-reading.md``, written from the sources by an engineer who had not
seen the first. Each :class:`Disagreement` says what each reading held, what the
source says (with its citations), which was right, and what changed in the code;
:func:`render` prints them as the page's "Second reading and disagreements" section.

>>> len(DISAGREEMENTS) >= 10 and all(d.verdict in VERDICTS for d in DISAGREEMENTS)
True
"""

from __future__ import annotations

from dataclasses import dataclass

from memcglab.workloads.catalogue.rows import (
    KERNEL,
    KERNEL_COMMIT,
    LKP,
    LKP_COMMIT,
    LMBENCH,
    LMBENCH_COMMIT,
    NETPERF,
    NETPERF_COMMIT,
    V510,
    V510_COMMIT,
    Cite,
    kcite,
)

__all__ = ["Disagreement", "DISAGREEMENTS", "VERDICTS", "AGREED", "WILL_IT_SCALE", "render",
           "render_will_it_scale"]

V519 = "yishangzhang/linux-5.19 (v5.19; net/ and include/net/ as its first commit)"
V519_COMMIT = "4a8550523ce9de6602a52c26c161b4e7992ce34e"
V61 = "unifreq/linux-6.1.y (v6.1.166)"
V61_COMMIT = "525d1212a677aa9e9a030d9478ca66e87a828527"
V515 = "unifreq/linux-5.15.y (v5.15.215)"
V515_COMMIT = "5c88653f6cce7b3613a006a946327069025ae844"

VERDICTS = ("first", "second", "both wrong", "timing", "both right")
_VERDICT_TEXT = {
    "first": "the first reading",
    "second": "the second reading",
    "both wrong": "both wrong",
    "timing": "the source leaves it to timing: a modelling alternative with a prior",
    "both right": "both describe real code; the first's simplification is kept",
}


def _np(path: str, function: str) -> Cite:
    return Cite(NETPERF, path, NETPERF_COMMIT, function)


def _lkp(path: str, function: str = "-") -> Cite:
    return Cite(LKP, path, LKP_COMMIT, function)


@dataclass(frozen=True, slots=True)
class Disagreement:
    """One point on which the two readings differ, and how the source settled it."""

    test: str
    first: str
    second: str
    source: str
    cites: tuple[Cite, ...]
    verdict: str
    change: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict={self.verdict!r}: must be one of {', '.join(VERDICTS)}")


DISAGREEMENTS: tuple[Disagreement, ...] = (
    Disagreement(
        "general: \"net: keep sk->sk_forward_alloc as small as possible\"",
        "v5.19 on (kernel/sock.py, the eager era)",
        "v6.0 (a net-next patch of June 2022; inferred from its date)",
        "v5.19 still reclaims only at `SK_RECLAIM_THRESHOLD` in `sk_mem_uncharge` and "
        "schedules the whole size in `sk_wmem_schedule`; v6.1 calls `sk_mem_reclaim` from "
        "`sk_mem_uncharge`. The stable 5.15.y took the delta fix of `sk_wmem_schedule` but "
        "kept the 2 MiB reclaim",
        (Cite(V519, "include/net/sock.h", V519_COMMIT, "sk_mem_uncharge / sk_wmem_schedule"),
         Cite(V61, "include/net/sock.h", V61_COMMIT, "sk_mem_uncharge"),
         Cite(V515, "include/net/sock.h", V515_COMMIT, "sk_wmem_schedule / sk_mem_uncharge")),
        "second",
        "kernel/sock.py and the catalogue say v6.0; the scenario contract's `sk_reclaim` "
        "row, which says v5.19, is its owner's to correct"),
    Disagreement(
        "general: netserver's memcg under the robot",
        "the benchmark's memcg: lkp-tests starts netserver from the job (the `lkp` "
        "layout; `server_memcg` = hierarchy)",
        "left open (§7.8): whether the robot's cgroup2 job puts netserver with netperf",
        "`programs/netserver/daemon` execs `netserver -D` through `bin/run-daemon`, which "
        "moves a task to a cgroup only for jobs with `nr_instances`; every job runs under "
        "`lkp-bootstrap.service` (`KillMode=none`), so daemon and client share its cgroup "
        "(depth 2). The cgroup2 variants (`jobs/netperf-cgroup2.yaml`) run "
        "`programs/cgroup2/setup` first, whose `cg_bind` moves the job runner into "
        "`/cgroup2/$testcase.1` (depth 1, `memory.high` 90%, `memory.low` 50%) before any "
        "daemon starts: one memcg again",
        (_lkp("programs/netserver/daemon"), _lkp("bin/run-daemon", "setup_cgroup"),
         _lkp("rootfs/addon/usr/lib/systemd/system/lkp-bootstrap.service"),
         _lkp("bin/lkp-setup-rootfs", "run-lkp"),
         _lkp("programs/cgroup2/setup", "cg_bind"), _lkp("jobs/cgroup2.yaml")),
        "first",
        "none in the traces; the layout text notes the cgroup2 jobs (the `shared` layout at "
        "depth 1 with `protection`)"),
    Disagreement(
        "TCP_STREAM, TCP_SENDFILE, TCP_MAERTS, bw_tcp: how sends become skbs",
        "coalesced into skbs of one loopback MSS (Nagle in Minshall's form holds the "
        "partial skb), a fixed choice: 0.25 receive calls of 4.1 pages per 16 KiB send",
        "one skb per send (an assumption, §7.4): a receive of 4.23 to 5 pages per send",
        "`tcp_sendmsg_locked` appends to the unsent tail while `copy = size_goal - "
        "skb->len > 0`; `tcp_push` -> `tcp_write_xmit` holds a partial skb only while "
        "`tcp_nagle_check` finds an unacknowledged sub-MSS segment (`tcp_minshall_check`); "
        "`tcp_should_autocork` needs `sk_wmem_alloc > truesize`, which loopback's "
        "`skb_orphan` defeats. Which happens depends on whether the receiver's ACK was "
        "processed (the sender's `release_sock`) before the next push",
        (kcite("net/ipv4/tcp.c", "tcp_sendmsg_locked / tcp_push / tcp_should_autocork"),
         kcite("net/ipv4/tcp_output.c", "tcp_nagle_check / tcp_minshall_update"),
         kcite("include/net/tcp.h", "tcp_minshall_check"),
         kcite("drivers/net/loopback.c", "loopback_xmit")),
        "timing",
        "new alternative `segments`: `coalesced` (0.6, the default, as before) or "
        "`per_send` (0.4: skbs also end at every send); `stream_layout(per_send=)`"),
    Disagreement(
        "TCP streams: the new skb's schedule",
        "`sk_wmem_schedule`, `GFP_KERNEL`",
        "`sk_forced_mem_schedule` (`| __GFP_NOFAIL`) when both queues are empty",
        "`tcp_stream_alloc_skb(sk, gfp, force_schedule = "
        "tcp_rtx_and_write_queues_empty(sk))` forces the head's truesize in; "
        "`sk_forced_mem_schedule` charges `sk_mem_pages(delta)` with "
        "`gfp_memcg_charge() | __GFP_NOFAIL`, the same pages as `sk_wmem_schedule`",
        (kcite("net/ipv4/tcp.c", "tcp_sendmsg_locked / tcp_stream_alloc_skb"),
         kcite("net/ipv4/tcp_output.c", "sk_forced_mem_schedule")),
        "second",
        "the `skb` row names both schedules and the GFP of each; no count changes"),
    Disagreement(
        "TCP_MAERTS: what `-m` sets",
        "`send_size` is what netserver sends (its default 16384)",
        "`-m X` sets only netperf's local send size, which a MAERTS test never uses; "
        "`-m ,X` sets netserver's",
        "the legacy TCP_MAERTS sets `direction = NETPERF_RECV` with `implicit_direction = "
        "0`; `-m` stores its first value in `send_size` and its second in "
        "`remote_send_size_req`, which `send_omni_inner` passes as "
        "`omni_request->send_size`; netserver's `recv_omni` chooses its `SO_SNDBUF` when "
        "that is -1",
        (_np("src/nettest_omni.c",
             "set_omni_defaults_by_legacy_testname / scan_omni_args / send_omni_inner"),),
        "second",
        "the trace is unchanged (the key is the size the sender sends, i.e. netperf's "
        "`-m ,X` for TCP_MAERTS); the notes say so. The contract's `send_size` row should "
        "say `-m ,X` for TCP_MAERTS (its owner's text)"),
    Disagreement(
        "TCP_RR, lat_tcp: the slow path",
        "2 charges and 2 uncharges per transaction, each task on its own CPU (the receive "
        "takes the fast path and fits the reserve)",
        "the same, with an alternative of 4 + 4, half cross-CPU, when header prediction "
        "misses or a pure ACK comes first (§2.4, §7.2)",
        "the fast path needs `pred_flags` (the window unchanged), in-order data and "
        "`truesize <= sk_forward_alloc`; a 1-byte ping-pong never grows the window "
        "(`__tcp_grow_window` returns 0 for such skbs), so `pred_flags` stays; the "
        "delayed ACK (pingpong) is re-armed by every transaction and rides on the "
        "response, so no pure ACK precedes it in steady state",
        (kcite("net/ipv4/tcp_input.c", "tcp_rcv_established / __tcp_grow_window"),
         kcite("net/ipv4/tcp_output.c", "tcp_send_delayed_ack")),
        "first",
        "none (the second's alternative is the first transactions' warm-up, not a steady "
        "state)"),
    Disagreement(
        "SCTP_RR: where the SACK's uncharge and the data's charge run",
        "in the receive softirq on the sender's CPU, always",
        "in softirq on the sender's CPU, or from the receiver's backlog (task context, its "
        "CPU, `GFP_KERNEL`)",
        "`sctp_rcv` queues the packet with `sctp_add_backlog` when `sock_owned_by_user(sk)`"
        "; `release_sock` -> `sctp_backlog_rcv` processes it in the owner's task. The "
        "receiver holds its lock at the end of its own `sctp_sendmsg` and at the start of "
        "`sctp_recvmsg`: a race",
        (kcite("net/sctp/input.c", "sctp_rcv / sctp_add_backlog"),
         kcite("net/core/sock.c", "__release_sock")),
        "timing",
        "new alternative `rr_rx` (`softirq` 0.85, `backlog` 0.15) and rows "
        "`req_sack_backlog`, `req_rx_backlog`, `rsp_sack_backlog`, `rsp_rx_backlog`"),
    Disagreement(
        "SCTP_STREAM_MANY: where the data is charged",
        "in the receive softirq on the sender's CPU, always",
        "in softirq on the sender's CPU, or from netserver's backlog",
        "as for SCTP_RR: `sctp_rcv` -> `sctp_add_backlog` while the reader holds the lock "
        "copying in `sctp_recvmsg`; the SACK every second packet is then sent from the "
        "reader's CPU",
        (kcite("net/sctp/input.c", "sctp_rcv / sctp_add_backlog"),
         kcite("net/sctp/socket.c", "sctp_recvmsg")),
        "timing",
        "SCTP_STREAM_MANY reads the `rx` alternative; new rows `rx_backlog` and "
        "`ack_softirq_reader`"),
    Disagreement(
        "SCTP_STREAM_MANY: which SACKs free the sender's chunks",
        "the receive path's SACK every second packet (`sack_freq` 2)",
        "those, or the reader's window-update SACK from `sctp_recvmsg`",
        "`sctp_assoc_rwnd_increase` sends a SACK when `sctp_peer_needs_update`: rwnd grew "
        "by `max(sk_rcvbuf >> rwnd_upd_shift, pathmtu)`, 64 KiB on loopback; by then the "
        "every-second-packet SACKs have acknowledged all but an odd last packet",
        (kcite("net/sctp/associola.c", "sctp_assoc_rwnd_increase / sctp_peer_needs_update"),),
        "both right",
        "none; the module's docstring records the window-update SACK and why it is left "
        "out"),
    Disagreement(
        "bw_tcp: the socket buffers",
        "both sockets set 1 MiB buffers",
        "1 MiB requested, doubled and locked: 2 MiB on v6.18 (`sysctl_wmem_max` 4 MiB), "
        "425984 on v6.1",
        "`sock_optimize` requests `SOCKBUF` (1 MiB) for `SO_RCVBUF` and `SO_SNDBUF` on the "
        "client, `SO_SNDBUF` on the server's listening and accepted sockets; "
        "`sk_setsockopt` clamps to `sysctl_wmem_max` (4 << 20), sets `2 * val` and "
        "`SOCK_SNDBUF_LOCK`",
        (Cite(LMBENCH, "src/lib_tcp.c", LMBENCH_COMMIT, "sock_optimize"),
         Cite(LMBENCH, "src/bw_tcp.c", LMBENCH_COMMIT, "server_main / initialize"),
         kcite("net/core/sock.c", "sk_setsockopt (SO_SNDBUF, SO_RCVBUF)")),
        "second",
        "the note says 2 MiB, locked; no rule changes (the queue depth is the "
        "`queue_depth` alternative)"),
    Disagreement(
        "madvise: the GFP of the fault's charge",
        "`GFP_HIGHUSER_MOVABLE`",
        "`GFP_KERNEL` (the page itself `GFP_HIGHUSER_MOVABLE`)",
        "`folio_prealloc` allocates with `vma_alloc_zeroed_movable_folio` and charges "
        "`mem_cgroup_charge(new_folio, src_mm, GFP_KERNEL)`",
        (kcite("mm/memory.c", "alloc_anon_folio / folio_prealloc"),),
        "second",
        "the `fault` row"),
    Disagreement(
        "madvise: how many direct uncharges the zap makes",
        "`ceil(pages / 31)` per iteration, at the zap (9 for 256 pages)",
        "`ceil(pages / 31)` at the zap, and the folios still in the per-CPU `lru_add` "
        "batch later, when it drains",
        "v6.18's MADV_DONTNEED has no `lru_add_drain` (v6.1's `zap_page_range_single` "
        "drained first); `__folio_batch_add_and_move` holds a reference until the 31st "
        "folio moves the batch, so up to 30 zapped folios are freed at a fault of the next "
        "iteration. The mmu_gather's on-stack batch takes 7 pages before its 509-page "
        "batches, and `free_pages_and_swap_cache` frees each in `folio_batch`es of 31: "
        "`1 + ceil((pages - 7) / 31)` batches, less one holding only held-back folios. "
        "256 pages: 9 or 10 at the zap and 1 drain, 10 on average",
        (kcite("mm/madvise.c", "madvise_dontneed_single_vma / madvise_finish_tlb"),
         kcite("mm/memory.c", "zap_page_range_single_batched"),
         Cite(V61, "mm/memory.c", V61_COMMIT, "zap_page_range_single"),
         kcite("mm/swap.c", "__folio_batch_add_and_move / folio_batch_move_lru / "
                            "folios_put_refs"),
         kcite("mm/mmu_gather.c", "__tlb_remove_folio_pages_size / tlb_next_batch / "
                                  "__tlb_batch_free_encoded_pages"),
         kcite("include/asm-generic/tlb.h", "MMU_GATHER_BUNDLE / MAX_GATHER_BATCH"),
         kcite("mm/swap_state.c", "free_pages_and_swap_cache")),
        "both wrong",
        "the catalogue replays the zap through v6.18's batches "
        "(`catalogue.dontneed.v618_release`): rows `zap` and `lru_drain`. "
        "`madvise_fault`, the RFC study's generator, keeps its folio-batch model"),
    Disagreement(
        "madvise: page-table pages",
        "none",
        "with `CONFIG_PT_RECLAIM` the zap frees each emptied PTE page (a kmem uncharge "
        "into the stock, from an RCU callback) and the next fault there charges a new one",
        "`madvise_dontneed_single_vma` sets `.reclaim_pt`; `reclaim_pt_is_enabled` needs a "
        "whole 2 MiB range; `PT_RECLAIM` is `default y` and x86-64 selects "
        "`ARCH_SUPPORTS_PT_RECLAIM`; the PTE page is `GFP_PGTABLE_USER` (`__GFP_ACCOUNT`) "
        "and is freed by `tlb_remove_table` -> `call_rcu` -> `__free_pages` -> "
        "`__memcg_kmem_uncharge_page` -> `obj_cgroup_uncharge_pages` -> `refill_stock`. A "
        "region of whole 2 MiB is PMD-aligned (`__get_unmapped_area`)",
        (kcite("mm/madvise.c", "madvise_dontneed_single_vma"),
         kcite("mm/pt_reclaim.c", "reclaim_pt_is_enabled / try_to_free_pte"),
         kcite("mm/Kconfig", "PT_RECLAIM"), kcite("arch/x86/Kconfig", "X86"),
         kcite("include/asm-generic/pgalloc.h", "GFP_PGTABLE_USER"),
         kcite("mm/mmu_gather.c", "tlb_remove_table_free"),
         kcite("mm/memcontrol.c", "__memcg_kmem_uncharge_page / obj_cgroup_uncharge_pages"),
         kcite("mm/mmap.c", "__get_unmapped_area")),
        "second",
        "rows `pte_alloc` and `pte_free` (none for the default 256 pages, which hold no "
        "whole 2 MiB)"),
    Disagreement(
        "madvise: transparent huge pages",
        "base pages only, unstated",
        "with THP or mTHP a fault charges 2^order pages, directly above 64 (§5 row 1′)",
        "`alloc_anon_folio` tries the orders `thp_vma_allowable_orders` allows; only the "
        "PMD order inherits the global setting by default (`huge_anon_orders_inherit = "
        "BIT(PMD_ORDER)`); a configuration, not timing",
        (kcite("mm/memory.c", "alloc_anon_folio"),
         kcite("mm/huge_memory.c", "hugepage_init_sysfs")),
        "second",
        "the assumption is now stated (THP off for the region; 256 pages cannot hold a "
        "PMD folio); a THP run is not modelled: open"),
    Disagreement(
        "sizes: `LL_MAX_HEADER`",
        "128 from `CONFIG_HYPERV_NET`",
        "128 because the pinned tree forces it (`|| 1`); the tree is not a kernel.org copy",
        "the pinned tree's `include/linux/netdevice.h` reads `#elif defined(CONFIG_WLAN) "
        "|| IS_ENABLED(CONFIG_AX25) || 1` and `# if defined(CONFIG_MAC80211_MESH) || 1`. "
        "In mainline a modular `HYPERV_NET` defines no `CONFIG_HYPERV_NET`; 128 (mesh) and "
        "96 (WLAN) both give `MAX_TCP_HEADER` 320 and a 704-byte small head, so every "
        "size stands",
        (kcite("include/linux/netdevice.h", "LL_MAX_HEADER"),
         kcite("net/core/skbuff.c", "SKB_SMALL_HEAD_SIZE")),
        "second",
        "the sizes module's docstring; no number changes"),
    Disagreement(
        "lazy era (`sk_reclaim = \"lazy\"`): sizes",
        "v5.10's socket rules with v6.18's buffer sizes (a 960-byte TCP head)",
        "before v6.3 a TCP head is a kmalloc-1k: 1280 bytes (v6.1)",
        "v5.10 has no `skb_small_head_cache`; the head of `sk_stream_alloc_skb` is "
        "`kmalloc_reserve` of 640 bytes, a 1024-byte object",
        (Cite(V510, "net/core/skbuff.c", V510_COMMIT, "__alloc_skb"),
         Cite(V61, "net/core/skbuff.c", V61_COMMIT, "kmalloc_reserve")),
        "second",
        "none: the contract's `lazy` changes socket reclaim only, and a lazy socket reaches "
        "the memcg about once per 2 MiB, so the head size moves no per-operation count; "
        "stated as a difference"),
    Disagreement(
        "lmbench: the portmapper",
        "not stated",
        "`NO_PORTMAPPER` undefined, the servers register with the portmapper (§3)",
        "`src/bench.h` defines `NO_PORTMAPPER`: fixed ports (`TCP_DATA` = -31236)",
        (Cite(LMBENCH, "src/bench.h", LMBENCH_COMMIT, "NO_PORTMAPPER"),),
        "first",
        "none (set-up only, no charge)"),
)

#: points the second reading raised where the two agree, checked against the source
AGREED: tuple[str, ...] = (
    "netserver's data sockets: created by the per-test child, TCP and SCTP one-to-one "
    "accepted by it (`__inet_accept` -> `mem_cgroup_sk_alloc`), UDP and SCTP one-to-many "
    "from `socket()`",
    "which side sends: netperf for TCP_STREAM, TCP_SENDFILE and SCTP_STREAM_MANY; "
    "netserver for TCP_MAERTS; both for the RR tests; bw_tcp's `source()` child",
    "AF_UNIX: `unix_create1` sets `GFP_KERNEL_ACCOUNT`; `sk_buff` (unless from the "
    "`napi_alloc_cache`, which only NAPI-context frees refill), the `kmalloc-cg` head and "
    "every frag page are charged to the writer; frags uncharged directly, slab objects "
    "through the reader CPU's obj stock; no socket accounting",
    "`skbuff_head_cache` has no `SLAB_ACCOUNT` (`SLAB_HWCACHE_ALIGN | SLAB_PANIC | "
    "FLAG_SKB_NO_MERGE`): TCP, UDP and SCTP skbs are never memcg-charged",
    "`SK_RECLAIM_THRESHOLD`/`SK_RECLAIM_CHUNK` are v5.10's literals (2 MiB, 1 MiB), still "
    "literals in 5.15.y and named in v5.19; `sk_mem_reclaim_partial` keeps up to a "
    "quantum; no TCP or SCTP per-message path of v5.10 reclaims outside memory pressure "
    "(timers, FIN, close, pruning)",
    "pipes: `anon_pipe_get_page` reuses `tmp_page[2]` or charges `alloc_page(GFP_HIGHUSER "
    "| __GFP_ACCOUNT)` to the writer; `anon_pipe_put_page` keeps or `put_page`s (a direct "
    "uncharge); the ring and `pipe_inode_info` are set-up charges",
    "UDP_RR charges nothing per transaction (`udp_rmem_release` keeps a page); TCP_RR and "
    "lat_tcp 2 + 2, SCTP_RR 4 + 4 per transaction (eager)",
    "bw_unix: two skbs per 64 KiB write (3776 + 32 KiB and 320 + 28 KiB), 15 frag pages in "
    "4 charges, 4104 + 1032 bytes of heads, 2 x 264 of `sk_buff`; lat_unix and hackbench "
    "socket: 264 + 520 bytes per message",
    "the robot's TCP_SENDFILE build patch (`len = netperf_sendfile`) changes only the "
    "end-of-test path; `jobs/netperf.yaml` passes `send_size: 10K` to TCP_SENDFILE and "
    "SCTP_STREAM_MANY only",
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _cite(c: Cite) -> str:
    return f"{c.repo} `{c.path}` @ `{c.commit[:12]}`, `{c.function}`"


def render() -> str:
    """The section, as markdown (MyST)."""
    out = [
        "## Second reading and disagreements", "",
        "Issue 18 asked for every row above to be re-derived from the kernel and benchmark "
        "sources by a reader who had not seen them: that is the "
        "[second reading](audit/second-reading.md). It agrees with the rows on the "
        "structure of every test; the table lists every point where the two readings "
        "differed, what the source says, which reading it bears out, and what changed in "
        "the generators (the tables above are the generators as they now are). Where the "
        "source leaves the answer to timing, the answer became a modelling alternative "
        "with a prior (see *Modelling alternatives*).", "",
        "| # | test | first reading | second reading | what the source says | cited | "
        "right | what changed |", "|---|---|---|---|---|---|---|---|"]
    for n, d in enumerate(DISAGREEMENTS, 1):
        cites = "; ".join(_cite(c) for c in d.cites)
        out.append(f"| {n} | {_cell(d.test)} | {_cell(d.first)} | {_cell(d.second)} | "
                   f"{_cell(d.source)} | {_cell(cites)} | {_VERDICT_TEXT[d.verdict]} | "
                   f"{_cell(d.change)} |")
    out += ["", "Checked and agreed (the second reading's answers to the audit's general "
            "questions, and its per-test figures, where the first reading had the same):", ""]
    out += [f"- {a}" for a in AGREED]
    out += ["", "The second reading's own sources (v6.1.166 and v5.15.215 stable trees, "
            "netperf, lmbench, rt-tests, lkp-tests) are listed in its section 1; the "
            "settlement above also read a v5.19 tree "
            f"({V519}, `{V519_COMMIT[:12]}`) and the pinned v6.18.19 tree "
            f"({KERNEL}, `{KERNEL_COMMIT[:12]}`)."]
    return "\n".join(out) + "\n"


#: the will-it-scale readings of issue 23, their comparison, and the generator
WILL_IT_SCALE = """## will-it-scale: two independent readings, compared

Issue 23 adds the kernel test robot's most used benchmark. Its six tests (`page_fault1`,
`page_fault2`, `page_fault3`, `malloc1`, `unix1`, `lock1`, process and thread mode) were read
twice, independently, from will-it-scale's and the kernel's sources, per era (v5.8, v5.9 to
v5.13, v5.14 to v6.0, v6.1 and after). The two readers did not see each other's pages or
this one:

- [reading 1](audit/will-it-scale-reading-1.md) starts from the benchmark's operations;
- [reading 2](audit/will-it-scale-reading-2.md) starts from the kernel's accounted allocation
  sites.

They agree on each test's structure:

- `page_fault1` charges one anon page per operation through the stock, plus a page-table
  page every 512 operations;
- `page_fault3` charges no page in steady state;
- `unix1` charges two objects per operation (the `sk_buff` and its head, because AF_UNIX
  allocates them with `GFP_KERNEL_ACCOUNT`), which are freed in the same operation, and
  AF_UNIX never reaches `mem_cgroup_charge_skmem`;
- `lock1` charges nothing in every release tree read (`file_lock_cache` is not accounted).

A third reader compared them row by row and settled each difference from the source
([comparison](audit/will-it-scale-comparison.md)). The main correction is where `malloc1`'s
page-table page goes. On x86 bare metal up to v6.1 it is uncharged directly, in the munmap's
page batch (`tlb_remove_table` is `tlb_remove_page`), as reading 2 says. Only v6.18 frees it
through RCU into the stock. So `malloc1` drains 2 pages from the stock per operation up to
v6.1 and 1 in v6.18. The comparison ends with the per-test, per-era table a generator should
implement and ten points the stored sources cannot settle. The catalogue's will-it-scale
generator (`memcglab.workloads.catalogue.wis`, the will-it-scale section above) implements
that table for x86 bare metal, per era; what it leaves out, and why, is listed there.
"""


def render_will_it_scale() -> str:
    """The page's will-it-scale section: the two readings and what is known of them."""
    return WILL_IT_SCALE
