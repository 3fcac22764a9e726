"""The vmstats/events false sharing counted, bounded and priced: transfers per swap-fail event.

**Counts.** The MESI simulator replays the mremap stream
(:func:`memcglab.workloads.mremap_pageout`) over each layout at a grid of
``vmstats_percpu`` read rates; :class:`CountTable` keeps, per seed, era and rate,
the transfers, the write transfers, the copies invalidated and the read misses of
``vmstats_percpu`` per swap-fail event, and interpolates them in log(rate). The stream
makes each CPU's events Poisson and spreads its loads evenly between them; the
stressor's events really come in bursts (one MADV_PAGEOUT call fails a whole
region's pages in a row) and its loads in batches (an LRU batch updates the LRU size
up to 31 times under one lock hold), which would make fewer loads find the line
invalidated. That timing is a modelling choice; the ceiling below does not depend on
it, and :func:`at_ceiling` prices it.

**Ceiling.** A CPU's cached copy of a line can be invalidated only by another CPU's
write, so it misses at most once per remote write and at most once per own read.
With ``w`` writes to the shared line per event (one, ``memory_events_local[8]`` of the
stressors' one memcg), ``N`` CPUs with an instance each and ``r`` loads per own event
on each CPU, every CPU sees ``w (N - 1)`` remote writes per own event, so the
transfers on the line per event are at most ``w + min(r, w (N - 1))``
(:func:`ceiling`): each own write moves the line at most once, each read misses at
most once. Machine-wide that is at most ``writes x (N - 1)`` read misses: every
write can cost every other CPU one miss. If reads and remote writes were independent
Poisson processes, a read would miss with the probability that a remote write came
since the CPU's previous access, giving ``w + r w (N - 1) / (w (N - 1) + r + w)``
(:func:`poisson_estimate`), which the simulator should approach.

**Price.** Each CPU runs one stressor instance: a closed loop of its own work per
swap-fail event and the shared line's transfers, one FCFS station that every CPU queues
for, in the pricing core's network (:func:`memcglab.pricing.closed_network`, exact MVA at
``N`` CPUs; the own work and the lock stretch below are its CPU delay). Per own event and
era ``e``, with ``T`` transfers, ``X`` extra sharers the transfers contend with and ``M``
read misses of ``vmstats_percpu``, the line is held for

``line_e = (hold_cycles * T + per_sharer * X) / hz`` seconds

``hold_cycles`` is the line's hold time per transfer, the core's name for it: like the
other studies (:func:`memcglab.pricing.core_inputs`), this one takes the machine
profile's drawn ``c2c_transfer`` as it. ``per_sharer`` is the extra cycles of an
atomic on a line each further sharer adds (``contended_rmw_per_sharer``; the event
counters are ``atomic_long_inc``). ``X`` is a modelling alternative
(``sharer_growth``): ``"writes"`` counts the copies each write invalidates beyond the
one a plain transfer takes (``I - Wt``, invalidations less write transfers);
``"writes and reads"`` adds, for every read miss, the other CPUs missing on the same
write (``M * (M / W - 1)``, ``W`` the writes to the shared line): as if each write's
readers arrived together and queued at the line's home. A miss inside the lruvec
``lru_lock`` delays the CPUs queued on that lock: ``stretch_e = waiters * lock_fraction
* hold_cycles * M / hz`` seconds of CPU delay per event (``lock_fraction`` the share of
the loads made with the lock held, :func:`memcglab.workloads.mremap_stats.lock_fraction`).

The CPU's own work per event is set so that the parent layout's network runs at the
published event rate (``swap_fail_rate``, all CPUs together); a layout's loss against the
parent is ``100 * (1 - X_e / X_parent)`` in % (positive = slower). :func:`loss_pct`
evaluates it for thousands of parameter points at once, so
:func:`memcglab.uncertainty.summarise` can propagate the priors, and
:func:`line_utilisation` gives the line's offered load at the parent's event rate: at 1 or
more the line could not carry the parent's rate at all, and a price that needs it lies
where the model saturates.

>>> ceiling([10.0, 1000.0], cpus=176).tolist()
[11.0, 176.0]
>>> round(float(poisson_estimate(48.0, cpus=176)[0]), 1)
38.5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memcglab.pricing import closed_network
from memcglab.uncertainty import SEED, Alternative, Draws, Prior, Space
from memcglab.workloads.mremap_stats import READ_RANGE, ReadRange, lock_fraction

__all__ = ["COUNT_COLUMNS", "PRICE_INPUTS", "SHARER_GROWTH", "CountTable", "at_ceiling",
           "ceiling", "cycles_per_event", "identical", "line_utilisation", "loss_pct",
           "poisson_estimate", "pricing_space", "study_priors"]

#: per-event counts the price needs, as columns of a runs frame
COUNT_COLUMNS = ("transfers_per_event", "write_transfers_per_event", "invalidations_per_event",
                 "vmstats_misses_per_event", "line_writes_per_event")
#: the modelling alternative: which transfers pay the per-sharer growth
SHARER_GROWTH = Alternative("sharer_growth", ("writes", "writes and reads"), default="writes")
#: the inputs :func:`loss_pct` reads from the draws
PRICE_INPUTS = ("c2c_transfer", "contended_rmw_per_sharer", "lock_waiters", "lock_fraction",
                "cpu_ghz", "swap_fail_rate", "reads_per_event")


def ceiling(reads_per_event, cpus: int, writes_per_event: float = 1.0) -> np.ndarray:
    """Most transfers per event on the shared line: ``w + min(r, w (N - 1))`` (module doc)."""
    r = np.atleast_1d(np.asarray(reads_per_event, dtype=float))
    return writes_per_event + np.minimum(r, writes_per_event * (cpus - 1))


def at_ceiling(runs: pd.DataFrame, cpus: int, era: str = "blamed") -> pd.DataFrame:
    """``runs`` with ``era``'s read misses of vmstats_percpu raised to the ceiling
    ``min(r, N - 1)`` (one write per event): every load misses unless no remote write
    could have come between. Transfers and invalidations rise by the same number (each
    extra miss is one more transfer and one more copy a later write invalidates); the
    write transfers stay as simulated. An upper bound whatever the timing of the loads.
    """
    out = runs.copy()
    m = out["era"] == era
    cap = np.minimum(out.loc[m, "reads_per_event"].to_numpy(float), cpus - 1.0)
    add = np.maximum(cap - out.loc[m, "vmstats_misses_per_event"].to_numpy(float), 0.0)
    for col in ("transfers_per_event", "invalidations_per_event", "vmstats_misses_per_event"):
        out.loc[m, col] = out.loc[m, col].to_numpy(float) + add
    return out


def poisson_estimate(reads_per_event, cpus: int, writes_per_event: float = 1.0) -> np.ndarray:
    """Transfers per event on the line if reads and remote writes were independent Poisson
    processes: ``w + r w (N - 1) / (w (N - 1) + r + w)``."""
    r = np.atleast_1d(np.asarray(reads_per_event, dtype=float))
    remote = writes_per_event * (cpus - 1)
    return writes_per_event + r * remote / (remote + r + writes_per_event)


@dataclass(frozen=True)
class CountTable:
    """Per-event counts per seed and era on a grid of read rates (see the module doc)."""

    reads: np.ndarray
    seeds: tuple[int, ...]
    values: dict[tuple[str, str], np.ndarray]  # (era, column) -> (seeds, reads)

    @classmethod
    def from_runs(cls, runs: pd.DataFrame) -> CountTable:
        """From a frame with columns seed, era, reads_per_event and :data:`COUNT_COLUMNS`."""
        need = {"seed", "era", "reads_per_event", *COUNT_COLUMNS}
        if not need <= set(runs.columns):
            raise ValueError(f"runs needs columns {sorted(need)}; has {list(runs.columns)}")
        reads = np.sort(runs["reads_per_event"].unique()).astype(float)
        if len(reads) < 2 or reads[0] <= 0:
            raise ValueError(f"reads_per_event grid {reads.tolist()}: need two or more "
                             "rates, all > 0 (interpolation is in log rate)")
        seeds = tuple(int(s) for s in np.sort(runs["seed"].unique()))
        values = {}
        for era in runs["era"].unique():
            grid = runs[runs["era"] == era].pivot_table(index="seed", columns="reads_per_event",
                                                        values=list(COUNT_COLUMNS))
            for col in COUNT_COLUMNS:
                g = grid[col].reindex(index=list(seeds), columns=reads)
                if g.isna().any().any():
                    raise ValueError(f"era {era!r}, {col}: the grid misses some (seed, rate)")
                values[(str(era), col)] = g.to_numpy(float)
        return cls(reads, seeds, values)

    def at(self, era: str, column: str, reads: np.ndarray, seed_index: np.ndarray
           ) -> np.ndarray:
        """``column`` of ``era`` at each point's read rate and seed (linear in log rate;
        clamped to the grid's ends)."""
        if (era, column) not in self.values:
            raise KeyError(f"no counts for era {era!r}, column {column!r}")
        table = self.values[(era, column)]
        x = np.log(np.clip(np.asarray(reads, dtype=float), self.reads[0], self.reads[-1]))
        xp = np.log(self.reads)
        out = np.empty(len(x))
        seed_index = np.asarray(seed_index, dtype=np.intp)
        for s in range(len(self.seeds)):
            m = seed_index == s
            out[m] = np.interp(x[m], xp, table[s])
        return out


