"""Study 4: the charge stock's layout, slots per cache line, and vmstats/events false sharing.

**The stock per era.** ``struct memcg_stock_pcp`` from v6.14 to the 2026 round-robin
stock (:mod:`memcglab.layout.catalogue`), its size, and the cache lines a slot
lookup (lock, ``nr_pages[]``, ``cached[]``) touches under the per-CPU definition
each era used: ``DEFINE_PER_CPU`` gives only the type's 8-byte alignment,
``DEFINE_PER_CPU_ALIGNED`` a whole line. Vlastimil Babka's review of the multi-memcg
stock (30 Apr 2025, ``f3e0c710-0815-44ad-844c-0e8a079bf663@suse.cz``) printed ``objdump
-t vmlinux`` for both (published table ``seed000_percpu_placement``); their addresses
are placements this study lays the stock at (:func:`placement_address`).

**Slots per line.** The same lookup for ``NR_MEMCG_STOCK`` = 1..32
(:func:`memcglab.layout.percpu.slot_table`).

**The false-sharing fix.** The stress-ng mremap stressor's struct mem_cgroup accesses
(:func:`memcglab.workloads.mremap_pageout`) at the ``vmstats_percpu`` read rate derived
from the kernel paths of one stressor iteration
(:mod:`memcglab.workloads.mremap_stats`), replayed through the MESI simulator over the
``parent``, ``blamed`` and ``fixed`` layouts
(:func:`memcglab.layout.scenario.run_stream`): exact counts per swap-fail event
(:func:`coherence_runs`), and the same over a sweep of read rates beside the
closed-form ceiling (:func:`read_sweep`). :func:`priced` turns the sweep into the
throughput loss of each layout against the parent with
:mod:`memcglab.studies.s04_layout_false_sharing.pricing`, propagated over the machine profile's
priors, the derived read-rate range, the lock-stretch inputs, a modelling alternative and the seeds
(:func:`memcglab.uncertainty.summarise`); :func:`regressions` keeps the one-point price of
:class:`memcglab.cost.CostParams`' ``c2c_transfer``. Published numbers read here: the two placements
(inputs to the layout) and, in :func:`seed004_claim`, the values a claim's probability and
break-even are measured against; the verdict (:func:`memcglab.stats.judge`, in the views)
judges by the pre-registered rules.
:class:`LayoutParams` and :func:`run` are here; figures, ``summary``, ``counts``,
``claims`` and ``conclusion`` are in :mod:`memcglab.studies.s04_layout_false_sharing.views`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from memcglab.cost import CostParams, throughput
from memcglab.hardware import MachineProfile, load_profile
from memcglab.layout.catalogue import CATALOGUE, era_text, struct_layout
from memcglab.layout.layout import CACHELINE
from memcglab.layout.percpu import LOOKUP_FIELDS, lookup_lines, slot_table
from memcglab.layout.scenario import SEED004_FIELDS, run_stream
from memcglab.published import load
from memcglab.stats import Take
from memcglab.studies.common.judging import would_take
from memcglab.studies.s04_layout_false_sharing.pricing import (
    CountTable,
    at_ceiling,
    ceiling,
    identical,
    line_utilisation,
    loss_pct,
    poisson_estimate,
    pricing_space,
)
from memcglab.uncertainty import UncertainResult, at_fixed, summarise
from memcglab.workloads import MremapPageoutSpec, mremap_pageout
from memcglab.workloads.mremap_stats import READ_RANGE, ReadRange, path_table

__all__ = ["ERAS_004", "PLACEMENTS", "LayoutParams", "LayoutResults",
           "coherence_runs", "lookup_span", "max_slots_in_one_line", "placement_address",
           "placements", "needed", "priced", "read_sweep", "regressions", "run", "seed004_claim",
           "stock_eras", "transfers"]

#: the published table of Vlastimil Babka's ``objdump -t vmlinux`` lines for the 2025-04
#: stock, one row per per-CPU definition built (definition, address, size, quote)
PLACEMENTS = "seed000_percpu_placement"
ERAS_004 = ("parent", "blamed", "fixed")


def placement_address(definition: str, results: LayoutResults | None = None) -> int:
    """The address memcg_stock had when built with ``definition`` (``DEFINE_PER_CPU`` or
    ``DEFINE_PER_CPU_ALIGNED``): from ``results.placements``, or the published table.

    >>> hex(placement_address("DEFINE_PER_CPU") % 64)
    '0x20'
    """
    table = (load(PLACEMENTS).frame if results is None else results.placements)
    rows = table.set_index("definition")
    if definition not in rows.index:
        raise ValueError(f"definition={definition!r}: the placements are "
                         f"{', '.join(rows.index)}")
    return int(rows.loc[definition, "address"], 16)


def stock_eras(config=None) -> pd.DataFrame:
    """One row per memcg_stock_pcp era: size, the per-CPU definition, lookup lines.

    ``lines_aligned`` places the stock on a line boundary (DEFINE_PER_CPU_ALIGNED);
    ``lines_unaligned_worst`` at the worst phase its own alignment allows
    (DEFINE_PER_CPU).
    """
    rows = []
    for era in CATALOGUE["memcg_stock_pcp"].eras:
        lay = struct_layout("memcg_stock_pcp", era, config)
        fields = list(LOOKUP_FIELDS[era])
        end = max(lay.locate(f).offset + lay.locate(f).size for f in fields)
        phases = range(0, CACHELINE, lay.align)
        rows.append({"era": era, "definition": era_text("memcg_stock_pcp", era).percpu,
                     "sizeof": lay.size, "align": lay.align, "lookup_bytes": end,
                     "lines_aligned": len(lay.lines_of(fields, 0)),
                     "lines_unaligned_worst": max(len(lay.lines_of(fields, p)) for p in phases)})
    return pd.DataFrame(rows)


def placements(era: str = "2025-04", config=None) -> pd.DataFrame:
    """The 2025-04 lookup at each published placement (:data:`PLACEMENTS`): phase and lines
    touched, and the catalogue's size beside the size objdump printed."""
    lay = struct_layout("memcg_stock_pcp", era, config)
    rows = []
    for row in load(PLACEMENTS).frame.itertuples():
        addr = int(row.address, 16)
        lines = lookup_lines(era, placement=addr, config=config)
        rows.append({"definition": row.definition, "address": f"{addr:#x}",
                     "phase_bytes": addr % CACHELINE, "objdump_size": int(row.size),
                     "layout_size": lay.size,
                     "first_64_bytes_lines": len(lay.span_lines(0, CACHELINE, addr)),
                     "lookup_lines": len({a for v in lines.values() for a in v})})
    return pd.DataFrame(rows)


