"""The work outside memcg per benchmark operation, and how a benchmark's tasks share CPUs.

No datasheet gives how many cycles a loopback SCTP message or a madvise iteration costs
outside the charge path, so each test belongs to a *cost family* whose per-operation
cycles are ``fixed + per_unit x units`` (``units``: bytes of the message, or pages of a
madvise iteration). The priors below are wide orders of magnitude, stated as my
inference; the calibration (``data/calibration/``) replaces them with what the
development set's absolute throughputs say, where it has such a benchmark.

>>> cost_family("netperf", "TCP_SENDFILE"), cost_family("lmbench", "lat_tcp")
('tcp_stream', 'tcp_rr')
>>> FIXED["tcp_stream"].typical, UNIT["byte"].typical
(8000.0, 0.6)
>>> busiest_share_prior(2).low, busiest_share_prior(40).high
(0.5, 0.05)
"""

from __future__ import annotations

from memcglab.uncertainty import Prior

__all__ = ["FIXED", "UNIT", "COST_FAMILIES", "cost_family", "unit_of", "busiest_share_prior"]

#: (workload family, test) -> cost family
COST_FAMILIES: dict[tuple[str, str], str] = {
    **{("netperf", t): "tcp_stream" for t in ("TCP_STREAM", "TCP_SENDFILE", "TCP_MAERTS")},
    ("lmbench", "bw_tcp"): "tcp_stream",
    ("netperf", "SCTP_STREAM_MANY"): "sctp_stream",
    ("netperf", "TCP_RR"): "tcp_rr", ("lmbench", "lat_tcp"): "tcp_rr",
    ("netperf", "UDP_RR"): "udp_rr",
    ("netperf", "SCTP_RR"): "sctp_rr",
    ("lmbench", "bw_unix"): "unix", ("lmbench", "lat_unix"): "unix_rr",
    ("hackbench", "socket"): "hackbench_socket", ("hackbench", "pipe"): "hackbench_pipe",
    ("madvise", "fault_release"): "madvise",
}

_MINE = ("my inference, not a measurement: {what}; an order of magnitude, so the prior is "
         "log-uniform over a wide range and the calibration replaces it where the "
         "development set has this benchmark's absolute throughput")


def _p(name: str, low: float, typical: float, high: float, what: str) -> Prior:
    return Prior(name, "cycles", low, typical, high, "loguniform", _MINE.format(what=what))


#: cycles per operation that do not grow with its size, all of an instance's CPUs together
FIXED: dict[str, Prior] = {
    "tcp_stream": _p("fixed_cycles:tcp_stream", 2_000.0, 8_000.0, 30_000.0,
                     "a loopback TCP message is a sendmsg and a recvmsg syscall, skb "
                     "allocation, the loopback transmit and a softirq receive (a few "
                     "microseconds)"),
    "sctp_stream": _p("fixed_cycles:sctp_stream", 5_000.0, 20_000.0, 80_000.0,
                      "SCTP adds chunking, a SACK and its association lookups to TCP's path"),
    "tcp_rr": _p("fixed_cycles:tcp_rr", 10_000.0, 30_000.0, 100_000.0,
                 "a request/response round trip: two sendmsg/recvmsg pairs, two softirq "
                 "receives and two wakeups with context switches"),
    "udp_rr": _p("fixed_cycles:udp_rr", 8_000.0, 25_000.0, 80_000.0,
                 "as TCP_RR without TCP's ACK and retransmit-queue work"),
    "sctp_rr": _p("fixed_cycles:sctp_rr", 12_000.0, 40_000.0, 120_000.0,
                  "as TCP_RR plus SCTP's chunk bundling and a SACK per message"),
    "unix": _p("fixed_cycles:unix", 1_000.0, 4_000.0, 20_000.0,
               "an AF_UNIX stream write and read: two syscalls, an skb, a wakeup"),
    "unix_rr": _p("fixed_cycles:unix_rr", 4_000.0, 12_000.0, 50_000.0,
                  "an AF_UNIX round trip: two writes, two reads, two wakeups"),
    "hackbench_socket": _p("fixed_cycles:hackbench_socket", 1_500.0, 5_000.0, 20_000.0,
                           "one hackbench message over an AF_UNIX socket: a write, a read "
                           "and a share of the receivers' wakeups"),
    "hackbench_pipe": _p("fixed_cycles:hackbench_pipe", 1_000.0, 4_000.0, 15_000.0,
                         "one hackbench message through a pipe: a write, a read and a share "
                         "of the wakeups"),
    "madvise": _p("fixed_cycles:madvise", 2_000.0, 10_000.0, 50_000.0,
                  "the madvise(MADV_DONTNEED) call of one iteration and its TLB flush"),
}

#: cycles per unit of an operation's size
UNIT: dict[str, Prior] = {
    "byte": Prior("unit_cycles:byte", "cycles", 0.15, 0.6, 2.5, "loguniform",
                  _MINE.format(what="copying a byte in and out of socket buffers (two copies "
                                    "at 10-20 bytes per cycle, plus page and skb handling "
                                    "that grows with the size)")),
    "page": Prior("unit_cycles:page", "cycles", 800.0, 2_500.0, 8_000.0, "loguniform",
                  _MINE.format(what="an anonymous page fault (trap, allocation, zeroing a "
                                    "4 KiB page, the PTE) and its share of the zap")),
}


def cost_family(family: str, test: str) -> str:
    """The cost family of a catalogue test."""
    return COST_FAMILIES[(family, test)]


def unit_of(family: str) -> str:
    """What an operation's size is counted in for the per-unit cycles."""
    return "page" if family == "madvise" else "byte"


def busiest_share_prior(tasks: int) -> Prior:
    """The share of an operation's cycles on its instance's busiest CPU.

    An instance of ``tasks`` tasks (a netperf pair: 2; a hackbench group: 40) spreads an
    operation's work over them; perfectly even is ``1 / tasks``. A loopback pair is
    uneven (the sender also runs the receive softirq), so the mode sits above even,
    at ``1.25 / tasks``, and the bound at twice even (all on one of each pair).

    The studies draw the same quantity from another prior,
    :func:`memcglab.pricing.priors.busiest_cpu_prior` (0.5, mode 0.6, 1.0 for any flow on
    two or more CPUs; this one gives a pair 0.5, 0.625, 1.0). Both are registered inputs
    (this one of predict's registered predictions, that one of the studies'
    preregistrations), so each keeps its numbers: one prior for both would change
    registered results.
    """
    if tasks <= 1:
        return Prior("busiest_cpu_share", "fraction", 1.0, 1.0, 1.0, "point",
                     "one task: every cycle on its CPU")
    low, high = 1.0 / tasks, min(1.0, 2.0 / tasks)
    return Prior("busiest_cpu_share", "fraction", low, min(1.25 / tasks, high), high,
                 "triangular", "my inference: between an even split over the instance's "
                               "tasks and all of each pair's work on one of them")
