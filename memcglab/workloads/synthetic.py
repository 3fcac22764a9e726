"""synthetic: per-CPU tenant mixes for the eviction-policy and slot-count sweeps.

Study 2 asks how each victim policy and slot count behaves as the number of memcgs
a CPU serves grows past the stock's slots (seed 000: "the dumb one was always
better [than LRU] by 1% to 3%"; NR_MEMCG_STOCK = 7). These traces isolate that
variable: every CPU serves its own ``active_per_cpu`` memcgs, drawn from ``memcgs``
tenants, and nothing else about the machine is modelled.

Modelling choices:

* Each CPU issues ``charges_per_cpu`` charges of 1..``max_pages`` pages (uniform).
  The CPUs advance in lock step, one operation each in turn (order drawn once).
* Each CPU's active set is a random subset of the tenants, in a random order
  that defines its popularity ranks. Which active memcg a charge goes to follows
  ``mix``: ``uniform``; ``zipf`` (rank r with probability proportional to
  1 / r^zipf_s); or ``bursty``: phases of ``burst_length`` charges, each
  confined to ``burst_memcgs`` consecutive memcgs of the CPU's active order,
  starting at a random place (a NAPI poll serving a burst of one queue's
  packets).
* Each charge is released once with an ``uncharge`` (``refill_stock``) after
  ``1..2*release_delay-1`` (mean ``release_delay``) operation steps, on the same CPU
  or, with probability ``remote_release``, on a uniformly random other CPU. A
  memcg therefore holds a bounded number of pages.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcglab.trace import MAX_CPUS, NR_MAX, Trace
from memcglab.workloads.common import (
    SEED_MAX,
    bounded_delay,
    charge_release,
    check_choice,
    check_float,
    check_int,
    check_tenants,
    hierarchy,
    other_cpu,
    rng_for,
)

__all__ = ["SyntheticSpec", "synthetic", "MIXES"]

MIXES = {
    "uniform": "each charge picks one of the CPU's active memcgs uniformly",
    "zipf": "rank r of the CPU's active memcgs with probability proportional to 1/r^zipf_s",
    "bursty": "phases of burst_length charges over burst_memcgs memcgs each",
}

_SUBSET_CHUNK = 2**22  # random keys drawn at once when choosing active sets


@dataclass(frozen=True, slots=True)
class SyntheticSpec:
    """Parameters of :func:`synthetic`; each default says where it comes from."""

    #: CPUs; 8 keeps sweeps cheap, and CPUs here are independent streams.
    cpus: int = 8
    #: tenant memcgs on the machine: enough for 64 active per CPU (study 2's range).
    memcgs: int = 64
    #: memcgs each CPU charges: 16 is above NR_MEMCG_STOCK = 7, the eviction
    #: regime the sweep is about; sweeps range it over 1..64.
    active_per_cpu: int = 16
    #: how a CPU chooses among its active memcgs, a key of :data:`MIXES`.
    mix: str = "uniform"
    #: Zipf exponent for "zipf": 1.0, the classic Zipf law of heavy-tailed popularity.
    zipf_s: float = 1.0
    #: charges per phase for "bursty": 64, NAPI_POLL_WEIGHT, the packets one NAPI
    #: poll may process before net_rx_action moves on.
    burst_length: int = 64
    #: memcgs per phase for "bursty": 1, one flow's packets per poll.
    burst_memcgs: int = 1
    #: charges per CPU (a length: it sets the statistical precision only).
    charges_per_cpu: int = 10_000
    #: largest charge in pages; 3 is one 10 KiB socket message (seed 000).
    max_pages: int = 3
    #: mean steps from a charge to its release; 8 keeps a few charges of each
    #: memcg outstanding, as in a socket queue or a short-lived allocation.
    release_delay: int = 8
    #: fraction of releases on another CPU than the charge (0: all local).
    remote_release: float = 0.0
    #: shared cgroups between the root and the tenants.
    ancestors: int = 1
    #: seed of the generator's random stream.
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("cpus", self.cpus, 1, MAX_CPUS, "the replay contract's limit")
        check_tenants("memcgs", self.memcgs, self.ancestors)
        check_int("active_per_cpu", self.active_per_cpu, 1, self.memcgs, "at most memcgs")
        check_choice("mix", self.mix, MIXES)
        check_float("zipf_s", self.zipf_s, 0.0, 16.0)
        check_int("burst_length", self.burst_length, 1, 2**31 - 1)
        check_int("burst_memcgs", self.burst_memcgs, 1, self.active_per_cpu,
                  "at most active_per_cpu")
        check_int("charges_per_cpu", self.charges_per_cpu, 1, 2**31 - 1)
        check_int("max_pages", self.max_pages, 1, NR_MAX, "the charge NR range")
        check_int("release_delay", self.release_delay, 1, 2**20)
        check_float("remote_release", self.remote_release, 0.0, 1.0)
        if self.cpus == 1 and self.remote_release > 0:
            raise ValueError(f"remote_release={self.remote_release!r}: must be 0 with "
                             "cpus=1 (there is no other CPU)")
        check_int("seed", self.seed, 0, SEED_MAX)


def _active_sets(rng: np.random.Generator, cpus: int, memcgs: int, k: int) -> np.ndarray:
    """Per CPU, ``k`` distinct memcg indices in random order: shape (cpus, k)."""
    rows = max(1, _SUBSET_CHUNK // memcgs)
    parts = [np.argsort(rng.random((min(rows, cpus - lo), memcgs)), axis=1)[:, :k]
             for lo in range(0, cpus, rows)]
    return np.concatenate(parts)


def _ranks(spec: SyntheticSpec, rng: np.random.Generator) -> np.ndarray:
    """Popularity rank (index into the CPU's active set) of every charge: (cpus, n)."""
    shape = (spec.cpus, spec.charges_per_cpu)
    k = spec.active_per_cpu
    if spec.mix == "uniform":
        return rng.integers(0, k, shape)
    if spec.mix == "zipf":
        weight = 1.0 / np.arange(1, k + 1) ** spec.zipf_s
        cdf = np.cumsum(weight / weight.sum())
        return np.minimum(np.searchsorted(cdf, rng.random(shape), side="right"), k - 1)
    phases = -(-spec.charges_per_cpu // spec.burst_length)
    start = rng.integers(0, k, (spec.cpus, phases))
    phase = np.arange(spec.charges_per_cpu) // spec.burst_length
    return (start[:, phase] + rng.integers(0, spec.burst_memcgs, shape)) % k


def synthetic(spec: SyntheticSpec = SyntheticSpec()) -> Trace:
    """Generate the tenant mix described by ``spec`` (see the module docstring).

    >>> t = synthetic(SyntheticSpec(cpus=2, memcgs=3, active_per_cpu=2, charges_per_cpu=50))
    >>> from memcglab.workloads.describe import memcgs_per_cpu, pages_by_memcg
    >>> memcgs_per_cpu(t).tolist(), all(c == r for c, r in pages_by_memcg(t).values())
    ([2, 2], True)
    """
    rng = rng_for("synthetic", spec.seed)
    head, tenants = hierarchy(spec.memcgs, spec.ancestors)
    active = _active_sets(rng, spec.cpus, spec.memcgs, spec.active_per_cpu)
    ranks = _ranks(spec, rng)
    memcg = tenants[np.take_along_axis(active, ranks, axis=1)].ravel()
    n = memcg.size
    cpu = np.repeat(np.arange(spec.cpus, dtype=np.int64), spec.charges_per_cpu)
    # CPUs advance in lock step; `phase` orders the CPUs within a step.
    step = np.tile(np.arange(spec.charges_per_cpu, dtype=np.float64), spec.cpus)
    time = step + np.repeat(rng.permutation(spec.cpus) / spec.cpus, spec.charges_per_cpu)
    release_time = time + bounded_delay(rng, n, spec.release_delay) + 0.5 / spec.cpus
    pages = rng.integers(1, spec.max_pages + 1, n).astype(np.uint64)
    # Drawn last, so specs differing only in remote_release share everything else.
    release_cpu = cpu.copy()
    if spec.remote_release > 0:
        remote = rng.random(n) < spec.remote_release
        release_cpu[remote] = other_cpu(rng, cpu[remote], spec.cpus)
    return charge_release(spec.cpus, head, time, release_time, cpu, release_cpu, memcg, pages,
                          "<synthetic>")
