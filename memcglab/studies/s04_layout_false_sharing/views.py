"""Study 4's figures, sidecar scalars, count and claim rows and conclusion, from its results.

:mod:`memcglab.studies.s04_layout_false_sharing.study` computes; this module only shows and judges.
Published numbers arrive here as arguments or through the judges: the verdict table of
:func:`verdict` (:func:`memcglab.stats.verdicts.verdict_004_rules`, the pre-registered
rules) and seed 004's published table (for the vmpressure sizes), read by the
notebook; the objdump placements come with the results
(:func:`memcglab.studies.s04_layout_false_sharing.study.placements`). The thread's words are quoted
from the published table ``thread_quotes`` (:func:`memcglab.published.quote`).
"""

from __future__ import annotations

import matplotlib.patches as mpatches
import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np
import pandas as pd
import seaborn as sns

from memcglab.layout.catalogue import struct_layout
from memcglab.layout.layout import CACHELINE
from memcglab.published import quote
from memcglab.stats.verdicts import verdict_004_rules
from memcglab.studies import claim_row, count_row
from memcglab.studies.common.figures import new_figure
from memcglab.studies.s04_layout_false_sharing.pricing import ceiling, poisson_estimate
from memcglab.studies.s04_layout_false_sharing.study import (
    ERAS_004,
    LayoutResults,
    lookup_span,
    max_slots_in_one_line,
    placement_address,
)
from memcglab.uncertainty import sensitivity_figure
from memcglab.workloads.mremap_stats import READ_RANGE

__all__ = ["claims", "conclusion", "counts", "figure_seed004", "figure_sensitivity",
           "figure_slots", "figure_stock", "summary", "verdict"]

_LOOKUP = {"stock_lock": "#1f77b4", "nr_pages": "#2ca02c", "cached": "#ff7f0e"}


def figure_stock(r: LayoutResults):
    """Lookup lines per era, and the 2025-04 stock laid at Vlastimil Babka's two addresses."""
    fig, ax = new_figure(1, 2, width=6.0)
    e = r.eras.melt(id_vars=["era", "sizeof"], value_vars=["lines_aligned",
                                                           "lines_unaligned_worst"],
                    var_name="placement", value_name="lines")
    e["placement"] = e["placement"].map({"lines_aligned": "DEFINE_PER_CPU_ALIGNED",
                                         "lines_unaligned_worst": "DEFINE_PER_CPU, worst phase"})
    e["era"] = e["era"] + "\n" + e["sizeof"].astype(str) + " B"
    sns.barplot(e, x="era", y="lines", hue="placement", ax=ax[0])
    ax[0].set(xlabel="memcg_stock_pcp era and sizeof", ylabel="cache lines (64 B) per lookup")
    ax[0].legend(fontsize="small", loc="lower right")
    lay = struct_layout("memcg_stock_pcp", "2025-04")
    definitions = r.placements["definition"].tolist()
    for y, definition in enumerate(definitions):
        phase = placement_address(definition, r) % CACHELINE
        for f in lay.fields:
            if f.depth or not f.size:
                continue
            colour = _LOOKUP.get(f.path.split("[")[0], "#d9d9d9")
            ax[1].broken_barh([(phase + f.offset, f.size)], (y - 0.35, 0.7), color=colour,
                              edgecolor="white")
    for x in range(0, 4 * CACHELINE, CACHELINE):
        ax[1].axvline(x, color="k", ls="--", lw=1)
    ax[1].set(yticks=[0, 1], yticklabels=[f"{d}\n@...{placement_address(d, r) & 0xfff:03x}"
                                          for d in definitions],
              xlabel="bytes from the cache line boundary below the variable",
              xlim=(0, 4 * CACHELINE))
    ax[1].legend(handles=[mpatches.Patch(color=c, label=n) for n, c in _LOOKUP.items()]
                 + [mpatches.Patch(color="#d9d9d9", label="rest (obj stock, work, flags)")],
                 fontsize="small", loc="lower right")
    fig.suptitle("memcg_stock_pcp: the slot lookup fits one 64-byte line only when the "
                 "per-CPU variable is line aligned (dashed: line boundaries)", fontsize="medium")
    return fig


