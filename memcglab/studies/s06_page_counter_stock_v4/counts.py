"""Study 6's workloads and their exact event counts under multi, pcstock and pcstock-v4.

Each :class:`Case` is one benchmark of the lab's workload generators, sized to a
machine (one flow per two hardware threads: a sender and a receiver, or one faulting
task per cgroup), with the modelling alternatives its generator offers (where tasks
start, where pages are released or acknowledged). :func:`count_runs` replays every
(case, machine, alternative, seed) trace through each stock model with the compiled
engine and keeps, per replay, what the contention model needs: the event totals, the
usage-line transfers per message split into shared lines and private ones
(:func:`memcglab.queueing.line_counts`). The counts are the study's tables; its
predictions are ``memcglab predict``'s, from scenario files
(:mod:`memcglab.studies.s06_page_counter_stock_v4.scenarios`).

A *message* is the benchmark's unit of work: a netperf message or send, an RR
transaction, a bw_unix pair's transfer, a fault of the madvise loop.

>>> c = CASES["tcp_rr"]
>>> trace, messages, flows = c.trace(cpus=8, size=40, seed=0, placement="spread")
>>> messages, flows
(40, 4)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from memcglab.engine import replay_compiled
from memcglab.models import MODELS
from memcglab.queueing import line_counts, trace_parents
from memcglab.trace import Trace
from memcglab.workloads import (
    LoopbackRRSpec,
    LoopbackStreamSpec,
    MadviseFaultSpec,
    NetperfRxSpec,
    UnixStreamSpec,
    loopback_rr,
    loopback_stream,
    madvise_fault,
    netperf_rx,
    unix_stream,
)

__all__ = ["CASES", "COMPARED", "Case", "count_runs", "flows_for"]

#: the three stocks compared: v6.16's multi stock, the RFC and v4
COMPARED: tuple[str, ...] = ("multi", "pcstock", "pcstock-v4")


def flows_for(cpus: int) -> int:
    """Flows that fill ``cpus`` hardware threads with two busy tasks each.

    >>> flows_for(72), flows_for(224)
    (36, 112)
    """
    return max(1, cpus // 2)


@dataclass(frozen=True)
class Case:
    """One benchmark: a trace maker, its unit of work and its modelling alternatives.

    ``make(cpus, size, seed, **choice)`` returns ``(trace, messages, flows)``;
    ``alternatives`` maps each choice to its options (the first is the default);
    ``cpus_per_flow`` is the hardware threads one flow keeps busy. ``steady`` is False
    for a benchmark whose messages charge nothing once it runs (its trace's charges are
    setup and teardown, which a real run of millions of messages amortises to nothing):
    its per-message load is zero in every model, whatever a short trace's setup costs.
    """

    name: str
    what: str
    per: str
    make: Callable[..., tuple[Trace, int, int]]
    alternatives: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    cpus_per_flow: int = 2
    steady: bool = True

    def trace(self, cpus: int, size: int, seed: int, **choice: Any) -> tuple[Trace, int, int]:
        """The case's trace on ``cpus`` hardware threads: ``(trace, messages, flows)``."""
        for k, v in choice.items():
            if k not in self.alternatives or v not in self.alternatives[k]:
                valid = ", ".join(f"{a}={list(o)}" for a, o in self.alternatives.items())
                raise ValueError(f"{self.name}: choice {k}={v!r} is not valid; valid: "
                                 f"{valid or 'none'}")
        return self.make(cpus, size, seed, **choice)

    def choices(self) -> list[dict[str, Any]]:
        """Every combination of the alternatives (one empty dict when there are none)."""
        keys = list(self.alternatives)
        return [dict(zip(keys, combo, strict=True))
                for combo in itertools.product(*(self.alternatives[k] for k in keys))]


def _netperf(cpus: int, size: int, seed: int, placement: str = "spread",
             release: str = "task") -> tuple[Trace, int, int]:
    n = flows_for(cpus)
    spec = NetperfRxSpec(cpus=cpus, clients=n, messages=size, placement=placement,
                         release=release, seed=seed)
    return netperf_rx(spec), size, n


def _rr(protocol: str) -> Callable[..., tuple[Trace, int, int]]:
    def make(cpus: int, size: int, seed: int, placement: str = "spread"
             ) -> tuple[Trace, int, int]:
        n = flows_for(cpus)
        spec = LoopbackRRSpec(protocol=protocol, cpus=cpus, instances=n, transactions=size,
                              placement=placement, seed=seed)
        return loopback_rr(spec), size, n
    return make


def _stream(message_size: int) -> Callable[..., tuple[Trace, int, int]]:
    def make(cpus: int, size: int, seed: int, ack: str = "backlog"
             ) -> tuple[Trace, int, int]:
        n = flows_for(cpus)
        spec = LoopbackStreamSpec(cpus=cpus, instances=n, messages=size,
                                  message_size=message_size, ack=ack, seed=seed)
        return loopback_stream(spec), size, n
    return make


