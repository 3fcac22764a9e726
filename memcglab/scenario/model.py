"""One scenario's pricing model: its counts, fixed; its unknowns, a vector per point.

:class:`ScenarioModel` holds what a scenario fixes: the machine, the benchmark's
instances and tasks, and the exact counts of both kernels (:mod:`memcglab.scenario.counts`)
for each modelling alternative it prices. :meth:`ScenarioModel.evaluate` prices both
kernels at a batch of parameter points: operations per second through the closed
network of :mod:`memcglab.pricing.network`, and each charge-path function's share of
the cycles (:mod:`memcglab.pricing.profile`).

The unknowns (:data:`UNKNOWNS`) are what no datasheet gives, and what the calibration
(``memcglab.validation``) fits:

* ``hold_scale``: a contended usage line's hold time per transfer, as a multiple of the
  machine family's typical cache-to-cache transfer (``c2c_transfer``, and
  ``c2c_transfer_cross_socket`` for the share of transfers that cross sockets); each
  family in the calibration has its own deviation ``hold_dev:FAMILY`` from the pooled
  scale, an unseen family draws one from the pooled spread;
* ``socket_growth``: the hold time grows as ``(sockets / 2) ** socket_growth`` beyond what
  the cross-socket share already gives (a snoop that visits more sockets);
* ``fixed_cycles:COST_FAMILY`` and ``unit_cycles:byte|page``: the work outside memcg per
  operation (:mod:`memcglab.scenario.work`).

The hardware costs of the charge path's own instructions (:class:`memcglab.cost.CostParams`),
the clock, ``smt_gain`` and the busiest CPU's share are drawn from their priors.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from memcglab.cost import CostParams, default_scan_lines
from memcglab.hardware import MachineProfile
from memcglab.pricing.network import closed_network
from memcglab.pricing.profile import FUNCTIONS, function_cycles
from memcglab.queueing import cpu_slowdown
from memcglab.scenario.counts import KernelCounts, built, kernel_counts
from memcglab.scenario.machine import resolve_machine
from memcglab.scenario.spec import Design, Scenario
from memcglab.scenario.terms import DEFAULT_TERMS, Terms
from memcglab.scenario.work import cost_family, unit_of
from memcglab.workloads.catalogue import ALTERNATIVES, BenchmarkSpec, Machine
from memcglab.workloads.catalogue.spec import TEST_ALTERNATIVES

__all__ = ["MAX_TRACES", "Priced", "ScenarioModel", "line_label"]

#: most modelling-alternative combinations a prediction replays (each is one trace and
#: two replays): systematic sampling in proportion to their prior weights picks them
MAX_TRACES = 6


@dataclass(frozen=True)
class Priced:
    """Both kernels at every point (B): ops/s, % change, profile shares, bottlenecks."""

    base_rate: np.ndarray
    new_rate: np.ndarray
    change: np.ndarray
    base_profile: dict[str, np.ndarray]
    new_profile: dict[str, np.ndarray]
    base_bottleneck: list[str]
    new_bottleneck: list[str]


def line_label(station: str, protection: bool = False) -> str:
    """A station's name as a reader knows it ('root page_counter usage line')."""
    if station == "cpu":
        return "cpu"
    if station == "private lines":
        return "private page_counter usage lines"
    kind, _, role = station.partition(":")
    what = "page_counter usage line" if kind == "usage" else "page_counter protection line"
    role = {"service": "service cgroup", "shared": "shared cgroup",
            "server": "server cgroup", "ancestor": "ancestor cgroup"}.get(role, role)
    return f"{role} {what}"


def _combos(family: str, test: str, seed: int, every: bool = True
            ) -> list[tuple[tuple[str, object], ...]]:
    """The alternative combinations to price, drawn in proportion to their prior weight;
    with ``every=False`` only the most probable one (each alternative's mode)."""
    names = TEST_ALTERNATIVES[(family, test)]
    if not names:
        return [()]
    if not every:
        modes = []
        for n in names:
            a = ALTERNATIVES[n]
            modes.append((n, a.values[int(np.argmax(a.prior))]))
        return [tuple(modes)]
    opts = [list(zip(ALTERNATIVES[n].values, ALTERNATIVES[n].prior, strict=True))
            for n in names]
    combos = []
    for pick in itertools.product(*opts):
        w = float(np.prod([p for _, p in pick]))
        combos.append((w, tuple((n, v) for n, (v, _) in zip(names, pick, strict=True))))
    weights = np.array([w for w, _ in combos])
    cdf = np.cumsum(weights) / weights.sum()
    k = min(MAX_TRACES, len(combos))
    offset = (zlib.crc32(f"{family}/{test}/{seed}".encode()) % 1000) / 1000.0
    chosen = np.searchsorted(cdf, (np.arange(k) + offset) / k, side="right")
    return [combos[min(i, len(combos) - 1)][1] for i in chosen]


