"""Run the microbenchmarks and summarise them: medians with their spread, in ns and cycles.

Every value is measured ``reps`` times; :class:`Stat` keeps the median, the quartiles
and the extremes. Nanoseconds become cycles at the core clock the benchmark measures
itself on the CPU of the local measurements, taken as the median of the clock runs
that surround them, so a turbo clock is priced as the clock the work ran at.

The clock is a chain of dependent register-register adds, one cycle each (see
``c2c.c``). The same runs time a chain of dependent 32-bit imuls (three cycles each),
the cross-check: :func:`chains_disagree` says when the two differ by more than
:data:`CHAIN_TOLERANCE`, and then neither is trusted. They also time the old chain of
immediate adds, which cores from Golden Cove (Sapphire Rapids) on fold in the renamer
and which then reads several times the clock (issue 21); it is kept as a diagnostic,
never used. What the OS says the clock is (:func:`os_clock`) is recorded beside them
for comparison; a VM's figure is often the nominal or TSC rate, not the running one.

>>> s = Stat.of([3.0, 1.0, 2.0, 10.0])
>>> s.median, s.q25, s.q75, s.lo, s.hi, s.n
(2.5, 1.75, 4.75, 1.0, 10.0, 4)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from memcglab.probe.bench import ProbeError, run_bench

__all__ = ["CHAIN_TOLERANCE", "Plan", "ProbeResult", "Stat", "QUICK", "FULL", "chains_disagree",
           "measure", "os_clock", "sharer_counts", "total_lines"]

#: the largest relative difference allowed between the add and imul clock chains
CHAIN_TOLERANCE = 0.10


@dataclass(frozen=True)
class Stat:
    """The median of repeated runs with its spread (quartiles and extremes)."""

    median: float
    q25: float
    q75: float
    lo: float
    hi: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Stat:
        """Summarise ``values`` (at least one)."""
        v = np.asarray(values, dtype=float)
        if v.size == 0:
            raise ValueError("no runs to summarise")
        q25, med, q75 = np.percentile(v, [25, 50, 75])
        return cls(float(med), float(q25), float(q75), float(v.min()), float(v.max()), v.size)

    def scaled(self, k: float) -> Stat:
        """Every figure times ``k`` (ns to cycles)."""
        return Stat(self.median * k, self.q25 * k, self.q75 * k, self.lo * k, self.hi * k,
                    self.n)

    @property
    def half_iqr(self) -> float:
        """The wider side of the interquartile range around the median."""
        return max(self.median - self.q25, self.q75 - self.median)

    def describe(self, unit: str) -> str:
        """``median unit (IQR [q25, q75], min/max [lo, hi], n runs)``."""
        return (f"{self.median:.4g} {unit} (IQR [{self.q25:.4g}, {self.q75:.4g}], min/max "
                f"[{self.lo:.4g}, {self.hi:.4g}], {self.n} runs)")


@dataclass(frozen=True)
class Plan:
    """How hard to measure: iterations (or microseconds) per run and runs per value."""

    reps: int
    clock_reps: int
    local_iters: int
    pingpong_iters: int
    contend_us: int
    max_sharer_counts: int


QUICK = Plan(reps=5, clock_reps=5, local_iters=200_000, pingpong_iters=2_000,
             contend_us=20_000, max_sharer_counts=4)
FULL = Plan(reps=9, clock_reps=9, local_iters=2_000_000, pingpong_iters=20_000,
            contend_us=200_000, max_sharer_counts=12)


@dataclass(frozen=True)
class ProbeResult:
    """Everything measured: the clock, the local costs, every pair and the sharer curve."""

    cpus: tuple[int, ...]
    core_ghz: Stat                      # the clock used: dependent register-register adds
    tsc_ghz: Stat
    local_ns: dict[str, Stat]           # "l1", "rmw", "atomic"
    pair_ns: dict[tuple[int, int], Stat]
    contend_ns: dict[int, Stat]         # sharers -> ns per op overall
    contend_oncpu: dict[int, float]     # sharers -> least share of the window on CPU
    plan: Plan
    imul_ghz: Stat | None = None        # the cross-check: dependent 3-cycle imuls
    imm_ghz: Stat | None = None         # diagnostic: immediate adds (folded on some cores)
    os_ghz: dict[str, float] = field(default_factory=dict)   # what the OS reports, GHz

    def matrix(self) -> np.ndarray:
        """One-way transfer latency (ns, median) for each ordered pair; NaN on the diagonal."""
        idx = {c: i for i, c in enumerate(self.cpus)}
        m = np.full((len(self.cpus), len(self.cpus)), np.nan)
        for (a, b), s in self.pair_ns.items():
            m[idx[a], idx[b]] = m[idx[b], idx[a]] = s.median
        return m


def sharer_counts(ncpus: int, most: int) -> list[int]:
    """1, 2, then roughly geometric up to ``ncpus`` (always included), at most ``most`` values.

    >>> sharer_counts(2, 4), sharer_counts(176, 12)
    ([1, 2], [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 88, 176])
    """
    out = [n for n in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128) if n <= ncpus]
    if ncpus not in out:
        out.append(ncpus)
    if len(out) > most:
        out = sorted(set(out[:most - 2]) | {ncpus // 2, ncpus})
    return out


def chains_disagree(r: ProbeResult) -> str | None:
    """Why the add and imul clock chains cannot both be right, or None when they agree.

    >>> ok = ProbeResult((0, 1), Stat.of([2.9]), Stat.of([2.3]), {}, {}, {}, {}, QUICK,
    ...                  imul_ghz=Stat.of([2.85]))
    >>> chains_disagree(ok) is None
    True
    >>> from dataclasses import replace
    >>> print(chains_disagree(replace(ok, core_ghz=Stat.of([6.0]))))
    the clock chains disagree: register-register adds read 6 GHz, 3-cycle imuls 2.85 GHz \