def identical(counts: CountTable, a: str, b: str) -> bool:
    """Whether eras ``a`` and ``b`` have the same counts in every column, seed and rate:
    then any price of one against the other is zero by construction."""
    return all(np.array_equal(counts.values[(a, c)], counts.values[(b, c)])
               for c in COUNT_COLUMNS)


def _seed_index(counts: CountTable, d: Draws) -> np.ndarray:
    if SEED not in d.index:
        return np.zeros(d.n, dtype=np.intp)
    return np.searchsorted(np.asarray(counts.seeds), np.asarray(d[SEED], dtype=int))


def _hold(counts: CountTable, era: str, d: Draws) -> tuple[np.ndarray, np.ndarray]:
    """Seconds per own event that ``era``'s transfers hold the shared line, and the lock
    stretch's CPU delay per event (module doc)."""
    s, r = _seed_index(counts, d), d["reads_per_event"]
    t, wt, inv, miss, writes = (counts.at(era, c, r, s) for c in COUNT_COLUMNS)
    # the draws keep the profile prior's name; the price reads the core's
    hold_cycles, hz = d["c2c_transfer"], d["cpu_ghz"] * 1e9
    extra = np.maximum(inv - wt, 0.0)
    if "sharer_growth" in d:
        together = miss / np.maximum(writes, 1e-12)  # readers missing per write
        reads = np.asarray(d.index["sharer_growth"]) == SHARER_GROWTH.options.index(
            "writes and reads")
        extra = extra + np.where(reads, miss * np.maximum(together - 1.0, 0.0), 0.0)
    line = (hold_cycles * t + d["contended_rmw_per_sharer"] * extra) / hz
    stretch = d["lock_waiters"] * d["lock_fraction"] * hold_cycles * miss / hz
    return line, stretch


