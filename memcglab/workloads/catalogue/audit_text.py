"""The prose of the accounting audit page (``docs/accounting.md``); the tables are data."""

from __future__ import annotations

__all__ = ["AUDIT_CHANGES", "CHANGES", "DIFFERENCES", "INTRO", "PLACEMENT", "TEST_NOTES"]

INTRO = """\
# Accounting audit: who charges what, per benchmark

For every test of the scenario contract's benchmark catalogue, this page lists each
charge and uncharge one benchmark operation makes: the call chain, the GFP flags,
the path (the memcg stock through `try_charge_memcg`/`refill_stock`, the obj stock in
bytes, the socket reserve `sk_forward_alloc`, or a direct folio uncharge through
`memcg_uncharge`), whose memcg pays, on which CPU, in which context, and how much.
The kernel read is Linux v6.18.19; `sk_reclaim = "lazy"` swaps in the socket code of
v5.10. Every row cites the repository, path, commit and function it is read from.

The tables are generated from the same `AccountingRow` objects the generators of
`memcglab.workloads.catalogue` emit (the row fixes the trace operation, the memcg, the
CPU and the `irq` word of every trace row it makes), so this page and the traces
cannot drift: `python -m memcglab.workloads.catalogue.audit --write docs/accounting.md`
rewrites it, and a test fails when the committed page differs.

How to read a row. *memcg of* is the role whose memcg is charged: a socket's owner for
socket rows (an accepted socket takes the acceptor's memcg in `__inet_accept` ->
`mem_cgroup_sk_alloc`; softirq work charges `sk->sk_memcg`, never the interrupted
task's), the running task for kmem pages and slab objects (`current_obj_cgroup()`,
which is NULL outside task context). *CPU of* is the role whose CPU runs the row; for
a softirq row that is the transmitting task, because loopback's receive softirq runs
on the sending CPU (`loopback_xmit` -> `__netif_rx` -> `enqueue_to_backlog` on this
CPU; RPS is off on `lo`). A socket row becomes a trace `charge` or `uncharge` only when
`sk_forward_alloc` crosses a page; the generated tables below each test say how often
that happens. Trace rows of softirq context carry the `irq` word.
"""

PLACEMENT = """\
## Placement, softirq work and layouts

Tasks are placed as an idle machine's scheduler spreads them
(`memcglab.workloads.catalogue.placement`): CPUs are numbered socket by socket
(socket *s* holds a contiguous block, as the trace's `nodes` header splits them),
inside a socket the first thread of every core before the second; the task created
*k*-th (instance by instance, each instance's roles in creation order) takes slot *k* of
an order that fills idle cores first (`select_idle_sibling`), keeps the two tasks of a
pair inside one socket's LLC (`wake_affine` pulls a synchronously woken peer to the
waker's LLC), fills the sockets in turn and the SMT siblings last, and wraps around
when there are more tasks than CPUs. The `placement = "random"` alternative scatters
them instead. A `BenchmarkTrace` carries each instance's task CPUs and names the roles
whose CPUs run softirq work.

Layouts (`memcglab.workloads.catalogue.layout`): `lkp` puts every task of every
instance, server daemons included, in one memcg at depth 2 (root, `system.slice`, the
service cgroup): the kernel test robot starts netserver from the job itself
(lkp-tests `programs/netserver/daemon`, exec'd by `bin/run-daemon`, which moves no
task for a job without `nr_instances`) and runs the job from
`lkp-bootstrap.service`. The robot's `-cgroup2` jobs (`jobs/netperf-cgroup2.yaml`,
`jobs/hackbench/hackbench-cgroup2.yaml`) first move the job runner into
`/cgroup2/$testcase.1` (`programs/cgroup2/setup`, `cg_bind`), so daemon and client
share one memcg there too, at depth 1 with `memory.high` 90% and `memory.low` 50%:
the `shared` layout with `protection`. `per-instance` gives each instance (a netperf or lmbench
client with its server child, a bw_unix or lat_unix pair, a hackbench group, a madvise
job) its own memcg below `depth - 1` shared ancestors; a server daemon's children
inherit the daemon's memcg, which is the `server_memcg` alternative. `shared` is
`lkp`'s one memcg at `depth` (default 1). `depth` is the contract's. `protection` does
not change the trace: it is recorded for the pricing layer.
"""

