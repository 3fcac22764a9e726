"""Study 5: two historic behaviours of the multi-memcg stock, replayed.

**Fix 2's leak.** "memcg: multi-memcg percpu charge cache - fix 2" (Shakeel Butt,
25 Apr 2025) stored ``stock_pages`` into a newly claimed slot, a variable never
assigned on that path (Dan Carpenter's Smatch: "uninitialized symbol
'stock_pages'"); model ``multi-fix2`` takes its value as 0. The pages refilled into a
new slot stay charged to the memcg but nothing holds them: a leak the replay's
conservation check (``usage == held + stocked + children``) reports at the first
such refill. Without the check the leak grows until the memcg's honest charges
fail at its limit, where the kernel would invoke the memcg OOM killer: Hugh
Dickins, fix 3 (29 Apr 2025): "Fix 2 has been giving me lots of memcg OOM kills
not seen before". Fix 3 (model ``multi``) stores ``nr_pages``.

**The > batch refill.** Before the multi-memcg stock (model ``single``, v6.15) a
release added its pages to the stock and, past ``MEMCG_CHARGE_BATCH``, drained the
whole stock; since v6.16 (``multi``) a release of more than the batch bypasses the
stock (Jakub Kicinski's review, 23 Apr 2025: "the cgroup may retain some stock").
:func:`netperf_size_mix` gives some netperf flows large messages to count how
often a release exceeds the batch and what the full drain costs in walks.

All replays use the faithful port (:mod:`memcglab.replay`) for the step-by-step
views and the compiled engine for the mixes (byte-identical results). The study's
interface follows :mod:`memcglab.studies`: :class:`HistoryParams` (``from_notebook``)
and :func:`run` here; figures, ``summary``, ``claims`` and ``conclusion`` in
:mod:`memcglab.studies.s05_history.views`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from memcglab import registry
from memcglab.engine import replay_compiled
from memcglab.kernel.memcontrol import MemcgEvent
from memcglab.kernel.observer import Observer
from memcglab.replay import InvariantViolation, Replayer, replay
from memcglab.trace import OP_CGROUP, OP_CHARGE, OP_UNCHARGE, Trace, parse_text, to_text
from memcglab.workloads import NetperfRxSpec, netperf_rx
from memcglab.workloads.common import PAGE_SIZE

__all__ = [
    "BATCH_DEMO", "FIX2_DEMO", "HistoryParams", "HistoryResults", "first_violation",
    "leak_growth", "limit_tenants", "model_walks", "netperf_size_mix", "operation_text",
    "refill_sizes", "run", "step_log", "tenants", "walkthrough",
]

#: Two CPUs, one memcg: each refill into a new slot loses its pages under fix 2.
FIX2_DEMO = """memcglab-trace 1
cpus 2
cgroup 1 0
charge 0 1 3
charge 0 1 3
uncharge 1 1 3
charge 1 1 3
"""
#: One CPU: a stocked memcg releases more than the batch, then charges again.
BATCH_DEMO = """memcglab-trace 1
cpus 1
cgroup 1 0
charge 0 1 100
charge 0 1 3
uncharge 0 1 100
charge 0 1 3
"""


def operation_text(trace: Trace, index: int) -> str:
    """Operation ``index`` (0-based) of ``trace`` in the text format.

    >>> operation_text(parse_text(FIX2_DEMO), 1)
    'charge 0 1 3'
    """
    return to_text(Trace(trace.cpus, trace.ops[index:index + 1])).splitlines()[-1]


def first_violation(trace: Trace, model: str = "multi-fix2") -> dict | None:
    """Where ``replay(..., check=True)`` stops, or None when the whole trace passes.

    >>> v = first_violation(parse_text(FIX2_DEMO))
    >>> v["operation"], v["op_number"]
    ('charge 0 1 3', 2)
    >>> first_violation(parse_text(FIX2_DEMO), "multi") is None
    True
    """
    try:
        replay(trace, model, check=True)
    except InvariantViolation as exc:
        return {"op_number": exc.index + 1, "line": exc.line,
                "operation": operation_text(trace, exc.index), "message": exc.message}
    return None


def _leaked(replayer: Replayer) -> int:
    """Pages charged that no trace holder and no stock accounts for, over all memcgs."""
    m = replayer.machine
    stocked = m.stocked_pages()
    return sum(c.memory.usage - replayer.held.get(i, 0) - stocked.get(i, 0)
               - sum(k.memory.usage for k in c.children) for i, c in m.memcgs.items())


def _stocked(replayer: Replayer) -> int:
    return sum(replayer.machine.stocked_pages().values())


def walkthrough(trace: Trace, models: Sequence[str] = ("multi-fix2", "multi")) -> pd.DataFrame:
    """The state after every operation, per model: usage, held, stocked, leaked pages."""
    rows = []
    for model in models:
        r = Replayer(trace.cpus, model)
        for i in range(len(trace.ops)):
            r.run(Trace(trace.cpus, trace.ops[i:i + 1]))
            usage = sum(c.memory.usage for c in r.machine.root_mem_cgroup.children)
            rows.append({"model": model, "op_number": i + 1, "operation": operation_text(trace, i),
                         "usage": usage, "held": sum(r.held.values()),
                         "stocked": _stocked(r), "leaked": _leaked(r)})
    return pd.DataFrame(rows)


def step_log(trace: Trace, models: Sequence[str] = ("single", "multi")) -> pd.DataFrame:
    """The port's event log of each operation, per model, and the pages left stocked."""
    rows = []
    for model in models:
        obs = Observer(log=[])
        r = Replayer(trace.cpus, model, slots=1, observer=obs)
        for i in range(len(trace.ops)):
            start = len(obs.log)
            r.run(Trace(trace.cpus, trace.ops[i:i + 1]))
            events = "; ".join(" ".join(str(x) for x in e) for e in obs.log[start:])
            rows.append({"model": model, "op_number": i + 1, "operation": operation_text(trace, i),
                         "events": events, "walks": obs.walks, "stocked": _stocked(r)})
    return pd.DataFrame(rows)


