"""Study 6's predictions: each stock's throughput change from the contention model, priced.

For one (workload, machine, baseline, model) the quantity is the change in throughput
per flow, in % of the baseline's (a loss is negative), from
:func:`memcglab.queueing.chargepath_throughput` at the workload's flow count: each flow
a closed loop of its CPU time (the work outside memcg plus the charge path's cycles
from :mod:`memcglab.cost`, line transfers left out) and the shared page_counter usage
lines it queues for (the transfers :func:`~memcglab.studies.v4_counts.count_runs`
counted). Baseline and model are priced at the same point: the same hardware costs,
the same modelling alternative and the same trace seed, so what differs is the stock.

The space (:func:`prediction_space`) holds the machine profile's hardware priors (the
cost model's, the line transfers', the clock and ``smt_gain``), the study's own priors
for the work outside memcg per message (:data:`OTHER_CYCLES`; netperf_rx takes the
profile's), the share of a flow's cycles on its busiest CPU and the share of shared-line
transfers that cross sockets, the case's modelling alternatives (where tasks start,
where pages are released or acknowledged) and the trace seeds.

Every other input of :class:`~memcglab.queueing.ChargePathParams` is the machine's
fact (``cpus``, ``smt``) or the case's (``cpus_per_flow``). A case that is not
``steady`` (:class:`~memcglab.studies.v4_counts.Case`) has no load per message, so
its change is exactly 0 and its Sobol indices are undefined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from memcglab.cost import CostParams
from memcglab.hardware import MachineProfile
from memcglab.queueing import ChargePathLoad, ChargePathParams, chargepath_throughput
from memcglab.studies.v4_counts import CASES
from memcglab.uncertainty import Alternative, Prior, Space, UncertainResult, summarise

__all__ = ["OTHER_CYCLES", "PAIRS", "PREDICTION_COLUMNS", "change_fn", "prediction_space",
           "predict", "predictions_frame"]

#: (baseline, model) pairs: v4 against v6.16's stock and against the RFC
PAIRS: tuple[tuple[str, str], ...] = (("multi", "pcstock"), ("multi", "pcstock-v4"),
                                      ("pcstock", "pcstock-v4"))
#: columns of predictions.parquet
PREDICTION_COLUMNS: tuple[str, ...] = ("workload", "machine", "baseline", "model",
                                       "predicted_change_pct", "low", "high")

_RR_SOURCE = ("my inference, not a measurement: a loopback request/response round trip "
              "runs two sendmsg/recvmsg pairs, two softirq receives and two wakeups; "
              "10-100 k cycles is 3-40 us at 2.5-3.5 GHz, the order of the tens of "
              "thousands of transactions per second per instance netperf reports on "
              "loopback")
#: the work outside memcg per unit of each case, cycles (all CPUs of a flow together);
#: netperf_rx takes the profile's other_cycles_per_packet (its 10 KiB message)
OTHER_CYCLES: dict[str, Prior] = {
    "tcp_rr": Prior("other_cycles", "cycles", 10_000.0, 30_000.0, 100_000.0, "loguniform",
                    _RR_SOURCE),
    "udp_rr": Prior("other_cycles", "cycles", 8_000.0, 25_000.0, 80_000.0, "loguniform",
                    _RR_SOURCE + "; UDP skips TCP's ACK and retransmit queue work"),
    "sctp_rr": Prior("other_cycles", "cycles", 12_000.0, 40_000.0, 120_000.0, "loguniform",
                     _RR_SOURCE + "; SCTP adds chunk bundling and a SACK per message"),
    "tcp_stream_1k": Prior("other_cycles", "cycles", 1_500.0, 4_000.0, 12_000.0,
                           "loguniform",
                           "my inference: a send syscall and its share of the receive "
                           "(about 1-3 k cycles of fixed cost) plus a 1 KiB copy each way "
                           "at the data_copy rate of other_cycles_per_packet"),
    "tcp_stream_64k": Prior("other_cycles", "cycles", 20_000.0, 75_000.0, 500_000.0,
                            "loguniform",
                            "my inference: other_cycles_per_packet's range for 10 KiB "
                            "scaled to 64 KiB (copy-dominated: cycles grow with bytes)"),
    "bw_unix": Prior("other_cycles", "cycles", 20_000.0, 75_000.0, 500_000.0, "loguniform",
                     "my inference: a 64 KiB AF_UNIX write and read, copy-dominated as "
                     "tcp_stream_64k (no memcg work per transfer, so it cancels)"),
    "madvise_fault": Prior("other_cycles", "cycles", 1_500.0, 2_500.0, 6_000.0, "triangular",
                           "study 3's fault_cycles (about 1 us per 4 KiB anonymous fault "
                           "and its share of the zap at 2.5 GHz), widened: my inference"),
}
_BUSIEST = Prior("busiest_cpu_share", "fraction", 0.5, 0.6, 1.0, "triangular",
                 "chargepath's pipelining assumption: a loopback flow's send and receive "
                 "run on its two CPUs; 0.5 is an even split, 1 all on one",
                 "my inference from where loopback's softirq runs (the sender's CPU)")
_SMT_GAIN = Prior("smt_gain", "fraction", 0.05, 0.25, 0.45, "triangular",
                  "fallback for a profile without smt_gain: the range of "
                  "data/hardware/priors.toml's smt_gain (Marr et al. 2002; Bulpin and "
                  "Pratt 2004)")


def _cross(profile: MachineProfile) -> Prior:
    if profile.sockets <= 1:
        return Prior("cross_socket_fraction", "fraction", 0.0, 0.0, 0.0, "point",
                     "one socket: no transfer crosses")
    even = 1.0 - 1.0 / profile.sockets
    return Prior("cross_socket_fraction", "fraction", 0.5 * even, even, even, "triangular",
                 f"{profile.sockets} sockets: a shared line's next writer is on another "
                 f"socket with probability {even:g} when writers are spread evenly",
                 "lower when the scheduler keeps consecutive writers on one socket; my "
                 "inference")


def prediction_space(profile: MachineProfile, case: str, choices: Mapping[str, Sequence],
                     seeds: Sequence[int]) -> Space:
    """The inputs of one case's prediction on one machine (see the module doc)."""
    names = ("c2c_transfer", "c2c_transfer_cross_socket", "contended_rmw_per_sharer",
             "cpu_ghz", *CostParams.names())
    priors = {n: profile.priors[n] for n in dict.fromkeys(names)}
    other = OTHER_CYCLES.get(case) or replace(profile.priors["other_cycles_per_packet"],
                                              name="other_cycles")
    priors |= {"other_cycles": other, "smt_gain": profile.priors.get("smt_gain", _SMT_GAIN),
               "cross_socket_fraction": _cross(profile)}
    if CASES[case].cpus_per_flow == 1:
        priors["busiest_cpu_share"] = Prior("busiest_cpu_share", "fraction", 1.0, 1.0, 1.0,
                                            "point", "one task per flow: all on one CPU")
    else:
        priors["busiest_cpu_share"] = _BUSIEST
    # c2c_transfer prices the line stations; count_runs zeroed the cost model's use of it.
    alts = [Alternative(k, tuple(v)) for k, v in choices.items() if len(v) > 1]
    return Space(list(priors.values()), alts, seeds=list(seeds))


