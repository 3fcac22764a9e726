"""Study 3's claim rows and its conclusion, built from this run's numbers.

* seed 003's "negligible performance differences", tested as before (TOST on the
  published table and on the simulated trials; a structural row), and priced: the
  simulated difference's 90% interval judged by :func:`memcglab.stats.judge` as a
  ``value`` claim with the +-margin equivalence band, one row per cgroup count;
* beyond the RFC: the netperf mix has no published number, so each row there is the
  lab's own priced prediction (interval, driver, break-even), not a verdict:
  all scenarios drawn jointly, each release placement, and each scenario.
"""

from __future__ import annotations

import pandas as pd

from memcglab.hardware import load_profile
from memcglab.studies import claim_row
from memcglab.studies.s03_pcstock_vs_multi.pricing import C2C, c2c_sweep
from memcglab.studies.s03_pcstock_vs_multi.study import (
    DEFAULT_SCENARIO,
    PcstockParams,
    judged,
)
from memcglab.uncertainty import UncertainResult

__all__ = ["break_even_text", "claims", "conclusion", "prediction_word"]

_SOURCES = {"published": "published", "madvise": "simulated madvise_fault"}


def _rows(v: pd.DataFrame, key: str) -> pd.DataFrame:
    return v[v["source"].str.startswith(_SOURCES[key])]


def _deltas(rows: pd.DataFrame) -> str:
    return ", ".join(f"{d:+.2f}% at {c}" for d, c in zip(rows["delta_pct"], rows["cgroups"],
                                                        strict=True))


def prediction_word(r: UncertainResult, margin_pct: float) -> str:
    """What a priced throughput change predicts, from its 90% interval and the band.

    >>> from types import SimpleNamespace as N
    >>> prediction_word(N(low=-40.0, high=-3.0), 2.0)
    'prediction: pcstock loses more than 2%'
    >>> prediction_word(N(low=-0.5, high=0.1), 2.0)
    'prediction: negligible (within +-2%)'
    """
    if r.high < -margin_pct:
        return f"prediction: pcstock loses more than {margin_pct:g}%"
    if r.low > margin_pct:
        return f"prediction: pcstock gains more than {margin_pct:g}%"
    if -margin_pct <= r.low and r.high <= margin_pct:
        return f"prediction: negligible (within +-{margin_pct:g}%)"
    return f"prediction: undecided (the interval crosses -{margin_pct:g}% or +{margin_pct:g}%)"


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


def _priced(r: UncertainResult) -> dict:
    st = float(r.sobol_total.get(r.driver, float("nan")))
    return {"kind": "priced", "estimate": r.median, "low": r.low, "high": r.high,
            "unit": "%", "p_holds": r.p_holds, "driver": r.driver,
            "driver_st": st if st == st else None, "break_even": break_even_text(r)}


