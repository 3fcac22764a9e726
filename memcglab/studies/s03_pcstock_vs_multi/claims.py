"""Study 3's claim rows and its conclusion, built from this run's numbers.

The source is "mm/memcontrol, page_counter: move stock from mem_cgroup to page_counter"
(Joshua Hahn, RFC, April 2026):

* its "negligible performance differences", made a number as a change within the TOST
  margin and judged on every cgroup count at once (rule ``qualitative``);
* its table's measured differences at 1, 4 and 32 cgroups, each with its 90% Welch
  interval (rule ``measured``; the Welch p value beside it);
* beyond the RFC: the netperf mix has no measurement, so each row there is the lab's own
  prediction (rule ``prediction``): every scenario pooled (and whether its alternatives
  disagree), each release placement, and each scenario; and the charge path's cycles per
  packet, the first study's measure.

The Welch and TOST tests on the published table and on the simulated trials are tests,
not verdicts: they are in the study's text and tables, not among the claim rows.
"""

from __future__ import annotations

import pandas as pd

from memcglab.hardware import load_profile
from memcglab.stats import judge, option_intervals
from memcglab.studies import claim_row, interval_columns
from memcglab.studies.common.constraints import describe
from memcglab.studies.common.sources import RFC, name
from memcglab.studies.common.text import plural
from memcglab.studies.s03_pcstock_vs_multi.pricing import C2C, c2c_sweep
from memcglab.studies.s03_pcstock_vs_multi.study import (
    DEFAULT_SCENARIO,
    PcstockParams,
    judged,
    judged_deltas,
    madvise_key,
)
from memcglab.uncertainty import UncertainResult

__all__ = ["break_even_text", "claims", "conclusion", "prediction_word"]

_SOURCES = {"published": "published", "madvise": "simulated madvise_fault"}


def _rows(v: pd.DataFrame, key: str) -> pd.DataFrame:
    return v[v["source"].str.startswith(_SOURCES[key])]


def _deltas(rows: pd.DataFrame) -> str:
    return ", ".join(f"{d:+.2f}% at {plural(int(c), 'cgroup')}"
                     for d, c in zip(rows["delta_pct"], rows["cgroups"], strict=True))


def prediction_word(r: UncertainResult, margin_pct: float,
                    words: tuple[str, str] = ("loss", "gain")) -> str:
    """What a priced change predicts: :func:`memcglab.stats.judge`'s ``prediction`` phrase,
    with each alternative's own phrase where they disagree.

    >>> import numpy as np
    >>> from types import SimpleNamespace as N
    >>> prediction_word(N(low=-40.0, high=-3.0, sources={"parameters"}, coverage=0.9,
    ...                   space=None), 2.0)
    'loss beyond 2%'
    """
    alts = option_intervals(r) if getattr(r, "space", None) is not None else None
    return judge("prediction", interval=r, margin=margin_pct, words=words,
                 alternatives=alts).prediction


def _interval(r: UncertainResult, digits: int = 1) -> str:
    f = f"{{:+.{digits}f}}"
    return f"{f.format(r.median)}% [{f.format(r.low)}, {f.format(r.high)}]"


def break_even_text(r: UncertainResult) -> str:
    """The priors whose break-even lies in their range, then ``c2c_transfer``'s (which
    the first study held at 150), then how many others never cross."""
    crossing = {k: v for k, v in r.break_even.items() if v is not None}
    parts = [_be(r, k) for k in crossing]
    if C2C in r.break_even and C2C not in crossing:
        parts.append(_be(r, C2C))
    rest = len(r.break_even) - len(crossing) - (C2C in r.break_even and C2C not in crossing)
    if rest:
        parts.append(f"no other of the {rest} priors crosses in its range")
    return "; ".join(parts) if parts else "no priors vary"


def _prediction_row(claim: str, what: str, r: UncertainResult, margin: float,
                    words: tuple[str, str] = ("loss", "gain")) -> dict:
    alts = option_intervals(r)
    v = judge("prediction", interval=r, margin=margin, words=words, alternatives=alts)
    return claim_row(claim, name(RFC), "not measured (the RFC ran the madvise loop only)",
                     f"{_interval(r)} {what}", v, would_take=break_even_text(r),
                     **interval_columns(r, "%"))