def _throughput(row: pd.Series, d: Mapping[str, np.ndarray], profile: MachineProfile,
                cpus_per_flow: int) -> np.ndarray:
    cost = np.column_stack([d[n] for n in CostParams.names()])
    memcg = cost @ np.asarray(row["coef"], dtype=float)
    names = tuple(row["shared_names"]) or ("usage:none",)
    shared = list(row["shared"]) or [0.0]
    load = ChargePathLoad(clients=[int(row["flows"])], names=names, shared=[shared],
                          private=[float(row["private"])], memcg_cycles=memcg[:, None])
    params = ChargePathParams(
        other_cycles=d["other_cycles"], busiest_cpu_share=d["busiest_cpu_share"],
        ghz=d["cpu_ghz"], c2c_cycles=d["c2c_transfer"],
        c2c_cross_cycles=d["c2c_transfer_cross_socket"],
        cross_socket_fraction=d["cross_socket_fraction"],
        cycles_per_sharer=d["contended_rmw_per_sharer"], cpus=float(profile.cpus),
        smt=float(profile.smt), smt_gain=d["smt_gain"], cpus_per_flow=float(cpus_per_flow))
    return chargepath_throughput(load, params).per_flow_rate[:, 0]


def change_fn(runs: pd.DataFrame, case: str, machine: str, baseline: str, model: str,
              profile: MachineProfile):
    """The vectorised quantity: % change of ``model``'s throughput per flow vs ``baseline``.

    ``runs`` is :func:`~memcglab.studies.v4_counts.count_runs`' frame; points are grouped
    by their trace (choice and seed), each group priced in one batch.
    """
    sub = runs[(runs["workload"] == case) & (runs["machine"] == machine)]
    table = {(r["choice"], r["seed"], r["model"]): r for _, r in sub.iterrows()}
    alts = list(CASES[case].alternatives)
    cpf = CASES[case].cpus_per_flow
    if not table:
        raise ValueError(f"no runs of {case} on {machine}")

    def fn(d) -> np.ndarray:
        out = np.empty(d.n)
        labels = np.array([",".join(f"{k}={d[k][i]}" for k in sorted(alts))
                           if alts else "" for i in range(d.n)]) if alts else \
            np.full(d.n, "", dtype=object)
        seeds = np.asarray(d["seed"], dtype=int)
        for label, seed in set(zip(labels.tolist(), seeds.tolist(), strict=True)):
            idx = np.flatnonzero((labels == label) & (seeds == seed))
            sub_d = {k: np.asarray(d[k])[idx] for k in d.values}
            base = _throughput(table[(label, seed, baseline)], sub_d, profile, cpf)
            new = _throughput(table[(label, seed, model)], sub_d, profile, cpf)
            out[idx] = (new / base - 1.0) * 100.0
        return out
    return fn


def predict(runs: pd.DataFrame, case: str, machine: str, profile: MachineProfile,
            baseline: str, model: str, seeds: Sequence[int], n: int = 256,
            margin_pct: float = 2.0) -> UncertainResult:
    """One pair's priced change; the claim "no loss beyond ``margin_pct``" holds when the
    change is at least ``-margin_pct`` (break-even at that threshold)."""
    space = prediction_space(profile, case, CASES[case].alternatives, seeds)
    fn = change_fn(runs, case, machine, baseline, model, profile)
    return summarise(fn, space, n=n, holds=lambda y: y >= -margin_pct, threshold=-margin_pct,
                     unit="%")


def predictions_frame(results: Mapping[tuple[str, str, str, str], UncertainResult]
                      ) -> pd.DataFrame:
    """predictions.parquet's rows from ``{(workload, machine, baseline, model): result}``."""
    rows = [{"workload": w, "machine": m, "baseline": b, "model": mo,
             "predicted_change_pct": r.median, "low": r.low, "high": r.high}
            for (w, m, b, mo), r in results.items()]
    return pd.DataFrame(rows, columns=list(PREDICTION_COLUMNS))
