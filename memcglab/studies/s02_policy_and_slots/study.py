"""Study 2: eviction policy and slot count of the multi-memcg stock.

The multi-memcg thread's changelog: "we started with more sophisticated LRU based approach but the
dumb one was always better than the sophisticated one by 1% to 3%". Policies can
differ only when a stock must evict, that is when a CPU has used more memcgs than the
stock has slots since they were cached (mostly where it serves more active memcgs
than slots), so this study replays synthetic tenant mixes
(:func:`memcglab.workloads.synthetic`: uniform, Zipf and bursty, 1-64 active memcgs
per CPU, several CPU counts and seeds) and the multi-memcg thread's 36-client netperf mix, through
each victim policy of
the registry (:mod:`memcglab.registry`) with a compiled implementation, the contract's
three and any a plugin registers (the ``plugins`` parameter), at several slot counts.

It answers: how many slots and which policy the 36-client netperf mix needs
(:func:`needs`); where a second cache line of slots pays for the line it adds to every
lookup (:func:`second_line`). Every replay keeps its event totals, from which
:mod:`memcglab.studies.s02_policy_and_slots.counts` states the exact counts (walks, evictions, hits,
recency writes, and how often a CPU has more active memcgs than slots) and
:mod:`memcglab.studies.s02_policy_and_slots.pricing` prices random against LRU with the hardware
priors; :mod:`memcglab.studies.s02_policy_and_slots.verdict` judges the multi-memcg thread's
claim. The figures are in :mod:`memcglab.studies.s02_policy_and_slots.views`.

Cycles per charge here (``cycles_per_op``) are the charge path alone at the typical
hardware costs (:class:`memcglab.cost.CostParams`), with the layout's lines per scan;
they rank slot counts, they are not throughput.

>>> model_for("rr"), model_for("lru")
('multi-rr', 'multi-lru')
>>> model_for("fifo")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: policy='fifo': unknown; ...
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memcglab import registry
from memcglab.cost import CostParams
from memcglab.engine import replay_compiled
from memcglab.events import EVENT_NAMES
from memcglab.hardware import load_profile
from memcglab.plugins import load_plugins
from memcglab.studies.common.measure import metrics, scan_lines
from memcglab.studies.s02_policy_and_slots.pricing import NETPERF_ALTERNATIVES, coefficient_frame
from memcglab.studies.s02_policy_and_slots.recency import DEFAULT_LAYOUT
from memcglab.workloads import NetperfRxSpec, SyntheticSpec, netperf_rx, synthetic
from memcglab.workloads.synthetic import MIXES

__all__ = ["NEED_TOL_PCT", "NETPERF", "PolicyParams", "model_for",
           "runnable_policies", "line_capacity", "netperf_spec", "run", "paired", "tp_change",
           "needs", "second_line", "pays_from"]

#: a slot count "suffices" when its cost per charge is within this of the best
NEED_TOL_PCT = 1.0
NETPERF = "netperf"


def runnable_policies() -> tuple[str, ...]:
    """Registered policies with a compiled implementation, in registry order: study 2
    prices the compiled engine's event counts, so only those can run here."""
    return registry.compiled_policies()


def _run_as(policy: str) -> tuple[str, str | None]:
    """The model and the ``policy=`` argument a replay of ``policy`` takes; ValueError
    refuses, by name, an unknown policy and one without a compiled implementation."""
    model, arg = registry.policy_model(policy)
    registry.check_compiled(model, arg, hint="study 2 prices the compiled engine's counts; "
                            "register the policy with compiled=... (docs/extending.md)")
    return model, arg


def model_for(policy: str) -> str:
    """The replay model of victim policy ``policy``; ValueError names the valid ones."""
    return _run_as(policy)[0]


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

    #: the notebook's policy (a registered policy with a compiled implementation) and slot count
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
    #: window lengths W (stock operations of one CPU) of the active-memcg count: 16
    #: and 64 are a NAPI poll's scale (NAPI_POLL_WEIGHT is 64), 256 a few polls.
    windows: tuple[int, ...] = (16, 64, 256)
    #: machine profile of the hardware priors: a shipped profile's name (data/hardware/
    #: profiles; the default is the netperf thread's 72-CPU box) or a profile file's path,
    #: e.g. one ``memcglab probe --out`` wrote.
    profile: str = "butt-netperf-72cpu"
    #: quasi-random points of the propagation (a power of 2).
    samples: int = 1024
    #: plugin modules that register more policies (docs/extending.md), loaded before
    #: the policy is checked; every run compares each compiled policy they register.
    plugins: str = ""

    def __post_init__(self) -> None:
        load_plugins(self.plugins, where="plugins")
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
        load_profile(self.profile)  # a shipped name or a file; its error names the field
        if self.samples < 2 or self.samples & (self.samples - 1):
            raise ValueError(f"samples={self.samples}: must be a power of 2 (Sobol points), "
                             "e.g. 1024")
        if not self.windows or any(w < 1 for w in self.windows):
            raise ValueError(f"windows={self.windows}: need one or more lengths >= 1")

    @classmethod
    def from_notebook(cls, policy: str = "random", slots: int = 7, quick: bool = False,
                      seeds: int = 6, profile: str = "butt-netperf-72cpu", samples: int = 1024,
                      plugins: str = "") -> PolicyParams:
        """From the notebook's parameters; ``quick`` is a CI-sized grid."""
        if quick:
            return cls(policy=policy, slots=slots, actives=(2, 32), cpus=(1, 4),
                       seeds=3, charges_per_cpu=500, slot_counts=(1, 4, 7, 8, 16),
                       netperf_messages=10_000, profile=profile, samples=min(samples, 256),
                       plugins=plugins)
        return cls(policy=policy, slots=slots, seeds=seeds, profile=profile, samples=samples,
                   plugins=plugins)

    @property
    def policies(self) -> tuple[str, ...]:
        """The notebook's policy, then random and LRU (the claim's pair)."""
        return tuple(dict.fromkeys((self.policy, "random", "lru")))

    @property
    def line_slots(self) -> tuple[int, int]:
        """The most slots in one cache line and in two."""
        return line_capacity(1), line_capacity(2)


