"""Study 3's netperf scenarios and their exact counts under the multi stock and the RFC's.

Where a message's pages are released decides how the RFC's page_counter stock
(``pcstock``) behaves: it keeps at most a batch per CPU and counter and walks the
hierarchy for any excess, so pages freed on a CPU other than the one that charged
them return to the counters through walks, while the multi stock (``multi``) keeps
them in the freeing CPU's slot. A :class:`Scenario` fixes the three choices that
place the release, each an option of :func:`memcglab.workloads.netperf_paired`
(= :func:`~memcglab.workloads.netperf_rx` when tasks move independently):

* ``release``: the issue's three placements map onto two options, because in the
  receive mix a message is *charged in softirq* (over loopback, ``netif_rx`` runs the
  softirq on the sender's CPU; with RSS, on the queue's CPU): "same CPU" (the
  charging CPU) and "softirq CPU" are one CPU, ``release="softirq"``; "reader's CPU"
  is ``release="task"`` (:data:`RELEASE_PLACEMENTS`);
* ``placement``: where the sender and the reader start, ``spread`` (two CPUs) or
  ``paired`` (one CPU, wake_affine);
* ``migrate``: whether the pair moves ``independent``-ly (netperf_rx) or
  ``together``.

:func:`count_runs` replays every (scenario, client count, seed) trace through both
stocks with the compiled engine and keeps the event totals, the usage-line transfers
per message split into shared and private lines
(:func:`memcglab.queueing.line_counts`) and the cost model's coefficients per
message (:func:`memcglab.cost.coefficients`); :func:`counts` turns them into the
report's count rows, exact for each trace.

>>> [s.label for s in scenarios(("task",), ("paired",), ("together", "independent"))]
['task/paired/together', 'task/paired/independent']
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from memcglab.engine import replay_compiled
from memcglab.models import MODELS
from memcglab.pricing import per_unit_coefficients
from memcglab.queueing import line_counts, trace_parents
from memcglab.studies import count_row
from memcglab.workloads import NetperfPairedSpec, netperf_paired

__all__ = ["ALTERNATIVES", "COUNT_QUANTITIES", "MODELS_COMPARED", "RELEASE_PLACEMENTS",
           "Scenario", "count_runs", "counts", "scenarios"]

#: the two arms: the page_counter-stock RFC's "before" (the multi stock) and "after" (the RFC)
MODELS_COMPARED: tuple[str, str] = ("multi", "pcstock")
#: the issue's release placements -> netperf_rx's ``release`` (two of them coincide)
RELEASE_PLACEMENTS: dict[str, str] = {
    "same CPU": "softirq",
    "softirq CPU": "softirq",
    "reader's CPU": "task",
}
#: the scenario axes and their options, the default first (the multi-memcg thread's receive mix)
ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "release": ("task", "softirq"),
    "placement": ("spread", "paired"),
    "migrate": ("independent", "together"),
}
#: count-row quantity -> its column in :func:`count_runs`
COUNT_QUANTITIES: dict[str, str] = {
    "walks per 1000 charges": "walks_per_1000",
    "stock hits per 1000 charges": "hits_per_1000",
    "drains per 1000 charges": "drains_per_1000",
    "shared-line transfers per message": "shared_per_msg",
}


@dataclass(frozen=True)
class Scenario:
    """Where a flow's tasks run and where its pages are released (module doc)."""

    release: str = "task"
    placement: str = "spread"
    migrate: str = "independent"

    def __post_init__(self) -> None:
        for name, valid in (("release", ALTERNATIVES["release"]),
                            ("placement", ALTERNATIVES["placement"]),
                            ("migrate", ALTERNATIVES["migrate"])):
            v = getattr(self, name)
            if v not in valid:
                raise ValueError(f"{name}={v!r}: must be one of {', '.join(valid)}")

    @property
    def label(self) -> str:
        """``release/placement/migrate``, e.g. ``"task/spread/independent"``."""
        return f"{self.release}/{self.placement}/{self.migrate}"

    @property
    def cpus_per_flow(self) -> int:
        """Hardware threads a flow keeps busy: 1 for a pair that shares a CPU and moves
        together, else 2 (a paired flow moving independently is apart after a move)."""
        return 1 if (self.placement, self.migrate) == ("paired", "together") else 2

    def spec(self, clients: int, messages: int, seed: int) -> NetperfPairedSpec:
        """The workload spec of this scenario (the netperf thread's 72 CPUs, 10 KiB messages)."""
        return NetperfPairedSpec(clients=clients, messages=messages, seed=seed,
                                 release=self.release, placement=self.placement,
                                 migrate=self.migrate)