TEST_NOTES: dict[tuple[str, str], str] = {
    ("netperf", "TCP_STREAM"): (
        "netperf's omni test (`send_omni_inner`: `-m` sets `send_size`, the default is the "
        "initial `SO_SNDBUF`, 16384) sends from the client; the netserver child receives "
        "with its receive buffer's size. Sends coalesce into skbs of one loopback MSS "
        "(65484 bytes over IPv4, 65464 over IPv6: `tcp_xmit_size_goal`; Nagle holds the partial "
        "skb), or, with `segments = per_send`, each send's tail goes out as an skb of its "
        "own (see the module `net_stream`); every copy ends "
        "at the 32 KiB page frag (`sk_page_frag_refill`, `GFP_KERNEL`: not charged). The "
        "frag pages themselves are not `__GFP_ACCOUNT`: only the socket reserve charges."),
    ("netperf", "TCP_SENDFILE"): (
        "`sendfile_tcp_stream` (src/nettest_bsd.c; the robot's build patches its missing "
        "`len =`) sends `send_size` bytes of a file per `sendfile()`; `do_splice_direct` -> "
        "`splice_to_socket` -> `sock_sendmsg(MSG_SPLICE_PAGES)`: the same schedule and "
        "charge per piece as TCP_STREAM, from page-cache pages, so pieces end only at send "
        "and skb boundaries. The multi-memcg thread ran this test with `-m 10K` over "
        "IPv6, and the robot's `jobs/netperf.yaml` passes `send_size: 10K` to it (and to "
        "SCTP_STREAM_MANY)."),
    ("netperf", "TCP_MAERTS"): (
        "TCP_STREAM reversed: the netserver child sends, the netperf client reads. "
        "`send_size` is what netserver sends: netperf's `-m ,X` (`remote_send_size_req`); "
        "a plain `-m X` sets only netperf's own send size, which TCP_MAERTS never uses, "
        "and leaves netserver at its `SO_SNDBUF`, 16384, the key's default."),
    ("netperf", "TCP_RR"): (
        "Both queues are empty at every send (the peer's message acknowledged the last "
        "one), so `tcp_stream_alloc_skb` forces the head in (`sk_forced_mem_schedule`). "
        "The peer is waiting in `sk_wait_data` without the socket lock, so the receive "
        "softirq runs `tcp_rcv_established` directly, and its header-prediction fast path "
        "charges the skb from the reserve the peer's own send left (truesize "
        "<= `sk_forward_alloc`) before `tcp_ack` frees the peer's previous message. In the "
        "eager era each end therefore charges one page for its send and gives it back when "
        "its reader's `sock_rfree` returns the reserve to a whole page: two charges and two "
        "uncharges per transaction, all in task context on the tasks' own CPUs."),
    ("netperf", "UDP_RR"): (
        "UDP's send path charges nothing; `udp_rmem_release` keeps up to a page in the "
        "reserve, so after each socket's first datagram no transaction reaches the memcg "
        "(in both eras)."),
    ("netperf", "SCTP_RR"): (
        "SCTP schedules the message length but charges the chunk skb's truesize (a 1-byte "
        "message: 960 bytes), and receives by chunk length while charging data + "
        "`sizeof(struct sk_buff)`, so the reserve runs below zero and each step crosses a "
        "page: four charges and four uncharges per transaction (eager). The SACK's uncharge "
        "and the data's charge run in the receive softirq on the sender's CPU, or, when the "
        "message finds its receiver still holding the socket lock, from the receiver's "
        "backlog in task context (`rr_rx`)."),
    ("netperf", "SCTP_STREAM_MANY"): (
        "`send_sctp_stream_1toMany` sends `send_size` bytes per `sctp_sendmsg` on "
        "one-to-many (`SOCK_SEQPACKET`) sockets, one association each (netperf's default). "
        "A message up to the fragmentation point (about 65 KiB on loopback) is one DATA "
        "chunk; its linear skb comes from kmalloc, 16 KiB of data in a 32 KiB head "
        "(`kmalloc_large`, not charged), so the sender schedules 16 KiB but charges 33024 "
        "bytes. The receiver charges the chunk in the receive softirq on the sender's CPU "
        "or, holding its lock while it copies, from its backlog (`rx`), and SACKs every "
        "second packet from there."),
    ("lmbench", "lat_tcp"): (
        "`doclient` writes and reads `msize` (1) bytes; the `lat_tcp -s` daemon's child "
        "(`doserver`) echoes. No socket options (`SOCKOPT_NONE`). The same accounting as "
        "netperf TCP_RR."),
    ("lmbench", "bw_tcp"): (
        "lmbench's `bw_tcp -s` daemon forks a `source()` child per connection that writes "
        "`-m` bytes (the robot's script runs 1 B to 10 MB; default `XFERSIZE`, 64 KiB) per "
        "`write`; the client reads. `sock_optimize` asks for 1 MiB `SO_SNDBUF` on the "
        "server's sockets and 1 MiB `SO_RCVBUF` and `SO_SNDBUF` on the client's; the kernel "
        "doubles the request and locks it (2 MiB, below v6.18's 4 MiB `wmem_max`), which "
        "deepens the queues but changes no rule."),
    ("lmbench", "bw_unix"): (
        "The writer (the forked child of `initialize`) writes `XFERSIZE` = 64 KiB per "
        "`write`; the reader (the benchmp child) reads 64 KiB. Each write is two skbs: 3776 "
        "linear bytes and an order-3 frag (32 KiB), then 320 linear bytes and frags of order "
        "2, 1 and 0 (28 KiB): 15 pages charged to the writer through `try_charge_memcg`, "
        "5136 bytes of heads and 528 of `sk_buff` through its obj stock."),
    ("lmbench", "lat_unix"): (
        "The benchmp child writes one byte and reads one; its forked child echoes. Each "
        "message is an `sk_buff` (264 bytes with the objcg pointer) and a 512-byte "
        "`kmalloc-cg` head (520), charged to the writer through its CPU's obj stock and "
        "freed on the reader's."),
    ("hackbench", "socket"): (
        "rt-tests hackbench as the robot builds it (lkp-tests `programs/hackbench`): "
        "`-g groups -f fds --process|--threads -l loops -s datasize`; each group has `fds` "
        "receivers, each with its own `socketpair(AF_UNIX, SOCK_STREAM)`, and `fds` senders "
        "that write `datasize` bytes to every receiver, `loops` times. A 100-byte message "
        "is one `sk_buff` and one 512-byte head, as lat_unix's. `mode` (processes or "
        "threads) changes no charge: every task of a group is in one memcg and kmem follows "
        "the task. A receiver drains its socket when it runs (`batch_reads`)."),
    ("hackbench", "pipe"): (
        "The same groups over `pipe()`: `pipe_write` merges a 100-byte write into the last "
        "page when the pipe is not empty, and takes a new page from `pipe->tmp_page[2]` "
        "before allocating one; `pipe_read` keeps an emptied page there while a slot is "
        "free. Only a pipe that holds more pages than its two cached ones charges and frees."),
    ("madvise", "fault_release"): (
        "The page_counter-stock RFC's loop (Joshua Hahn, April 2026: \"fault and release "
        "anonymous pages using madvise(MADV_DONTNEED) ... 30 trials of 50 iterations\"), one "
        "job per cgroup, `pages` faulted per iteration (the mail gives no size: 256). The "
        "schedule is `memcglab.workloads.madvise.fault_release_ops`, shared with "
        "`madvise_fault`, which keeps the RFC's own layout; the catalogue replays the "
        "releases through v6.18's mmu_gather, folio batches and per-CPU `lru_add` batch "
        "(`memcglab.workloads.catalogue.dontneed`): the zap frees 7 folios, then batches of "
        "31, and the folios still in the `lru_add` batch are uncharged when it fills during "
        "the next iteration. A region with whole 2 MiB ranges also frees and recharges "
        "their PTE pages (`CONFIG_PT_RECLAIM`). THP is assumed off for the region."),
}

