"""Study 2: eviction policy and slot count of the multi-memcg stock.

Seed 000's changelog: "we started with more sophisticated LRU based approach but the
dumb one was always better than the sophisticated one by 1% to 3%". Policies can
differ only where a CPU sees more active memcgs than the stock has slots, so this
study replays synthetic tenant mixes (:func:`memcglab.workloads.synthetic`: uniform,
Zipf and bursty, 1-64 active memcgs per CPU, several CPU counts and seeds) and seed
000's 36-client netperf mix, through each victim policy of
:data:`memcglab.kernel.victim.POLICIES` that a replay model runs
(:data:`POLICY_MODELS`), at several slot counts.

It answers: how many slots and which policy the 36-client netperf mix needs
(:func:`needs`); where a second cache line of slots pays for the line it adds to every
lookup (:func:`second_line`); and whether random beats LRU by 1-3%, with a bootstrap
confidence interval over paired seeds (:func:`verdict`). Its figures are in
:mod:`memcglab.studies.policy_views`.

Predicted throughput changes assume each charge costs its charge-path cycles plus
``other_cycles`` of work outside memcg; 0, the default, is the memcg-bound CPU of seed
000's production report ("almost all of that time is spent in memcg accounting"), so
the changes are upper bounds.

>>> model_for("rr"), model_for("lru")
('multi-rr', 'multi-lru')
>>> model_for("fifo")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: policy='fifo': not a victim policy of memcglab.kernel.victim.POLICIES; valid: ...
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from memcglab.kernel.victim import POLICIES
from memcglab.models import MODELS
from memcglab.stats import verdict_lru_random
from memcglab.studies import claim_row
from memcglab.studies import text as T
from memcglab.studies.measure import measure, scan_lines
from memcglab.workloads import NetperfRxSpec, SyntheticSpec, netperf_rx, synthetic
from memcglab.workloads.synthetic import MIXES

__all__ = ["POLICY_MODELS", "NEED_TOL_PCT", "PolicyParams", "model_for", "runnable_policies",
           "line_capacity", "run", "paired", "tp_change", "needs", "second_line", "pays_from",
           "advantages", "verdict", "summary", "conclusion", "claims"]

#: victim policy -> the replay model that runs it
POLICY_MODELS = {"random": "multi", "rr": "multi-rr", "lru": "multi-lru"}
#: a slot count "suffices" when its cost per charge is within this of the best
NEED_TOL_PCT = 1.0
NETPERF = "netperf"


def runnable_policies() -> tuple[str, ...]:
    """Registered policies that a replay model runs, in registry order."""
    return tuple(p for p in POLICIES if POLICY_MODELS.get(p) in MODELS)


def model_for(policy: str) -> str:
    """The replay model of victim policy ``policy``; ValueError names the valid ones."""
    valid = ", ".join(runnable_policies())
    if policy not in POLICIES:
        raise ValueError(f"policy={policy!r}: not a victim policy of "
                         f"memcglab.kernel.victim.POLICIES; valid: {valid}")
    if POLICY_MODELS.get(policy) not in MODELS:
        raise ValueError(f"policy={policy!r}: registered in memcglab.kernel.victim.POLICIES, "
                         f"but no replay model (memcglab.models.MODELS) runs it, so the "
                         f"compiled engine cannot replay it; valid: {valid}")
    return POLICY_MODELS[policy]


def line_capacity(lines: int) -> int:
    """The most slots whose lookup reads at most ``lines`` cache lines.

    >>> line_capacity(1), line_capacity(2)
    (7, 14)
    """
    best = 0
    for s in range(1, 256):  # a scan never reads fewer lines for more slots
        if scan_lines(s) > lines:
            break
        best = s
    if best == 0:
        raise ValueError(f"lines={lines}: even one slot reads more cache lines")
    return best


@dataclass(frozen=True)
class PolicyParams:
    """The problem size of study 2. Each default says where it comes from."""

    #: the notebook's policy (a key of POLICIES with a model) and slot count
    #: (NR_MEMCG_STOCK; v6.16's 7); compared inside with random and LRU.
    policy: str = "random"
    slots: int = 7
    #: active memcgs per CPU: study 2's 1-64, dense around 7 and 8 slots.
    actives: tuple[int, ...] = (1, 2, 4, 7, 8, 12, 16, 32, 64)
    mixes: tuple[str, ...] = tuple(MIXES)
    #: CPU counts: one CPU is the pure per-CPU mix; with more, CPUs interact through
    #: remote releases, so a CPU's stock also sees memcgs that other CPUs charge.
    cpus: tuple[int, ...] = (1, 4, 16)
    #: a tenth of the releases on another CPU (a reader on another CPU, a task that
    #: migrated): that CPU's stock then sees memcgs it does not charge itself.
    remote_release: float = 0.1
    #: seeds per configuration; pairs of policies share each seed's trace.
    seeds: int = 6
    charges_per_cpu: int = 2000
    #: slot counts of the netperf sweep (1..16: study 2's range).
    slot_counts: tuple[int, ...] = tuple(range(1, 17))
    netperf_clients: int = 36
    netperf_messages: int = 50_000
    #: cycles per charge outside memcg (see the module docstring).
    other_cycles: float = 0.0

    def __post_init__(self) -> None:
        model_for(self.policy)
        if not 1 <= self.slots <= 255:
            raise ValueError(f"slots={self.slots}: must be between 1 and 255 (NR_MEMCG_STOCK "
                             "is a uint8_t index in the multi stock)")
        bad = [m for m in self.mixes if m not in MIXES]
        if bad:
            raise ValueError(f"mixes: unknown {', '.join(bad)}; valid: {', '.join(MIXES)}")
        if not 2 <= self.seeds <= 1000:
            raise ValueError(f"seeds={self.seeds}: must be between 2 and 1000 (a confidence "
                             "interval over seeds needs two)")
        if self.other_cycles < 0:
            raise ValueError(f"other_cycles={self.other_cycles}: must be >= 0")

    @classmethod
    def from_notebook(cls, policy: str = "random", slots: int = 7, quick: bool = False,
                      seeds: int = 6, other_cycles: float = 0.0) -> PolicyParams:
        """From the notebook's parameters; ``quick`` is a CI-sized grid."""
        if quick:
            return cls(policy=policy, slots=slots, actives=(2, 32), cpus=(1, 4),
                       seeds=3, charges_per_cpu=500, slot_counts=(1, 4, 7, 8, 16),
                       netperf_messages=10_000, other_cycles=other_cycles)
        return cls(policy=policy, slots=slots, seeds=seeds, other_cycles=other_cycles)

    @property
    def policies(self) -> tuple[str, ...]:
        """The notebook's policy, then random and LRU (the claim's pair)."""
        return tuple(dict.fromkeys((self.policy, "random", "lru")))

    @property
    def line_slots(self) -> tuple[int, int]:
        """The most slots in one cache line and in two."""
        return line_capacity(1), line_capacity(2)


