"""madvise_fault: the fault/MADV_DONTNEED loop of seed 003.

Seed 003 (Joshua Hahn, "[PATCH 0/8 RFC] mm/memcontrol, page_counter: move stock
from mem_cgroup to page_counter") compared stock designs on "single-cgroup, as well
as 4-cgroup (under the 7 memcg limit) and 32-cgroup scenarios on a 40CPU, 50G
memory system": "I repeatedly fault and release anonymous pages using
madvise(MADV_DONTNEED) to stress the charge/uncharge path, across 30 trials of 50
iterations."

Modelling choices:

* Each cgroup runs ``tasks_per_cgroup`` tasks (the mail implies one loop per
  cgroup). Per iteration a task faults ``region_pages`` anonymous pages, one
  ``charge`` of 1 page each (a base-page anonymous fault charges its folio through
  ``mem_cgroup_charge`` -> ``try_charge_memcg(memcg, gfp, 1)``), then releases them
  all with ``MADV_DONTNEED``.
* The release is ``uncharge_direct`` (``memcg_uncharge``), never ``refill_stock``:
  the zap frees the folios in ``folio_batch`` groups of ``FOLIO_BATCH_SIZE`` = 31
  (``free_pages_and_swap_cache`` -> ``folios_put_refs`` ->
  ``__mem_cgroup_uncharge_folios``), and ``uncharge_batch`` uncharges one memcg's
  pages of a group at once. So each iteration ends with ceil(region_pages / 31)
  uncharges of up to ``uncharge_batch`` pages on the task's CPU. The mmu_gather's
  own batch boundaries, which can cut a group short, are not modelled.
* All tasks run concurrently, one operation each in turn (in an order drawn per
  trial); trials run one after another, and the kernel's stocks carry over from
  one trial to the next as they would between benchmark runs. Trial ``t`` is the
  operation rows ``trial_bounds(spec)[t]:trial_bounds(spec)[t+1]``.
* ``placement``: ``pinned`` puts task i on CPU i mod cpus for the whole run
  (taskset); ``spread`` puts each trial's fresh processes on distinct random CPUs
  (the scheduler picks idle CPUs; with more tasks than CPUs they share evenly) and
  leaves them there, as a CPU-bound task on an otherwise idle machine stays put;
  ``migrating`` starts as ``spread`` and moves each task, with probability
  ``migration_rate`` per operation, to a random other CPU, so pages faulted on
  one CPU may be released on another.
* Each memcg holds at most ``tasks_per_cgroup * region_pages`` pages.

>>> from memcglab.trace import to_text
>>> spec = MadviseFaultSpec(cpus=2, cgroups=1, region_pages=3, uncharge_batch=2,
...                         iterations=1, trials=1)
>>> print(to_text(madvise_fault(spec)), end="")
memcglab-trace 1
cpus 2
cgroup 1 0
cgroup 2 1
charge 1 2 1
charge 1 2 1
charge 1 2 1
uncharge_direct 1 2 2
uncharge_direct 1 2 1
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcglab.trace import MAX_CPUS, NR_MAX, OP_CHARGE, OP_UNCHARGE_DIRECT, Trace
from memcglab.workloads.common import (
    SEED_MAX,
    Timeline,
    check_choice,
    check_float,
    check_int,
    check_tenants,
    from_columns,
    hierarchy,
    rng_for,
)

__all__ = ["MadviseFaultSpec", "madvise_fault", "fault_release_ops", "trial_bounds",
           "PLACEMENTS"]

FOLIO_BATCH_SIZE = 31  # include/linux/pagevec.h (PAGEVEC_SIZE before the rename)

PLACEMENTS = {
    "pinned": "task i on CPU i mod cpus for the whole run",
    "spread": "each trial, tasks on distinct random CPUs, fixed for the trial",
    "migrating": "as spread, then each task moves with probability migration_rate per operation",
}


@dataclass(frozen=True, slots=True)
class MadviseFaultSpec:
    """Parameters of :func:`madvise_fault`; each default says where it comes from."""

    #: CPUs: seed 003's "40CPU" system.
    cpus: int = 40
    #: memcgs running the loop: seed 003 ran 1, 4 and 32; the default is the
    #: case above NR_MEMCG_STOCK = 7.
    cgroups: int = 32
    #: fault/release tasks per cgroup: the mail describes one loop per cgroup.
    tasks_per_cgroup: int = 1
    #: pages faulted and released per iteration by each task. The mail gives no
    #: size; 256 pages (1 MiB) spans 4 charge batches of 64 and 9 folio batches, so
    #: each iteration exercises stock refills and several batched uncharges. Beyond
    #: a few batches the counts per page do not depend on it.
    region_pages: int = 256
    #: iterations per trial: seed 003's 50.
    iterations: int = 50
    #: trials, run back to back: seed 003's 30.
    trials: int = 30
    #: most pages per uncharge_direct: FOLIO_BATCH_SIZE, the folio_batch that
    #: the zap path frees (and uncharges) at once.
    uncharge_batch: int = FOLIO_BATCH_SIZE
    #: task placement, a key of :data:`PLACEMENTS`: "spread", as an unpinned
    #: benchmark on an otherwise idle machine is placed by the scheduler.
    placement: str = "spread"
    #: probability that a task migrates per operation, with "migrating" only (the
    #: other placements never move a task). 0.001 is about one move per
    #: millisecond at ~1 us per fault: the scale of load-balancing intervals.
    migration_rate: float = 0.001
    #: shared cgroups between the root and the test cgroups (a test directory).
    ancestors: int = 1
    #: seed of the generator's random stream.
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("cpus", self.cpus, 1, MAX_CPUS, "the replay contract's limit")
        check_tenants("cgroups", self.cgroups, self.ancestors)
        check_int("tasks_per_cgroup", self.tasks_per_cgroup, 1, 2**16)
        check_int("region_pages", self.region_pages, 1, 2**31 - 1)
        check_int("iterations", self.iterations, 1, 2**31 - 1)
        check_int("trials", self.trials, 1, 2**31 - 1)
        check_int("uncharge_batch", self.uncharge_batch, 1, NR_MAX, "the charge NR range")
        check_choice("placement", self.placement, PLACEMENTS)
        check_float("migration_rate", self.migration_rate, 0.0, 1.0)
        check_int("seed", self.seed, 0, SEED_MAX)

    @property
    def tasks(self) -> int:
        """All tasks: ``cgroups * tasks_per_cgroup``."""
        return self.cgroups * self.tasks_per_cgroup

    @property
    def ops_per_iteration(self) -> int:
        """Operations of one task in one iteration: the faults, then the uncharges."""
        return self.region_pages + -(-self.region_pages // self.uncharge_batch)


def trial_bounds(spec: MadviseFaultSpec) -> np.ndarray:
    """Row indices where each trial's operations begin, and the end of the trace.

    >>> trial_bounds(MadviseFaultSpec(cgroups=2, region_pages=3, iterations=2, trials=2))
    array([ 3, 19, 35])
    """
    per_trial = spec.tasks * spec.iterations * spec.ops_per_iteration
    return spec.ancestors + spec.cgroups + per_trial * np.arange(spec.trials + 1)


def _cpus(spec: MadviseFaultSpec, rng: np.random.Generator, turn: np.ndarray,
          length: int, pinned: np.ndarray | None = None) -> np.ndarray:
    """CPU of the task taking turn k at its operation j of trial t: (trials, length, tasks)."""
    tasks, trials = spec.tasks, spec.trials
    if spec.placement == "pinned":
        cpus = np.arange(tasks) % spec.cpus if pinned is None else pinned
        start = np.broadcast_to(cpus, (trials, tasks))
    else:
        perms = np.argsort(rng.random((trials, spec.cpus)), axis=1)
        start = perms[:, np.arange(tasks) % spec.cpus]
    if spec.placement != "migrating":
        in_turn = np.take_along_axis(start, turn, axis=1)
        return np.broadcast_to(in_turn[:, None, :], (trials, length, tasks))
    timeline = Timeline.draw(rng, start.ravel(), length, spec.migration_rate, spec.cpus)
    task = (np.arange(trials)[:, None] * tasks + turn)[:, None, :]
    return timeline.at(task, np.arange(length)[None, :, None])


def fault_release_ops(spec: MadviseFaultSpec, rng: np.random.Generator,
                      pinned: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """The loop's operations in trace order: (op, cpu, task, nr), flattened.

    Task ``k`` belongs to cgroup ``k // tasks_per_cgroup``. ``pinned`` gives each
    task's CPU for ``placement="pinned"`` (default: task k on CPU k mod cpus); the
    benchmark catalogue passes its scheduler placement this way.
    """
    pages, batch = spec.region_pages, spec.uncharge_batch
    nuncharge = -(-pages // batch)
    # One iteration of one task: `pages` 1-page charges, then the batched releases.
    it_op = np.repeat(np.array([OP_CHARGE, OP_UNCHARGE_DIRECT], dtype=np.uint8),
                      [pages, nuncharge])
    it_nr = np.ones(pages + nuncharge, dtype=np.uint64)
    it_nr[pages:] = batch
    it_nr[-1] = pages - (nuncharge - 1) * batch
    length = spec.iterations * len(it_op)
    shape = (spec.trials, length, spec.tasks)

    # The order in which the concurrent tasks take their turns, per trial.
    turn = np.argsort(rng.random((spec.trials, spec.tasks)), axis=1)
    cpu = _cpus(spec, rng, turn, length, pinned)
    task = np.broadcast_to(turn[:, None, :], shape)
    op = np.broadcast_to(np.tile(it_op, spec.iterations)[None, :, None], shape)
    nr = np.broadcast_to(np.tile(it_nr, spec.iterations)[None, :, None], shape)
    return op.ravel(), np.ravel(cpu), task.ravel(), nr.ravel()


def madvise_fault(spec: MadviseFaultSpec = MadviseFaultSpec()) -> Trace:
    """Generate the fault/release loop described by ``spec`` (see the module docstring)."""
    rng = rng_for("madvise_fault", spec.seed)
    head, tenants = hierarchy(spec.cgroups, spec.ancestors)
    op, cpu, task, nr = fault_release_ops(spec, rng)
    return from_columns(spec.cpus, head, op, cpu, tenants[task // spec.tasks_per_cgroup], nr,
                        "<madvise_fault>")
