"""The accounting audit as data: one :class:`AccountingRow` per charge or uncharge of a test.

A row is what the audit page (``docs/accounting.md``) prints and what the test's
generator emits: its ``kind`` (the trace operation or socket event), the role whose
memcg is charged (``target``), the role whose CPU runs it (``cpu``) and the context
come from the row, so the page and the trace cannot disagree about them. Sizes
are computed by the generators from :mod:`memcglab.workloads.catalogue.sizes`,
whose constants the rows' ``size`` text quotes.

>>> r = AccountingRow("read", "sk_uncharge", "tcp_recvmsg -> sock_rfree -> sk_mem_uncharge",
...                   "-", "socket", "server", "server", "task", "skb truesize", (TCP_RECV,))
>>> r.irq, r.trace_op
(False, 'uncharge')
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AccountingRow", "Cite", "KINDS", "CONTEXTS", "PATHS", "SOURCES",
           "KERNEL", "KERNEL_COMMIT", "V510", "V510_COMMIT", "NETPERF", "NETPERF_COMMIT",
           "LMBENCH", "LMBENCH_COMMIT", "RT_TESTS", "RT_TESTS_COMMIT", "LKP", "LKP_COMMIT",
           "WILL_IT_SCALE", "WILL_IT_SCALE_COMMIT",
           "kcite", "TCP_RECV", "TCP_SEND", "SK_RECLAIM", "SK_SCHEDULE", "TCP_FORCED", "UDP_RECV",
           "SKB_ALLOC", "SKB_FREE", "KMEM_PAGE", "FOLIO_FREE", "SLAB_ALLOC", "SLAB_FREE"]

KERNEL = "6952350/linux-6.18.y"
KERNEL_COMMIT = "312d9602fe3e390cdd8ede332c3398de41972bf8"  # "update to v6.18.19"
V510 = "wqhot/linux-5.10 (torvalds/linux v5.10 with -rt17)"
V510_COMMIT = "2d901b1cb612478281d5bac5ab10ddf0cd2e464e"
WILL_IT_SCALE = "antonblanchard/will-it-scale"
WILL_IT_SCALE_COMMIT = "75f66e45697e6f5f49c33dd950c4e6b289198f8f"
NETPERF = "HewlettPackard/netperf"
NETPERF_COMMIT = "afc51ff9764741da4ed6702651fba9d9c23f8557"
LMBENCH = "intel/lmbench"
LMBENCH_COMMIT = "941a0dcc0e7bdd9bb0dee05d7f620e77da8c43af"
RT_TESTS = "woodsts/rt-tests (mirror of git.kernel.org utils/rt-tests)"
RT_TESTS_COMMIT = "cadd661f984c0e6717e681fdaca1ce589b0ed964"
LKP = "intel/lkp-tests"
LKP_COMMIT = "bbbc29c495d9617f28dbc8b799cf0dac9a1ca54e"


@dataclass(frozen=True, slots=True)
class Cite:
    """Repository, path, commit and function a row is read from."""

    repo: str
    path: str
    commit: str
    function: str

    def __str__(self) -> str:
        return f"{self.repo} `{self.path}` @ {self.commit[:12]}: `{self.function}`"


def kcite(path: str, function: str) -> Cite:
    """A citation of ``function`` in ``path`` of the v6.18.19 tree."""
    return Cite(KERNEL, path, KERNEL_COMMIT, function)


# The kernel functions rows cite most, v6.18.19.
TCP_SEND = kcite("net/ipv4/tcp.c", "tcp_sendmsg_locked")
TCP_FORCED = kcite("net/ipv4/tcp_output.c", "sk_forced_mem_schedule")
TCP_RECV = kcite("net/ipv4/tcp.c", "tcp_recvmsg_locked / tcp_eat_recv_skb")
SK_SCHEDULE = kcite("include/net/sock.h", "sk_wmem_schedule / __sk_rmem_schedule")
SK_RECLAIM = kcite("include/net/sock.h", "sk_mem_uncharge / sk_mem_reclaim")
UDP_RECV = kcite("net/ipv4/udp.c", "__udp_enqueue_schedule_skb / udp_rmem_release")
SKB_ALLOC = kcite("net/core/skbuff.c", "__alloc_skb / kmalloc_reserve")
SKB_FREE = kcite("net/core/skbuff.c", "skb_release_data / kfree_skbmem")
KMEM_PAGE = kcite("mm/memcontrol.c", "__memcg_kmem_charge_page / obj_cgroup_charge_pages")
FOLIO_FREE = kcite("mm/memcontrol.c", "uncharge_folio / uncharge_batch")
SLAB_ALLOC = kcite("mm/memcontrol.c", "__memcg_slab_post_alloc_hook")
SLAB_FREE = kcite("mm/memcontrol.c", "__memcg_slab_free_hook")

#: every source the audit read, for the page's source list
SOURCES: tuple[tuple[str, str, str], ...] = (
    (KERNEL, KERNEL_COMMIT, "Linux v6.18.19: net/, mm/memcontrol.c, mm/slub.c, mm/swap.c, "
                            "fs/pipe.c, fs/splice.c"),
    (V510, V510_COMMIT, "Linux v5.10: include/net/sock.h, net/core/sock.c, net/ipv4/tcp*.c, "
                        "net/ipv4/udp.c (the lazy era)"),
    (NETPERF, NETPERF_COMMIT, "netperf 2.7: src/netperf.c, src/nettest_omni.c, "
                              "src/nettest_bsd.c, src/nettest_sctp.c, src/netserver.c"),
    (LMBENCH, LMBENCH_COMMIT, "lmbench3 as the robot builds it: src/bw_unix.c, src/bw_tcp.c, "
                              "src/lat_tcp.c, src/lat_unix.c, src/lib_tcp.c, "
                              "scripts/lmbench"),
    (RT_TESTS, RT_TESTS_COMMIT, "hackbench: src/hackbench/hackbench.c"),
    (LKP, LKP_COMMIT, "the robot's jobs and runners: programs/{netperf,netserver,lmbench3,"
                      "hackbench}/, jobs/netperf.yaml, jobs/hackbench/hackbench.yaml"),
    (WILL_IT_SCALE, WILL_IT_SCALE_COMMIT, "will-it-scale: main.c, tests/page_fault1.c, "
                    "tests/page_fault2.c, tests/page_fault3.c, tests/malloc1.c, tests/unix1.c, "
                    "tests/lock1.c (the older eras' kernel trees: "
                    "docs/audit/will-it-scale-comparison.md, section 1)"),
)

#: kind -> (what it is, the trace operation it becomes)
KINDS: dict[str, tuple[str, str]] = {
    "sk_schedule": ("sk_wmem_schedule / sk_rmem_schedule, then sk_mem_charge", "charge"),
    "sk_forced": ("sk_forced_mem_schedule, then sk_mem_charge", "charge"),
    "sk_rcv": ("tcp_rcv_established: the skb's charge and the ACK's frees", "charge, uncharge"),
    "sk_uncharge": ("sk_mem_uncharge (sk_mem_reclaim per era)", "uncharge"),
    "udp_enqueue": ("__udp_enqueue_schedule_skb -> udp_rmem_schedule", "charge"),
    "udp_release": ("udp_rmem_release", "uncharge"),
    "page_charge": ("__memcg_kmem_charge_page / mem_cgroup_charge -> try_charge_memcg",
                    "charge"),
    "folio_uncharge": ("__folio_put / folios_put_refs -> uncharge_batch -> memcg_uncharge",
                       "uncharge_direct"),
    "kmem_uncharge": ("__free_pages -> __memcg_kmem_uncharge_page -> "
                      "obj_cgroup_uncharge_pages -> refill_stock", "uncharge"),
    "obj_charge": ("obj_cgroup_charge (slab/kmalloc object, bytes)", "obj_charge"),
    "obj_uncharge": ("obj_cgroup_uncharge (refill_obj_stock, bytes)", "obj_uncharge"),
}
CONTEXTS = ("task", "softirq")
PATHS = ("socket", "memcg stock", "obj stock", "direct folio uncharge")


@dataclass(frozen=True, slots=True)
class AccountingRow:
    """One charge or uncharge of a benchmark operation, and where its facts come from.

    ``target`` is the role whose memcg pays (a socket's owner for the socket kinds,
    the running task for kmem and slab); ``cpu`` the role whose CPU runs it; for a
    softirq row that is the transmitting task (loopback's receive softirq runs on
    the sending CPU). ``per_op`` says how often it happens per benchmark operation.
    """

    key: str
    kind: str
    chain: str
    gfp: str
    path: str
    target: str
    cpu: str
    context: str
    size: str
    cites: tuple[Cite, ...]
    per_op: str = "1"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind={self.kind!r}: must be one of {', '.join(KINDS)}")
        if self.context not in CONTEXTS:
            raise ValueError(f"context={self.context!r}: must be one of {', '.join(CONTEXTS)}")
        if self.path not in PATHS:
            raise ValueError(f"path={self.path!r}: must be one of {', '.join(PATHS)}")

    @property
    def irq(self) -> bool:
        """The trace's ``irq`` word: the row runs outside task context."""
        return self.context != "task"

    @property
    def trace_op(self) -> str:
        """The trace operation(s) the row becomes (``charge, uncharge`` for a receive)."""
        return KINDS[self.kind][1]

    @property
    def socket(self) -> bool:
        """A socket event (accounted through sk_forward_alloc) rather than a direct op."""
        return self.kind.startswith(("sk_", "udp_"))