def cycles_per_event(counts: CountTable, era: str, d: Draws) -> np.ndarray:
    """Coherence cycles per swap-fail event of ``era`` at each point of ``d``: the line's
    hold time and the lock stretch, before any queueing."""
    line, stretch = _hold(counts, era, d)
    return (line + stretch) * d["cpu_ghz"] * 1e9


def _throughput(line: np.ndarray, cpu: np.ndarray, cpus: int) -> np.ndarray:
    """Events per second of all ``cpus`` CPUs: ``cpu`` seconds of delay per event on
    each, ``line`` seconds at the shared line."""
    return closed_network(cpus, cpu, 0.0, line[:, None], ("vmstats/events line",)).ops_per_s


def _own_work(counts: CountTable, d: Draws, cpus: int) -> np.ndarray:
    """Each CPU's own work per event (s) that runs the parent's network at the published
    rate: a fixed point of ``Z += period - N / X(Z)`` (the parent's line is lightly
    used, so it settles in a few steps)."""
    period = cpus / np.asarray(d["swap_fail_rate"], dtype=float)
    line, stretch = _hold(counts, "parent", d)
    z = np.maximum(period - line - stretch, 1e-12)
    for _ in range(6):
        z = np.maximum(z + period - cpus / _throughput(line, z + stretch, cpus), 1e-12)
    return z


