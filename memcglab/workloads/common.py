"""Building blocks shared by the workload generators.

Every generator works the same way, with whole numpy arrays and no Python loop per
operation: it draws one timestamp per operation, builds the columns (operation,
CPU, memcg, pages), and :func:`assemble` sorts them once by time behind the
``cgroup`` lines of the hierarchy (:func:`hierarchy`). A release is always given a
later timestamp than the charge it pairs with, so in every prefix of the trace each
memcg has charged at least what it has released and the replay never clips an
uncharge (``short_uncharges`` stays 0 while no charge fails).

Task placement over time is a :class:`Timeline`: each task keeps a CPU until it
migrates, and migrations are drawn per step with a fixed probability.

>>> ops, tenants = hierarchy(tenants=2, ancestors=1)
>>> [(int(m), int(p)) for m, p in zip(ops["memcg"], ops["parent"])], tenants.tolist()
([(1, 0), (2, 1), (3, 1)], [2, 3])
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memcglab.trace import (
    OP_CGROUP,
    OP_CHARGE,
    OP_DTYPE,
    OP_UNCHARGE,
    PAGE_COUNTER_MAX,
    Trace,
    to_text,
    validate,
)

__all__ = [
    "PAGE_SIZE",
    "MEMCG_CHARGE_BATCH",
    "MEM_CGROUP_ID_MAX",
    "MAX_ANCESTORS",
    "SEED_MAX",
    "check_int",
    "check_float",
    "check_choice",
    "check_tenants",
    "rng_for",
    "hierarchy",
    "assemble",
    "charge_release",
    "from_columns",
    "bounded_delay",
    "other_cpu",
    "Streams",
    "Timeline",
    "write_trace",
]

PAGE_SIZE = 4096  # x86-64 base page
MEMCG_CHARGE_BATCH = 64  # include/linux/memcontrol.h (64U since v6.x)
# include/linux/memcontrol.h: MEM_CGROUP_ID_MAX = (1 << MEM_CGROUP_ID_SHIFT) - 1, the
# most memcgs a machine can have online at once; no workload here needs more.
MEM_CGROUP_ID_MAX = (1 << 16) - 1
MAX_ANCESTORS = 64  # far deeper than any real hierarchy; bounds the walk per charge
SEED_MAX = 2**64 - 1


def check_int(name: str, value: object, low: int, high: int, why: str = "") -> None:
    """Raise ``ValueError("name=value: must be between low and high (why)")`` if out of range.

    >>> check_int("clients", 0, 1, 65534, "MEM_CGROUP_ID_MAX")
    Traceback (most recent call last):
    ...
    ValueError: clients=0: must be an integer between 1 and 65534 (MEM_CGROUP_ID_MAX)
    """
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool)
    if not ok or not low <= value <= high:
        tail = f" ({why})" if why else ""
        raise ValueError(f"{name}={value!r}: must be an integer between {low} and {high}{tail}")


def check_float(name: str, value: object, low: float, high: float, *,
                low_open: bool = False, why: str = "") -> None:
    """Raise ``ValueError`` naming the field unless ``low <= value <= high`` (``<`` if open)."""
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if ok:
        value_f = float(value)
        ok = np.isfinite(value_f) and (low < value_f if low_open else low <= value_f)
        ok = ok and value_f <= high
    if not ok:
        bracket = "(" if low_open else "["
        tail = f" ({why})" if why else ""
        raise ValueError(f"{name}={value!r}: must be a number in {bracket}{low}, {high}]{tail}")


def check_choice(name: str, value: object, choices: Iterable[str]) -> None:
    """Raise ``ValueError`` naming the field and the valid choices."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name}={value!r}: must be one of {', '.join(map(str, choices))}")


