"""netperf_rx: a stylised multi-tenant network receive mix, after seed 000's setup.

Seed 000 (Shakeel Butt, "memcg: multi-memcg percpu charge cache") measured
``netperf -6 -H ::1 -l 60 -t TCP_SENDFILE -- -m 10K`` with 6 to 36 clients, each in
its own cgroup, on a 72-CPU machine, and describes the production problem behind
it: "net_rx_action is serving packets from multiple workloads", so a CPU's single
cached memcg is switched on nearly every packet.

This generator is not that benchmark's accounting: it charges each message whole on
the receive side and releases it whole, so the studies can vary what the kernel
does not let a loopback run vary (a softirq CPU serving ``interleave`` flows, the
release CPU, task migration). The benchmark itself, with ``sk_forward_alloc``, both
sockets and both eras of socket reclaim, is the catalogue's netperf TCP_SENDFILE
(:mod:`memcglab.workloads.catalogue`, ``docs/accounting.md``).

Modelling choices:

* One client is one flow and one memcg (a sibling below ``ancestors`` shared
  cgroups). Each flow has a sending task and a receiving task.
* A message of ``message_size`` bytes is charged when its packet is processed in
  softirq: on cgroup v2 ``mem_cgroup_sk_charge`` calls ``try_charge_memcg`` for
  ``sk_mem_pages(size)`` = ceil(size / PAGE_SIZE) pages, so a 10 KiB message is a
  3-page ``charge``. Over loopback the packet is processed on the sending CPU
  (``netif_rx`` queues to the local backlog and the softirq runs there), which is
  why, with ``interleave=1``, a flow's packets are charged on its sender's CPU.
  ``interleave=k`` makes one CPU's softirq serve k flows (the RSS/RPS situation of
  a real NIC that the seed describes): flows are grouped k at a time and a group's
  packets are all processed on the CPU of the group's first sender.
* The pages are released when the receiver consumes the data
  (``mem_cgroup_sk_uncharge`` -> ``refill_stock``: an ``uncharge``), on the CPU
  chosen by ``release``: the receiving task's CPU (``task``, the default, where
  ``recvmsg`` frees the skb), the charging CPU (``softirq``), or any CPU
  (``random``). Each message is released exactly once, after ``1..2*queue_depth-1``
  (mean ``queue_depth``) further messages of its flow, so a memcg never holds more
  than ``(2*queue_depth-1) * pages`` pages. Messages of all flows arrive in a
  random order at equal average rates (the clients are identical).
* Tasks start where ``placement`` puts them and migrate, each with probability
  ``migration_rate`` per message of its flow, to a uniformly random other CPU.
* Not modelled: the sender's write-memory charges (the name says receive), socket
  forward allocation (each message is charged and released whole), and nesting
  (``nested``): a softirq that interrupts a charge on the same CPU.

>>> from memcglab.trace import to_text
>>> t = netperf_rx(NetperfRxSpec(cpus=4, clients=2, messages=3, seed=1))
>>> print(to_text(t), end="")  # doctest: +NORMALIZE_WHITESPACE
memcglab-trace 1
cpus 4
cgroup 1 0
cgroup 2 1
cgroup 3 1
charge 0 2 3
charge 2 3 3
charge 0 2 3
uncharge 1 2 3
uncharge 1 2 3
uncharge 3 3 3
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from memcglab.trace import MAX_CPUS, NR_MAX, Trace
from memcglab.workloads.common import (
    PAGE_SIZE,
    SEED_MAX,
    Streams,
    Timeline,
    bounded_delay,
    charge_release,
    check_choice,
    check_float,
    check_int,
    check_tenants,
    hierarchy,
    rng_for,
)

__all__ = ["NetperfRxSpec", "netperf_rx", "PLACEMENTS", "RELEASES"]

#: placement -> how the tasks of flow f start (sender, receiver)
PLACEMENTS = {
    "spread": "every task on its own CPU while there are enough: sender 2f, receiver 2f+1 "
              "(select_idle_sibling finds an idle CPU for each new task)",
    "paired": "sender and receiver of flow f share CPU f (wake_affine pulls the woken "
              "receiver to the waker's CPU)",
    "random": "every task on a uniformly random CPU, collisions allowed",
}
#: release -> on which CPU a message's pages are uncharged
RELEASES = {
    "task": "the receiving task's CPU at the time of the release (recvmsg frees the skb)",
    "softirq": "the CPU that charged the message",
    "random": "a uniformly random CPU",
}


@dataclass(frozen=True, slots=True)
class NetperfRxSpec:
    """Parameters of :func:`netperf_rx`; each default says where it comes from."""

    #: CPUs of the machine: seed 000's "72 CPUs machine".
    cpus: int = 72
    #: netperf clients, one memcg each: seed 000 ran 6 to 36; the default is its
    #: largest row, the most tenants per CPU.
    clients: int = 36
    #: messages in the trace (all flows together); each is one charge and one
    #: uncharge. A length, not a rate: it sets the statistical precision only.
    messages: int = 200_000
    #: bytes per send: netperf's ``-m 10K``.
    message_size: int = 10 * 1024
    #: pages charged per message; None derives ceil(message_size / PAGE_SIZE) as
    #: ``sk_mem_pages()`` rounds a socket charge up to whole pages.
    pages_per_message: int | None = None
    #: where tasks start, a key of :data:`PLACEMENTS`: "spread" because each of
    #: seed 000's clients and servers is a separate process and the scheduler puts
    #: new tasks on idle CPUs first.
    placement: str = "spread"
    #: probability that a task migrates per message of its flow. 0.01 is about one
    #: move per millisecond at the ~10^4 10 KiB messages per second and flow of a
    #: tens-of-Gbit/s loopback run: the scale of the scheduler's load-balancing
    #: intervals on a busy machine. A sweep parameter, not a measured value.
    migration_rate: float = 0.01
    #: flows whose packets one CPU's softirq interleaves; 1 is loopback (each
    #: sender's packets are processed on its own CPU).
    interleave: int = 1
    #: where pages are released, a key of :data:`RELEASES`.
    release: str = "task"
    #: mean messages of a flow queued in the receive socket before the reader
    #: consumes them; a reader that keeps up lags a few messages behind (the
    #: default ``tcp_rmem`` initial buffer of 128 KiB holds about 12 such messages).
    queue_depth: int = 4
    #: shared cgroups between the root and the clients' memcgs; 1 is a workload
    #: directory below the root (as systemd's slices are), so a walk is 2 levels.
    ancestors: int = 1
    #: seed of the generator's random stream.
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("cpus", self.cpus, 1, MAX_CPUS, "the replay contract's limit")
        check_tenants("clients", self.clients, self.ancestors)
        check_int("messages", self.messages, 1, 2**31 - 1)
        check_int("message_size", self.message_size, 1, 2**31 - 1, "bytes")
        if self.pages_per_message is not None:
            check_int("pages_per_message", self.pages_per_message, 1, NR_MAX,
                      "the charge NR range, or None for ceil(message_size / 4096)")
        check_choice("placement", self.placement, PLACEMENTS)
        check_float("migration_rate", self.migration_rate, 0.0, 1.0)
        check_int("interleave", self.interleave, 1, self.clients, "at most the clients")
        check_choice("release", self.release, RELEASES)
        check_int("queue_depth", self.queue_depth, 1, 2**20)
        check_int("seed", self.seed, 0, SEED_MAX)

    @property
    def pages(self) -> int:
        """Pages charged per message."""
        if self.pages_per_message is not None:
            return self.pages_per_message
        return -(-self.message_size // PAGE_SIZE)


def _start_cpus(spec: NetperfRxSpec, rng: np.random.Generator) -> np.ndarray:
    """Initial CPUs of the senders (tasks 0..C-1) and the receivers (C..2C-1)."""
    flows = np.arange(spec.clients, dtype=np.int64)
    if spec.placement == "spread":
        return np.concatenate([2 * flows, 2 * flows + 1]) % spec.cpus
    if spec.placement == "paired":
        return np.concatenate([flows, flows]) % spec.cpus
    return rng.integers(0, spec.cpus, 2 * spec.clients)


def _messages(spec: NetperfRxSpec, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The flow of each message (message k arrives at time k) and its release time."""
    m = spec.messages
    flow = rng.integers(0, spec.clients, m)
    # Release time: just before the charge of the flow's message `delay` later, or
    # past the end for the last messages of each flow.
    flows = Streams.of(flow, spec.clients)
    later = flows.rank() + bounded_delay(rng, m, spec.queue_depth)
    return flow, flows.step(flow, later) - 0.5


