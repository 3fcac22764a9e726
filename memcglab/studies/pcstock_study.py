"""Study 3: the RFC's page_counter stock against the multi-memcg stock.

Seed 003 ("[PATCH 0/8 RFC] mm/memcontrol, page_counter: move stock from mem_cgroup to
page_counter", Joshua Hahn, 2026) measured a fault/MADV_DONTNEED loop with 1, 4 and 32
cgroups on 40 CPUs, 30 trials of 50 iterations, and reports "negligible performance
differences". This study replays that loop (:func:`memcglab.workloads.madvise_fault`)
through the multi stock (``multi``, the "before") and the RFC's stock (``pcstock``, the
"after"), trial by trial, and tests equivalence (TOST) on the published table
(:func:`memcglab.stats.verdict_003`) and on memcglab's own per-trial times
(:func:`memcglab.stats.verdict_003_simulated`).

Then it goes beyond the RFC's test: the netperf receive mix of seed 000, where a
message is charged on the sender's CPU and uncharged on the reader's. The RFC's stock
keeps at most a batch of pages per CPU and counter and walks the hierarchy for any
excess, so pages freed on another CPU than the one that charged them come back to the
counters through walks; the multi stock keeps them in the freeing CPU's slot.

A simulated trial's time is the CPU time of its faults: each fault costs its
charge-path cycles (:mod:`memcglab.cost`) plus ``fault_cycles`` of work outside memcg.

>>> PcstockParams.from_notebook(quick=True).trials
5
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import seaborn as sns

from memcglab.cost import CostParams
from memcglab.engine import Engine
from memcglab.stats import verdict_003, verdict_003_simulated
from memcglab.studies import claim_row
from memcglab.studies import text as T
from memcglab.studies.figures import MODEL_PALETTE, new_figure
from memcglab.studies.measure import measure, metrics, totals_between
from memcglab.workloads import (
    MadviseFaultSpec,
    NetperfRxSpec,
    madvise_fault,
    netperf_rx,
    trial_bounds,
)

__all__ = ["BEFORE", "AFTER", "MADVISE", "NETPERF", "PcstockParams", "run", "run_madvise",
           "run_netperf", "samples", "verdict", "figure", "intervals", "figure_equivalence",
           "summary", "conclusion", "claims"]

#: the two arms: seed 003's "before" (the memcg stock) and "after" (the RFC)
BEFORE, AFTER = "multi", "pcstock"
MADVISE, NETPERF = "madvise_fault", "netperf_rx"


@dataclass(frozen=True)
class PcstockParams:
    """The problem size of study 3. Each default says where it comes from."""

    #: cgroups of the madvise loop: seed 003's 1, 4 and 32.
    cgroups: tuple[int, ...] = (1, 4, 32)
    #: seed 003's "30 trials of 50 iterations".
    trials: int = 30
    iterations: int = 50
    #: pages per iteration: MadviseFaultSpec's default (4 charge batches, 9 folio batches).
    region_pages: int = 256
    #: the rest of the loop: MadviseFaultSpec's defaults (40 CPUs, spread placement).
    madvise: MadviseFaultSpec = field(default_factory=MadviseFaultSpec)
    #: cycles per 4 KiB anonymous fault outside memcg: exception entry and exit,
    #: handle_mm_fault, page allocation, clear_page, rmap and LRU insertion, and its
    #: share of the MADV_DONTNEED zap and free; about 1 us at 2.5 GHz, a round figure
    #: for a recent x86-64 core (a notebook parameter, not a fit).
    fault_cycles: float = 2500.0
    cpu_hz: float = 2.5e9
    #: netperf client counts (one memcg each) and seeds, beyond the RFC's test.
    clients: tuple[int, ...] = (6, 18, 36)
    seeds: int = 5
    messages: int = 100_000
    #: TOST margin, in % of the "before" mean: verdict_003's default.
    margin_pct: float = 2.0
    cost: CostParams = field(default_factory=CostParams)

    def __post_init__(self) -> None:
        if self.trials < 2:
            raise ValueError(f"trials={self.trials}: the equivalence test needs at least 2")
        if self.seeds < 2:
            raise ValueError(f"seeds={self.seeds}: the equivalence test needs at least 2")
        if self.fault_cycles < 0:
            raise ValueError(f"fault_cycles={self.fault_cycles}: must be >= 0")
        if not 0 < self.margin_pct < 100:
            raise ValueError(f"margin_pct={self.margin_pct}: must be in (0, 100)")

    @classmethod
    def from_notebook(cls, quick: bool = False, fault_cycles: float = 2500.0,
                      margin_pct: float = 2.0, seeds: int = 5) -> PcstockParams:
        """From the notebook's parameters; ``quick`` shortens every run."""
        if quick:
            return cls(trials=5, iterations=5, region_pages=64, clients=(36,), seeds=3,
                       messages=10_000, fault_cycles=fault_cycles, margin_pct=margin_pct)
        return cls(fault_cycles=fault_cycles, margin_pct=margin_pct, seeds=seeds)

    def madvise_spec(self, cgroups: int) -> MadviseFaultSpec:
        """The madvise workload spec for ``cgroups`` cgroups."""
        base = {n: getattr(self.madvise, n) for n in self.madvise.__dataclass_fields__}
        return MadviseFaultSpec(**{**base, "cgroups": cgroups, "trials": self.trials,
                                   "iterations": self.iterations,
                                   "region_pages": self.region_pages})