def check_tenants(name: str, count: int, ancestors: int) -> None:
    """Check a :func:`hierarchy`: ``ancestors`` shared cgroups, then ``count`` tenants.

    The ancestors are checked first; together they must fit the memcg IDs.

    >>> check_tenants("clients", 65535, 1)
    Traceback (most recent call last):
    ...
    ValueError: clients=65535: must be an integer between 1 and 65534 (MEM_CGROUP_ID_MAX minus 1 \
ancestor(s))
    """
    check_int("ancestors", ancestors, 0, MAX_ANCESTORS)
    check_int(name, count, 1, MEM_CGROUP_ID_MAX - ancestors,
              f"MEM_CGROUP_ID_MAX minus {ancestors} ancestor(s)")


def rng_for(workload: str, seed: int) -> np.random.Generator:
    """The random stream of one generator run: a function of the workload name and seed.

    Two workloads with the same seed draw independent streams.
    """
    check_int("seed", seed, 0, SEED_MAX)
    return np.random.default_rng([int(seed), zlib.crc32(workload.encode())])


def hierarchy(tenants: int, ancestors: int) -> tuple[np.ndarray, np.ndarray]:
    """``cgroup`` lines for ``tenants`` sibling memcgs below a chain of ``ancestors``.

    IDs ``1..ancestors`` are the chain (1 under the root), the tenants follow; returns
    the ``OP_DTYPE`` rows and the tenants' IDs. Every memcg has no limit
    (``PAGE_COUNTER_MAX``), so no charge fails.
    """
    ids = np.arange(1, ancestors + tenants + 1, dtype=np.int64)
    parents = np.concatenate([np.arange(ancestors, dtype=np.int64),
                              np.full(tenants, ancestors, dtype=np.int64)])
    ops = np.zeros(len(ids), dtype=OP_DTYPE)
    ops["op"] = OP_CGROUP
    ops["cpu"] = -1
    ops["memcg"] = ids
    ops["parent"] = parents
    ops["arg"] = PAGE_COUNTER_MAX
    return ops, ids[ancestors:]


def from_columns(cpus: int, head: np.ndarray, op: np.ndarray | int, cpu: np.ndarray,
                 memcg: np.ndarray, nr: np.ndarray | int, source: str) -> Trace:
    """A trace of ``head`` then one operation per element of the (flattened) columns."""
    cpu = np.ravel(cpu)
    ops = np.empty(len(head) + len(cpu), dtype=OP_DTYPE)
    ops[:len(head)] = head
    body = ops[len(head):]
    body["op"] = np.ravel(op) if not np.isscalar(op) else op
    body["nested"] = False
    body["cpu"] = cpu
    body["memcg"] = np.ravel(memcg)
    body["parent"] = -1
    body["arg"] = np.ravel(nr) if not np.isscalar(nr) else nr
    body["line"] = 0
    body["irq"] = False  # task context: the generators built on this charge from tasks
    body["kmem"] = 0  # no kmem word (docs/trace-extensions.md): the catalogue's own
    return Trace(cpus, ops, source)


def assemble(cpus: int, head: np.ndarray, time: np.ndarray, op: np.ndarray | int,
             cpu: np.ndarray, memcg: np.ndarray, nr: np.ndarray | int,
             source: str) -> Trace:
    """Sort the operations by ``time`` (stable: ties keep their given order) after ``head``."""
    order = np.argsort(time, kind="stable")

    def pick(column: np.ndarray | int) -> np.ndarray | int:
        return column if np.isscalar(column) else np.asarray(column)[order]

    return from_columns(cpus, head, pick(op), pick(cpu), pick(memcg), pick(nr), source)