def _trace(spec: NetperfRxSpec, rng: np.random.Generator, flow: np.ndarray,
           release_time: np.ndarray, cpu_of: Callable[[np.ndarray, np.ndarray], np.ndarray],
           source: str) -> Trace:
    """Charge each message on its interleave leader's CPU, release it where ``spec.release``
    says; ``cpu_of(task, step)`` is the CPU of the task (sender f, receiver C+f) at a step."""
    m, clients = spec.messages, spec.clients
    head, tenants = hierarchy(clients, spec.ancestors)
    step = np.arange(m, dtype=np.int64)
    leader = flow - flow % spec.interleave
    charge_cpu = cpu_of(leader, step)
    if spec.release == "task":
        last = np.minimum(np.floor(release_time).astype(np.int64), m - 1)
        release_cpu = cpu_of(clients + flow, last)
    elif spec.release == "softirq":
        release_cpu = charge_cpu
    else:
        release_cpu = rng.integers(0, spec.cpus, m)

    return charge_release(spec.cpus, head, step.astype(np.float64), release_time, charge_cpu,
                          release_cpu, tenants[flow], spec.pages, source)


def netperf_rx(spec: NetperfRxSpec = NetperfRxSpec()) -> Trace:
    """Generate the receive mix described by ``spec`` (see the module docstring)."""
    rng = rng_for("netperf_rx", spec.seed)
    flow, release_time = _messages(spec, rng)
    # Per-step migration probability: a flow sends 1/clients of the messages.
    tasks = Timeline.draw(rng, _start_cpus(spec, rng), spec.messages,
                          spec.migration_rate / spec.clients, spec.cpus)
    return _trace(spec, rng, flow, release_time, tasks.at, "<netperf_rx>")