def _trials(p: PcstockParams, cgroups: int, model: str) -> list[dict]:
    """Replay the loop trial by trial; one row of metrics per trial."""
    spec = p.madvise_spec(cgroups)
    trace, bounds = madvise_fault(spec), trial_bounds(spec)
    engine = Engine(trace.cpus, model=model, events=True)
    engine.feed(trace.ops[:bounds[0]])  # the cgroup lines
    before = engine.events().totals()
    rows = []
    for t in range(spec.trials):
        engine.feed(trace.ops[bounds[t]:bounds[t + 1]])
        events = engine.events()
        counted = totals_between(before, events)
        before = events.totals()
        m = metrics(counted, model, params=p.cost)
        cycles = (m["cycles_per_op"] + p.fault_cycles) * m["charges"]
        rows.append({"workload": MADVISE, "cgroups": cgroups, "sample": t, "model": model,
                     **m, "trial_ms": cycles / p.cpu_hz * 1e3})
    return rows


def run_madvise(p: PcstockParams) -> pd.DataFrame:
    """Seed 003's loop: one row per (cgroups, model, trial)."""
    return pd.DataFrame([r for c in p.cgroups for model in (BEFORE, AFTER)
                         for r in _trials(p, c, model)])


def run_netperf(p: PcstockParams) -> pd.DataFrame:
    """The netperf mix (72 CPUs, loopback): one row per (clients, model, seed)."""
    rows = []
    for clients in p.clients:
        for seed in range(p.seeds):
            trace = netperf_rx(NetperfRxSpec(clients=clients, messages=p.messages, seed=seed))
            rows += [{"workload": NETPERF, "cgroups": clients, "sample": seed, "model": model,
                      **measure(trace, model, seed=seed, params=p.cost)}
                     for model in (BEFORE, AFTER)]
    return pd.DataFrame(rows)


def run(p: PcstockParams) -> pd.DataFrame:
    """Both workloads in one tidy frame (``cgroups`` is the clients for netperf)."""
    return pd.concat([run_madvise(p), run_netperf(p)], ignore_index=True)


def samples(df: pd.DataFrame, workload: str, value: str) -> pd.DataFrame:
    """``verdict_003_simulated``'s input: cgroups, arm (the model), value, one row a sample."""
    sub = df[df["workload"] == workload]
    if sub.empty:
        raise ValueError(f"no {workload} rows; workloads present: {sorted(set(df['workload']))}")
    return pd.DataFrame({"cgroups": sub["cgroups"], "arm": sub["model"], "value": sub[value]})