def claims(v: pd.DataFrame, preds: dict[str, UncertainResult], p: PcstockParams,
           df: pd.DataFrame) -> list[dict]:
    """The claim rows (module doc), in report order."""
    pub = _rows(v, "published")
    cg = ", ".join(map(str, p.cgroups))
    rows = [claim_row(
        f"negligible performance differences at {cg} cgroups", name(RFC),
        "'shows negligible performance differences' (40 CPUs, 30 trials of 50 iterations): "
        f"{_deltas(pub)}",
        "; ".join(f"{_interval(preds[madvise_key(c)], 2)} at {plural(c, 'cgroup')}"
                  for c in p.cgroups) + " trial CPU time",
        judged(preds, p), measurement=f"within ±{p.margin_pct:g}% (the lab's margin)")]
    deltas = judged_deltas(preds, v, p, df)
    by = pub.set_index("cgroups")
    for c, verdict in deltas.items():
        r, row = preds[madvise_key(c)], by.loc[c]
        rows.append(claim_row(
            f"measured difference at {plural(c, 'cgroup')}", name(RFC),
            f"{row['delta_pct']:+.3g}% (Welch p = {row['welch_p']:.2g}, n = 30 per arm)",
            f"{_interval(r, 2)} trial CPU time, pcstock vs multi", verdict,
            measurement=f"{row['delta_pct']:+.2f}% ± {row['ci90_half_pct']:.2f} (90% Welch)",
            **interval_columns(r, "%")))
    top = max(p.clients)
    what = f"throughput per flow, netperf {top} clients"
    for key, r in preds.items():
        if key.startswith("netperf, "):
            rows.append(_prediction_row(
                f"beyond the RFC: pcstock vs multi, {key.removeprefix('netperf, ')}", what, r,
                p.margin_pct))
    for key, r in preds.items():
        if key.startswith("netperf cycles, "):
            rows.append(_prediction_row(
                f"beyond the RFC: charge-path cycles per packet, "
                f"{key.removeprefix('netperf cycles, ')}",
                f"charge-path cycles per packet at {top} clients", r, p.margin_pct,
                ("saving", "cost")))
    return rows


def _be(r: UncertainResult, name: str) -> str:
    v = r.break_even.get(name)
    p = r.space[name]
    return (f"{name} = {v:.3g} {p.unit}" if v is not None else
            f"none for {name} in [{p.low:g}, {p.high:g}] {p.unit}")


def _st(r: UncertainResult) -> str:
    st = float(r.sobol_total.get(r.driver, float("nan")))
    return f"{r.driver} (total Sobol index {st:.2f})" if st == st else r.driver