def tenants(trace: Trace) -> np.ndarray:
    """IDs of the memcgs no other memcg has as parent (the workload's leaves)."""
    cg = trace.ops[trace.ops["op"] == OP_CGROUP]
    return cg["memcg"][~np.isin(cg["memcg"], cg["parent"])]


def limit_tenants(trace: Trace, max_pages: int) -> Trace:
    """A copy of ``trace`` whose leaf memcgs are created with ``max=max_pages``."""
    ops = trace.ops.copy()
    leaf = (ops["op"] == OP_CGROUP) & np.isin(ops["memcg"], tenants(trace))
    ops["arg"][leaf] = max_pages
    return Trace(trace.cpus, ops, trace.source)


class _Sampler(Replayer):
    """A faithful replay that samples the leak every ``every`` operations, after the
    first failed charge and after the last operation (:meth:`finish`)."""

    def __init__(self, cpus: int, model: str, every: int) -> None:
        super().__init__(cpus, model)
        self.every, self.samples, self.first_failure = every, [], None

    def step(self, op: int, cpu: int, memcg_id: int, parent: int, arg: int,
             kmem: int = 0) -> None:
        super().step(op, cpu, memcg_id, parent, arg, kmem)
        first = bool(self.failed_charges) and self.first_failure is None
        if first:
            self.first_failure = self.ops
        if first or self.ops % self.every == 0:
            self._sample()

    def _sample(self) -> None:
        ooms = sum(c.memory_events_local[MemcgEvent.MEMCG_OOM]
                   for c in self.machine.memcgs.values())
        self.samples.append({"model": self.model, "ops": self.ops, "leaked": _leaked(self),
                             "failed_charges": self.failed_charges, "oom_events": ooms})

    def finish(self) -> None:
        """Sample the state after the last operation unless that is sampled already."""
        if not self.samples or self.samples[-1]["ops"] != self.ops:
            self._sample()