CHANGES = """\
## What changed against the previous generators

- **AF_UNIX (`unix_stream`, lmbench bw_unix).** It charged one page per pair at setup
  and nothing per write, reading `GFP_KERNEL` from `sock_init_data`; `unix_create1` sets
  `sk->sk_allocation = GFP_KERNEL_ACCOUNT` afterwards. Now every 64 KiB write charges the
  writer's memcg: 15 frag pages in 4 `charge`s, two heads and two `sk_buff`s in 4
  `obj_charge`s; the reader frees the frags with 4 `uncharge_direct`s (one folio each)
  and the rest with 4 `obj_uncharge`s. `unix_stream` is an alias of the catalogue's
  bw_unix, with a `messages` length.
- **TCP request/response (`loopback_rr` tcp).** It charged a page for each of the 4
  skbs of a transaction, the receives in softirq. The receive fast path of
  `tcp_rcv_established` charges the skb from the reserve the receiver's own last send
  left, and the ACK that frees its previous message comes after it: each end makes one
  charge (its send's forced skb head) and one uncharge (its read), in task context on
  its own CPU. The skb head's truesize is 960 bytes (the small-head cache's 384-byte
  headroom), not 896.
- **TCP streams (`loopback_stream`).** Skbs hold one loopback MSS (65484 bytes), not
  64 KiB; copies end at the 32 KiB page frag; the receive charge can run in softirq on
  the sender's CPU or from the backlog on the reader's (`rx`), the ACK's frees on the
  sender's CPU or in softirq on the reader's (`ack`).
- **UDP and SCTP request/response** keep their rules; SCTP's chunk truesize is 960
  bytes (was 896) and its receive charge is data + 232.
- **Netserver's memcg** is the `server_memcg` alternative (was `loopback_rr`'s
  `server`, kept in the alias); in `lkp` the server is in the benchmark's memcg.
- **The robot's `lkp` layout** (one memcg at depth 2 for every task), `sk_reclaim =
  "lazy"`, the obj stock operations, the `irq` word on softirq rows and the `nodes`
  header (one node per socket) are new; so are TCP_SENDFILE, TCP_MAERTS,
  SCTP_STREAM_MANY, lat_tcp, bw_tcp, lat_unix and both hackbench modes.
- **`netperf_rx`** stays the stylised receive mix the studies vary (its whole-message
  charges, its release and interleave axes); the benchmark the multi-memcg thread ran,
  `netperf -6 -t TCP_SENDFILE -- -m 10K`, is the catalogue's netperf TCP_SENDFILE.
  **`madvise_fault`** is unchanged byte for byte: its loop moved into
  `fault_release_ops`, which the catalogue's madvise test uses with the contract's
  layouts.
"""

