"""Study 4: the charge stock's layout, slots per cache line, and seed 004's false sharing.

**The stock per era.** ``struct memcg_stock_pcp`` from v6.14 to the 2026 round-robin
stock (:mod:`memcglab.layout.catalogue`), its size, and the cache lines a slot
lookup (lock, ``nr_pages[]``, ``cached[]``) touches under the per-CPU definition
each era used: ``DEFINE_PER_CPU`` gives only the type's 8-byte alignment,
``DEFINE_PER_CPU_ALIGNED`` a whole line. Vlastimil Babka's review of the
multi-memcg stock (seed 000, 30 Apr 2025) printed ``objdump -t vmlinux`` for both
(published table ``seed000_percpu_placement``); their addresses are placements this
study lays the stock at (:func:`placement_address`).

**Slots per line.** The same lookup for ``NR_MEMCG_STOCK`` = 1..32
(:func:`memcglab.layout.percpu.slot_table`).

**Seed 004.** The stress-ng mremap stressor's struct mem_cgroup accesses
(:func:`memcglab.workloads.mremap_pageout`) replayed through the MESI simulator over
the ``parent``, ``blamed`` and ``fixed`` layouts
(:func:`memcglab.layout.scenario.run_stream`). The coherence transfers per
swap-fail event become a throughput change with :class:`memcglab.cost.CostParams`'
``c2c_transfer`` and the stressor's work per event: every CPU runs one stressor
instance flat out, so one event stands for ``cpus * cpu_hz / swap_fail_rate``
cycles of the parent kernel's time. The only published numbers read here are the two
placements, inputs to the layout; the verdict (:func:`memcglab.stats.verdict_004`)
reads seed 004's. :class:`LayoutParams` and
:func:`run` are here; figures, ``summary``, ``claims`` and ``conclusion`` are in
:mod:`memcglab.studies.layout_views`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from memcglab.cost import CostParams, throughput
from memcglab.layout.catalogue import CATALOGUE, era_text, struct_layout
from memcglab.layout.layout import CACHELINE
from memcglab.layout.percpu import LOOKUP_FIELDS, lookup_lines, slot_table
from memcglab.layout.scenario import SEED004_FIELDS, run_stream
from memcglab.published import load
from memcglab.workloads import MremapPageoutSpec, mremap_pageout

__all__ = ["ERAS_004", "PLACEMENTS", "LayoutParams", "LayoutResults", "coherence_runs",
           "lookup_span", "max_slots_in_one_line", "placement_address", "placements",
           "regressions", "run", "sensitivity", "stock_eras", "transfers"]

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


def coherence_runs(spec: MremapPageoutSpec, seeds: int, eras=ERAS_004, config=None
                   ) -> pd.DataFrame:
    """One row per (seed, era): the stream's events and the simulator's counts."""
    rows = []
    for seed in range(seeds):
        stream = mremap_pageout(replace(spec, seed=seed))
        events = int((stream.accesses["field"] == 0).sum())  # memory_events_local writes
        for era in eras:
            lay = struct_layout(stream.struct, era, config)
            a, b = (lay.locate(f) for f in SEED004_FIELDS)
            tot = run_stream(stream, era, config).totals()
            rows.append({"seed": seed, "era": era, "sizeof": lay.size,
                         "events": events, "accesses": len(stream.accesses),
                         "same_line": a.offset // CACHELINE == b.offset // CACHELINE,
                         **tot, "transfers": transfers(tot),
                         "transfers_per_event": transfers(tot) / max(events, 1)})
    return pd.DataFrame(rows)


def regressions(runs: pd.DataFrame, spec: MremapPageoutSpec, cpu_hz: float,
                cost: CostParams) -> pd.DataFrame:
    """Per seed: throughput loss of ``blamed`` and of ``fixed`` against ``parent``, in %.

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