def _replays(trace, policies, slot_counts, seed: int, key: dict) -> list[dict]:
    return [{**key, "policy": pol, "model": model_for(pol), "slots": s,
             **measure(trace, model_for(pol), s, seed)}
            for pol in policies for s in slot_counts]


def _synthetic(p: PolicyParams) -> list[dict]:
    one, two = p.line_slots
    rows = []
    for mix in p.mixes:
        for active in p.actives:
            for cpus in p.cpus:
                for seed in range(p.seeds):
                    spec = SyntheticSpec(cpus=cpus, memcgs=max(64, active), mix=mix,
                                         active_per_cpu=active, seed=seed,
                                         charges_per_cpu=p.charges_per_cpu,
                                         remote_release=p.remote_release if cpus > 1 else 0.0)
                    trace = synthetic(spec)
                    key = {"workload": "synthetic", "mix": mix, "active": active,
                           "cpus": cpus, "seed": seed}
                    rows += _replays(trace, p.policies, (p.slots,), seed, key)
                    extra = sorted({one, two} - {p.slots})
                    rows += _replays(trace, (p.policy,), extra, seed, key)
    return rows


def _netperf(p: PolicyParams) -> list[dict]:
    rows = []
    counts = tuple(sorted(set(p.slot_counts) | {p.slots}))
    policies = tuple(dict.fromkeys((*p.policies, *runnable_policies())))
    for seed in range(p.seeds):
        spec = NetperfRxSpec(clients=p.netperf_clients, messages=p.netperf_messages, seed=seed)
        key = {"workload": NETPERF, "mix": NETPERF, "active": np.nan, "cpus": spec.cpus,
               "seed": seed}
        rows += _replays(netperf_rx(spec), policies, counts, seed, key)
    return rows


