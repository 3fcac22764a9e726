"""Study 5's figures, sidecar scalars, claim rows and conclusion, from its results.

:mod:`memcglab.studies.s05_history.study` computes; this module only shows. Every word
of the conclusion and every verdict that depends on a result is chosen here from
the numbers in :class:`~memcglab.studies.s05_history.study.HistoryResults`.

The claims are the multi-memcg thread's words, quoted from the published table
``thread_quotes`` (:func:`memcglab.published.quote`): Hugh Dickins' fix 3 (29 Apr 2025),
Jakub Kicinski's review and Shakeel Butt's answer (23 Apr 2025).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from memcglab.published import load, quote
from memcglab.stats import judge
from memcglab.studies import claim_row, count_row
from memcglab.studies.common.figures import MODEL_PALETTE, new_figure
from memcglab.studies.common.sources import MULTI, name
from memcglab.studies.s05_history.study import BATCH_DEMO, FIX2_DEMO, HistoryResults
from memcglab.trace import OP_CHARGE, OP_UNCHARGE, parse_text

__all__ = ["EXTRA_WALKS_NOTABLE_PCT", "claims", "conclusion", "counts", "figure_batch",
           "figure_leak", "summary"]

#: Extra walks per message (single over multi with one slot) above which the old full
#: drain counts as "problematic": the smallest throughput change the multi-memcg thread's authors
#: discuss, the low end of random's published advantage over LRU (claims.csv).
EXTRA_WALKS_NOTABLE_PCT = float(load("claims").frame.set_index("claim_id").loc[
    "lru_vs_random", "low"])
SINGLE, MULTI1, MULTI7 = "single (v6.15)", "multi, 1 slot", "multi, 7 slots"
_CONFIG_PALETTE = {SINGLE: MODEL_PALETTE["single"], MULTI1: "#9ecae1",
                   MULTI7: MODEL_PALETTE["multi"]}


def figure_leak(r: HistoryResults):
    """Leaked pages and failed charges over the limited netperf replay, per model."""
    fig, ax = new_figure(1, 2)
    palette = {m: MODEL_PALETTE[m] for m in r.growth["model"].unique()}
    for a, col, label in ((ax[0], "leaked", "leaked pages (4 KiB each)"),
                          (ax[1], "failed_charges", "failed charges (count)")):
        sns.lineplot(r.growth, x="ops", y=col, hue="model", palette=palette, ax=a)
        a.set(xlabel="operations replayed (count)", ylabel=label)
        first = r.first_failure.get("multi-fix2")
        if first:
            a.axvline(first, color="k", ls=":", lw=1, label="first failed charge")
        a.legend(fontsize="small")
    fig.suptitle(f"Fix 2 (multi-fix2) leaks the pages it refills into new slots until charges "
                 f"fail at memory.max,\neach after a memcg OOM invocation "
                 f"({r.leak_trace.cpus} CPUs); fix 3 (multi) leaks nothing", fontsize="medium")
    return fig


def figure_batch(r: HistoryResults):
    """Walks per message, and the share of refills above the batch, vs bulk flows."""
    fig, ax = new_figure(1, 2)
    df = r.mix.assign(bulk_pct=r.mix["large_share"] * 100)
    sns.lineplot(df, x="bulk_pct", y="walks_per_message", hue="config", style="config",
                 markers=True, palette=_CONFIG_PALETTE, ax=ax[0])
    ax[0].set(xlabel="flows sending large messages (%)",
              ylabel="page_counter walks per message")
    merged = df[df["config"] == MULTI7]
    for col, label in (("refills_over_batch_share", "refill_stock calls above the batch"),
                       ("pages_share_over_batch", "released pages in those calls")):
        ax[1].plot(merged["bulk_pct"], merged[col] * 100, marker="o", label=label)
    ax[1].set(xlabel="flows sending large messages (%)", ylabel="share (%)")
    ax[1].legend(fontsize="small")
    fig.suptitle("Releases above MEMCG_CHARGE_BATCH: v6.15 drains the whole stock, v6.16 "
                 "uncharges them directly (share: multi, 7 slots)", fontsize="medium")
    return fig


def _extra_walks(mix: pd.DataFrame) -> pd.Series:
    """Single's walks per message over multi with one slot's, in %, per bulk share."""
    w = mix.pivot_table(index="large_share", columns="config", values="walks_per_message")
    return (w[SINGLE] / w[MULTI1] - 1) * 100


def _release_op() -> int:
    """The 1-based number of BATCH_DEMO's release above the batch."""
    ops = parse_text(BATCH_DEMO).ops
    return 1 + int(np.flatnonzero(ops["op"] == OP_UNCHARGE)[0])