def scenarios(releases: Sequence[str] = ALTERNATIVES["release"],
              placements: Sequence[str] = ALTERNATIVES["placement"],
              migrates: Sequence[str] = ALTERNATIVES["migrate"]) -> list[Scenario]:
    """Every combination, in the order given (the default scenario first)."""
    return [Scenario(r, p, m) for r, p, m in itertools.product(releases, placements, migrates)]


def count_runs(clients: Sequence[int], cases: Sequence[Scenario], seeds: Sequence[int],
               messages: int, models: Sequence[str] = MODELS_COMPARED,
               slots: int = 7) -> pd.DataFrame:
    """One row per (scenario, clients, seed, model): totals, rates and per-message loads.

    Columns: ``release``, ``placement``, ``migrate``, ``scenario`` (the label),
    ``clients``, ``seed``, ``model``, ``messages``, the event totals, the rates of
    :data:`COUNT_QUANTITIES`, ``private_per_msg``, ``shared_names`` / ``shared``
    (tuples, one per shared usage line) and ``coef`` (cost units per message,
    ``c2c_transfer`` included: the throughput model zeroes it, its lines price them).
    """
    bad = [m for m in models if m not in MODELS]
    if bad:
        raise ValueError(f"models={list(models)}: unknown {bad}; valid: {', '.join(MODELS)}")
    rows = []
    for case in cases:
        for n in clients:
            for seed in seeds:
                trace = netperf_paired(case.spec(int(n), messages, int(seed)))
                parents = trace_parents(trace)
                for model in models:
                    _, ev = replay_compiled(trace, model=model, slots=slots, seed=int(seed),
                                            events=True)
                    t = {k: int(v) for k, v in ev.totals().items()}
                    lines = line_counts(ev, parents, messages)
                    per = 1000.0 / t["charges"]
                    rows.append({
                        "release": case.release, "placement": case.placement,
                        "migrate": case.migrate, "scenario": case.label,
                        "clients": int(n), "seed": int(seed), "model": model,
                        "messages": messages, **t,
                        "walks_per_1000": t["walks"] * per,
                        "hits_per_1000": t["stock_hits"] * per,
                        "drains_per_1000": t["drains"] * per,
                        "shared_per_msg": float(lines.shared.sum()),
                        "private_per_msg": lines.private,
                        "shared_names": lines.names,
                        "shared": tuple(lines.shared.tolist()),
                        "coef": per_unit_coefficients(ev, model, slots, messages),
                    })
    return pd.DataFrame(rows)


def counts(runs: pd.DataFrame, clients: int | None = None, study: str = "03") -> list[dict]:
    """Count rows at ``clients`` (default the most): each quantity of
    :data:`COUNT_QUANTITIES` per scenario and stock, the mean over the seeds."""
    top = int(runs["clients"].max()) if clients is None else int(clients)
    sub = runs[runs["clients"] == top]
    if sub.empty:
        raise ValueError(f"clients={top}: no runs; client counts: {sorted(set(runs['clients']))}")
    seeds = sub["seed"].nunique()
    note = (f"mean of {seeds} seeds, exact for each trace; {int(sub['messages'].iloc[0])} "
            "messages, 72 CPUs")
    rows = []
    for label, g in sub.groupby("scenario", sort=False):
        for model in MODELS_COMPARED:
            m = g[g["model"] == model]
            for quantity, col in COUNT_QUANTITIES.items():
                rows.append(count_row(study, quantity,
                                      f"{model}, netperf {top} clients, {label}",
                                      float(round(m[col].mean(), 4)), note))
    return rows