def transfers(totals: dict[str, int]) -> int:
    """Coherence transfers of a run: misses on lines another CPU's write took away, and
    upgrades of Shared lines (each invalidates the other copies). Cold misses, which a
    longer run amortises, are left out."""
    return int(totals["coherence_misses"] + totals["upgrades"])


def _counts(r, lay, events: int) -> dict:
    """The per-event counts of one simulated run (exact for the trace)."""
    tot = r.totals()
    per = max(events, 1)
    line = lay.locate(SEED004_FIELDS[1]).offset // CACHELINE * CACHELINE  # instance 0
    on = r.lines.loc[line] if line in r.lines.index else None
    sh = r.sharing
    vm = sh[(sh["victim"] == SEED004_FIELDS[1]) & (sh["op"] == "read")]["misses"].sum()
    return {**tot, "transfers": transfers(tot), "transfers_per_event": transfers(tot) / per,
            "write_transfers_per_event": (tot["upgrades"] + tot["write_misses"]) / per,
            "invalidations_per_event": tot["invalidations"] / per,
            "vmstats_misses_per_event": float(vm) / per,
            "line_writes_per_event": (float(on["writes"]) if on is not None else 0.0) / per,
            "line_transfers_per_event": (float(on["coherence_misses"] + on["upgrades"])
                                         if on is not None else 0.0) / per,
            # a CPU's misses over its own events: (misses / cpus) / (events / cpus)
            "line_misses_per_cpu_per_event": (float(on["coherence_misses"])
                                              if on is not None else 0.0) / per}


