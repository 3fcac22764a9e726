"""Study 4's figures, sidecar scalars, claim rows and conclusion, from its results.

:mod:`memcglab.studies.layout_study` computes; this module only shows and judges.
Published numbers arrive here as arguments: the verdict table of
:func:`memcglab.stats.verdict_004` and seed 004's published table (for the vmpressure
sizes), both read by the notebook; the objdump placements come with the results
(:func:`memcglab.studies.layout_study.placements`). The thread's words are quoted from
the published table ``thread_quotes`` (:func:`memcglab.published.quote`).
"""

from __future__ import annotations

import matplotlib.patches as mpatches
import numpy as np
import pandas as pd
import seaborn as sns

from memcglab.layout.catalogue import struct_layout
from memcglab.layout.layout import CACHELINE
from memcglab.published import quote
from memcglab.studies import claim_row
from memcglab.studies.figures import new_figure
from memcglab.studies.layout_study import (
    LayoutResults,
    lookup_span,
    max_slots_in_one_line,
    placement_address,
)

__all__ = ["claims", "conclusion", "figure_seed004", "figure_slots", "figure_stock",
           "summary", "verdict_rows"]

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


def figure_seed004(r: LayoutResults, verdict: pd.DataFrame):
    """Transfers per swap-fail event per layout, and the what-if over stat loads."""
    fig, ax = new_figure(1, 2)
    sns.barplot(r.runs, x="era", y="transfers_per_event", errorbar="sd", ax=ax[0],
                color="#1f77b4")
    ax[0].set(xlabel="struct mem_cgroup layout",
              ylabel="coherence transfers per swap-fail event")
    s = r.sensitivity
    ax[1].plot(s["loads_per_event"], s["regression_pct"], marker="o",
               label="simulated (blamed vs parent)")
    pub = verdict.set_index("quantity").loc["regression"]
    lo, hi = pub["published_pct"] - pub["noise_band_pct"], pub["published_pct"] + pub[
        "noise_band_pct"]
    ax[1].axhspan(lo, hi, color="#d62728", alpha=0.15, label="published, +- boot noise")
    ax[1].set(xscale="log", xlabel="vmstats_percpu loads per swap-fail event (what-if)",
              ylabel="mremap throughput regression (%)")
    ax[1].legend(fontsize="small")
    fig.suptitle(f"Seed 004 on {r.params.stream.cpus} CPUs: false sharing adds transfers "
                 f"(left, sd over {r.params.seeds} seeds); priced at "
                 f"{r.params.cost.c2c_transfer:g} cycles each (right)", fontsize="medium")
    return fig


def verdict_rows(r: LayoutResults) -> tuple[np.ndarray, np.ndarray]:
    """The arguments of :func:`memcglab.stats.verdict_004`: regressions and fixed gaps."""
    return r.regressions["regression_pct"].to_numpy(), r.regressions["fixed_gap_pct"].to_numpy()


def _era(r: LayoutResults, era: str, col: str):
    return r.runs[r.runs["era"] == era][col].iloc[0]


def summary(r: LayoutResults) -> dict:
    """Scalars for the sidecar (:func:`memcglab.sweep.record_result`)."""
    p = r.placements.set_index("definition")
    reg = r.regressions
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
        **{f"same_line_{e}": bool(_era(r, e, "same_line")) for e in ("parent", "blamed",
                                                                      "fixed")},
        **{f"memcg_sizeof_{e}": int(_era(r, e, "sizeof")) for e in ("parent", "blamed",
                                                                     "fixed")},
        "vmpressure_sizeof_parent": struct_layout("vmpressure", "parent").size,
        "vmpressure_sizeof_blamed": struct_layout("vmpressure", "blamed").size,
        "extra_transfers_per_event": float(reg["extra_transfers_per_event"].mean()),
        "regression_pct": float(reg["regression_pct"].mean()),
        "regression_sd_pct": float(reg["regression_pct"].std(ddof=1)) if len(reg) > 1 else 0.0,
        "fixed_gap_pct": float(reg["fixed_gap_pct"].mean()),
        "what_if_max_loads": int(r.sensitivity["loads_per_event"].max()),
        "what_if_max_regression_pct": float(r.sensitivity["regression_pct"].max()),
        "seeds": r.params.seeds, "c2c_cycles": r.params.cost.c2c_transfer,
    }


