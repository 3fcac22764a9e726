"""netperf_paired: seed 000's receive mix with each flow's two tasks migrating together.

:func:`~memcglab.workloads.netperf.netperf_rx` moves every task on its own: the
sender and the receiver of a flow each migrate, with probability ``migration_rate``
per message of the flow, to a uniformly random other CPU. A sender and receiver that
started on one CPU (``placement="paired"``, wake_affine pulling the woken reader to
the waker) are therefore apart after the first move of either, and stay apart. The
scheduler can also keep them together: wake_affine pulls the reader back to the
sender's CPU at each wakeup, so the pair moves as one. This generator expresses both:

* ``migrate="independent"``: exactly :func:`netperf_rx` (the same trace, byte for byte,
  for the same fields and seed: the same random stream is drawn in the same order);
* ``migrate="together"``: one move per flow, with probability ``migration_rate`` per
  message of the flow, takes both tasks to a new CPU; the receiver keeps its starting
  offset from the sender (0 for ``paired``: the same CPU; 1 for ``spread``: the next
  CPU), so a pair that started on one CPU stays on one CPU. A flow moves half as often
  as the two independent tasks together do; the rate per task is the same.

Everything else (charges in softirq on the sender's CPU, the release on the CPU that
``release`` names, queue depths, the hierarchy) is netperf_rx's, described there.

>>> from memcglab.trace import OP_CHARGE, OP_UNCHARGE
>>> t = netperf_paired(NetperfPairedSpec(cpus=8, clients=2, messages=400, placement="paired",
...                                      migration_rate=0.2, migrate="together", seed=3))
>>> body = t.ops[t.ops["op"] != 0]
>>> int(body["op"].tolist().count(OP_CHARGE)), int(body["op"].tolist().count(OP_UNCHARGE))
(400, 400)
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from memcglab.trace import Trace
from memcglab.workloads.common import Timeline, check_choice, rng_for
from memcglab.workloads.netperf import NetperfRxSpec, _messages, _start_cpus, _trace

__all__ = ["MIGRATE", "NetperfPairedSpec", "netperf_paired"]

#: migrate -> how a flow's sender and receiver move
MIGRATE = {
    "independent": "each task moves on its own (netperf_rx): a pair that shared a CPU is "
                   "apart after the first move of either",
    "together": "the flow's two tasks move as one, keeping their starting offset "
                "(wake_affine pulls the reader to the sender at every wakeup)",
}


@dataclass(frozen=True, slots=True)
class NetperfPairedSpec:
    """Parameters of :func:`netperf_paired`: netperf_rx's, and ``migrate``.

    The defaults are :class:`~memcglab.workloads.NetperfRxSpec`'s (each says where it
    comes from there), except ``placement`` ("paired") and ``migrate``.
    """

    #: CPUs of the machine: seed 000's 72-CPU machine (as NetperfRxSpec).
    cpus: int = 72
    #: netperf clients, one memcg each: seed 000's largest row (as NetperfRxSpec).
    clients: int = 36
    #: messages in the trace, all flows together (a length, not a rate).
    messages: int = 200_000
    #: bytes per send: netperf's ``-m 10K``.
    message_size: int = 10 * 1024
    #: pages per message; None derives ceil(message_size / PAGE_SIZE) (sk_mem_pages()).
    pages_per_message: int | None = None
    #: where tasks start, a key of netperf_rx's PLACEMENTS: "paired", sender and
    #: receiver on one CPU, the pair that moving together keeps together.
    placement: str = "paired"
    #: probability per message of its flow that a task (independent) or the pair
    #: (together) moves: NetperfRxSpec's default, about one move per millisecond.
    migration_rate: float = 0.01
    #: flows whose packets one CPU's softirq interleaves; 1 is loopback.
    interleave: int = 1
    #: where pages are released, a key of netperf_rx's RELEASES: the reader's CPU.
    release: str = "task"
    #: mean messages of a flow queued before the reader consumes them (as NetperfRxSpec).
    queue_depth: int = 4
    #: shared cgroups between the root and the clients' memcgs (a walk is 2 levels).
    ancestors: int = 1
    #: how the pair moves, a key of :data:`MIGRATE`: "together" (the extension)
    migrate: str = "together"
    #: seed of the generator's random stream (netperf_rx's stream, so that
    #: "independent" draws netperf_rx's trace).
    seed: int = 0

    def __post_init__(self) -> None:
        check_choice("migrate", self.migrate, MIGRATE)
        self.netperf()  # validates the other fields, naming them

    def netperf(self) -> NetperfRxSpec:
        """The netperf_rx spec with the same fields (what ``independent`` generates)."""
        return NetperfRxSpec(**{f.name: getattr(self, f.name) for f in fields(NetperfRxSpec)})


def netperf_paired(spec: NetperfPairedSpec = NetperfPairedSpec()) -> Trace:
    """Generate the receive mix with ``spec.migrate`` moves (see the module docstring)."""
    net = spec.netperf()
    # The same stream, drawn in the same order as netperf_rx up to the task timeline.
    rng = rng_for("netperf_rx", net.seed)
    flow, release_time = _messages(net, rng)
    start = _start_cpus(net, rng)
    m, clients = net.messages, net.clients
    rate = net.migration_rate / clients
    if spec.migrate == "independent":
        return _trace(net, rng, flow, release_time, Timeline.draw(rng, start, m, rate, net.cpus).at,
                      "<netperf_paired>")
    pairs = Timeline.draw(rng, start[:clients], m, rate, net.cpus)
    offset = start[clients:] - start[:clients]

    def cpu_of(task: np.ndarray, at: np.ndarray) -> np.ndarray:
        f = task % clients
        moved = pairs.at(f, at)
        return np.where(task >= clients, (moved + offset[f]) % net.cpus, moved)

    return _trace(net, rng, flow, release_time, cpu_of, "<netperf_paired>")