def coherence_runs(spec: MremapPageoutSpec, seeds: int | Sequence[int], eras=ERAS_004,
                   config=None) -> pd.DataFrame:
    """One row per (seed, era): the stream's events and the simulator's per-event counts.

    ``seeds`` is a count (0..seeds-1) or the seeds themselves.
    """
    rows = []
    for seed in (range(seeds) if isinstance(seeds, int) else seeds):
        stream = mremap_pageout(replace(spec, seed=int(seed)))
        events = int((stream.accesses["field"] == 0).sum())  # memory_events_local writes
        for era in eras:
            lay = struct_layout(stream.struct, era, config)
            a, b = (lay.locate(f) for f in SEED004_FIELDS)
            r = run_stream(stream, era, config)
            rows.append({"seed": int(seed), "era": era, "sizeof": lay.size,
                         "reads_per_event": float(spec.stat_updates_per_event),
                         "events": events, "accesses": len(stream.accesses),
                         "same_line": a.offset // CACHELINE == b.offset // CACHELINE,
                         **_counts(r, lay, events)})
    return pd.DataFrame(rows)


def read_sweep(spec: MremapPageoutSpec, reads: Sequence[float], seeds: int | Sequence[int],
               eras=ERAS_004, config=None) -> pd.DataFrame:
    """:func:`coherence_runs` at each vmstats_percpu read rate (loads per event per CPU),
    with the closed-form :func:`~memcglab.studies.s04_layout_false_sharing.pricing.ceiling` and
    :func:`~memcglab.studies.s04_layout_false_sharing.pricing.poisson_estimate` for the shared
    line."""
    frames = []
    for k in reads:
        runs = coherence_runs(replace(spec, stat_updates_per_event=float(k)), seeds, eras,
                              config)
        frames.append(runs)
    out = pd.concat(frames, ignore_index=True)
    w = 1.0  # memory_events_local[8] of the one memcg, per event
    out["ceiling_per_event"] = ceiling(out["reads_per_event"], spec.cpus, w)
    out["poisson_per_event"] = poisson_estimate(out["reads_per_event"], spec.cpus, w)
    return out


def regressions(runs: pd.DataFrame, spec: MremapPageoutSpec, cpu_hz: float,
                cost: CostParams) -> pd.DataFrame:
    """Per seed, at one point of the cost model (no uncertainty): throughput loss of
    ``blamed`` and of ``fixed`` against ``parent``, in %.

    Positive is slower. The parent's cycles per swap-fail event are the machine's
    cycles over the event rate; the work outside the transfers is that minus the
    parent's own transfers, priced at ``cost.c2c_transfer`` each.
    """
    work = spec.cpus * cpu_hz / spec.swap_fail_rate
    per = runs.pivot_table(index="seed", columns="era", values="transfers_per_event")
    c2c = cost.c2c_transfer
    other = work - per["parent"] * c2c
    base = throughput(per["parent"] * c2c, other, cpu_hz, spec.cpus)
    out = pd.DataFrame({"extra_transfers_per_event": per["blamed"] - per["parent"]})
    for era, col in (("blamed", "regression_pct"), ("fixed", "fixed_gap_pct")):
        if era in per:
            out[col] = (1 - throughput(per[era] * c2c, other, cpu_hz, spec.cpus) / base) * 100
    return out.reset_index()


def priced(sweep: pd.DataFrame, cpus: int, profile: MachineProfile, n: int = 1024,
           reads: ReadRange = READ_RANGE) -> dict[str, UncertainResult]:
    """The regression and the fixed layout's gap, in %, propagated over the priors of
    :func:`~memcglab.studies.s04_layout_false_sharing.pricing.study_priors` and the sweep's seeds.

    The regression's claim holds when it lies within the boot-to-boot spread of the
    published value, and its break-even is where it reaches it; the fix's holds when
    its gap is within the published 0.5%. Those published numbers come in through
    :func:`seed004_claim` (a study may read them; the simulation never does).
    ``regression_ceiling`` prices the same with every load of the shared line missing
    up to the ceiling (:func:`~memcglab.studies.s04_layout_false_sharing.pricing.at_ceiling`): a
    bound, not a prediction, so no verdict reads it.
    """
    counts = CountTable.from_runs(sweep)
    bound = CountTable.from_runs(at_ceiling(sweep, cpus))
    space = pricing_space(profile.priors, counts.seeds, reads)
    pub, spread, gap = seed004_claim()
    out = {}
    for table, era, name, holds, threshold in (
            (counts, "blamed", "regression", lambda y: np.abs(y - pub) <= spread, pub),
            (counts, "fixed", "fixed_gap", lambda y: np.abs(y) <= gap, gap),
            (bound, "blamed", "regression_ceiling", lambda y: np.abs(y - pub) <= spread, pub)):
        out[name] = summarise(lambda d, t=table, e=era: loss_pct(t, e, d, cpus), space, n=n,
                              holds=holds, threshold=threshold, unit="%")
    return out