def run(p: PolicyParams) -> pd.DataFrame:
    """Every replay of the study, one row each (``cost_per_op`` adds ``other_cycles``)."""
    df = pd.DataFrame(_synthetic(p) + _netperf(p))
    df["cost_per_op"] = df["cycles_per_op"] + p.other_cycles
    return df


def paired(df: pd.DataFrame, policy: str, slots: int, workload: str,
           overflow_only: bool = True) -> pd.DataFrame:
    """Per seed, mean cost per charge of ``policy`` and of random and LRU at ``slots``.

    Columns: seed, and one per policy present. For the synthetic mixes the mean is over
    every (mix, active, cpus) with more active memcgs than slots (``overflow_only``).
    """
    sel = (df["workload"] == workload) & (df["slots"] == slots)
    if workload != NETPERF and overflow_only:
        sel &= df["active"] > slots
    sub = df[sel]
    if sub.empty:
        raise ValueError(f"no {workload} rows at slots={slots}"
                         + (" with more active memcgs than slots" if overflow_only else ""))
    wide = sub.pivot_table(index="seed", columns="policy", values="cost_per_op", aggfunc="mean")
    return wide.reset_index().rename_axis(columns=None)


def tp_change(df: pd.DataFrame, policy: str, slots: int, workload: str,
              overflow_only: bool = True) -> float:
    """Predicted throughput change of ``policy`` against random, in %, mean over seeds."""
    w = paired(df, policy, slots, workload, overflow_only)
    return float(((w["random"] / w[policy] - 1) * 100).mean())


def needs(df: pd.DataFrame, tol_pct: float = NEED_TOL_PCT) -> pd.DataFrame:
    """Per policy on the netperf mix: the fewest slots within ``tol_pct`` of the best cost.

    Columns: policy, slots_needed, cost_at_need, best_slots, best_cost (cycles per
    charge, mean over seeds); sorted by slots needed, then cost.
    """
    net = df[df["workload"] == NETPERF]
    cost = net.groupby(["policy", "slots"])["cost_per_op"].mean()
    floor = float(cost.min())
    rows = []
    for pol in net["policy"].unique():
        c = cost.loc[pol]
        ok = c[c <= floor * (1 + tol_pct / 100)]
        need = int(ok.index.min()) if len(ok) else None
        rows.append({"policy": pol, "slots_needed": need if need is not None else pd.NA,
                     "cost_at_need": float(c.loc[need]) if need is not None else np.nan,
                     "best_slots": int(c.idxmin()), "best_cost": float(c.min())})
    out = pd.DataFrame(rows).astype({"slots_needed": "Int64"})
    return out.sort_values(["slots_needed", "cost_at_need"], na_position="last",
                           ignore_index=True)


def second_line(df: pd.DataFrame, p: PolicyParams) -> pd.DataFrame:
    """Cost per charge of ``p.policy`` with one line of slots and with two.

    One row per (mix, cpus, active): cost_one_line, cost_two_lines (cycles per charge,
    mean over seeds), gain_pct (the throughput gain of the second line; positive: it
    pays off), one_line_slots, two_line_slots.
    """
    one, two = p.line_slots
    sub = df[(df["workload"] == "synthetic") & (df["policy"] == p.policy)
             & df["slots"].isin([one, two])]
    cost = sub.pivot_table(index=["mix", "cpus", "active"], columns="slots",
                           values="cost_per_op", aggfunc="mean")
    out = pd.DataFrame({"cost_one_line": cost[one], "cost_two_lines": cost[two]})
    out["gain_pct"] = (out["cost_one_line"] / out["cost_two_lines"] - 1) * 100
    out["one_line_slots"], out["two_line_slots"] = one, two
    return out.reset_index()