(2.11x, more than 10% apart)
    """
    if r.imul_ghz is None:
        return None
    ratio = r.core_ghz.median / r.imul_ghz.median
    if abs(ratio - 1) <= CHAIN_TOLERANCE:
        return None
    return (f"the clock chains disagree: register-register adds read {r.core_ghz.median:.4g} "
            f"GHz, 3-cycle imuls {r.imul_ghz.median:.4g} GHz ({ratio:.3g}x, more than "
            f"{CHAIN_TOLERANCE:.0%} apart)")


_CPUFREQ = ("scaling_cur_freq", "cpuinfo_cur_freq", "base_frequency", "cpuinfo_max_freq",
            "scaling_max_freq", "bios_limit")


def os_clock(cpu: int, proc: Path = Path("/proc/cpuinfo"),
             sysfs: Path = Path("/sys/devices/system/cpu")) -> dict[str, float]:
    """What the OS says CPU ``cpu``'s clock is, in GHz, by source; only what exists.

    ``/proc/cpuinfo``'s "cpu MHz" of that processor and the cpufreq files (kHz) of
    ``sysfs/cpuN/cpufreq``. A VM often has no cpufreq and a "cpu MHz" that is the
    nominal or TSC rate, not the clock the core runs at.
    """
    out: dict[str, float] = {}
    try:
        current = None
        for line in proc.read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "processor":
                current = int(value)
            elif key == "cpu MHz" and current == cpu:
                out["/proc/cpuinfo cpu MHz"] = float(value) / 1e3
    except (OSError, ValueError):
        pass
    for name in _CPUFREQ:
        try:
            khz = float((sysfs / f"cpu{cpu}" / "cpufreq" / name).read_text())
        except (OSError, ValueError):
            continue
        if khz > 0:
            out[f"cpufreq {name}"] = khz / 1e6
    return out


def measure(exe: Path, cpus: Sequence[int], plan: Plan,
            progress: Callable[[str, int], None] = lambda what, n: None) -> ProbeResult:
    """Run every benchmark on ``cpus`` (two or more); ``progress(what, n)`` after each line."""
    cpus = tuple(cpus)
    if len(cpus) < 2:
        raise ProbeError(f"need two CPUs or more, have {len(cpus)}")
    clocks: dict[str, list[float]] = defaultdict(list)
    local: dict[str, list[float]] = defaultdict(list)

    def clock() -> None:  # on the CPU of the local measurements
        for f in run_bench(exe, ["clock", cpus[0], plan.clock_reps]):
            for k, v in zip(("add", "imul", "imm", "tsc"), f[2:], strict=True):
                clocks[k].append(float(v))
            progress("clock", 1)

    clock()
    for f in run_bench(exe, ["local", cpus[0], plan.local_iters, plan.reps]):
        local[f[0]].append(float(f[2]))
        progress("local", 1)
    clock()
    pairs: dict[tuple[int, int], list[float]] = defaultdict(list)
    for f in run_bench(exe, ["pingpong", plan.pingpong_iters, plan.reps, *cpus]):
        pairs[int(f[1]), int(f[2])].append(float(f[4]))
        progress("pairs", 1)
    contend: dict[int, list[float]] = defaultdict(list)
    oncpu: dict[int, float] = {}
    for n in sharer_counts(len(cpus), plan.max_sharer_counts):
        for f in run_bench(exe, ["contend", plan.contend_us, plan.reps, *cpus[:n]]):
            contend[int(f[1])].append(float(f[3]))
            oncpu[int(f[1])] = min(oncpu.get(int(f[1]), 1.0), float(f[4]))
            progress("contend", 1)
    return ProbeResult(cpus, Stat.of(clocks["add"]), Stat.of(clocks["tsc"]),
                       {k: Stat.of(v) for k, v in local.items()},
                       {k: Stat.of(v) for k, v in pairs.items()},
                       {k: Stat.of(v) for k, v in sorted(contend.items())}, oncpu, plan,
                       imul_ghz=Stat.of(clocks["imul"]), imm_ghz=Stat.of(clocks["imm"]),
                       os_ghz=os_clock(cpus[0]))


def total_lines(ncpus: int, plan: Plan) -> int:
    """How many result lines :func:`measure` will report: the progress bar's total."""
    pairs = ncpus * (ncpus - 1) // 2
    counts = len(sharer_counts(ncpus, plan.max_sharer_counts))
    return 2 * plan.clock_reps + (3 + pairs + counts) * plan.reps