def summary(r: HistoryResults) -> dict:
    """Scalars for the sidecar (:func:`memcglab.sweep.record_result`)."""
    end = r.growth.groupby("model").tail(1).set_index("model")
    extra = _extra_walks(r.mix)
    at = float(extra.idxmax())
    log = r.batch_log.set_index(["model", "op_number"])
    dv, tv = r.demo_violation or {}, r.trace_violation or {}
    row = r.mix[(r.mix["large_share"] == at) & (r.mix["config"] == MULTI7)].iloc[0]
    return {
        "demo_violation_op": dv.get("op_number"), "demo_violation_operation": dv.get("operation"),
        "demo_violation_message": dv.get("message"),
        "trace_violation_op": tv.get("op_number"),
        "trace_violation_operation": tv.get("operation"),
        "fix3_passes_check": r.fix3_passes, "leak_ops": len(r.leak_trace.ops),
        "leak_charges": int((r.leak_trace.ops["op"] == OP_CHARGE).sum()),
        "fix2_first_failed_op": r.first_failure.get("multi-fix2"),
        "fix2_failed_charges": int(end.loc["multi-fix2", "failed_charges"]),
        "fix2_oom_events": int(end.loc["multi-fix2", "oom_events"]),
        "fix2_leaked_pages": int(end.loc["multi-fix2", "leaked"]),
        "fix3_failed_charges": int(end.loc["multi", "failed_charges"]),
        "fix3_leaked_pages": int(end.loc["multi", "leaked"]),
        "batch_demo_stocked_single": int(log.loc[("single", _release_op()), "stocked"]),
        "batch_demo_stocked_multi": int(log.loc[("multi", _release_op()), "stocked"]),
        "max_extra_walks_pct": float(extra.max()), "max_extra_walks_share": at,
        "extra_walks_pct_no_bulk": float(extra.iloc[0]),
        "refills_over_batch_share": float(row["refills_over_batch_share"]),
        "pages_share_over_batch": float(row["pages_share_over_batch"]),
        "walks_per_message_multi7": float(row["walks_per_message"]),
    }


def _checked(violation: dict | None, n_ops: int) -> tuple[int, str]:
    """Operations replayed before the check stopped, and where it stopped."""
    if violation is None:
        return n_ops, f"never stops: all {n_ops} operations pass"
    at = violation["op_number"]
    return at - 1, f"stops at operation {at} of {n_ops} ({violation['operation']})"


def _leak_rows(r: HistoryResults) -> list[dict]:
    """The fix-2 rows: where the check stops, the leak and the failed charges."""
    demo, lk = parse_text(FIX2_DEMO), r.params.leak
    on_demo = f"FIX2_DEMO, {demo.cpus} CPUs, one memcg"
    on_trace = (f"netperf_rx {lk.cpus} CPUs, {lk.clients} clients, {lk.messages} messages, "
                f"seed {lk.seed}, memory.max {r.params.tenant_max_pages} pages per tenant")
    quantity = "operations replayed before the invariant check stops (count)"
    rows = []
    for model, vd, vt in (("multi-fix2", r.demo_violation, r.trace_violation),
                          ("multi", r.fix3_demo_violation, r.fix3_trace_violation)):
        for where, v, n in ((on_demo, vd, len(demo.ops)), (on_trace, vt, len(r.leak_trace.ops))):
            rows.append(count_row("05", quantity, f"{model}, {where}", *_checked(v, n)))
    end_demo = r.fix2_demo.groupby("model").tail(1).set_index("model")
    for model in end_demo.index:
        rows.append(count_row("05", "leaked pages after the last operation (4 KiB pages)",
                              f"{model}, {on_demo}", int(end_demo.loc[model, "leaked"]),
                              "unchecked replay"))
    n = len(r.leak_trace.ops)
    for model, g in r.growth.groupby("model", sort=False):
        conf = f"{model}, {on_trace}"
        first = r.first_failure.get(model)
        if first is not None:
            at = g[g["ops"] == first].iloc[0]
            rows.append(count_row("05", "operation of the first failed charge (1-based)", conf,
                                  int(first), f"of {n} operations, unchecked"))
            rows.append(count_row("05", "leaked pages at the first failed charge (4 KiB pages)",
                                  conf, int(at["leaked"]),
                                  f"memcg OOM events by then: {int(at['oom_events'])}"))
        end = g.iloc[-1]
        note = f"after all {int(end['ops'])} operations, unchecked"
        for col, what in (("leaked", "leaked pages (4 KiB pages)"),
                          ("failed_charges", "failed charges (count)"),
                          ("oom_events", "memcg OOM events (count)")):
            rows.append(count_row("05", what, conf, int(end[col]), note))
    log, at = r.batch_log.set_index(["model", "op_number"]), _release_op()
    released = int(parse_text(BATCH_DEMO).ops["arg"][at - 1])
    for model in dict.fromkeys(r.batch_log["model"]):
        rows.append(count_row("05", "pages left stocked after a release above the batch (4 KiB "
                              "pages)", f"{model}, BATCH_DEMO, 1 CPU, 1 slot",
                              int(log.loc[(model, at), "stocked"]),
                              f"the {released}-page release (operation {at}); "
                              f"{int(log.loc[(model, at - 1), 'stocked'])} stocked before it"))
    return rows