def charge_release(cpus: int, head: np.ndarray, time: np.ndarray, release_time: np.ndarray,
                   cpu: np.ndarray, release_cpu: np.ndarray, memcg: np.ndarray,
                   nr: np.ndarray | int, source: str) -> Trace:
    """Operation k charges ``nr[k]`` pages of ``memcg[k]`` on ``cpu[k]`` at ``time[k]`` and
    releases them (``uncharge``) on ``release_cpu[k]`` at ``release_time[k]``; sorted by
    :func:`assemble`, a charge before a release at the same time.

    >>> ops, tenants = hierarchy(1, 0)
    >>> t = charge_release(2, ops, np.array([0.0, 1.0]), np.array([2.0, 1.5]),
    ...                    np.array([0, 1]), np.array([1, 0]), tenants[[0, 0]], 3, "<t>")
    >>> t.ops[1:][["op", "cpu", "arg"]].tolist()  # charge, charge, then the releases
    [(1, 0, 3), (1, 1, 3), (2, 0, 3), (2, 1, 3)]
    """
    ops = np.repeat(np.array([OP_CHARGE, OP_UNCHARGE], dtype=np.uint8), len(memcg))
    return assemble(cpus, head, np.concatenate([time, release_time]), ops,
                    np.concatenate([cpu, release_cpu]), np.tile(memcg, 2),
                    nr if np.isscalar(nr) else np.tile(nr, 2), source)


def bounded_delay(rng: np.random.Generator, n: int, mean: int) -> np.ndarray:
    """``n`` integer delays in ``1..2*mean-1`` with mean ``mean`` (1 + a symmetric binomial).

    Bounded, so the pages a memcg holds stay bounded too.
    """
    return 1 + rng.binomial(2 * (mean - 1), 0.5, n)


def other_cpu(rng: np.random.Generator, cpu: np.ndarray, cpus: int) -> np.ndarray:
    """A uniformly random CPU different from each of ``cpu`` (``cpus`` >= 2)."""
    return (cpu + 1 + rng.integers(0, cpus - 1, len(cpu))) % cpus