def _replays(trace, policies, slot_counts, seed: int, key: dict) -> list[dict]:
    rows = []
    for pol in policies:
        for s in slot_counts:
            model, arg = _run_as(pol)
            _, events = replay_compiled(trace, model=model, slots=s, seed=seed, events=True,
                                        policy=arg)
            totals = events.totals()
            rows.append({**key, "policy": pol, "model": model, "slots": s,
                         **metrics(totals, model, s),
                         **{f"ev_{n}": int(totals[n]) for n in EVENT_NAMES}})
    return rows


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
                           "cpus": cpus, "seed": seed, "placement": "", "release": "",
                           "default": True}
                    rows += _replays(trace, p.policies, (p.slots,), seed, key)
                    extra = sorted({one, two} - {p.slots})
                    rows += _replays(trace, (p.policy,), extra, seed, key)
    return rows


def netperf_spec(p: PolicyParams, seed: int, placement: str = "spread",
                 release: str = "task") -> NetperfRxSpec:
    """The netperf mix of ``p`` for one seed and modelling alternative."""
    return NetperfRxSpec(clients=p.netperf_clients, messages=p.netperf_messages, seed=seed,
                         placement=placement, release=release)


def _netperf(p: PolicyParams) -> list[dict]:
    rows = []
    counts = tuple(sorted(set(p.slot_counts) | {p.slots}))
    policies = tuple(dict.fromkeys((*p.policies, *runnable_policies())))
    choices = [dict(zip(NETPERF_ALTERNATIVES, c, strict=True))
               for c in itertools.product(*NETPERF_ALTERNATIVES.values())]
    for seed in range(p.seeds):
        for i, choice in enumerate(choices):
            spec = netperf_spec(p, seed, **choice)
            key = {"workload": NETPERF, "mix": NETPERF, "active": np.nan, "cpus": spec.cpus,
                   "seed": seed, **choice, "default": i == 0}
            trace = netperf_rx(spec)
            if i == 0:  # the slot sweep, every policy
                rows += _replays(trace, policies, counts, seed, key)
            else:  # the priced comparison's other alternatives
                rows += _replays(trace, ("random", "lru"), (p.slots,), seed, key)
    return rows


def run(p: PolicyParams) -> pd.DataFrame:
    """Every replay of the study, one row each: the configuration, the metrics of
    :func:`memcglab.studies.common.measure.metrics` (``cycles_per_op`` at the typical costs,
    the charge path alone) and every event total (``ev_<name>``).

    LRU's ``cycles_per_op`` also pays what :mod:`memcglab.studies.s02_policy_and_slots.pricing` adds
    to its events: its recency state's line (after ``cached[]``) and its stamp search
    in place of a random draw. ``default`` marks the rows of the default modelling
    alternative (netperf's tasks spread, pages released by the reading task); the other
    netperf alternatives are replayed for random and LRU at ``p.slots`` only, for the
    priced comparison.
    """
    df = pd.DataFrame(_synthetic(p) + _netperf(p))
    lru = df["policy"] == "lru"
    if lru.any():
        coef = coefficient_frame(df[lru], "lru", (), DEFAULT_LAYOUT)
        df.loc[lru, "cycles_per_op"] = coef.to_numpy(float) @ CostParams().to_vector()
    return df


def paired(df: pd.DataFrame, policy: str, slots: int, workload: str,
           overflow_only: bool = True) -> pd.DataFrame:
    """Per seed, mean cost per charge of ``policy`` and of random and LRU at ``slots``.

    Columns: seed, and one per policy present. For the synthetic mixes the mean is over
    every (mix, active, cpus) with more active memcgs than slots (``overflow_only``).
    """
    sel = (df["workload"] == workload) & (df["slots"] == slots) & df["default"]
    if workload != NETPERF and overflow_only:
        sel &= df["active"] > slots
    sub = df[sel]
    if sub.empty:
        raise ValueError(f"no {workload} rows at slots={slots}"
                         + (" with more active memcgs than slots" if overflow_only else ""))
    wide = sub.pivot_table(index="seed", columns="policy", values="cycles_per_op", aggfunc="mean")
    return wide.reset_index().rename_axis(columns=None)


def tp_change(df: pd.DataFrame, policy: str, slots: int, workload: str,
              overflow_only: bool = True) -> float:
    """Throughput change of ``policy`` against random, in %, mean over seeds, on a CPU that
    does nothing but charge-path work at the typical costs: an upper bound (the priced
    comparison, :mod:`memcglab.studies.s02_policy_and_slots.verdict`, adds the work outside
    memcg)."""
    w = paired(df, policy, slots, workload, overflow_only)
    return float(((w["random"] / w[policy] - 1) * 100).mean())


def needs(df: pd.DataFrame, tol_pct: float = NEED_TOL_PCT) -> pd.DataFrame:
    """Per policy on the netperf mix: the fewest slots within ``tol_pct`` of the best cost.

    Columns: policy, slots_needed, cost_at_need, best_slots, best_cost (cycles per
    charge, mean over seeds); sorted by slots needed, then cost.
    """
    net = df[(df["workload"] == NETPERF) & df["default"]]
    cost = net.groupby(["policy", "slots"])["cycles_per_op"].mean()
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
                           values="cycles_per_op", aggfunc="mean")
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