def _unix(cpus: int, size: int, seed: int) -> tuple[Trace, int, int]:
    # bw_unix charges the socket objects once per pair; a transfer charges nothing,
    # so the messages are the transfers the pairs would make, ``size`` of them.
    n = flows_for(cpus)
    return unix_stream(UnixStreamSpec(cpus=cpus, pairs=n, seed=seed)), size, n


#: cgroups of the madvise loop in the throughput comparison: the RFC table's largest row
MADVISE_CGROUPS = 32


def _madvise(cpus: int, size: int, seed: int, placement: str = "spread"
             ) -> tuple[Trace, int, int]:
    # One trial of ``size // 256`` iterations of the RFC's loop (256-page regions).
    iterations = max(1, size // (MADVISE_CGROUPS * 256))
    spec = MadviseFaultSpec(cpus=cpus, cgroups=MADVISE_CGROUPS, iterations=iterations,
                            trials=1, placement=placement, seed=seed)
    return madvise_fault(spec), MADVISE_CGROUPS * 256 * iterations, MADVISE_CGROUPS


#: study 6's benchmarks, by name
CASES: dict[str, Case] = {c.name: c for c in (
    Case("netperf_rx", "the multi-memcg thread's TCP receive mix, 10 KiB messages", "message",
         _netperf,
         {"placement": ("spread", "random"), "release": ("task", "softirq")}),
    Case("tcp_rr", "netperf TCP_RR over loopback, 1-byte request and response", "transaction",
         _rr("tcp"), {"placement": ("spread", "random")}),
    Case("udp_rr", "netperf UDP_RR over loopback", "transaction", _rr("udp"),
         {"placement": ("spread", "random")}, steady=False),
    Case("sctp_rr", "netperf SCTP_RR over loopback", "transaction", _rr("sctp"),
         {"placement": ("spread", "random")}),
    Case("tcp_stream_1k", "netperf TCP_STREAM over loopback, 1 KiB sends", "send",
         _stream(1024), {"ack": ("backlog", "softirq")}),
    Case("tcp_stream_64k", "netperf TCP_STREAM over loopback, 64 KiB sends", "send",
         _stream(64 * 1024), {"ack": ("backlog", "softirq")}),
    Case("bw_unix", "lmbench bw_unix, AF_UNIX stream pairs", "transfer", _unix, steady=False),
    Case("madvise_fault", f"the RFC's fault/MADV_DONTNEED loop, {MADVISE_CGROUPS} cgroups",
         "fault", _madvise, {"placement": ("spread", "pinned")}, cpus_per_flow=1),
)}


def count_runs(cases: Sequence[str], machines: Mapping[str, int], size: int,
               seeds: Sequence[int], models: Sequence[str] = COMPARED,
               slots: int = 7) -> pd.DataFrame:
    """One row per (case, machine, choice, seed, model): totals and per-message loads.

    ``machines`` maps a machine name to its hardware threads. Columns: the keys, the
    choice (``choice``, a sorted ``k=v`` string; ``""`` for none), ``messages``,
    ``flows``, the event totals, ``shared_names`` / ``shared`` (tuples: each shared
    usage line's transfers per message) and ``private`` (per message); the last three
    are empty or zero for a case that is not ``steady``.
    """
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        raise ValueError(f"cases={list(cases)}: unknown {unknown}; valid: {', '.join(CASES)}")
    bad = [m for m in models if m not in MODELS]
    if bad:
        raise ValueError(f"models={list(models)}: unknown {bad}; valid: {', '.join(MODELS)}")
    rows = []
    for name in cases:
        case = CASES[name]
        for machine, cpus in machines.items():
            for choice in case.choices():
                label = ",".join(f"{k}={v}" for k, v in sorted(choice.items()))
                for seed in seeds:
                    trace, messages, flows = case.trace(cpus, size, int(seed), **choice)
                    parents = trace_parents(trace)
                    for model in models:
                        _, ev = replay_compiled(trace, model=model, slots=slots,
                                                seed=int(seed), events=True)
                        t = ev.totals()
                        lines = (line_counts(ev, parents, messages)
                                 if t["charges"] and case.steady else None)
                        rows.append({
                            "workload": name, "machine": machine, "cpus": cpus,
                            "choice": label, "seed": int(seed), "model": model,
                            "messages": messages, "flows": flows,
                            **{k: int(v) for k, v in t.items()},
                            "shared_names": lines.names if lines else (),
                            "shared": tuple(lines.shared.tolist()) if lines else (),
                            "private": lines.private if lines else 0.0,
                        })
    return pd.DataFrame(rows)