@dataclass(frozen=True, slots=True)
class Streams:
    """Operations ``0..m-1`` dealt to ``len(counts)`` streams (flows, tasks, instances).

    Operation ``k`` belongs to stream ``group[k]``; a stream's operations keep their
    global order. :meth:`step` finds where a stream's ``j``-th operation stands, which
    is how a generator places a release a given number of the stream's own operations
    after its charge.

    >>> s = Streams.of(np.array([1, 0, 1, 1]), 2)
    >>> s.rank().tolist(), s.step(np.array([1, 1, 0]), np.array([1, 3, 2])).tolist()
    ([0, 0, 1, 2], [2, 4, 5])
    """

    group: np.ndarray  # the stream of each operation
    order: np.ndarray  # operations sorted by stream, stable: each stream's in time order
    counts: np.ndarray  # operations per stream
    first: np.ndarray  # index into `order` of each stream's first operation

    @classmethod
    def of(cls, group: np.ndarray, streams: int) -> Streams:
        """Index the operations' streams ``group`` (values in ``0..streams-1``)."""
        counts = np.bincount(group, minlength=streams)
        first = np.concatenate([[0], np.cumsum(counts)[:-1]])
        return cls(group, np.argsort(group, kind="stable"), counts, first)

    def rank(self) -> np.ndarray:
        """Each operation's position among its stream's operations (0 for the first)."""
        rank = np.empty(len(self.group), dtype=np.int64)
        rank[self.order] = np.arange(len(self.group)) - self.first[self.group[self.order]]
        return rank

    def step(self, stream: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Global index of operation ``j`` of each ``stream``; ``m + j - count`` past its end.

        A position past a stream's end counts on past the last operation of the
        trace, in the stream's own steps, so what follows it keeps its order.
        """
        count = self.counts[stream]
        inside = j < count
        return np.where(inside, self.order[self.first[stream] + np.minimum(j, count - 1)],
                        len(self.group) + j - count)


def _bernoulli_steps(rng: np.random.Generator, tasks: int, steps: int, rate: float,
                     span: int) -> np.ndarray:
    """Sorted keys ``task * span + step`` of independent Bernoulli(rate) events at steps
    ``1..steps-1`` of each task: the gaps between events are geometric."""
    expect = (steps - 1) * rate
    width = min(int(expect + 6 * np.sqrt(expect) + 8), steps)
    while True:
        # Inverse-transform geometric gaps in floating point, clipped to the run, so a
        # tiny rate cannot overflow an integer draw.
        u = 1.0 - rng.random((tasks, width))
        with np.errstate(divide="ignore", over="ignore"):  # rate 1 or subnormal
            gap = np.ceil(np.log(u) / np.log1p(-rate))
        position = np.cumsum(np.clip(gap, 1, steps), axis=1)
        # Every gap is at least 1, so a width of `steps` always reaches the end.
        if width >= steps or (position[:, -1] >= steps).all():
            break
        width = min(2 * width, steps)  # rare: redraw wider, still a function of the seed
    task = np.broadcast_to(np.arange(tasks, dtype=np.int64)[:, None], position.shape)
    inside = position < steps
    return task[inside] * span + position[inside].astype(np.int64)


@dataclass(frozen=True, slots=True)
class Timeline:
    """Where each of several tasks runs over integer steps ``0..steps-1``.

    A task starts on ``start[task]`` and, at each later step, migrates with
    probability ``rate`` to a uniformly random *other* CPU (the load balancer moves
    a task to some other runqueue; which one is not modelled). ``at`` answers, for
    arrays of tasks and steps, the CPU each task was on.

    >>> tl = Timeline.draw(np.random.default_rng(0), np.array([3, 5]), 10, 0.0, 8)
    >>> tl.at(np.array([0, 1, 1]), np.array([9, 0, 4])).tolist()
    [3, 5, 5]
    """

    keys: np.ndarray  # task * span + first step of each placement, sorted
    cpus: np.ndarray  # the CPU of each placement
    span: int
    migrations: int

    @classmethod
    def draw(cls, rng: np.random.Generator, start: np.ndarray, steps: int, rate: float,
             ncpus: int) -> Timeline:
        """Draw the migrations of ``len(start)`` tasks over ``steps`` steps on ``ncpus`` CPUs."""
        tasks = len(start)
        span = steps + 1
        if ncpus < 2 or rate <= 0.0 or steps < 2:
            keys = np.arange(tasks, dtype=np.int64) * span
            return cls(keys, np.asarray(start, dtype=np.int64), span, 0)
        moves = _bernoulli_steps(rng, tasks, steps, rate, span)
        # Each move adds 1..ncpus-1 to the CPU, so consecutive placements differ.
        hops = 1 + rng.integers(0, ncpus - 1, len(moves))
        keys = np.concatenate([np.arange(tasks, dtype=np.int64) * span, moves])
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        step_add = np.concatenate([np.asarray(start, dtype=np.int64), hops])[order]
        # The CPU of a placement is the task's start plus its hops so far: a cumulative
        # sum over all tasks, minus what the tasks before it contributed.
        total = np.cumsum(step_add)
        first = np.searchsorted(keys, np.arange(tasks, dtype=np.int64) * span)
        before = np.concatenate([[0], total])[first]
        cpus = (total - before[keys // span]) % ncpus
        return cls(keys, cpus, span, len(moves))

    def at(self, task: np.ndarray, step: np.ndarray) -> np.ndarray:
        """The CPU each of ``task`` was on at the matching ``step``."""
        index = np.searchsorted(self.keys, np.asarray(task) * self.span + step, side="right") - 1
        return self.cpus[index]


def write_trace(trace: Trace, path: str | Path, *, check: bool = True) -> Path:
    """Write ``trace`` in the replay contract's text format; validate first unless told not to.

    >>> import tempfile, os
    >>> from memcglab.trace import read_trace
    >>> ops, _ = hierarchy(1, 0)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_trace(Trace(2, ops), os.path.join(d, "t.trace"))
    ...     len(read_trace(str(p)).ops)
    1
    """
    if check:
        validate(trace)
    path = Path(path)
    path.write_text(to_text(trace), encoding="utf-8")
    return path