def leak_growth(trace: Trace, models: Sequence[str] = ("multi-fix2", "multi"),
                points: int = 100) -> tuple[pd.DataFrame, dict[str, int | None]]:
    """Leaked pages, failed charges and memcg OOM events over the trace, per model.

    Returns the samples and, per model, the number of the first operation whose charge
    failed (None if none did). A model's samples are taken about ``points`` times at
    even steps, after its first failed charge and after the trace's last operation, so
    its last row is the state at the end and the row whose ``ops`` is the first failure
    is the state just after it.
    """
    every = max(1, len(trace.ops) // points)
    frames, first = [], {}
    for model in models:
        s = _Sampler(trace.cpus, model, every)
        s.run(trace)
        s.finish()
        frames.append(pd.DataFrame(s.samples))
        first[model] = s.first_failure
    return pd.concat(frames, ignore_index=True), first


def netperf_size_mix(spec: NetperfRxSpec, small_bytes: int, large_bytes: int,
                     large_share: float) -> Trace:
    """``spec``'s netperf receive mix with ``large_share`` of the flows sending large messages.

    Each flow keeps one message size for the whole run (netperf's ``-m``): the first
    ``round(large_share * clients)`` flows send ``large_bytes``, the others
    ``small_bytes``; a message charges and releases ``ceil(size / PAGE_SIZE)`` pages.
    """
    if not 0.0 <= large_share <= 1.0:
        raise ValueError(f"large_share={large_share!r}: must be between 0 and 1")
    for name, size in (("small_bytes", small_bytes), ("large_bytes", large_bytes)):
        if not isinstance(size, int) or size < 1:
            raise ValueError(f"{name}={size!r}: must be a positive number of bytes")
    trace = netperf_rx(replace(spec, pages_per_message=1))
    ops = trace.ops.copy()
    leaves = np.sort(tenants(trace))
    n_large = round(large_share * len(leaves))
    pages = np.where(np.arange(len(leaves)) < n_large, -(-large_bytes // PAGE_SIZE),
                     -(-small_bytes // PAGE_SIZE))
    moves = np.isin(ops["op"], (OP_CHARGE, OP_UNCHARGE))
    ops["arg"][moves] = pages[np.searchsorted(leaves, ops["memcg"][moves])]
    return Trace(trace.cpus, ops, f"<netperf_size_mix {large_share:g}>")


def refill_sizes(trace: Trace, batch: int = 64) -> dict[str, float]:
    """How many releases (``uncharge``: refill_stock calls) exceed the batch, and their pages.

    >>> refill_sizes(parse_text(BATCH_DEMO))  # doctest: +NORMALIZE_WHITESPACE
    {'releases': 1, 'releases_over_batch': 1, 'share_over_batch': 1.0,
     'pages_share_over_batch': 1.0}
    """
    rel = trace.ops["arg"][trace.ops["op"] == OP_UNCHARGE].astype(np.int64)
    over = rel > batch
    n = len(rel)
    return {"releases": n, "releases_over_batch": int(over.sum()),
            "share_over_batch": float(over.mean()) if n else 0.0,
            "pages_share_over_batch": float(rel[over].sum() / rel.sum()) if n else 0.0}


def model_walks(trace: Trace, configs: Sequence[tuple[str, int]], batch: int = 64
                ) -> pd.DataFrame:
    """Walks, stock hits and refill sizes per message for each (model, slots) configuration.

    ``charges``, ``walks``, ``stock_hits``, ``evictions`` and ``drains`` are the replay's
    exact totals (:data:`memcglab.events.EVENT_DOCS`); a message is one charge.
    ``refill_calls`` counts refill_stock calls: every release (``uncharge``) and the
    surplus refill after each charge of fewer than ``batch`` pages that walked.
    """
    charges = trace.ops[trace.ops["op"] == OP_CHARGE]
    messages = len(charges)
    ids, first = np.unique(charges["memcg"], return_index=True)
    small = ids[charges["arg"][first] < batch]  # a flow's charges all have one size
    over = refill_sizes(trace, batch)["releases_over_batch"]
    rows = []
    for model, slots in configs:
        _, ev = replay_compiled(trace, model, slots=slots, batch=batch, events=True)
        t = ev.totals()
        walked = ev.per_memcg["miss_absent"] + ev.per_memcg["miss_short"]
        refills = t["uncharges"] + int(walked[np.isin(ev.memcg_ids, small)].sum())
        rows.append({"model": model, "slots": slots, "config": _label(model, slots),
                     "charges": messages, "walks": t["walks"], "stock_hits": t["stock_hits"],
                     "evictions": t["evictions"], "drains": t["drains"],
                     "walks_per_message": t["walks"] / messages,
                     "hit_ratio": t["stock_hits"] / messages,
                     "refill_calls": refills, "refills_over_batch": over,
                     "refills_over_batch_share": over / refills if refills else 0.0})
    return pd.DataFrame(rows)


def _label(model: str, slots: int) -> str:
    entry = registry.model(model)
    if not entry.multi:  # one cached memcg per CPU: no slots to name
        return f"{model} ({entry.kernel_version})"
    return f"{model}, {slots} slot{'s' if slots > 1 else ''}"


# ------------------------------------------------------------------ the study


@dataclass(frozen=True)
class HistoryParams:
    """The problem sizes of study 5. Each default says where it comes from."""

    #: the leak's workload: the multi-memcg thread's receive mix, small enough for the faithful
    #: replay (each message a 3-page charge and its release).
    leak: NetperfRxSpec = field(default_factory=lambda: NetperfRxSpec(
        cpus=8, clients=8, messages=20_000))
    #: memory.max of each tenant: 512 pages (2 MiB), far above the at most
    #: (2 * queue_depth - 1) * 3 = 21 pages a tenant's queue holds; what its stocks
    #: hold beyond that, the drain on reaching the limit gives back.
    tenant_max_pages: int = 512
    #: the > batch workload: 36 clients, as the multi-memcg thread's largest row, on 16 CPUs.
    mix: NetperfRxSpec = field(default_factory=lambda: NetperfRxSpec(
        cpus=16, clients=36, messages=100_000))
    #: netperf's -m 10K of the multi-memcg thread (3 pages) and a bulk sender's 1 MiB (256 pages).
    small_bytes: int = 10 * 1024
    large_bytes: int = 1 << 20
    #: fractions of the flows that send the large messages.
    large_shares: tuple[float, ...] = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0)
    #: (model, slots) replayed on each mix: v6.15; v6.16 cut to one slot, which
    #: differs from v6.15 only on > batch releases; v6.16 as merged.
    configs: tuple[tuple[str, int], ...] = (("single", 1), ("multi", 1), ("multi", 7))

    def __post_init__(self) -> None:
        if not 1 <= self.tenant_max_pages <= 1 << 30:
            raise ValueError(f"tenant_max_pages={self.tenant_max_pages}: must be between 1 "
                             "and 2^30")
        if not self.large_shares or any(not 0 <= x <= 1 for x in self.large_shares):
            raise ValueError(f"large_shares={self.large_shares}: need fractions in [0, 1]")
        if self.large_bytes < 1:
            raise ValueError(f"large_bytes={self.large_bytes}: must be >= 1")

    @classmethod
    def from_notebook(cls, quick: bool = False, seed: int = 0, leak_messages: int = 20_000,
                      tenant_max_pages: int = 512, mix_messages: int = 100_000,
                      large_kib: int = 1024) -> HistoryParams:
        """From the notebook's parameters; ``quick`` cuts the mix to 20,000 messages and
        four shares (the leak replay is already small)."""
        if not isinstance(large_kib, int) or isinstance(large_kib, bool) or large_kib < 1:
            raise ValueError(f"large_kib={large_kib!r}: must be an integer >= 1")
        shares = (0.0, 0.25, 0.5, 1.0) if quick else cls.large_shares
        if quick:
            mix_messages = min(mix_messages, 20_000)
        return cls(leak=NetperfRxSpec(cpus=8, clients=8, messages=leak_messages, seed=seed),
                   tenant_max_pages=tenant_max_pages, large_bytes=large_kib * 1024,
                   mix=NetperfRxSpec(cpus=16, clients=36, messages=mix_messages, seed=seed),
                   large_shares=shares)


@dataclass
class HistoryResults:
    """Everything study 5 computes; the notebook shows it part by part."""

    fix2_demo: pd.DataFrame
    demo_violation: dict | None
    leak_trace: Trace
    trace_violation: dict | None
    fix3_passes: bool
    growth: pd.DataFrame
    first_failure: dict[str, int | None]
    batch_log: pd.DataFrame
    mix: pd.DataFrame
    #: where the check stops fix 3 (``multi``) on the demo and on the trace (None: passes)
    fix3_demo_violation: dict | None
    fix3_trace_violation: dict | None
    params: HistoryParams


def run(p: HistoryParams) -> HistoryResults:
    """Replay the demos, the limited netperf mix and the > batch mixes."""
    demo = parse_text(FIX2_DEMO, "<FIX2_DEMO>")
    trace = limit_tenants(netperf_rx(p.leak), p.tenant_max_pages)
    fix3_demo, fix3_trace = first_violation(demo, "multi"), first_violation(trace, "multi")
    passes = fix3_demo is None and fix3_trace is None
    growth, first = leak_growth(trace)
    frames = []
    for share in p.large_shares:
        mix = netperf_size_mix(p.mix, p.small_bytes, p.large_bytes, share)
        frames.append(model_walks(mix, p.configs).assign(
            large_share=share, pages_share_over_batch=refill_sizes(mix)["pages_share_over_batch"]))
    return HistoryResults(walkthrough(demo), first_violation(demo), trace,
                          first_violation(trace), passes, growth, first,
                          step_log(parse_text(BATCH_DEMO, "<BATCH_DEMO>")),
                          pd.concat(frames, ignore_index=True), fix3_demo, fix3_trace, p)

