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
from memcglab.workloads.catalogue.tests import TESTS

__all__ = ["FIXED", "UNIT", "COST_FAMILIES", "cost_family", "unit_of", "busiest_share_prior"]

#: (workload family, test) -> cost family (each test's record names it)
COST_FAMILIES: dict[tuple[str, str], str] = {k: t.cost.name for k, t in TESTS.items()}

_MINE = ("my inference, not a measurement: {what}; an order of magnitude, so the prior is "
         "log-uniform over a wide range and the calibration replaces it where the "
         "development set has this benchmark's absolute throughput")


def _p(name: str, low: float, typical: float, high: float, what: str) -> Prior:
    return Prior(name, "cycles", low, typical, high, "loguniform", _MINE.format(what=what))


#: cycles per operation that do not grow with its size, all of an instance's CPUs
#: together: one prior per cost family of the records (catalogue.costs)
FIXED: dict[str, Prior] = {
    c.name: _p(f"fixed_cycles:{c.name}", c.low, c.typical, c.high, c.what)
    for c in dict.fromkeys(t.cost for t in TESTS.values())}

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
    """What an operation's size is counted in for the per-unit cycles (the records' unit,
    one per family)."""
    return next(t.unit for t in TESTS.values() if t.family == family)


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