def sensitivity(spec: MremapPageoutSpec, loads, cpu_hz: float, cost: CostParams,
                config=None) -> pd.DataFrame:
    """The blamed layout's regression as the stat paths' vmstats_percpu loads per event grow."""
    frames = []
    for k in loads:
        s = replace(spec, stat_updates_per_event=int(k))
        runs = coherence_runs(s, 1, ("parent", "blamed"), config)
        r = regressions(runs, s, cpu_hz, cost)
        frames.append(r.assign(loads_per_event=int(k))[
            ["loads_per_event", "regression_pct", "extra_transfers_per_event"]])
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class LayoutParams:
    """The problem sizes of study 4. Each default says where it comes from."""

    #: the mremap stream: seed 004's 176 CPUs and 20 million events per 60 s.
    stream: MremapPageoutSpec = field(default_factory=MremapPageoutSpec)
    #: stream seeds, the simulated "boots": their spread is the simulation's own noise.
    seeds: int = 5
    #: clock of the 176-CPU machine, unpublished; 2.5 GHz as memcglab.stats.netperf's.
    cpu_hz: float = 2.5e9
    cost: CostParams = field(default_factory=CostParams)
    #: vmstats_percpu loads per swap-fail event for the what-if sweep: the stream's
    #: 3 (one failed pageout's own updates) up to the updates of a whole mremap op.
    loads: tuple[int, ...] = (3, 10, 30, 100, 300)
    #: seconds of stream per what-if point (loads multiply the accesses).
    sensitivity_duration: float = 0.01
    #: NR_MEMCG_STOCK values for the slots-per-line table.
    slots: tuple[int, ...] = tuple(range(1, 33))

    def __post_init__(self) -> None:
        if not 1 <= self.seeds <= 100:
            raise ValueError(f"seeds={self.seeds}: must be between 1 and 100")
        if not self.cpu_hz > 0:
            raise ValueError(f"cpu_hz={self.cpu_hz}: must be > 0 (cycles per second)")
        if not self.loads or min(self.loads) < 0:
            raise ValueError(f"loads={self.loads}: need loads per event >= 0")

    @classmethod
    def from_notebook(cls, quick: bool = False, seeds: int = 5, duration: float = 0.05,
                      cpu_hz: float = 2.5e9, c2c_cycles: float = 150.0) -> LayoutParams:
        """From the notebook's parameters; ``quick`` is 2 seeds of 20 ms and 3 what-ifs."""
        loads = cls.loads
        if quick:
            seeds, duration, loads = min(seeds, 2), min(duration, 0.02), (3, 30, 300)
        return cls(stream=MremapPageoutSpec(duration=duration), seeds=seeds, cpu_hz=cpu_hz,
                   cost=CostParams(c2c_transfer=c2c_cycles), loads=loads)


@dataclass
class LayoutResults:
    """Everything study 4 computes; the notebook shows it part by part."""

    params: LayoutParams
    eras: pd.DataFrame
    placements: pd.DataFrame
    slots: pd.DataFrame
    runs: pd.DataFrame
    regressions: pd.DataFrame
    sensitivity: pd.DataFrame


def run(p: LayoutParams) -> LayoutResults:
    """Lay out the stocks, tabulate slots per line, and replay the seed 004 stream."""
    runs = coherence_runs(p.stream, p.seeds)
    what_if = replace(p.stream, duration=min(p.sensitivity_duration, p.stream.duration))
    return LayoutResults(p, stock_eras(), placements(), slot_table("v6.16", p.slots), runs,
                         regressions(runs, p.stream, p.cpu_hz, p.cost),
                         sensitivity(what_if, p.loads, p.cpu_hz, p.cost))


def lookup_span(r: LayoutResults, definition: str) -> int:
    """Lines the 2025-04 lookup touches at the published address for ``definition``."""
    row = r.placements.set_index("definition").loc[definition]
    return int(row["lookup_lines"])


def max_slots_in_one_line(slots: pd.DataFrame) -> int:
    """The most slots whose aligned lookup still fits one cache line (0 if none)."""
    one = slots[slots["lines_aligned"] == 1]["slots"]
    return int(one.max()) if len(one) else 0