def _mix_rows(r: HistoryResults) -> list[dict]:
    """The > batch rows per bulk share: events per 1000 charges, the walk increase, the
    refill_stock calls above the batch."""
    mx = r.params.mix
    extra = _extra_walks(r.mix)
    rows = []
    for share, g in r.mix.groupby("large_share", sort=True):
        where = (f"netperf {mx.clients} clients on {mx.cpus} CPUs, {mx.messages} messages, "
                 f"seed {mx.seed}, {share:.0%} of flows send "
                 f"{r.params.large_bytes // 1024} KiB, the rest {r.params.small_bytes // 1024} KiB")
        for c in g.itertuples():
            for col, what in (("walks", "page_counter walks per 1000 charges"),
                              ("evictions", "stock evictions per 1000 charges"),
                              ("drains", "stock drains per 1000 charges")):
                n = int(getattr(c, col))
                rows.append(count_row("05", what, f"{c.config}, {where}",
                                      1000 * n / int(c.charges), f"{n} over {c.charges} charges"))
        walks = g.set_index("config")["walks"]
        rows.append(count_row(
            "05", "walk increase of the full drain (%)", f"{SINGLE} over {MULTI1}, {where}",
            float(extra.loc[share]),
            f"{int(walks[SINGLE])} against {int(walks[MULTI1])} walks on the same charges"))
        merged = g[g["config"] == MULTI7].iloc[0]
        rows.append(count_row(
            "05", "refill_stock calls above the batch (count)", f"{MULTI7}, {where}",
            int(merged["refills_over_batch"]),
            f"of {int(merged['refill_calls'])} refill_stock calls; they carry "
            f"{merged['pages_share_over_batch']:.1%} of the released pages"))
    return rows


def counts(r: HistoryResults) -> list[dict]:
    """The exact counts behind the claims (:func:`memcglab.studies.count_row`): where the
    invariant check stops each model, the fix-2 leak and its failed charges, the pages a
    release above the batch leaves stocked, then per bulk share of the netperf mix the
    walks, evictions and drains per 1000 charges of each stock, the full drain's walk
    increase and the refill_stock calls above the batch. Exact for this run's traces."""
    return _leak_rows(r) + _mix_rows(r)


def _fix2_reproduced(s: dict) -> bool:
    return s["fix2_failed_charges"] > 0 and s["fix3_failed_charges"] == 0


def _port(claim: str, published: str, simulated: str, shown: bool, condition: str) -> dict:
    return claim_row(claim, name(MULTI), published, simulated,
                     judge("port", shown=shown, condition=condition))