DIFFERENCES = """\
## Where the kernel notes (§10) and issue 18 differ from the source

- *`sk_reclaim`: `eager` is "v5.19 on"* (the scenario contract) and the first reading:
  "net: keep sk->sk_forward_alloc as small as possible" came after v5.19-rc1 and first
  shipped in v6.0 (v5.19's `sk_mem_uncharge` still reclaims at `SK_RECLAIM_THRESHOLD`);
  see the disagreements below.

- *"the skb head (kmalloc, an object charge through the obj stock) and every frag page
  ... of every write is charged"* (§10, AF_UNIX): so is the `sk_buff` itself.
  `skbuff_head_cache` has no `SLAB_ACCOUNT`, but `memcg_slab_post_alloc_hook` charges any
  allocation that carries `__GFP_ACCOUNT`, and `sk_allocation` does; only an `sk_buff`
  taken from the CPU's `napi_alloc_cache` (6.18's `napi_skb_cache_get(false)` in task
  context, refilled only by softirq frees) escapes it: the `napi_cache` alternative. The
  head is charged from `kmalloc-cg-N` because `kmalloc_reserve` skips the small-head cache
  for `__GFP_ACCOUNT` (`KMALLOC_NOT_NORMAL_BITS`). The statement that TCP/UDP/SCTP skb
  heads are not charged is right: their sockets allocate with `GFP_KERNEL`/`GFP_ATOMIC`.
- *"Freed pages uncharge directly ... never into the per-CPU memcg stock"* (§10): true
  for pages freed as folios (`put_page` -> `__folio_put` -> `mem_cgroup_uncharge`: skb
  frags, pipe pages, anonymous pages), not for kmem pages freed with `__free_pages`
  (`free_pages_prepare` -> `__memcg_kmem_uncharge_page` -> `obj_cgroup_uncharge_pages` ->
  `refill_stock`), such as a pipe's cached `tmp_page` at close or a `kmalloc_large`
  buffer.
- *"If netserver is in a non-root memcg S, a CPU alternates between the client's memcg
  and S on every message, whatever the placement"* (issue 18): not for TCP_RR in the
  eager era. The receive softirq's charge fits the receiving socket's reserve (the fast
  path), so the memcg calls left are each task's own send and read, on its own CPU: a
  CPU sees both memcgs only when a client and a server share it (more tasks than CPUs,
  or a placement that stacks them). The claim holds for streams, whose receive softirq
  charges the receiver's memcg on the sender's CPU, and for SCTP_RR.
- *"TCP charges by pages of `sk_forward_alloc`, not by writes. Small writes coalesce"*
  (issue 18): right for streams whose sends coalesce (`segments = coalesced`; with
  `per_send`, the source's other timing, each send is an skb of its own); a
  request/response message is its own skb (both queues are empty at each send), forced
  in with `sk_forced_mem_schedule`.
- *`sk_reclaim = "lazy"` "as in v5.10's ... (`SK_RECLAIM_THRESHOLD`,
  `SK_RECLAIM_CHUNK`, `sk_mem_reclaim_partial`)"* (the scenario contract): v5.10 has
  `sk_mem_reclaim_partial` but writes the 2 MiB threshold and 1 MiB chunk as literals
  in `sk_mem_uncharge`; the names came a year later ("tcp: define macros for a couple
  reclaim thresholds", Paolo Abeni, 26 October 2021). The lazy era also differs in what
  it schedules: `sk_wmem_schedule`/`sk_rmem_schedule` raise the reserve by
  `sk_mem_pages(size)`, the whole size, whenever it is short (fixed by "net: fix
  sk_wmem_schedule() and sk_rmem_schedule() errors" in the same series, first released
  in v6.0, a fix the stable branches also took, so a late v5.10.y or v5.15.y schedules
  the delta), and
  UDP's enqueue raises by `sk_mem_pages(size)` when `size >= sk_forward_alloc`. In v5.10
  no TCP or SCTP per-message path reclaims outside memory pressure: the delayed-ACK and
  retransmit timer handlers call `sk_mem_reclaim_partial`/`sk_mem_reclaim`, but every
  message of a busy connection re-arms those timers (`sk_reset_timer` -> `mod_timer`),
  so, as this reading infers, they rarely fire and are not modelled; a lazy TCP socket
  reaches the memcg only when its reserve grows past 2 MiB.
- *§10, "Loopback placement"*: right; the backlog case is the `rx` and `ack`
  alternatives of the stream tests.
- *§10, "A socket's memcg is fixed once"* and *"The kernel test robot's cgroup"*:
  right. In 6.18 `__inet_accept` also charges the accepted socket's object to the
  acceptor (`kmem_cache_charge`) with `__sk_charge`; both are set-up charges, once per
  connection, outside the traces.
"""