def _q(frame: pd.DataFrame, quantity: str) -> float:
    return float(frame.set_index("quantity").loc[quantity, "value"])


def claims(r: LayoutResults, verdict: pd.DataFrame, published: pd.DataFrame
           ) -> list[dict[str, str]]:
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
                      for e in ("parent", "blamed", "fixed"))
    ok = not s["same_line_parent"] and s["same_line_blamed"] and not s["same_line_fixed"]
    rows.append(claim_row(
        "seed 004: the blamed commit put memory_events_local[8] and vmstats_percpu on one line",
        f'"{quote("blamed_same_line")}"', lines, "reproduced" if ok else "not reproduced"))
    for quantity, what in (("regression", "seed 004: median mremap throughput regression"),
                           ("fixed_gap", "seed 004: the fix within {:g}% of the parent")):
        v = verdict.set_index("quantity").loc[quantity]
        rows.append(claim_row(
            what.format(v["published_pct"]), f"{v['published_pct']:g}% (boot-to-boot spread up to "
                  f"{v['noise_band_pct']:g}%)",
            f"{v['simulated_mean_pct']:.3f}% (95% CI {v['ci_low']:.3f}-{v['ci_high']:.3f}, "
            f"{int(v['n'])} seeds)", str(v["verdict"])))
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
    v = verdict.set_index("quantity").loc["regression"]
    need = s["c2c_cycles"] * v["published_pct"] / s["regression_pct"] \
        if s["regression_pct"] > 0 else float("inf")
    within = abs(v["simulated_mean_pct"] - v["published_pct"]) <= v["noise_band_pct"]
    size = s["stock_2025_04_sizeof"]
    as_printed = "as" if size == s["objdump_sizeof"] else "unlike what"
    straddle = s["eras_straddling_unaligned"]
    lines = ("the changelog's line sharing (apart, one line, apart) is reproduced" if
             not s["same_line_parent"] and s["same_line_blamed"] and not s["same_line_fixed"]
             else "the layouts do not reproduce the changelog's line sharing")
    out = [
        f"The 2025-04 stock is {size} bytes ({size:#x}), {as_printed} objdump printed; placed "
        f"{s['unaligned_phase_bytes']} bytes into a line as DEFINE_PER_CPU left it, its lookup "
        f"(lock, nr_pages[], cached[]) touches {s['unaligned_lookup_lines']} cache lines, and "
        f"{s['aligned_lookup_lines']} once DEFINE_PER_CPU_ALIGNED puts it on a boundary.",
        f"Aligned, a lookup fits one line for up to {s['max_slots_one_line']} slots; without "
        f"the alignment {straddle} of the {s['eras']} eras' lookups can straddle a line "
        "boundary.",
        f"In seed 004's layouts {lines}.",
        f"In seed 004's stream the blamed layout adds {s['extra_transfers_per_event']:.2f} "
        f"coherence transfers per swap-fail event; at {s['c2c_cycles']:g} cycles each that is a "
        f"{s['regression_pct']:.3f}% regression (sd {s['regression_sd_pct']:.2g} points over "
        f"{s['seeds']} seeds), {'within' if within else 'far outside'} the published "
        f"{v['published_pct']:g}% +- {v['noise_band_pct']:g}%, and the fixed layout's gap is "
        f"{s['fixed_gap_pct']:.3f}%.",
    ]
    if not within:
        out.append(
            f"To explain the published number with these transfers alone, each would have to "
            f"cost about {need:,.0f} cycles; even {s['what_if_max_loads']} vmstats_percpu loads "
            f"per event give only {s['what_if_max_regression_pct']:.2f}%, since a CPU misses "
            "at most once per remote write.")
    return " ".join(out)