def figure_slots(r: LayoutResults):
    """Lines a full slot scan touches, and slots in the lock's line, for 1..32 slots."""
    fig, ax = new_figure(1, 2)
    s = r.slots.melt(id_vars="slots", value_vars=["lines_aligned", "lines_unaligned_worst",
                                                  "lines_unaligned_mean"],
                     var_name="placement", value_name="lines")
    s["placement"] = s["placement"].map({
        "lines_aligned": "DEFINE_PER_CPU_ALIGNED", "lines_unaligned_worst":
        "DEFINE_PER_CPU, worst phase", "lines_unaligned_mean": "DEFINE_PER_CPU, mean of phases"})
    sns.lineplot(s, x="slots", y="lines", hue="placement", style="placement",
                 drawstyle="steps-mid", ax=ax[0])
    ax[0].set(xlabel="NR_MEMCG_STOCK (slots)", ylabel="cache lines (64 B) per slot scan")
    ax[1].plot(r.slots["slots"], r.slots["slots_in_line0"], marker="o", ms=3)
    ax[1].plot(r.slots["slots"], r.slots["slots"], color="grey", ls=":", label="all slots")
    ax[1].set(xlabel="NR_MEMCG_STOCK (slots)", ylabel="slots wholly in the lock's line")
    ax[1].legend(fontsize="small")
    fig.suptitle("v6.16 stock with 1-32 slots: lines per lookup (aligned and at "
                 "DEFINE_PER_CPU phases) and slots sharing the lock's line", fontsize="medium")
    return fig