def verdict(df: pd.DataFrame, p: PcstockParams) -> pd.DataFrame:
    """Welch and TOST per row: the published table, the simulated loop, the netperf mix.

    ``source`` says which; ``unit`` what the means are in (the columns keep
    ``verdict_003``'s ``_ms`` names).
    """
    parts = [
        ("published (seed 003)", "ms per trial", verdict_003(margin_pct=p.margin_pct)),
        (f"simulated {MADVISE}", "ms of CPU per trial", verdict_003_simulated(
            samples(df, MADVISE, "trial_ms"), p.margin_pct, before=BEFORE, after=AFTER)),
        (f"simulated {NETPERF}", "charge-path cycles per packet", verdict_003_simulated(
            samples(df, NETPERF, "cycles_per_op"), p.margin_pct, before=BEFORE, after=AFTER)),
    ]
    out = []
    for source, unit, v in parts:
        v.insert(0, "source", source)
        v.insert(1, "unit", unit)
        out.append(v)
    return pd.concat(out, ignore_index=True)


def figure(df: pd.DataFrame, p: PcstockParams):
    """Walks and charge-path cycles per operation, both models, both workloads."""
    fig, ax = new_figure(2, 2)
    units = {MADVISE: ("fault", "cgroups (madvise loop)"),
             NETPERF: ("packet", "netperf clients (memcgs)")}
    for i, workload in enumerate((MADVISE, NETPERF)):
        sub = df[df["workload"] == workload]
        op, xlabel = units[workload]
        for j, (col, what) in enumerate((("walks_per_op", "page_counter walks"),
                                         ("cycles_per_op", "charge-path cycles"))):
            sns.barplot(sub, x="cgroups", y=col, hue="model", palette=MODEL_PALETTE,
                        errorbar="sd", ax=ax[i, j], legend=i == j == 0)
            ax[i, j].set(xlabel=xlabel, ylabel=f"{what} per {op}",
                         title=f"{workload}: {what} per {op}")
    fig.suptitle("The RFC's page_counter stock (pcstock) vs the multi stock: the madvise "
                 "loop charges and frees on one CPU,\nthe netperf mix frees on the reader's "
                 "CPU (mean, sd over trials or seeds)", fontsize="medium")
    return fig


def intervals(v: pd.DataFrame) -> pd.DataFrame:
    """Each verdict row's difference in % of "before" with its TOST (1 - 2 alpha) interval.

    The interval's far end is ``min_equiv_margin_pct`` (the smallest margin TOST
    accepts), so its half-width is that less the absolute difference.
    """
    half = v["min_equiv_margin_pct"] - v["delta_pct"].abs()
    return pd.DataFrame({"label": v["source"] + ", " + v["cgroups"].astype(str) + " cgroups",
                         "delta_pct": v["delta_pct"], "low": v["delta_pct"] - half,
                         "high": v["delta_pct"] + half, "equivalent": v["equivalent"]})


def figure_equivalence(v: pd.DataFrame, p: PcstockParams):
    """Forest plot: pcstock's difference from multi, in %, against the TOST margin."""
    iv = intervals(v).iloc[::-1].reset_index(drop=True)
    fig, ax = new_figure(1, 1, width=8.0, height=0.45 * len(iv) + 1.5)
    ax.axvspan(-p.margin_pct, p.margin_pct, color="0.88",
               label=f"equivalence margin +-{p.margin_pct:g}%")
    for y, r in iv.iterrows():
        color = "#2ca02c" if r["equivalent"] else "#d62728"
        ax.errorbar(r["delta_pct"], y, xerr=[[r["delta_pct"] - r["low"]],
                                             [r["high"] - r["delta_pct"]]],
                    fmt="o", color=color, capsize=3)
    ax.axvline(0, color="k", lw=1)
    ax.set_yticks(iv.index, iv["label"], fontsize="small")
    ax.set_xscale("symlog", linthresh=max(2 * p.margin_pct, 1.0))
    ax.set_xlim(min(-2 * p.margin_pct, 1.5 * float(iv["low"].min())),
                max(2 * p.margin_pct, 1.5 * float(iv["high"].max())))
    ax.set(xlabel="pcstock - multi, % of multi (90% CI; symlog scale)",
           title="TOST: green = shown equivalent, red = not")
    ax.legend(loc="upper right", fontsize="small")
    return fig


def _mean(df: pd.DataFrame, workload: str, model: str, cgroups: int, col: str) -> float:
    sel = (df["workload"] == workload) & (df["model"] == model) & (df["cgroups"] == cgroups)
    return float(df.loc[sel, col].mean())