def claims(v: pd.DataFrame, preds: dict[str, UncertainResult],
           p: PcstockParams) -> list[dict]:
    """The claim rows (module doc), in report order."""
    pub, mad = _rows(v, "published"), _rows(v, "madvise")
    off = [int(c) for c, e in zip(mad["cgroups"], mad["equivalent"], strict=True) if not e]
    tost = f"TOST +-{p.margin_pct:g}%"
    rows = [claim_row(
        "seed 003: page_counter stock vs memcg stock, negligible differences",
        f"{_deltas(pub)} cgroups ({tost}: "
        f"{'equivalent in every row' if pub['equivalent'].all() else 'not all equivalent'})",
        f"{_deltas(mad)} cgroups, CPU ms per trial over {p.trials} trials ({tost}: "
        f"{'equivalent in every row' if not off else 'not equivalent at ' + str(off)})",
        ("equivalent" if not off else f"not equivalent at {off} cgroups")
        + " in simulation (TOST over trials at typical costs: seed noise only, so no rules "
        "verdict; the priced rows below carry one)", kind="count-derived")]
    band = f"+-{p.margin_pct:g}%"
    for c, verdict in judged(preds, p).items():
        r = preds[f"madvise, {c} cgroups"]
        d = pub[pub["cgroups"] == c]["delta_pct"]
        shown = f"{float(d.iloc[0]):+.2f}% at {c} cgroups; " if len(d) else ""
        rows.append(claim_row(
            f"seed 003: negligible differences (within {band}), priced, {c} cgroups",
            f"{shown}'negligible performance differences' (band {band})",
            f"{_interval(r, 2)} CPU time per trial (90% over the 40-CPU profile's cost "
            f"priors, 1500-6000 cycles of fault work and {p.trials} trials)",
            verdict.word, **_priced(r)))
    top = max(p.clients)
    beyond = "not measured (the RFC ran the madvise loop only): the lab's own prediction"
    what = (f"throughput per flow, netperf {top} clients (contention model, "
            "other_cycles_per_packet 3000-80000)")
    for key, r in preds.items():
        if not key.startswith("netperf, "):
            continue
        scope = key.removeprefix("netperf, ")
        rows.append(claim_row(
            f"seed 003 beyond the RFC: pcstock vs multi, {scope}",
            beyond, f"{_interval(r)} {what}", prediction_word(r, p.margin_pct), **_priced(r)))
    for key, r in preds.items():
        if key.startswith("netperf cycles, "):
            rows.append(claim_row(
                f"seed 003 beyond the RFC: charge-path cycles per packet, "
                f"{key.removeprefix('netperf cycles, ')} (the first study's measure)",
                beyond, f"{_interval(r, 0)} charge-path cycles per packet at {top} clients, "
                "line transfers at c2c_transfer",
                "a priced cost, not a throughput prediction", **_priced(r)))
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
    m = preds[f"madvise, {top_c} cgroups"]
    out = [
        f"On seed 003's madvise loop ({top_c} cgroups), the page_counter stock walks "
        f"{1000 * s['walks_per_op_pcstock_madvise']:.1f} times per 1000 faults against "
        f"{1000 * s['walks_per_op_multi_madvise']:.1f} for the multi stock; trial times "
        f"are {'equivalent in every row' if mad_eq else 'not equivalent in every row'} "
        f"within +-{p.margin_pct:g}% (TOST), "
        f"{'as' if mad_eq == pub_eq else 'unlike'} seed 003's own table. Priced over the "
        f"cost priors, the fault's other work and the trials, the difference is "
        f"{_interval(m, 2)} (90%): {s[f'judged_madvise_{top_c}']} against the "
        f"+-{p.margin_pct:g}% band."]
    deltas = [(c, s[f"judged_published_delta_{c}"]) for c in p.cgroups
              if f"judged_published_delta_{c}" in s]
    if deltas:
        out.append("Against the table's own differences, the priced intervals give: "
                   + ", ".join(f"{w} at {c} cgroups" for c, w in deltas)
                   + " (judged as difference claims; the intervals carry the hardware "
                   "priors and the trials, not a real machine's run-to-run noise).")
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
        return prediction_word(r, p.margin_pct).removeprefix("prediction: ")

    out.append("Through the contention model, with 3000-80000 cycles of work outside "
               "memcg per packet, pcstock's throughput per flow changes by "
               + "; ".join(f"{_interval(r)} when the {'reader' if w == 'task' else 'charging CPU'}"
                           f" releases ({word(r)})"
                           for w, r in rel)
               + f"; over every scenario {_interval(joint)}, driver {_st(joint)}.")
    key = f"netperf, {DEFAULT_SCENARIO}"
    if key in preds:
        d = preds[key]
        out.append(f"For seed 000's mix as generated ({DEFAULT_SCENARIO}) the change is "
                   f"{_interval(d)}, driver {_st(d)}; break-even (a loss of "
                   f"{p.margin_pct:g}%): {_be(d, 'other_cycles')}; "
                   f"{_be(d, 'c2c_transfer')}; {_be(d, 'contended_rmw_per_sharer')}.")
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
                   + (f" and within seed 000's mix {_st(preds[key])}" if key in preds else "")
                   + (": the answer depends first on where pages are released, which the "
                      "first study held fixed." if joint.driver in ("release", "migrate",
                                                                    "placement") else "."))
    return " ".join(out)