def loss_pct(counts: CountTable, era: str, d: Draws, cpus: int) -> np.ndarray:
    """Throughput loss of ``era`` against ``parent`` in % at each point (module doc)."""
    z = _own_work(counts, d, cpus)
    line_p, stretch_p = _hold(counts, "parent", d)
    line_e, stretch_e = _hold(counts, era, d)
    x_p = _throughput(line_p, z + stretch_p, cpus)
    x_e = _throughput(line_e, z + stretch_e, cpus)
    return 100.0 * (1.0 - x_e / x_p)


def line_utilisation(counts: CountTable, era: str, d: Draws) -> np.ndarray:
    """The shared line's offered load at the parent's event rate: ``rate * line_e``."""
    line, _ = _hold(counts, era, d)
    return np.asarray(d["swap_fail_rate"], dtype=float) * line


def study_priors(hardware: Mapping[str, Prior], reads: ReadRange = READ_RANGE,
                 swap_fail_rate: float = 20e6 / 60) -> list[Prior]:
    """The priors of :data:`PRICE_INPUTS`: three from the machine profile (``hardware``:
    name -> Prior), the rest declared here with their reasons."""
    missing = {"c2c_transfer", "contended_rmw_per_sharer", "cpu_ghz"} - set(hardware)
    if missing:
        raise KeyError(f"hardware priors lack {sorted(missing)}")
    fractions = sorted(lock_fraction(loop) for loop in reads.loops)
    return [
        hardware["c2c_transfer"], hardware["contended_rmw_per_sharer"], hardware["cpu_ghz"],
        Prior("reads_per_event", "loads/event", reads.low, reads.typical, reads.high,
              "triangular", "memcglab.workloads.mremap_stats: the kernel paths of one "
              "stress-ng mremap iteration", "low: every advice MADV_PAGEOUT; high: a 20-entry "
              "advice list and 4 page tables per mremap step"),
        Prior("lock_fraction", "fraction", fractions[0], lock_fraction(reads.loops[1]),
              fractions[-1], "triangular", "memcglab.workloads.mremap_stats.lock_fraction "
              "over the same three loops", "loads made with the lruvec lru_lock held"),
        Prior("lock_waiters", "CPUs", 0.0, 0.5, 5.0, "triangular",
              "modelling choice, not measured: the mean M/M/1 waiting line "
              "rho^2 / (1 - rho) of the stressors' one lruvec lru_lock at utilisation "
              "0.15-0.85", "about 1.6 acquisitions per event (one per isolated folio, "
              "batched adds and frees) at 333k events/s and 0.2-1 us holds give rho near "
              "0.3; each waiter is delayed once by a miss inside the lock"),
        Prior("swap_fail_rate", "events/s", 0.9 * swap_fail_rate, swap_fail_rate,
              1.1 * swap_fail_rate, "triangular", "the false-sharing fix: 'about 20 million "
              "MEMCG_SWAP_FAIL updates per 60-second run'", "'about' read as +-10%"),
    ]


def pricing_space(hardware: Mapping[str, Prior], seeds: Sequence[int],
                  reads: ReadRange = READ_RANGE) -> Space:
    """The :class:`~memcglab.uncertainty.Space` of the price: :func:`study_priors`, the
    :data:`SHARER_GROWTH` alternative and the stream seeds."""
    return Space(study_priors(hardware, reads), [SHARER_GROWTH], seeds=list(seeds))