def needed(sweep: pd.DataFrame, cpus: int, profile: MachineProfile, target: float,
           names: Sequence[str] = ("c2c_transfer", "lock_waiters", "contended_rmw_per_sharer"),
           reach: float = 100.0) -> list[Take]:
    """What it would take: the value of each input in ``names`` at which the blamed layout's
    loss reaches ``target`` % with every other input typical, searched up to ``reach``
    times its prior's high; marked infeasible where the shared line's offered load at the
    parent's event rate is 1 or more there (the line could not carry the parent's rate:
    the model's queue is saturated before the loss is reached)."""
    counts = CountTable.from_runs(sweep)
    space = pricing_space(profile.priors, counts.seeds)

    def saturated(name: str, x: float) -> str:
        u = float(at_fixed(lambda d: line_utilisation(counts, "blamed", d), space,
                           {name: np.array([x])})[0])
        return (f"the shared line's offered load would be {u:.2f} at the parent's event rate"
                if u >= 1.0 else "")

    return would_take(lambda d: loss_pct(counts, "blamed", d, cpus), space, list(names),
                      target, infeasible=saturated, reach=reach)


def utilisation(sweep: pd.DataFrame, profile: MachineProfile, n: int = 1024) -> np.ndarray:
    """The blamed layout's shared-line offered load at the parent's event rate, over the
    propagation's draws (the share at or above 1 is the share the line saturates)."""
    counts = CountTable.from_runs(sweep)
    space = pricing_space(profile.priors, counts.seeds)
    return line_utilisation(counts, "blamed", space.sample(n, seed=0))


def seed004_claim() -> tuple[float, float, float]:
    """The false-sharing fix's published regression, boot-to-boot spread and fix gap, in %."""
    q = load("seed004_false_sharing").frame.set_index("quantity")["value"]
    return tuple(float(q[k]) for k in ("median_mremap_throughput_regression",
                                       "boot_to_boot_spread", "fixed_gap_to_parent"))