def conclusion(df: pd.DataFrame, v: pd.DataFrame, preds: dict[str, UncertainResult],
               s: dict, p: PcstockParams) -> str:
    """The conclusion sentences: counts, then prices with intervals, drivers, break-evens.

    ``s`` is :func:`~memcglab.studies.s03_pcstock_vs_multi.study.summary`'s dict.
    """
    top_c, top_n = max(p.cgroups), max(p.clients)
    mad_eq, pub_eq = bool(s["all_equivalent_madvise"]), bool(s["all_equivalent_published"])
    m = preds[madvise_key(top_c)]
    out = [
        f"On the RFC's madvise loop ({plural(top_c, 'cgroup')}), the page_counter stock walks "
        f"{1000 * s['walks_per_op_pcstock_madvise']:.1f} times per 1000 faults against "
        f"{1000 * s['walks_per_op_multi_madvise']:.1f} for the multi stock; simulated trial "
        f"times are {'equivalent in every row' if mad_eq else 'not equivalent in every row'} "
        f"within +-{p.margin_pct:g}% (TOST over the trials: seed noise only, a test and not "
        f"a verdict), {'as' if mad_eq == pub_eq else 'unlike'} the RFC's own table. Priced "
        f"over the cost priors, the fault's other work and the trials, the difference is "
        f"{_interval(m, 2)} (90%); on 'negligible' as a change within +-{p.margin_pct:g}% "
        f"at every cgroup count the model {s['judged_negligible']}."]
    deltas = [(c, s[f"judged_published_delta_{c}"]) for c in p.cgroups
              if f"judged_published_delta_{c}" in s]
    if deltas:
        pub = _rows(v, "published").set_index("cgroups")
        out.append("The table's own differences are real where Welch says so ("
                   + ", ".join(f"{pub.loc[c, 'delta_pct']:+.2f}% at {plural(c, 'cgroup')}, "
                               f"p = {pub.loc[c, 'welch_p']:.2g}" for c, _ in deltas)
                   + "); against them, widened by their 90% Welch intervals, the model "
                   + ", ".join(f"{w} at {plural(c, 'cgroup')}" for c, w in deltas)
                   + ": it prices the charge path's walks and stock hits, not whatever "
                   "else the RFC's kernels differ in.")
    net = df[(df["workload"] == "netperf_rx") & (df["cgroups"] == top_n)]

    def mean(scenario: str, model: str, col: str) -> float:
        g = net[(net["scenario"] == scenario) & (net["model"] == model)]
        return float(g[col].mean())

    parts = []
    for label in dict.fromkeys(net["scenario"]):
        parts.append(f"{label}: {mean(label, 'pcstock', 'walks_per_1000'):.0f} vs "
                     f"{mean(label, 'multi', 'walks_per_1000'):.0f} walks and "
                     f"{mean(label, 'pcstock', 'shared_per_msg'):.2f} vs "
                     f"{mean(label, 'multi', 'shared_per_msg'):.2f} shared-line transfers")
    out.append(f"On the netperf mix at {top_n} clients (release / placement / migrate; "
               "per 1000 charges and per message, pcstock vs multi): " + "; ".join(parts)
               + ". The charging CPU and the softirq CPU are one CPU in this mix (the "
               "charge is made in softirq), so those two placements are one scenario.")
    joint = preds["netperf, all scenarios"]
    rel = [(k.removeprefix("netperf, release="), r) for k, r in preds.items()
           if k.startswith("netperf, release=")]

    def word(r: UncertainResult) -> str:
        return prediction_word(r, p.margin_pct)

    other = joint.space["other_cycles"]
    out.append(f"Through the contention model, with {other.low:.0f}-{other.high:.0f} cycles "
               f"of work outside memcg per packet (set by {describe(other)}), pcstock's "
               "throughput per flow changes by "
               + "; ".join(f"{_interval(r)} when the {'reader' if w == 'task' else 'charging CPU'}"
                           f" releases ({word(r)})"
                           for w, r in rel)
               + f"; over every scenario {_interval(joint)}, driver {_st(joint)}.")
    key = f"netperf, {DEFAULT_SCENARIO}"
    if key in preds:
        d = preds[key]
        out.append(f"For the netperf mix as generated ({DEFAULT_SCENARIO}) the change is "
                   f"{_interval(d)}, driver {_st(d)}; break-even (a loss of "
                   f"{p.margin_pct:g}%): {_be(d, 'other_cycles')}; "
                   f"{_be(d, 'c2c_transfer')}.")
        case = dict(zip(("release", "placement", "migrate"),
                        ((x,) for x in DEFAULT_SCENARIO.split("/")), strict=True))
        sweep = c2c_sweep(net, load_profile(p.netperf_profile), case, range(p.seeds), top_n,
                          (0.0, 1000.0))
        swings = "; ".join(f"{t.input} {t.y_low:+.1f}% at {t.at_low} to {t.y_high:+.1f}% at "
                           f"{t.at_high} {t.unit}" for t in d.tornado.head(3).itertuples())
        out.append(f"At the other inputs' typical values the change is {sweep[0]:+.1f}% with "
                   f"free line transfers (c2c_transfer = 0) and {sweep[1]:+.1f}% at 1000 "
                   f"cycles; the largest one-at-a-time swings: {swings}.")
    by = [(k.removeprefix("netperf by clients, ").split(",")[0], r) for k, r in preds.items()
          if k.startswith("netperf by clients, ")]
    if by and key in preds:
        out.append(f"By client count ({DEFAULT_SCENARIO}): "
                   + "; ".join(f"{_interval(r)} at {n}" for n, r in by)
                   + f"; {_interval(preds[key])} at {top_n} clients.")
    cyc = {k.removeprefix("netperf cycles, "): r for k, r in preds.items()
           if k.startswith("netperf cycles, ")}
    if cyc:
        each = "; ".join(f"{_interval(r, 0)} at {k}, driven by {_st(r)}" for k, r in cyc.items())
        out.append(f"What changed: the first study's measure, charge-path cycles per packet, "
                   f"is {each}. In throughput per flow, which adds each packet's other work "
                   f"and the queue for the shared usage lines, the driver over every "
                   f"scenario is {_st(joint)}"
                   + (f" and within the mix as generated {_st(preds[key])}" if key in preds else "")
                   + (": the answer depends first on where pages are released, which the "
                      "first study held fixed." if joint.driver in ("release", "migrate",
                                                                    "placement") else "."))
    return " ".join(out)