def figure_seed004(r: LayoutResults) -> tuple[plt.Figure, str]:
    """Transfers per event per layout, and the shared line's transfers against the read
    rate beside the closed-form ceiling. Returns the figure and its caption."""
    fig, ax = new_figure(1, 2, width=6.0, height=4.2)
    sns.barplot(r.runs, x="era", y="transfers_per_event", errorbar="sd", ax=ax[0],
                color="#1f77b4")
    ax[0].set(xlabel="struct mem_cgroup layout",
              ylabel="transfers per swap-fail event (count)")
    b = r.sweep[r.sweep["era"] == "blamed"]
    sns.lineplot(b, x="reads_per_event", y="line_transfers_per_event", marker="o",
                 errorbar=("pi", 100), ax=ax[1], label="simulated (MESI), blamed layout")
    grid = np.geomspace(b["reads_per_event"].min(), b["reads_per_event"].max(), 100)
    cpus = r.params.stream.cpus
    ax[1].plot(grid, ceiling(grid, cpus), color="k", label="ceiling w + min(r, w(N-1))")
    ax[1].plot(grid, poisson_estimate(grid, cpus), color="grey", ls="--",
               label="independent-Poisson estimate")
    ax[1].axvspan(READ_RANGE.low, READ_RANGE.high, color="#2ca02c", alpha=0.12,
                  label="derived read rate, low-high")
    ax[1].axvline(READ_RANGE.typical, color="#2ca02c", lw=1)
    ax[1].set(xscale="log", yscale="log",
              xlabel="vmstats_percpu loads per event per CPU (count)",
              ylabel="shared-line transfers per event (count)")
    for axis in (ax[1].xaxis, ax[1].yaxis):
        axis.set_major_locator(mticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(mticker.NullFormatter())
    ax[1].legend(fontsize="small", loc="upper left")
    fig.suptitle(f"Seed 004 on {cpus} CPUs: the blamed layout's extra transfers (left) and "
                 "the shared line's transfers against the read rate (right)",
                 fontsize="medium")
    t = r.runs.groupby("era")["transfers_per_event"].mean()
    at = b[np.isclose(b["reads_per_event"], READ_RANGE.typical)]
    sim = float(at["line_transfers_per_event"].mean())
    text = (f"Left: coherence transfers per swap-fail event of each struct mem_cgroup layout "
            f"at the derived {READ_RANGE.typical:.0f} loads per event (bars: mean, whiskers: "
            f"sd over {r.params.seeds} seeds); blamed {t['blamed']:.1f}, parent "
            f"{t['parent']:.1f}, fixed {t['fixed']:.1f}. Right: transfers of the line "
            "holding vmstats_percpu in the blamed layout (band: range over "
            f"{r.params.sweep_seeds} seeds) against the read rate, with the ceiling (a CPU "
            "misses at most once per remote write and once per own read) and the estimate "
            "for independent Poisson reads and writes; the green band is the derived range. "
            f"What to see: at the typical rate the simulator gives {sim:.1f} transfers per "
            f"event, under the ceiling's {float(ceiling(READ_RANGE.typical, cpus)[0]):.1f}; "
            + ("the reads, not the remote writes, bound the misses over the whole derived "
               "range." if READ_RANGE.high < cpus - 1 else
               f"above {cpus - 1} loads per event the remote writes bound the misses."))
    return fig, text


def figure_sensitivity(r: LayoutResults) -> tuple[plt.Figure, str]:
    """The tornado and Sobol bars of the priced regression (uncertainty layer's helper)."""
    return sensitivity_figure(r.priced["regression"],
                              "blamed layout's mremap throughput loss vs parent")


def verdict(r: LayoutResults) -> pd.DataFrame:
    """The regression and the fix judged by the pre-registered rules."""
    return verdict_004_rules(r.priced["regression"], r.priced["fixed_gap"])


def _era(r: LayoutResults, era: str, col: str):
    return r.runs[r.runs["era"] == era][col].iloc[0]


def _mean(r: LayoutResults, era: str, col: str) -> float:
    return float(r.runs[r.runs["era"] == era][col].mean())


def summary(r: LayoutResults) -> dict:
    """Scalars for the sidecar (:func:`memcglab.sweep.record_result`)."""
    p = r.placements.set_index("definition")
    reg, fix = r.priced["regression"], r.priced["fixed_gap"]
    point = r.regressions
    cpus = r.params.stream.cpus
    return {
        "stock_2025_04_sizeof": int(p["layout_size"].iloc[0]),
        "objdump_sizeof": int(p["objdump_size"].iloc[0]),
        "unaligned_phase_bytes": int(p.loc["DEFINE_PER_CPU", "phase_bytes"]),
        "unaligned_lookup_lines": lookup_span(r, "DEFINE_PER_CPU"),
        "aligned_lookup_lines": lookup_span(r, "DEFINE_PER_CPU_ALIGNED"),
        "unaligned_first64_lines": int(p.loc["DEFINE_PER_CPU", "first_64_bytes_lines"]),
        "eras_straddling_unaligned": int((r.eras["lines_unaligned_worst"] > 1).sum()),
        "eras": len(r.eras),
        "max_slots_one_line": max_slots_in_one_line(r.slots),
        "v616_sizeof": int(r.eras.set_index("era").loc["v6.16", "sizeof"]),
        **{f"same_line_{e}": bool(_era(r, e, "same_line")) for e in ERAS_004},
        **{f"memcg_sizeof_{e}": int(_era(r, e, "sizeof")) for e in ERAS_004},
        **{f"needed_{k}": x for k, x in r.needed.items() if x is not None},
        "vmpressure_sizeof_parent": struct_layout("vmpressure", "parent").size,
        "vmpressure_sizeof_blamed": struct_layout("vmpressure", "blamed").size,
        "reads_low": READ_RANGE.low, "reads_typical": READ_RANGE.typical,
        "reads_high": READ_RANGE.high,
        **{f"transfers_per_event_{e}": _mean(r, e, "transfers_per_event") for e in ERAS_004},
        "line_misses_per_cpu_per_event": _mean(r, "blamed", "line_misses_per_cpu_per_event"),
        "line_transfers_per_event": _mean(r, "blamed", "line_transfers_per_event"),
        "ceiling_per_event": float(ceiling(READ_RANGE.typical, cpus)[0]),
        "misses_ceiling_per_cpu_per_event": min(READ_RANGE.typical, cpus - 1.0),
        "poisson_per_event": float(poisson_estimate(READ_RANGE.typical, cpus)[0]),
        "extra_transfers_per_event": float(point["extra_transfers_per_event"].mean()),
        "point_regression_pct": float(point["regression_pct"].mean()),
        "regression_pct": reg.median, "regression_low_pct": reg.low,
        "regression_high_pct": reg.high, "regression_p_holds": reg.p_holds,
        "regression_driver": reg.driver,
        "regression_driver_st": float(reg.sobol_total[reg.driver]),
        "regression_ceiling_pct": r.priced["regression_ceiling"].median,
        "regression_ceiling_low_pct": r.priced["regression_ceiling"].low,
        "regression_ceiling_high_pct": r.priced["regression_ceiling"].high,
        "regression_ceiling_p_holds": r.priced["regression_ceiling"].p_holds,
        "fixed_gap_pct": fix.median, "fixed_gap_low_pct": fix.low,
        "fixed_gap_high_pct": fix.high, "fixed_gap_p_holds": fix.p_holds,
        "seeds": r.params.seeds, "c2c_cycles": r.params.cost.c2c_transfer,
        "profile": r.params.profile, "samples": r.params.samples,
    }


def counts(r: LayoutResults) -> list[dict]:
    """The exact counts behind the price, per swap-fail event (means over the seeds)."""
    s = summary(r)
    conf = f"mremap stream, {r.params.stream.cpus} CPUs, {READ_RANGE.typical:.1f} loads/event"
    rows = [count_row("04", "coherence transfers per swap-fail event", f"{e} layout, {conf}",
                      s[f"transfers_per_event_{e}"]) for e in ERAS_004]
    rows.append(count_row("04", "misses of the shared line per CPU per own swap-fail event",
                          f"blamed layout, {conf}", s["line_misses_per_cpu_per_event"],
                          f"ceiling min(r, w(N-1)) = {s['misses_ceiling_per_cpu_per_event']:.1f}"))
    return rows


def _q(frame: pd.DataFrame, quantity: str) -> float:
    return float(frame.set_index("quantity").loc[quantity, "value"])


def _break_even(res) -> str:
    return "; ".join(res.crossings().values()) or "none in prior range (others typical)"


def _priced_row(what: str, published: str, res, v: pd.Series) -> dict:
    cols = res.as_claim_columns()
    st = res.sobol_total.get(res.driver, np.nan)
    return claim_row(what, published, f"{res.describe('{:.3g}')}; P(claim holds) = "
                     f"{res.p_holds:.2f}; driver {cols['driver']}", str(v["verdict"]),
                     kind="priced", estimate=res.median, low=res.low, high=res.high, unit="%",
                     p_holds=res.p_holds, driver=res.driver,
                     driver_st=float(st) if np.isfinite(st) else None,
                     break_even=_break_even(res))


def claims(r: LayoutResults, verdict: pd.DataFrame, published: pd.DataFrame
           ) -> list[dict]:
    """Seed 000's layout claims and seed 004's, judged; ``published`` is seed 004's table."""
    s = summary(r)
    size, osize = s["stock_2025_04_sizeof"], s["objdump_sizeof"]
    ok = size == osize and s["unaligned_lookup_lines"] > 1 and s["aligned_lookup_lines"] == 1
    at = {d: f"...{placement_address(d, r) & 0xfff:03x}" for d in r.placements["definition"]}
    rows = [claim_row(
        "seed 000 (review, Vlastimil Babka): DEFINE_PER_CPU leaves the stock 32-byte aligned",
        f"objdump: memcg_stock {osize:#x} bytes at {at['DEFINE_PER_CPU']} "
        f"(\"{quote('percpu_aligned_32_only')}\"); at {at['DEFINE_PER_CPU_ALIGNED']} with "
        "_ALIGNED",
        f"layout {size} ({size:#x}) bytes; lookup touches {s['unaligned_lookup_lines']} lines at "
        f"phase {s['unaligned_phase_bytes']}, {s['aligned_lookup_lines']} aligned",
        "reproduced" if ok else "not reproduced")]
    n = s["max_slots_one_line"]
    rows.append(claim_row(
        "seed 000 (fix 4): NR_MEMCG_STOCK = 7 keeps the slots in one cache line",
        f'"{quote("nr_memcg_stock_one_line")}"',
        f"aligned, a lookup stays in one line for up to {n} slots",
        "confirmed: 7 is the most that fit" if n == 7 else f"not confirmed: {n} fit"))
    before, after = _q(published, "vmpressure_size_before"), _q(published,
                                                                 "vmpressure_size_after")
    sim = (s["vmpressure_sizeof_parent"], s["vmpressure_sizeof_blamed"])
    rows.append(claim_row(
        "seed 004: struct vmpressure shrank (CONFIG_MEMCG_V1=n)",
        f"{before:g} -> {after:g} bytes", f"{sim[0]} -> {sim[1]} bytes",
        "reproduced" if sim == (before, after) else "not reproduced"))
    lines = ", ".join(f"{e}: {'one line' if s[f'same_line_{e}'] else 'apart'}"
                      for e in ERAS_004)
    ok = not s["same_line_parent"] and s["same_line_blamed"] and not s["same_line_fixed"]
    rows.append(claim_row(
        "seed 004: the blamed commit put memory_events_local[8] and vmstats_percpu on one line",
        f'"{quote("blamed_same_line")}"', lines, "reproduced" if ok else "not reproduced"))
    v = verdict.set_index("quantity")
    reg = v.loc["regression"]
    rows.append(_priced_row(
        "seed 004: median mremap throughput regression",
        f"{reg['published_low_pct']:g}% (boot-to-boot spread up to {reg['noise_band_pct']:g}%)",
        r.priced["regression"], reg))
    fix = v.loc["fixed_gap"]
    rows.append(_priced_row(
        f"seed 004: the fix within {fix['published_high_pct']:g}% of the parent",
        f"within {fix['published_high_pct']:g}% (band [{fix['published_low_pct']:g}, "
        f"{fix['published_high_pct']:g}]%)", r.priced["fixed_gap"], fix))
    grow = s["memcg_sizeof_fixed"] - s["memcg_sizeof_blamed"]
    rows.append(claim_row(
        "seed 004: the fix does not grow struct mem_cgroup",
        f'"{quote("fix_keeps_memcg_size")}"',
        f"{s['memcg_sizeof_blamed']} -> {s['memcg_sizeof_fixed']} bytes from memory on "
        "(catalogue default config)",
        "reproduced" if grow <= 0 else f"not reproduced here: {grow:+d} bytes"))
    return rows


def conclusion(r: LayoutResults, verdict: pd.DataFrame) -> str:
    """The conclusion, built from this run's numbers (and the verdict table's)."""
    s = summary(r)
    v = verdict.set_index("quantity")
    reg, fix = v.loc["regression"], v.loc["fixed_gap"]
    res = r.priced["regression"]
    size = s["stock_2025_04_sizeof"]
    as_printed = "as" if size == s["objdump_sizeof"] else "unlike what"
    straddle = s["eras_straddling_unaligned"]
    lines = ("the changelog's line sharing (apart, one line, apart) is reproduced" if
             not s["same_line_parent"] and s["same_line_blamed"] and not s["same_line_fixed"]
             else "the layouts do not reproduce the changelog's line sharing")
    be = res.crossings()
    flips = ("; with the others typical, it reaches the published value only at "
             + ", ".join(be.values())
             if be else "; no single input inside its prior range brings it to the "
             "published value")
    far = [f"{k} = {x:.3g} {res.space[k].unit} (prior high {res.space[k].high:g})"
           for k, x in r.needed.items() if x is not None and x > res.space[k].high]
    if far:
        flips += "; it would take " + " or ".join(far)
    return " ".join([
        f"The 2025-04 stock is {size} bytes ({size:#x}), {as_printed} objdump printed; placed "
        f"{s['unaligned_phase_bytes']} bytes into a line as DEFINE_PER_CPU left it, its lookup "
        f"(lock, nr_pages[], cached[]) touches {s['unaligned_lookup_lines']} cache lines, and "
        f"{s['aligned_lookup_lines']} once DEFINE_PER_CPU_ALIGNED puts it on a boundary.",
        f"Aligned, a lookup fits one line for up to {s['max_slots_one_line']} slots; without "
        f"the alignment {straddle} of the {s['eras']} eras' lookups can straddle a line "
        "boundary.",
        f"In seed 004's layouts {lines}.",
        f"The stressor's statistics paths load vmstats_percpu {s['reads_typical']:.0f} times "
        f"per swap-fail event on every CPU (derived range {s['reads_low']:.1f}-"
        f"{s['reads_high']:.0f}); the blamed layout then costs "
        f"{s['transfers_per_event_blamed'] - s['transfers_per_event_parent']:.1f} extra "
        f"transfers per event ({s['line_misses_per_cpu_per_event']:.1f} misses per CPU per "
        f"own event, under the ceiling's {s['misses_ceiling_per_cpu_per_event']:.0f}).",
        f"Priced over the {r.params.profile} profile's priors, the regression is "
        f"{res.describe('{:.2g}')} against the published {reg['published_low_pct']:g}%: "
        f"{reg['verdict']} ({reg['reason']}); P(within the {reg['noise_band_pct']:g}% "
        f"spread) = {res.p_holds:.2f}; driver {res.as_claim_columns()['driver']}{flips}.",
        f"Even if every load of the shared line missed (the ceiling), it would be "
        f"{r.priced['regression_ceiling'].describe('{:.2g}')}, P(within the spread) = "
        f"{r.priced['regression_ceiling'].p_holds:.2f}.",
        f"The fixed layout's gap is {r.priced['fixed_gap'].describe('{:.2g}')}: "
        f"{fix['verdict']} against 'within {fix['published_high_pct']:g}%'.",
    ])