def claims(r: HistoryResults) -> list[dict[str, str]]:
    """The thread's claims about fix 2, fix 3 and the > batch release, each a behaviour of
    the ported kernel code (rule ``port``), decided on the replays' exact counts against the
    condition the row states."""
    s = summary(r)
    oom = _port(
        "fix 2 causes memcg OOM kills (Hugh Dickins)", f'"{quote("fix2_oom_kills")}"',
        f"multi-fix2 leaks {s['fix2_leaked_pages']} pages; from operation "
        f"{s['fix2_first_failed_op']} of {s['leak_ops']} on, {s['fix2_failed_charges']} "
        f"charges fail after {s['fix2_oom_events']} memcg OOM invocations; multi: "
        f"{s['fix3_failed_charges']}", _fix2_reproduced(s),
        "shown when charges fail at memory.max under fix 2 and none fails under fix 3 on "
        "the same trace")
    cure = _port(
        "stocking nr_pages cures fix 2 (fix 3)", f'"{quote("fix3_stock_nr_pages")}"',
        f"the invariant check stops multi-fix2 at operation {s['trace_violation_op']} "
        f"({s['trace_violation_operation']}); multi "
        f"{'passes' if s['fix3_passes_check'] else 'fails'} it on the same traces",
        bool(s["fix3_passes_check"] and s["trace_violation_op"]),
        "shown when the conservation check stops fix 2 and passes fix 3 on the same traces")
    kept, dropped = s["batch_demo_stocked_multi"], s["batch_demo_stocked_single"]
    retain = _port(
        "a release above the batch bypasses the stock, which keeps its pages (Jakub Kicinski)",
        f'"{quote("batch_bypass_retains_stock")}"',
        f"after a 100-page release the stock keeps {kept} pages (multi) vs {dropped} "
        f"(single); {s['refills_over_batch_share']:.0%} of refill_stock calls exceed the "
        f"batch at {s['max_extra_walks_share']:.0%} bulk flows", kept > dropped,
        "shown when the multi stock keeps more pages than the single stock after a release "
        "above the batch")
    extra = s["max_extra_walks_pct"]
    costly = _port(
        "the old full drain is problematic in some scenarios (Shakeel Butt)",
        f'"{quote("full_drain_problematic")}"',
        f"single walks {extra:+.1f}% per message against multi with one slot at "
        f"{s['max_extra_walks_share']:.0%} bulk flows ({s['extra_walks_pct_no_bulk']:+.1f}% "
        "with none)", extra > EXTRA_WALKS_NOTABLE_PCT,
        f"shown when the full drain adds more than {EXTRA_WALKS_NOTABLE_PCT:g}% walks per "
        "message in some bulk share")
    return [oom, cure, retain, costly]


def conclusion(r: HistoryResults) -> str:
    """The conclusion, built from this run's numbers."""
    s = summary(r)
    after = s["fix2_failed_charges"] > 0
    # the checker's message repeats the operation; keep what it found
    detail = str(s["demo_violation_message"]).split("): ", 1)[-1]
    fix3 = "passes" if s["fix3_passes_check"] else "fails"
    out = [
        f"Fix 2's unassigned `stock_pages` breaks conservation at the first refill into a new "
        f"slot: the invariant check stops the demo at operation {s['demo_violation_op']} "
        f"(`{s['demo_violation_operation']}`: {detail}) and the limited "
        f"netperf mix at operation {s['trace_violation_op']}.",
        f"Unchecked, multi-fix2 leaks {s['fix2_leaked_pages']} pages over {s['leak_ops']} "
        f"operations; " + (
            f"from operation {s['fix2_first_failed_op']} on its charges fail at memory.max, "
            f"{s['fix2_failed_charges']} times, each after a memcg OOM invocation, as Hugh "
            "Dickins saw." if after else "no charge fails within this trace."),
        f"Fix 3 (multi) {fix3} the check on the same traces, with "
        f"{s['fix3_failed_charges']} failed charges and {s['fix3_leaked_pages']} pages leaked.",
        f"A release above the batch leaves {s['batch_demo_stocked_multi']} pages stocked "
        f"with multi and {s['batch_demo_stocked_single']} with single.",
        f"With {s['max_extra_walks_share']:.0%} of the netperf flows sending large messages, "
        f"{s['refills_over_batch_share']:.0%} of refill_stock calls exceed the batch "
        f"(carrying {s['pages_share_over_batch']:.0%} of the released pages), and the single "
        f"stock's full drain costs {s['max_extra_walks_pct']:+.1f}% walks per message against "
        f"multi with one slot ({s['extra_walks_pct_no_bulk']:+.1f}% without bulk flows); "
        f"multi with 7 slots walks {s['walks_per_message_multi7']:.2f} times per message.",
    ]
    return " ".join(out)
