"""Study 4's figures, sidecar scalars, count and claim rows and conclusion, from its results.

:mod:`memcglab.studies.s04_layout_false_sharing.study` computes; this module only shows and judges.
Published numbers arrive here as arguments or through the judges: the verdict table of
:func:`verdict` (:func:`memcglab.stats.judge` on the regression, widened by its published
boot-to-boot spread, and on the fixed layout's gap) and the false-sharing fix's published
table (for the vmpressure sizes), read by the notebook; the objdump placements come with
the results
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
from memcglab.published import load, quote
from memcglab.stats import Measurement, judge, load_rules, option_intervals
from memcglab.studies import claim_row, count_row, interval_columns
from memcglab.studies.common.figures import new_figure
from memcglab.studies.common.sources import FALSE_SHARING, MULTI, name
from memcglab.studies.common.text import plural
from memcglab.studies.s04_layout_false_sharing.pricing import ceiling, poisson_estimate
from memcglab.studies.s04_layout_false_sharing.study import (
    ERAS_004,
    LayoutResults,
    lookup_span,
    max_slots_in_one_line,
    placement_address,
    seed004_claim,
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
    fig.suptitle(f"vmstats/events false sharing on {cpus} CPUs: the blamed layout's extra "
                 "transfers (left) and the shared line's transfers against the read rate (right)",
                 fontsize="medium")
    t = r.runs.groupby("era")["transfers_per_event"].mean()
    at = b[np.isclose(b["reads_per_event"], READ_RANGE.typical)]
    sim = float(at["line_transfers_per_event"].mean())
    text = (f"Left: coherence transfers per swap-fail event of each struct mem_cgroup layout "
            f"at the derived {READ_RANGE.typical:.0f} loads per event (bars: mean, whiskers: "
            f"sd over {plural(r.params.seeds, 'random seed')}); blamed {t['blamed']:.1f}, "
            f"parent {t['parent']:.1f}, fixed {t['fixed']:.1f}. Right: transfers of the line "
            "holding vmstats_percpu in the blamed layout (band: range over "
            f"{plural(r.params.sweep_seeds, 'random seed')}) against the read rate, with the "
            "ceiling (a CPU misses at most once per remote write and once per own read) and "
            "the estimate for independent Poisson reads and writes; the green band is the "
            "derived range. "
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


def _judged(r: LayoutResults) -> dict:
    """The regression and the fixed layout's gap, judged (rule ``measured``)."""
    pub, spread, gap = seed004_claim()
    reg, fix = r.priced["regression"], r.priced["fixed_gap"]
    return {
        "regression": judge("measured", measured=Measurement.point(pub, spread, "%"),
                            interval=reg, difference=True,
                            alternatives=option_intervals(reg), would_take=r.needed),
        "fixed_gap": judge(
            "measured", measured=Measurement(-gap, gap, 0.0, "%"), interval=fix,
            degenerate=("the fixed and the parent layouts put the two fields on separate "
                        "lines and have the same counts, so the model's gap is 0 by "
                        "construction") if r.fixed_identical else None)}


def verdict(r: LayoutResults) -> pd.DataFrame:
    """The regression and the fix, judged: one row each, with the measurement as judged
    (the regression widened by the published boot-to-boot spread)."""
    pub, spread, gap = seed004_claim()
    rows = []
    for name_, v in _judged(r).items():
        res = r.priced[name_]
        low, high = (pub, pub) if name_ == "regression" else (-gap, gap)
        rows.append({"quantity": name_, "median_pct": res.median, "low_pct": res.low,
                     "high_pct": res.high, "p_holds": v.p_holds, "p_text": v.p_text,
                     "driver": res.driver, "published_low_pct": low, "published_high_pct": high,
                     "noise_band_pct": spread if name_ == "regression" else 0.0,
                     "verdict": v.word, "reason": v.reason, "would_take": v.would_take,
                     "rules_sha256": v.rules_sha256})
    return pd.DataFrame(rows)


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
        **{f"needed_{t.name}": t.value for t in r.needed if t.value is not None},
        "line_utilisation_median": float(np.median(r.utilisation)),
        "line_saturated_share": float((r.utilisation >= 1.0).mean()),
        "fixed_identical_to_parent": bool(r.fixed_identical),
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


def _exact(claim: str, source: str, published: str, simulated: str, computed, value,
           comparable: bool = True, config: str = "") -> dict:
    kw = {"comparable": False, "config": config} if not comparable else {}
    return claim_row(claim, name(source), published, simulated,
                     judge("exact", computed=computed, published=value, **kw))


