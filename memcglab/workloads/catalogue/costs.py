"""The cost families: the work outside memcg per benchmark operation, as wide priors.

No datasheet gives how many cycles a loopback SCTP message or a madvise iteration costs
outside the charge path, so each test's record names a cost family whose per-operation
cycles are ``fixed + per_unit x units``. These are the ``fixed`` priors' numbers, my
inference, not measurements; :mod:`memcglab.scenario.work` turns them into log-uniform
priors and the calibration replaces them where the development set has such a benchmark.
Several tests share a family (every TCP stream is ``tcp_stream``).

>>> TCP_STREAM.name, TCP_STREAM.typical
('tcp_stream', 8000.0)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CostFamily"]


@dataclass(frozen=True, slots=True)
class CostFamily:
    """A cost family: its name, the fixed cycles' range and what they are."""

    name: str
    low: float
    typical: float
    high: float
    what: str


TCP_STREAM = CostFamily("tcp_stream", 2_000.0, 8_000.0, 30_000.0,
                        "a loopback TCP message is a sendmsg and a recvmsg syscall, skb "
                        "allocation, the loopback transmit and a softirq receive (a few "
                        "microseconds)")
SCTP_STREAM = CostFamily("sctp_stream", 5_000.0, 20_000.0, 80_000.0,
                         "SCTP adds chunking, a SACK and its association lookups to TCP's "
                         "path")
TCP_RR = CostFamily("tcp_rr", 10_000.0, 30_000.0, 100_000.0,
                    "a request/response round trip: two sendmsg/recvmsg pairs, two softirq "
                    "receives and two wakeups with context switches")
UDP_RR = CostFamily("udp_rr", 8_000.0, 25_000.0, 80_000.0,
                    "as TCP_RR without TCP's ACK and retransmit-queue work")
SCTP_RR = CostFamily("sctp_rr", 12_000.0, 40_000.0, 120_000.0,
                     "as TCP_RR plus SCTP's chunk bundling and a SACK per message")
UNIX = CostFamily("unix", 1_000.0, 4_000.0, 20_000.0,
                  "an AF_UNIX stream write and read: two syscalls, an skb, a wakeup")
UNIX_RR = CostFamily("unix_rr", 4_000.0, 12_000.0, 50_000.0,
                     "an AF_UNIX round trip: two writes, two reads, two wakeups")
HACKBENCH_SOCKET = CostFamily("hackbench_socket", 1_500.0, 5_000.0, 20_000.0,
                              "one hackbench message over an AF_UNIX socket: a write, a read "
                              "and a share of the receivers' wakeups")
HACKBENCH_PIPE = CostFamily("hackbench_pipe", 1_000.0, 4_000.0, 15_000.0,
                            "one hackbench message through a pipe: a write, a read and a "
                            "share of the wakeups")
MADVISE = CostFamily("madvise", 2_000.0, 10_000.0, 50_000.0,
                     "the madvise(MADV_DONTNEED) call of one iteration and its TLB flush")
#: will-it-scale (my inference): a 4 KiB write fault with its share of the 128 MiB
#: munmap; a glibc mmap + first touch + munmap of 128 MiB; an AF_UNIX 1-byte write and
#: read; one fcntl(F_SETLKW) with its lock allocations
WIS_PAGE_FAULT = CostFamily("wis_page_fault", 500.0, 2_000.0, 8_000.0,
                            "a will-it-scale page fault: the trap, the page allocation and "
                            "zeroing (or the COW copy), the PTE, and its share of the munmap")
WIS_MALLOC = CostFamily("wis_malloc", 5_000.0, 20_000.0, 100_000.0,
                        "a 128 MiB malloc and free: two syscalls, a VMA, one fault with its "
                        "page-table page, and the TLB flush of the munmap")
WIS_UNIX = CostFamily("wis_unix", 1_000.0, 4_000.0, 20_000.0,
                      "a 1-byte AF_UNIX write and read on one's own socketpair: two "
                      "syscalls and an skb, no wakeup")
WIS_LOCK = CostFamily("wis_lock", 300.0, 1_500.0, 6_000.0,
                      "one fcntl(F_SETLKW) on a private file: the syscall, the lock list "
                      "walk and three file_lock allocations and frees")