AUDIT_CHANGES = """\
## What the second reading changed

The comparison with the second reading (the section after next) changed the generators
in these places; every other row stands as it was.

- **TCP streams (TCP_STREAM, TCP_SENDFILE, TCP_MAERTS, bw_tcp).** Coalescing into
  MSS-sized skbs is now the `segments` alternative's default (`coalesced`, 0.6); with
  `per_send` (0.4) every send also ends an skb, so the receive and ACK calls come once
  per send rather than once per MSS. The new skb's schedule is forced
  (`sk_forced_mem_schedule`, `__GFP_NOFAIL`) when both queues are empty: the same pages.
- **SCTP_RR.** The `rr_rx` alternative (`softirq` 0.85, `backlog` 0.15) moves the SACK's
  uncharge and the data's charge to the receiver's CPU in task context when the message
  finds the receiver holding its lock. **SCTP_STREAM_MANY** reads the `rx` alternative the
  same way (`rx_backlog`, and its SACK then comes from the reader's CPU).
- **madvise fault_release.** The fault's charge is `GFP_KERNEL`. The zap's uncharges
  follow v6.18's batches: 7 folios from the mmu_gather's on-stack batch, then folio
  batches of 31, less the folios the CPU's `lru_add` batch still holds, which are
  uncharged in one more call when that batch fills during the next iteration (about 10
  direct uncharges per 256-page iteration instead of 9). Whole 2 MiB ranges add a PTE
  page's kmem charge at the refault and its uncharge into the stock from the RCU callback.
- **Text only.** The eager era is v6.0 on, not v5.19; `LL_MAX_HEADER` 128 is the pinned
  tree's forced value (mainline's 96 and 128 give the same sizes); TCP_MAERTS's
  `send_size` is netperf's `-m ,X`; bw_tcp's buffers are 2 MiB, locked; the robot's
  cgroup2 jobs keep netserver with the client.
"""
