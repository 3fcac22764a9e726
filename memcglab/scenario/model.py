"""One scenario's pricing model: its counts, fixed; its unknowns, a vector per point.

:class:`ScenarioModel` holds what a scenario fixes: the machine, the benchmark's
instances and tasks, and the exact counts of both kernels (:mod:`memcglab.scenario.counts`)
for each modelling alternative it prices. :meth:`ScenarioModel.evaluate` prices both
kernels at a batch of parameter points: operations per second through the pricing core
(each modelling alternative's counts as a :class:`memcglab.pricing.FlowLoad`, priced by
:func:`memcglab.pricing.price_flows`), and each charge-path function's share of the
cycles (:mod:`memcglab.pricing.profile`).

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

from memcglab import registry
from memcglab.cost import CostParams, default_scan_lines
from memcglab.hardware import MachineProfile
from memcglab.pricing.chargepath import price_flows
from memcglab.pricing.layout import parent_on_usage_line, reacquisitions, written_lines
from memcglab.pricing.load import FlowLoad
from memcglab.pricing.profile import FUNCTIONS, function_cycles
from memcglab.scenario.counts import KernelCounts, built, kernel_counts
from memcglab.scenario.machine import resolve_machine
from memcglab.scenario.spec import Design, Scenario, ScenarioError
from memcglab.scenario.terms import DEFAULT_TERMS, Terms
from memcglab.scenario.walkers import parent_reads, walker_era
from memcglab.scenario.work import cost_family, unit_of
from memcglab.workloads.catalogue import ALTERNATIVES, BenchmarkSpec, Machine
from memcglab.workloads.catalogue.spec import TEST_ALTERNATIVES

__all__ = ["MAX_TRACES", "Priced", "ScenarioModel", "line_label", "unpriced"]

#: most modelling-alternative combinations a prediction replays (each is one trace and
#: two replays): systematic sampling in proportion to their prior weights picks them
MAX_TRACES = 6
#: the layout term's fixed point (re-fetches depend on the lines' utilisation, which
#: depends on the re-fetches): at most this many solves, stopping when no point's extra
#: transfers per operation move by more than FIXED_POINT_TOL
FIXED_POINT_STEPS, FIXED_POINT_TOL = 40, 1e-6


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


def unpriced(scenario: Scenario) -> ScenarioError | None:
    """The contract's one-line error for a valid scenario this model cannot price yet, or
    None. cgroup v1: the replay walks ``memcg->kmem`` for the obj stock's page charges, but
    the benchmark catalogue's traces do not mark which page-level charges are kernel
    memory (pipe buffers, page tables) nor drop the socket charges v1 makes only with a
    ``memory.kmem.tcp`` limit (``mem_cgroup_sk_alloc``'s ``tcpmem_active``), so its
    counts would be cgroup v2's under another name."""
    if scenario.cgroups.version == 1:
        return ScenarioError(scenario.file, "cgroups.version", "1 is not priced yet: the "
                             "benchmark traces carry cgroup v2's accounting (no kmem flag on "
                             "page-level charges, v2's socket charges)", "2")
    return None


class ScenarioModel:
    """A scenario's fixed part (module doc); price it with :meth:`evaluate`."""

    def __init__(self, scenario: Scenario, seed: int = 0, terms: Terms = DEFAULT_TERMS) -> None:
        refused = unpriced(scenario)
        if refused is not None:
            raise refused
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
        self._specs: dict[int, BenchmarkSpec] = {}  # each counts' benchmark (walker reads)
        for combo in self.combos:
            for design, out in ((scenario.base, self.base), (scenario.new, self.new)):
                spec = BenchmarkSpec(w.family, w.test, dict(w.keys), machine,
                                     layout=scenario.cgroups.layout, depth=scenario.cgroups.depth,
                                     protection=scenario.cgroups.protection,
                                     sk_reclaim=design.sk_reclaim, seed=seed,
                                     alternatives=dict(combo), kernel=design.kernel)
                out.append(kernel_counts(spec, design, seed))
                self._specs[id(out[-1])] = spec
        bt = built(BenchmarkSpec(w.family, w.test, dict(w.keys), machine,
                                 layout=scenario.cgroups.layout, depth=scenario.cgroups.depth,
                                 sk_reclaim=scenario.base.sk_reclaim, seed=seed,
                                 alternatives=dict(self.combos[0]),
                                 kernel=(scenario.base if scenario.base.model != "none"
                                         else scenario.new).kernel))
        self.instances = int(len(bt.instance_memcg))
        self.tasks = int(sum(v.shape[1] for v in bt.placement.values()))
        self.operation = bt.operation
        if self.unit == "page":
            self.units = float(bt.keys["pages"])
        else:
            self.units = float(bt.bytes_per_operation or 0)

    # -- pricing ------------------------------------------------------------------

    def _point(self, v: Mapping[str, np.ndarray], b: int) -> dict[str, np.ndarray | float]:
        """The pricing core's inputs (:data:`memcglab.pricing.INPUTS`) at the ``b`` points.

        A term switched off is an input, not a branch of the pricing: without the busiest
        share every cycle of an operation is on one CPU (share 1); without the CPU
        slowdown each task has a core of its own (as many single-threaded CPUs as the
        benchmark has tasks: no SMT pairing, no time sharing, a factor of exactly 1).
        """
        p = self.profile
        threads = self.instances * self.tasks
        return {
            "other_cycles": (np.broadcast_to(v["other_cycles"], (b,)) if "other_cycles" in v
                             else self.work_cycles(v, b)),
            "busiest_cpu_share": (np.broadcast_to(v["busiest_cpu_share"], (b,))
                                  if self.terms.busiest_share else np.ones(b)),
            "cpu_ghz": np.broadcast_to(v["cpu_ghz"], (b,)),
            "hold_cycles": np.broadcast_to(v["hold_cycles"], (b,)),
            "hold_cycles_cross": np.broadcast_to(v["hold_cycles_cross"], (b,)),
            "smt_gain": np.broadcast_to(np.asarray(v["smt_gain"], dtype=float), (b,)),
            "cpus_per_flow": float(self.tasks),
            "cpus": float(p.cpus) if self.terms.cpu_slowdown else float(threads),
            "smt": float(p.smt) if self.terms.cpu_slowdown else 1.0,
        }

    def _load(self, c: KernelCounts, design: Design, names: tuple[str, ...],
              memcg_cycles: np.ndarray) -> FlowLoad:
        """One alternative's counts as the core's load: the scenario's instances are its
        flows, every line of ``names`` a column (0 transfers where this one has none)."""
        shared, cross = np.zeros(len(names)), np.zeros(len(names))
        for name, transfers, x in self._lines(c, design):
            shared[names.index(name)], cross[names.index(name)] = transfers, x
        return FlowLoad(flows=self.instances, memcg_cycles=memcg_cycles[:, None],
                        shared_names=names, shared=shared, cross=cross,
                        private=c.private if self.terms.private_lines else 0.0,
                        private_cross=c.private_cross)

    def _kernel(self, counts: list[KernelCounts], design: Design, v: Mapping[str, np.ndarray],
                which: np.ndarray, with_profile: bool = True
                ) -> tuple[np.ndarray, dict[str, np.ndarray], list[str]]:
        """One kernel's ops/s, profile and bottleneck at each point: each alternative's
        points priced by the core (:func:`memcglab.pricing.price_flows`)."""
        b = which.size
        if b and (which.min() < 0 or which.max() >= len(counts)):
            raise ValueError(f"which={sorted(set(which.tolist()))}: each point's alternative "
                             f"must be 0 to {len(counts) - 1} (the priced combinations)")
        point = self._point(v, b)
        hz = point["cpu_ghz"] * 1e9
        # the line transfers are the network's stations, not the cost model's
        cost = {n: np.broadcast_to(np.asarray(v[n], dtype=float), (b,)) for n in
                CostParams.names() if n != "c2c_transfer"}
        # a multi-slot stock scans its slots (the registry's fact, not the name's)
        multi = design.model != "none" and registry.model(design.model).multi
        scan = default_scan_lines(min(design.slots, 255)) if multi else 1.0
        # every alternative's network has the stations of all (in one order), so a
        # station's name and place do not depend on which alternative a point took
        names = tuple(dict.fromkeys(n for c in counts for n, _, _ in self._lines(c, design)))
        rate, at_lines = np.zeros(b), np.zeros(b)
        neck = np.empty(b, dtype=object)
        groups = [(k, np.flatnonzero(which == k)) for k in range(len(counts))]
        groups = [(k, idx) for k, idx in groups if idx.size]
        for k, idx in groups:
            ci = {n: x[idx] for n, x in cost.items()}
            compute = function_cycles(counts[k].per_op, ci, scan, np.zeros(idx.size),
                                      design.model)["total"]
            res = self._solve(counts[k], design, names, compute,
                              {n: x if np.ndim(x) == 0 else x[idx] for n, x in point.items()})
            rate[idx] = res.ops_per_s[:, 0]
            at_lines[idx] = res.residence[:, 0, 1:].sum(axis=-1) * hz[idx]
            neck[idx] = [line_label(s[0]) for s in res.bottleneck_names()]
        profile = {f: np.zeros(b) for f in FUNCTIONS}
        if not with_profile:
            return rate, profile, []
        other = point["other_cycles"]
        for k, idx in groups:
            ci = {n: x[idx] for n, x in cost.items()}
            fn = function_cycles(counts[k].per_op, ci, scan, at_lines[idx], design.model)
            total = other[idx] + fn["total"]
            for f in FUNCTIONS:
                profile[f][idx] = 100.0 * fn[f] / total
        return rate, profile, neck.tolist()

    def _solve(self, c: KernelCounts, design: Design, names: tuple[str, ...],
               compute: np.ndarray, point: Mapping[str, np.ndarray | float]):
        """The network of one alternative's load at its points; with the layout term, the
        re-fetches of each usage line (:meth:`_refetches` times the line's utilisation)
        solved as a fixed point with the network."""
        load = self._load(c, design, names, compute)
        chances = self._refetches(c, design, names)
        reads = np.broadcast_to(self._walker_transfers(c, design, names),
                                (compute.shape[0], len(names)))
        if not chances.any():
            return price_flows(load, point, reads if reads.any() else None)
        extra = np.array(reads)
        for _ in range(FIXED_POINT_STEPS):
            res = price_flows(load, point, extra)
            moved = reads + chances[None, :] * res.utilisation[:, 0, 2:]
            done = np.max(np.abs(moved - extra)) <= FIXED_POINT_TOL
            extra = moved
            if done:
                break
        return price_flows(load, point, extra)

    def _refetches(self, c: KernelCounts, design: Design, names: tuple[str, ...]
                   ) -> np.ndarray:
        """Per line of ``names``: the walk levels per operation that touch that usage line
        again after their update (:func:`memcglab.pricing.layout.reacquisitions`); each
        re-fetches the line when another CPU took it meanwhile. 0 without the layout term."""
        out = np.zeros(len(names))
        if not self.terms.page_counter_fields or design.layout is None:
            return out
        lc = c.per_op.get("page_counter_try_charge_levels", 0.0)
        lu = c.per_op.get("page_counter_uncharge_levels", 0.0)
        share = lc / (lc + lu) if lc + lu > 0 else 0.0
        protected = self.scenario.cgroups.protection
        for k, name in enumerate(c.names):
            on = protected and k == 1 and len(c.names) > 1  # the top protected cgroup
            r_charge, r_uncharge = reacquisitions(design.layout, on, self.terms.prefetch_pair)
            out[names.index(name)] = c.writes[k] * (share * r_charge + (1 - share) * r_uncharge)
        return out

    def _walker_transfers(self, c: KernelCounts, design: Design, names: tuple[str, ...]
                          ) -> np.ndarray:
        """Per line of ``names``: the transfers per operation of the read-only ancestor
        walks (:func:`memcglab.scenario.walkers.parent_reads`) where the field they read
        shares ``usage``'s line. ``R`` reads per operation by ``N`` CPUs of a line written
        ``W`` times per operation find their copy stale when a write came since that CPU's
        last read: with independent streams, a chance ``W / (W + R / N)``. 0 without the
        layout term."""
        out = np.zeros(len(names))
        if not self.terms.page_counter_fields or design.layout is None or not c.ids:
            return out
        era = walker_era(design.layout, design.kernel)
        if not parent_on_usage_line(design.layout, era.parent_field, self.terms.prefetch_pair):
            return out
        got = parent_reads(built(self._specs[id(c)]), era)
        for k, (name, m) in enumerate(zip(c.names, c.ids, strict=True)):
            r, n, w = got.reads.get(m, 0.0), got.readers.get(m, 0), float(c.writes[k])
            if r > 0 and n > 0 and w > 0:
                out[names.index(name)] = r * w / (w + r / n)
        return out

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

    def _lines(self, c: KernelCounts, design: Design) -> list[tuple[str, float, float]]:
        """(station, transfers per operation, cross-socket chance) of each shared line."""
        out = [(n, float(t), float(x)) for n, t, x in zip(c.names, c.shared, c.cross,
                                                          strict=True)]
        if self.scenario.cgroups.protection and len(c.names) > 1:
            # propagate_protected_usage's xchg of min_usage/low_usage at the top
            # protected cgroup, on every walk through it (the scenario contract): one
            # line, as v6.1 has them; with the layout term, each line (or 128-byte pair)
            # the layout puts them on other than usage's (an exchange on usage's own line
            # is one of the level's re-fetches instead)
            top = 1
            role = c.names[top].partition(":")[2]
            lines = (0,)
            if self.terms.page_counter_fields and design.layout is not None:
                lines = written_lines(design.layout, True, self.terms.prefetch_pair)
            for j, _ in enumerate(lines):
                out.append((f"protection:{role}" + (f"#{j + 1}" if j else ""),
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