def pays_from(line: pd.DataFrame, mix: str, cpus: int) -> int | None:
    """The fewest active memcgs per CPU from which two lines beat one for good, or None.

    >>> line = pd.DataFrame({"mix": "zipf", "cpus": 1, "active": [4, 8, 16, 32],
    ...                      "gain_pct": [-1.0, 2.0, -0.5, 3.0]})
    >>> pays_from(line, "zipf", 1), pays_from(line.assign(gain_pct=-1.0), "zipf", 1)
    (32, None)
    """
    g = line[(line["mix"] == mix) & (line["cpus"] == cpus)].sort_values("active")
    better = g["gain_pct"].to_numpy() > 0
    if not better.any() or not better[-1]:
        return None
    first = len(better) - int(np.argmin(better[::-1])) if not better.all() else 0
    return int(g["active"].iloc[first])


def _workloads(p: PolicyParams) -> list[tuple[str, str]]:
    return [(NETPERF, f"netperf, {p.netperf_clients} clients"),
            ("synthetic", "synthetic, active > slots")]


def advantages(df: pd.DataFrame, p: PolicyParams, other: str = "lru") -> pd.DataFrame:
    """Random's throughput advantage over ``other`` per seed, in %: workload, seed, value."""
    rows = []
    for workload, label in _workloads(p):
        try:
            w = paired(df, other, p.slots, workload)
        except ValueError:  # no configuration overflows the slots
            continue
        adv = (w[other] / w["random"] - 1) * 100
        rows += [{"workload": label, "seed": int(s), "advantage_pct": float(a)}
                 for s, a in zip(w["seed"], adv, strict=True)]
    return pd.DataFrame(rows, columns=["workload", "seed", "advantage_pct"])


def verdict(df: pd.DataFrame, p: PolicyParams) -> pd.DataFrame:
    """Random vs LRU (and vs the notebook's policy) with a CI over seeds, per workload.

    :func:`memcglab.stats.verdict_lru_random` on per-seed costs per charge, paired by
    seed. A row comparing random with another policy than LRU keeps the test and the
    interval but not the claim's bounds (the claim is about LRU).
    """
    others = ["lru"] + [p.policy] * (p.policy not in ("random", "lru"))
    out = []
    for other in others:
        for workload, label in _workloads(p):
            try:
                w = paired(df, other, p.slots, workload)
            except ValueError:
                continue
            v = verdict_lru_random(w[["seed", "random", other]].rename(columns={other: "lru"}),
                                   higher_is_better=False)
            if other != "lru":
                lo, hi = float(v["ci_low"].iloc[0]), float(v["ci_high"].iloc[0])
                v["verdict"] = T.advantage_word(lo, hi, other)
                v[["claim_low_pct", "claim_high_pct"]] = np.nan
            v.insert(0, "comparison", f"random vs {other}")
            v.insert(1, "workload", label)
            v.insert(2, "slots", p.slots)
            out.append(v)
    return pd.concat(out, ignore_index=True)


def _net(df: pd.DataFrame, policy: str, slots: int, col: str) -> float:
    sel = (df["workload"] == NETPERF) & (df["policy"] == policy) & (df["slots"] == slots)
    return float(df.loc[sel, col].mean())


def _syn(df: pd.DataFrame, policy: str, slots: int, col: str, overflow: bool) -> float:
    sel = (df["workload"] == "synthetic") & (df["policy"] == policy) & (df["slots"] == slots)
    sel &= (df["active"] > slots) if overflow else (df["active"] <= slots)
    return float(df.loc[sel, col].mean()) if sel.any() else float("nan")


def _verdict_row(v: pd.DataFrame, comparison: str, workload: str) -> pd.Series | None:
    sel = (v["comparison"] == comparison) & (v["workload"].str.startswith(workload))
    return v[sel].iloc[0] if sel.any() else None