def claims(r: LayoutResults, verdict: pd.DataFrame, published: pd.DataFrame
           ) -> list[dict]:
    """The layout claims of the multi-memcg stock's review and of the false-sharing fix,
    every verdict from :func:`memcglab.stats.judge`; ``published`` is the fix's table."""
    s = summary(r)
    size, osize = s["stock_2025_04_sizeof"], s["objdump_sizeof"]
    at = {d: f"...{placement_address(d, r) & 0xfff:03x}" for d in r.placements["definition"]}
    rows = [_exact(
        "DEFINE_PER_CPU leaves the stock 32-byte aligned; sizeof(memcg_stock) is 0x88", MULTI,
        f"objdump (Vlastimil Babka): memcg_stock {osize:#x} bytes at {at['DEFINE_PER_CPU']} "
        f"(\"{quote('percpu_aligned_32_only')}\"); at {at['DEFINE_PER_CPU_ALIGNED']} with "
        "_ALIGNED",
        f"layout {size} ({size:#x}) bytes; at that phase a lookup touches "
        f"{s['unaligned_lookup_lines']} lines, {s['aligned_lookup_lines']} aligned",
        size, osize)]
    n = s["max_slots_one_line"]
    rows.append(_exact(
        "NR_MEMCG_STOCK = 7 keeps the cached memcgs and nr_pages in one cache line", MULTI,
        f'fix 4: "{quote("nr_memcg_stock_one_line")}" (NR_MEMCG_STOCK 7)',
        f"aligned, a lookup stays in one line for up to {n} slots", n, 7))
    before, after = _q(published, "vmpressure_size_before"), _q(published,
                                                                 "vmpressure_size_after")
    sim = (s["vmpressure_sizeof_parent"], s["vmpressure_sizeof_blamed"])
    rows.append(_exact(
        "struct vmpressure shrank (CONFIG_MEMCG_V1=n)", FALSE_SHARING,
        f"{before:g} -> {after:g} bytes", f"{sim[0]} -> {sim[1]} bytes", sim,
        (int(before), int(after))))
    lines = tuple("one line" if s[f"same_line_{e}"] else "apart" for e in ERAS_004)
    rows.append(_exact(
        "the blamed commit put memory_events_local[8] and vmstats_percpu on one line",
        FALSE_SHARING, f'"{quote("blamed_same_line")}" (parent apart, fix apart again)',
        ", ".join(f"{e}: {w}" for e, w in zip(ERAS_004, lines, strict=True)), lines,
        ("apart", "one line", "apart")))
    judged = _judged(r)
    reg, fix = r.priced["regression"], r.priced["fixed_gap"]
    pub, spread, gap = seed004_claim()
    u = r.utilisation
    rows.append(claim_row(
        "median mremap throughput regression of the blamed commit", name(FALSE_SHARING),
        f"{pub:g}% (boot-to-boot spread up to {spread:g}%)",
        f"{reg.describe('{:.3g}')} through the shared line's queue; its offered load at the "
        f"parent's rate is {np.median(u):.2f} (median; at least 1 in {(u >= 1).mean():.0%} "
        "of draws)", judged["regression"],
        measurement=Measurement.point(pub, spread, "%").text(load_rules()),
        **interval_columns(reg, "%")))
    rows.append(claim_row(
        f"the fix within {gap:g}% of the parent", name(FALSE_SHARING),
        f'"{_claimed("fix_within_noise")}"',
        f"{fix.describe('{:.3g}')}", judged["fixed_gap"],
        measurement=f"within ±{gap:g}%", **interval_columns(fix, "%")))
    grow = s["memcg_sizeof_fixed"] - s["memcg_sizeof_blamed"]
    rows.append(_exact(
        "the fix does not grow struct mem_cgroup (in the tested configuration)", FALSE_SHARING,
        f'"{quote("fix_keeps_memcg_size")}"',
        f"{s['memcg_sizeof_blamed']} -> {s['memcg_sizeof_fixed']} bytes from memory on "
        f"({grow:+d}) in the catalogue's default configuration", grow, 0, comparable=False,
        config="the tested configuration is not stated; the catalogue's default "
               "(CONFIG_ZSWAP=y) and the pre-fix tree's inferred high_irq_work member give "
               f"{grow:+d} bytes"))
    return rows


def _claimed(claim_id: str) -> str:
    return str(load("claims").frame.set_index("claim_id").loc[claim_id, "quote"])


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
    takes = "; ".join(t.text() for t in r.needed)
    u = r.utilisation
    return " ".join([
        f"The 2025-04 stock is {size} bytes ({size:#x}), {as_printed} objdump printed; placed "
        f"{s['unaligned_phase_bytes']} bytes into a line as DEFINE_PER_CPU left it, its lookup "
        f"(lock, nr_pages[], cached[]) touches {s['unaligned_lookup_lines']} cache lines, and "
        f"{s['aligned_lookup_lines']} once DEFINE_PER_CPU_ALIGNED puts it on a boundary.",
        f"Aligned, a lookup fits one line for up to {s['max_slots_one_line']} slots; without "
        f"the alignment {straddle} of the {s['eras']} eras' lookups can straddle a line "
        "boundary.",
        f"In the false-sharing fix's three layouts {lines}.",
        f"The stressor's statistics paths load vmstats_percpu {s['reads_typical']:.0f} times "
        f"per swap-fail event on every CPU (derived range {s['reads_low']:.1f}-"
        f"{s['reads_high']:.0f}); the blamed layout then costs "
        f"{s['transfers_per_event_blamed'] - s['transfers_per_event_parent']:.1f} extra "
        f"transfers per event ({s['line_misses_per_cpu_per_event']:.1f} misses per CPU per "
        f"own event, under the ceiling's {s['misses_ceiling_per_cpu_per_event']:.0f}).",
        f"Priced through the shared line's queue (each CPU's stressor a closed loop of its "
        f"own work and the line) over the {r.params.profile} profile's priors, the "
        f"regression is {res.describe('{:.2g}')}; against the published "
        f"{reg['published_low_pct']:g}% with its {reg['noise_band_pct']:g}% boot-to-boot "
        f"spread the model {reg['verdict']} ({reg['reason']}); P(inside) = {reg['p_text']}; "
        f"driver {res.as_claim_columns()['driver']}. The line's offered load at the "
        f"parent's rate is {np.median(u):.2f} (median), at least 1 in {(u >= 1).mean():.0%} "
        f"of draws. What it would take to reach {reg['published_low_pct']:g}%: {takes}.",
        f"Even if every load of the shared line missed (the ceiling), it would be "
        f"{r.priced['regression_ceiling'].describe('{:.2g}')}.",
        f"The fixed layout's gap is {r.priced['fixed_gap'].describe('{:.2g}')}: "
        f"{fix['verdict']} ({fix['reason']}).",
    ])