class ScenarioModel:
    """A scenario's fixed part (module doc); price it with :meth:`evaluate`."""

    def __init__(self, scenario: Scenario, seed: int = 0, terms: Terms = DEFAULT_TERMS) -> None:
        self.scenario = scenario
        self.terms = terms
        self.profile: MachineProfile = resolve_machine(scenario.machine, scenario.file)
        w = scenario.workload
        self.family_name = w.family
        self.cost_family = cost_family(w.family, w.test)
        self.unit = unit_of(w.family)
        self.combos = _combos(w.family, w.test, seed, terms.alternatives)
        p = self.profile
        machine = Machine(p.cpus, p.sockets, p.smt)
        self.base: list[KernelCounts] = []
        self.new: list[KernelCounts] = []
        for combo in self.combos:
            for design, out in ((scenario.base, self.base), (scenario.new, self.new)):
                spec = BenchmarkSpec(w.family, w.test, dict(w.keys), machine,
                                     layout=scenario.cgroups.layout, depth=scenario.cgroups.depth,
                                     protection=scenario.cgroups.protection,
                                     sk_reclaim=design.sk_reclaim, seed=seed,
                                     alternatives=dict(combo))
                out.append(kernel_counts(spec, design, seed))
        bt = built(BenchmarkSpec(w.family, w.test, dict(w.keys), machine,
                                 layout=scenario.cgroups.layout, depth=scenario.cgroups.depth,
                                 sk_reclaim=scenario.base.sk_reclaim, seed=seed,
                                 alternatives=dict(self.combos[0])))
        self.instances = int(len(bt.instance_memcg))
        self.tasks = int(sum(v.shape[1] for v in bt.placement.values()))
        self.operation = bt.operation
        if self.unit == "page":
            self.units = float(bt.keys["pages"])
        else:
            self.units = float(bt.bytes_per_operation or 0)

    # -- pricing ------------------------------------------------------------------

    def _kernel(self, counts: list[KernelCounts], design: Design, v: Mapping[str, np.ndarray],
                which: np.ndarray, with_profile: bool = True
                ) -> tuple[np.ndarray, dict[str, np.ndarray], list[str]]:
        p = self.profile
        b = which.size
        hz = np.broadcast_to(v["cpu_ghz"], (b,)) * 1e9
        # the line transfers are the network's stations, not the cost model's
        cost = {n: np.broadcast_to(np.asarray(v[n], dtype=float), (b,)) for n in
                CostParams.names() if n != "c2c_transfer"}
        h = np.broadcast_to(v["hold_cycles"], (b,))
        hc = np.broadcast_to(v["hold_cycles_cross"], (b,))
        other = (np.broadcast_to(v["other_cycles"], (b,)) if "other_cycles" in v
                 else self.work_cycles(v, b))
        smt_gain = np.broadcast_to(np.asarray(v["smt_gain"], dtype=float), (b,))
        busiest = (np.broadcast_to(v["busiest_cpu_share"], (b,)) if self.terms.busiest_share
                   else np.ones(b))
        scan = default_scan_lines(min(design.slots, 255)) if design.model.startswith("multi") \
            else 1.0
        lines = {k: self._lines(c) for k, c in enumerate(counts)}
        names = list(dict.fromkeys(n for ls in lines.values() for n, _, _ in ls))
        cpu = np.zeros(b)
        priv = np.zeros(b)
        line_cyc = np.zeros((b, len(names)))
        groups = [(k, np.flatnonzero(which == k)) for k in range(len(counts))]
        groups = [(k, idx) for k, idx in groups if idx.size]
        for k, idx in groups:
            c = counts[k]
            for name, transfers, cross in lines[k]:
                line_cyc[idx, names.index(name)] = transfers * ((1 - cross) * h[idx]
                                                                + cross * hc[idx])
            if self.terms.private_lines:
                priv[idx] = c.private * ((1 - c.private_cross) * h[idx]
                                         + c.private_cross * hc[idx])
            ci = {n: x[idx] for n, x in cost.items()}
            compute = function_cycles(c.per_op, ci, scan, np.zeros(idx.size),
                                      design.model)["total"]
            slow = (cpu_slowdown(self.instances, self.tasks, p.cpus, p.smt, smt_gain[idx])
                    if self.terms.cpu_slowdown else 1.0)
            cpu[idx] = (other[idx] + compute) * busiest[idx] * slow
        res = closed_network(self.instances, cpu / hz, priv / hz, line_cyc / hz[:, None],
                             names)
        at_lines = res.residence[:, 1:].sum(axis=1) * hz
        profile = {f: np.zeros(b) for f in FUNCTIONS}
        if not with_profile:
            return res.ops_per_s, profile, []
        for k, idx in groups:
            ci = {n: x[idx] for n, x in cost.items()}
            fn = function_cycles(counts[k].per_op, ci, scan, at_lines[idx], design.model)
            total = other[idx] + fn["total"]
            for f in FUNCTIONS:
                profile[f][idx] = 100.0 * fn[f] / total
        neck = [line_label(s) for s in res.bottleneck_names()]
        return res.ops_per_s, profile, neck

    def with_measured(self, measured) -> ScenarioModel:
        """This model (its counts shared, not replayed again) for the same scenario with
        ``[base.measured]`` given (a :class:`memcglab.scenario.spec.Measured`, or None)."""
        import copy
        from dataclasses import replace

        out = copy.copy(self)
        out.scenario = replace(self.scenario, measured=measured)
        return out

    def work_cycles(self, v: Mapping[str, np.ndarray], b: int) -> np.ndarray:
        """The work outside memcg per operation at each point: fixed plus per unit."""
        return (np.broadcast_to(v["fixed_cycles"], (b,))
                + np.broadcast_to(v["unit_cycles"], (b,)) * self.units)

    def solve_work(self, v: Mapping[str, np.ndarray], which: np.ndarray, target: float
                   ) -> tuple[np.ndarray, np.ndarray]:
        """The work outside memcg per operation that makes the base kernel's ops/s equal
        ``target`` at each point (bisection in log cycles: the rate falls as the work
        grows), and where no work can: the points whose charge path alone, with (one cycle
        of) work outside memcg, runs slower than ``target`` (those keep one cycle)."""
        which = np.asarray(which, dtype=np.int64)
        b = which.size
        lo, hi = np.zeros(b), np.full(b, np.log(1e10))

        def rate(log_work: np.ndarray) -> np.ndarray:
            w = dict(v)
            w["other_cycles"] = np.exp(log_work)  # at least one cycle: a closed loop
            # with no demand at all would run unboundedly fast
            return self._kernel(self.base, self.scenario.base, w, which, False)[0]

        reachable = rate(lo) >= target
        for _ in range(48):
            mid = 0.5 * (lo + hi)
            fast = rate(mid) >= target
            lo, hi = np.where(fast, mid, lo), np.where(fast, hi, mid)
        work = np.where(reachable, np.exp(0.5 * (lo + hi)), 1.0)
        return work, ~reachable

    def _lines(self, c: KernelCounts) -> list[tuple[str, float, float]]:
        """(station, transfers per operation, cross-socket chance) of each shared line."""
        out = [(n, float(t), float(x)) for n, t, x in zip(c.names, c.shared, c.cross,
                                                          strict=True)]
        if self.scenario.cgroups.protection and len(c.names) > 1:
            # propagate_protected_usage's xchg of min_usage/low_usage at the top
            # protected cgroup, on every walk through it (the scenario contract)
            top = 1
            out.append(("protection:" + c.names[top].partition(":")[2],
                        float(c.writes[top]), float(c.cross[top])))
        return out

    def evaluate(self, v: Mapping[str, np.ndarray], which: np.ndarray,
                 with_profile: bool = True) -> Priced:
        """Both kernels at the points of ``v``; ``which`` picks each point's alternative.

        ``with_profile=False`` leaves the profiles empty (a calibration needs rates only).
        """
        which = np.asarray(which, dtype=np.int64)
        br, bp, bn = self._kernel(self.base, self.scenario.base, v, which, with_profile)
        nr, np_, nn = self._kernel(self.new, self.scenario.new, v, which, with_profile)
        return Priced(base_rate=br, new_rate=nr, change=(nr / br - 1.0) * 100.0,
                      base_profile=bp, new_profile=np_, base_bottleneck=bn,
                      new_bottleneck=nn)