_SOURCES = {"published": "published", "madvise": f"simulated {MADVISE}",
            "netperf": f"simulated {NETPERF}"}


def _rows(v: pd.DataFrame, key: str) -> pd.DataFrame:
    return v[v["source"].str.startswith(_SOURCES[key])]


def summary(df: pd.DataFrame, v: pd.DataFrame, p: PcstockParams) -> dict:
    """Scalars for the sidecar: per-row differences and verdicts, and the rates."""
    out: dict = {"fault_cycles": p.fault_cycles, "margin_pct": p.margin_pct,
                 "trials": p.trials, "seeds": p.seeds}
    for key in _SOURCES:
        rows = _rows(v, key)
        for _, r in rows.iterrows():
            c = int(r["cgroups"])
            out[f"delta_pct_{key}_{c}"] = float(r["delta_pct"])
            out[f"equivalent_{key}_{c}"] = bool(r["equivalent"])
            out[f"welch_p_{key}_{c}"] = float(r["welch_p"])
        out[f"all_equivalent_{key}"] = bool(rows["equivalent"].all())
    for workload, key, top in ((MADVISE, "madvise", max(p.cgroups)),
                               (NETPERF, "netperf", max(p.clients))):
        out[f"{key}_max_cgroups"] = top
        for model in (BEFORE, AFTER):
            for col in ("walks_per_op", "hit_rate", "transfers_per_op", "cycles_per_op"):
                out[f"{col}_{model}_{key}"] = _mean(df, workload, model, top, col)
        out[f"{key}_cycles_change_pct"] = (out[f"cycles_per_op_{AFTER}_{key}"]
                                           / out[f"cycles_per_op_{BEFORE}_{key}"] - 1) * 100
    top = _rows(v, "netperf").iloc[-1]
    out["pcstock_loses_netperf"] = bool(top["delta_pct"] > 0 and top["welch_p"] < 0.05
                                        and not top["equivalent"])
    return out


def conclusion(df: pd.DataFrame, v: pd.DataFrame, p: PcstockParams) -> str:
    """The conclusion sentences, built from this run's numbers."""
    return T.pcstock_conclusion(summary(df, v, p), p.cgroups, p.clients, p.margin_pct)


def claims(df: pd.DataFrame, v: pd.DataFrame, p: PcstockParams) -> list[dict[str, str]]:
    """Seed 003's "negligible performance differences", and the same on the netperf mix."""
    pub, mad, net = (_rows(v, k) for k in ("published", "madvise", "netperf"))

    def deltas(rows: pd.DataFrame) -> str:
        return ", ".join(f"{d:+.2f}% at {c}" for d, c in zip(rows["delta_pct"],
                                                               rows["cgroups"], strict=True))

    off = [int(c) for c, e in zip(mad["cgroups"], mad["equivalent"], strict=True) if not e]
    tost = f"TOST +-{p.margin_pct:g}%"
    rows = [claim_row(
        "seed 003: page_counter stock vs memcg stock, negligible differences",
        f"{deltas(pub)} cgroups ({tost}: "
        f"{'equivalent in every row' if pub['equivalent'].all() else 'not all equivalent'})",
        f"{deltas(mad)} cgroups, CPU ms per trial over {p.trials} trials ({tost}: "
        f"{'equivalent in every row' if not off else 'not equivalent at ' + str(off)})",
        "reproduced" if not off else f"not reproduced at {off} cgroups")]
    top = net.iloc[-1]
    loses = bool(top["delta_pct"] > 0 and top["welch_p"] < 0.05 and not top["equivalent"])
    rows.append(claim_row(
        "seed 003 beyond the RFC: negligible when charges and uncharges are on other CPUs",
        "not measured (the RFC ran the madvise loop only)",
        f"{deltas(net)} clients, charge-path cycles per packet over {p.seeds} seeds "
        f"({tost}: {'equivalent' if top['equivalent'] else 'not equivalent'} at "
        f"{int(top['cgroups'])})",
        "not negligible: pcstock loses" if loses else
        ("negligible" if top["equivalent"] else "not shown negligible")))
    return rows