def summary(df: pd.DataFrame, v: pd.DataFrame, p: PolicyParams) -> dict:
    """Scalars for the sidecar: this run's policy and slots, its outcomes, the verdicts."""
    need = needs(df)
    line = second_line(df, p)
    out = {"policy": p.policy, "slots": p.slots, "model": model_for(p.policy),
           "other_cycles": p.other_cycles}
    for col, key in (("walks_per_1000", "walks_per_1000"), ("cycles_per_op", "cycles_per_op"),
                     ("hit_rate", "hit_rate")):
        out[f"{key}_netperf"] = _net(df, p.policy, p.slots, col)
        out[f"{key}_synthetic_overflow"] = _syn(df, p.policy, p.slots, col, True)
        out[f"{key}_synthetic_fits"] = _syn(df, p.policy, p.slots, col, False)
    for pol in ("random", "lru"):
        out[f"walks_per_1000_netperf_{pol}"] = _net(df, pol, p.slots, "walks_per_1000")
        out[f"cycles_per_op_netperf_{pol}"] = _net(df, pol, p.slots, "cycles_per_op")
    out["lru_writes_per_op_netperf_lru"] = _net(df, "lru", p.slots, "lru_writes_per_op")
    out["tp_change_vs_random_netperf_pct"] = tp_change(df, p.policy, p.slots, NETPERF)
    try:
        out["tp_change_vs_random_synthetic_pct"] = tp_change(df, p.policy, p.slots, "synthetic")
    except ValueError:
        out["tp_change_vs_random_synthetic_pct"] = float("nan")
    for workload in (NETPERF, "synthetic"):
        r = _verdict_row(v, "random vs lru", workload)
        for key in ("mean_advantage_pct", "ci_low", "ci_high", "wilcoxon_p"):
            out[f"lru_{key}_{workload}"] = float(r[key]) if r is not None else float("nan")
        out[f"lru_verdict_{workload}"] = str(r["verdict"]) if r is not None else "not tested"
    best = need.iloc[0]
    out["netperf_best_policy"] = str(best["policy"])
    out["netperf_slots_needed"] = int(best["slots_needed"])
    for _, r in need.iterrows():
        n = r["slots_needed"]
        out[f"netperf_slots_needed_{r['policy']}"] = None if pd.isna(n) else int(n)
    out["one_line_slots"], out["two_line_slots"] = p.line_slots
    for mix in p.mixes:
        for cpus in p.cpus:
            out[f"second_line_pays_from_{mix}_{cpus}cpu"] = pays_from(line, mix, cpus)
            g = line[(line["mix"] == mix) & (line["cpus"] == cpus)]
            out[f"second_line_gain_max_active_{mix}_{cpus}cpu_pct"] = float(
                g.loc[g["active"].idxmax(), "gain_pct"])
    return out


def conclusion(df: pd.DataFrame, v: pd.DataFrame, p: PolicyParams) -> str:
    """The conclusion sentences, built from this run's numbers."""
    return T.policy_conclusion(summary(df, v, p), needs(df), p.mixes, p.cpus,
                               p.netperf_clients, NEED_TOL_PCT)


def claims(df: pd.DataFrame, v: pd.DataFrame, p: PolicyParams) -> list[dict[str, str]]:
    """Seed 000's "the dumb one was always better by 1% to 3%", on both workloads."""
    rows = []
    for workload, label in _workloads(p):
        r = _verdict_row(v, "random vs lru", workload)
        if r is None:
            continue
        rows.append(claim_row(
            f"seed 000: random victim better than LRU by {r['claim_low_pct']:g}% to "
            f"{r['claim_high_pct']:g}%",
            f"{r['claim_low_pct']:g}% to {r['claim_high_pct']:g}% (no workload named)",
            f"{r['mean_advantage_pct']:+.2f}% [95% CI {r['ci_low']:+.2f}, {r['ci_high']:+.2f}]"
            f" over {int(r['n_seeds'])} seeds; {label}, {p.slots} slots",
            str(r["verdict"])))
    return rows