@dataclass(frozen=True)
class LayoutParams:
    """The problem sizes of study 4. Each default says where it comes from."""

    #: the mremap stream: the false-sharing fix's 176 CPUs and 20 million events per 60 s, at the
    #: derived typical vmstats_percpu read rate (memcglab.workloads.mremap_stats).
    stream: MremapPageoutSpec = field(default_factory=MremapPageoutSpec)
    #: stream seeds, the simulated "boots": their spread is the simulation's own noise.
    seeds: int = 5
    #: clock of the 176-CPU machine for the one-point price; 2.5 GHz, the profile's.
    cpu_hz: float = 2.5e9
    cost: CostParams = field(default_factory=CostParams)
    #: read rates (vmstats_percpu loads per event per CPU) of the sweep: the derived
    #: low, typical and high, and rates around them for the ceiling figure.
    reads: tuple[float, ...] = (3.0, READ_RANGE.low, 12.0, 25.0, READ_RANGE.typical,
                                READ_RANGE.high, 120.0, 250.0)
    #: seconds of stream per sweep point (the loads multiply the accesses).
    sweep_duration: float = 0.01
    #: seeds per sweep point (the seed factor of the propagation).
    sweep_seeds: int = 3
    #: the machine profile the hardware priors come from: a shipped profile's name
    #: (data/hardware/profiles) or a profile file's path.
    profile: str = "lkp-mremap-176cpu-1socket"
    #: points of the quasi-random propagation (a power of 2).
    samples: int = 1024
    #: NR_MEMCG_STOCK values for the slots-per-line table.
    slots: tuple[int, ...] = tuple(range(1, 33))

    def __post_init__(self) -> None:
        for name in ("seeds", "sweep_seeds"):
            value = getattr(self, name)
            if not _is_int(value) or not 1 <= value <= 100:
                raise ValueError(f"{name}={value!r}: must be an integer between 1 and 100")
        load_profile(self.profile)  # a shipped name or a file; its error names the field
        if not self.cpu_hz > 0:
            raise ValueError(f"cpu_hz={self.cpu_hz}: must be > 0 (cycles per second)")
        if len(self.reads) < 2 or min(self.reads) <= 0:
            raise ValueError(f"reads={self.reads}: need two or more read rates, all > 0")
        lo, hi = min(self.reads), max(self.reads)
        if lo > READ_RANGE.low or hi < READ_RANGE.high:
            raise ValueError(f"reads={self.reads}: must span the derived range "
                             f"[{READ_RANGE.low:.3g}, {READ_RANGE.high:.3g}] loads per event")
        if not _is_int(self.samples) or self.samples < 2 or self.samples & (self.samples - 1):
            raise ValueError(f"samples={self.samples!r}: must be a power of 2 (e.g. 1024)")

    @classmethod
    def from_notebook(cls, quick: bool = False, seeds: int = 5, duration: float = 0.05,
                      cpu_hz: float = 2.5e9, c2c_cycles: float = 150.0,
                      profile: str = "lkp-mremap-176cpu-1socket", samples: int = 1024
                      ) -> LayoutParams:
        """From the notebook's parameters; ``quick`` is 2 seeds of 10 ms, a 4-rate sweep
        of 5 ms streams over 2 seeds, and 256 propagation points."""
        kw: dict = {}
        if quick:
            seeds, duration, samples = min(seeds, 2), min(duration, 0.01), min(samples, 256)
            kw = {"reads": (3.0, READ_RANGE.low, READ_RANGE.typical, READ_RANGE.high),
                  "sweep_duration": 0.005, "sweep_seeds": 2}
        return cls(stream=MremapPageoutSpec(duration=duration), seeds=seeds, cpu_hz=cpu_hz,
                   cost=CostParams(c2c_transfer=c2c_cycles), profile=profile,
                   samples=samples, **kw)


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


@dataclass
class LayoutResults:
    """Everything study 4 computes; the notebook shows it part by part."""

    params: LayoutParams
    eras: pd.DataFrame
    placements: pd.DataFrame
    slots: pd.DataFrame
    runs: pd.DataFrame
    regressions: pd.DataFrame
    sweep: pd.DataFrame
    derivation: pd.DataFrame
    priced: dict[str, UncertainResult]
    #: what it would take to reach the published regression (:func:`needed`)
    needed: list[Take]
    #: the blamed layout's shared-line offered load over the draws (:func:`utilisation`)
    utilisation: np.ndarray
    #: whether the fixed layout's counts equal the parent's (its gap is then 0 by
    #: construction, not a check)
    fixed_identical: bool


def run(p: LayoutParams) -> LayoutResults:
    """Lay out the stocks, tabulate slots per line, replay the false-sharing fix's stream at the
    derived read rate and over the sweep, and price the sweep over the priors."""
    runs = coherence_runs(p.stream, p.seeds)
    swept = replace(p.stream, duration=min(p.sweep_duration, p.stream.duration))
    sweep = read_sweep(swept, p.reads, p.sweep_seeds)
    profile = load_profile(p.profile)
    return LayoutResults(p, stock_eras(), placements(), slot_table("v6.16", p.slots), runs,
                         regressions(runs, p.stream, p.cpu_hz, p.cost), sweep,
                         pd.DataFrame(path_table()),
                         priced(sweep, p.stream.cpus, profile, p.samples),
                         needed(sweep, p.stream.cpus, profile, seed004_claim()[0]),
                         utilisation(sweep, profile, p.samples),
                         identical(CountTable.from_runs(sweep), "fixed", "parent"))


def lookup_span(r: LayoutResults, definition: str) -> int:
    """Lines the 2025-04 lookup touches at the published address for ``definition``."""
    row = r.placements.set_index("definition").loc[definition]
    return int(row["lookup_lines"])


def max_slots_in_one_line(slots: pd.DataFrame) -> int:
    """The most slots whose aligned lookup still fits one cache line (0 if none)."""
    one = slots[slots["lines_aligned"] == 1]["slots"]
    return int(one.max()) if len(one) else 0

