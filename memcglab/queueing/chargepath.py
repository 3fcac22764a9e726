"""A throughput model of the charge path: netperf's flows queueing for shared usage lines.

Each netperf client is one closed loop (a job of the network): a message is sent,
then the next. Per message a flow spends

* **CPU time** on its busiest CPU: the non-memcg work (``other_cycles``) and the
  charge path's own cycles (``memcg_cycles``, *without* line transfers), times
  ``busiest_cpu_share``, divided by the clock, times the SMT/oversubscription
  slowdown at the current occupancy (:func:`cpu_slowdown`). Every flow has its own
  CPUs, so this is a **delay station**: flows do not queue for each other's CPUs;
  contention for cores enters through the slowdown, which depends on how many
  hardware threads the n flows occupy, not on the instantaneous queue.
* **private line transfers**: usage lines only this flow's memcg writes move
  between the flow's own CPUs (its sender's softirq charges, its receiver's
  uncharges and drains); ``c2c_cycles`` each, a delay station.
* **one queueing station per shared line** (the root's usage line and every common
  ancestor's): demand = the line's transfers per message
  (:func:`memcglab.queueing.lines.line_counts`) times its hold time per transfer,
  ``c2c_cycles`` (or ``c2c_cross_cycles`` for the ``cross_socket_fraction`` of
  transfers that cross sockets) plus ``cycles_per_sharer`` for every writing CPU
  beyond two. A line is owned by one CPU at a time, so writers queue FCFS.

Product form treats each line's hold time as exponential; a transfer's hold time is
nearly constant, and an M/D/1 queue waits half as long as an M/M/1 one, so near a
line's saturation the model errs on the slow side (its bottleneck throughput, 1/D,
is exact either way).

Why these choices. netperf's sender, softirq and receiver are busy the whole run, so
a flow's threads occupy their CPUs whether the flow is computing or stalled on a
line: the occupancy is ``n * cpus_per_flow`` threads, fixed for a given n, and the
per-flow CPU demand is a function of n only. Within one population the network is
therefore product form with fixed demands, and each client count gets its own exact
MVA (demands at that n for the whole recursion), not one recursion with demands
changing along the way. The scheduler fills idle cores before SMT siblings
(select_idle_core), so siblings pair up only past ``cpus / smt`` threads; a core
running two threads delivers ``1 + smt_gain`` times one thread's work. Past the
machine's threads, flows time-share and the demand grows with ``threads / cpus``.
Loopback sending and receiving are pipelined over the flow's CPUs, so the loop's
period is the busiest CPU's time, ``busiest_cpu_share`` of the total (1 = all on one
CPU; ``1 / cpus_per_flow`` = perfectly even).

Inputs are plain numbers (:class:`ChargePathParams`: cycles, GHz, counts), each a
scalar or a length-B array of parameter points; :meth:`ChargePathParams.from_params`
takes a mapping with the hardware priors' names (``c2c_transfer``, ``cpu_ghz``, ...).
The workload enters as :class:`ChargePathLoad`: per client count, the shared lines'
and private lines' transfers per message from the compiled engine.

>>> load = ChargePathLoad(clients=[1, 4], names=("usage:0",), shared=[[1.0], [1.0]],
...                       private=[0.0, 0.0], memcg_cycles=[0.0, 0.0])
>>> p = ChargePathParams(other_cycles=1000.0, ghz=1.0, c2c_cycles=400.0, cycles_per_sharer=0)
>>> r = chargepath_throughput(load, p)
>>> [round(float(x)) for x in r.per_flow_rate[0]]     # messages/s per flow
[1111111, 606617]
>>> r.bottleneck_names()[0]
['cpu', 'usage:0']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import ArrayLike

from memcglab.queueing.lines import LineCounts
from memcglab.queueing.mva import mva_at

__all__ = ["ChargePathParams", "ChargePathLoad", "ChargePathResult", "PARAM_ALIASES",
           "cpu_slowdown", "chargepath_throughput"]

#: hardware-prior name (data/hardware/priors.toml) -> ChargePathParams field
PARAM_ALIASES: dict[str, str] = {
    "c2c_transfer": "c2c_cycles",
    "c2c_transfer_cross_socket": "c2c_cross_cycles",
    "contended_rmw_per_sharer": "cycles_per_sharer",
    "cpu_ghz": "ghz",
    "smt_per_core": "smt",
    "other_cycles_per_packet": "other_cycles",
}


@dataclass(frozen=True)
class ChargePathParams:
    """The model's inputs; every field a scalar or a length-B array (a parameter batch).

    Defaults are round figures, not fits: the hardware priors' typical values where
    data/hardware has one (``c2c_transfer`` 150, ``contended_rmw_per_sharer`` 5,
    ``c2c_transfer_cross_socket`` 350, ``other_cycles_per_packet`` 12000 cycles,
    ``cpu_ghz`` 2.7); seed 000's 72 CPUs with 2 threads per core.
    """

    #: non-memcg CPU cycles per message, both sides of the flow together
    other_cycles: ArrayLike = 12_000.0
    #: extra charge-path cycles per message beyond ``ChargePathLoad.memcg_cycles``
    #: (0: the load's engine-priced cycles are all there is)
    memcg_extra_cycles: ArrayLike = 0.0
    #: fraction of a message's CPU cycles on the flow's busiest CPU (1/cpus_per_flow..1)
    busiest_cpu_share: ArrayLike = 0.5
    #: core clock, GHz
    ghz: ArrayLike = 2.7
    #: cycles a line is held per within-socket transfer (the line station's service)
    c2c_cycles: ArrayLike = 150.0
    #: cycles per cross-socket transfer
    c2c_cross_cycles: ArrayLike = 350.0
    #: fraction of shared-line transfers that cross sockets
    cross_socket_fraction: ArrayLike = 0.0
    #: extra cycles per transfer for each CPU writing the line beyond two
    cycles_per_sharer: ArrayLike = 5.0
    #: hardware threads of the machine
    cpus: ArrayLike = 72.0
    #: hardware threads per core, 1 to 2
    smt: ArrayLike = 2.0
    #: extra work a core does with both siblings busy, as a fraction of one thread's
    smt_gain: ArrayLike = 0.25
    #: hardware threads one flow keeps busy (sender + softirq on one, receiver on another)
    cpus_per_flow: ArrayLike = 2.0
    #: bytes per message (netperf -m 10K)
    message_bytes: ArrayLike = 10_240.0

    def __post_init__(self) -> None:
        limits = {"other_cycles": (0, np.inf), "memcg_extra_cycles": (0, np.inf),
                  "busiest_cpu_share": (0, 1), "ghz": (1e-3, np.inf),
                  "c2c_cycles": (0, np.inf), "c2c_cross_cycles": (0, np.inf),
                  "cross_socket_fraction": (0, 1), "cycles_per_sharer": (0, np.inf),
                  "cpus": (1, np.inf), "smt": (1, 2), "smt_gain": (0, 1),
                  "cpus_per_flow": (1e-3, np.inf), "message_bytes": (1e-9, np.inf)}
        sizes = set()
        for f in fields(self):
            v = np.asarray(getattr(self, f.name), dtype=float)
            lo, hi = limits[f.name]
            if v.ndim > 1 or not np.all(np.isfinite(v) & (v >= lo) & (v <= hi)):
                raise ValueError(f"{f.name}={v.tolist()}: must be a number or 1-D array of "
                                 f"numbers between {lo} and {hi}")
            if v.ndim == 1:
                sizes.add(v.size)
        if len(sizes) > 1:
            raise ValueError(f"parameter arrays have lengths {sorted(sizes)}: all must have "
                             "one length B (the batch) or be scalars")

    @classmethod
    def from_params(cls, params: Mapping[str, ArrayLike],
                    ignore: Sequence[str] = ()) -> ChargePathParams:
        """From a mapping of field names or hardware-prior names (:data:`PARAM_ALIASES`).

        Names in ``ignore`` (e.g. the cost model's parameters in the same sample) are
        skipped; any other unknown name is an error.

        >>> ChargePathParams.from_params({"c2c_transfer": 300.0, "cpu_ghz": 2.5}).c2c_cycles
        300.0
        >>> ChargePathParams.from_params({"c2c": 1.0})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: params: unknown name 'c2c'; valid: the fields other_cycles, ...
        """
        names = {f.name for f in fields(cls)}
        out: dict[str, ArrayLike] = {}
        for key, value in params.items():
            if key in ignore:
                continue
            name = PARAM_ALIASES.get(key, key)
            if name not in names:
                raise ValueError(f"params: unknown name {key!r}; valid: the fields "
                                 f"{', '.join(f.name for f in fields(cls))} or the prior "
                                 f"names {', '.join(PARAM_ALIASES)}")
            if name in out:
                raise ValueError(f"params: {key!r} sets {name!r} twice")
            out[name] = value
        return cls(**out)

    def batch(self) -> tuple[int, dict[str, np.ndarray]]:
        """The batch size B and every field as a length-B float array."""
        vals = {f.name: np.asarray(getattr(self, f.name), dtype=float) for f in fields(self)}
        b = max((v.size for v in vals.values() if v.ndim == 1), default=1)
        return b, {k: np.broadcast_to(v, (b,)) for k, v in vals.items()}


@dataclass(frozen=True)
class ChargePathLoad:
    """What the engine measured, per client count P: transfers and cycles per message.

    ``shared`` is ``(P, L)`` (one column per shared line ``names``), ``private``
    ``(P,)``. ``memcg_cycles`` is the cost model's charge-path cycles per message with
    ``c2c_transfer = 0`` (the transfers are the line stations'), ``(P,)``, or
    ``(B, P)`` when the cost parameters vary with the batch (the cost model is
    linear: ``memcglab.cost.coefficients`` of each run times each sample's costs).
    """

    clients: ArrayLike
    names: tuple[str, ...]
    shared: ArrayLike
    private: ArrayLike
    memcg_cycles: ArrayLike

    def __post_init__(self) -> None:
        c = np.asarray(self.clients)
        if c.ndim != 1 or c.size == 0 or not np.all((c >= 1) & (c == np.round(c))):
            raise ValueError(f"clients={c.tolist()}: must be a non-empty list of integers >= 1")
        shape = (c.size, len(self.names))
        cyc = np.asarray(self.memcg_cycles, dtype=float)
        for name, want in (("shared", shape), ("private", shape[:1]),
                           ("memcg_cycles", cyc.shape[:-1] + shape[:1])):
            v = np.asarray(getattr(self, name), dtype=float)
            if v.shape != want or v.ndim > 2 or not np.all(np.isfinite(v) & (v >= 0)):
                raise ValueError(f"{name} has shape {v.shape}: must be {want} of finite "
                                 "numbers >= 0 (per client count" +
                                 (", per shared line)" if name == "shared" else ")"))

    @classmethod
    def from_counts(cls, clients: Sequence[int], counts: Sequence[LineCounts],
                    memcg_cycles: Sequence[float]) -> ChargePathLoad:
        """From one :class:`~memcglab.queueing.lines.LineCounts` per client count.

        Lines missing at some client count (fewer ancestors shared) count 0 there.
        """
        names = tuple(dict.fromkeys(n for c in counts for n in c.names))
        shared = np.zeros((len(counts), len(names)))
        for i, c in enumerate(counts):
            for name, v in zip(c.names, c.shared, strict=True):
                shared[i, names.index(name)] = v
        return cls(clients=list(clients), names=names, shared=shared,
                   private=[c.private for c in counts], memcg_cycles=list(memcg_cycles))


@dataclass(frozen=True)
class ChargePathResult:
    """Throughput per flow and in total, ``(B, P)``; per station ``(B, P, K)``.

    Stations are ``stations`` = ``("cpu", "private lines", *shared line names)``.
    ``utilisation`` of ``cpu`` and ``private lines`` is per flow (the busy fraction of
    one flow's busiest CPU; the fraction of a flow's time moving its own lines); of a
    shared line, the fraction of time the line is being transferred.
    """

    clients: np.ndarray
    stations: tuple[str, ...]
    per_flow_rate: np.ndarray
    aggregate_rate: np.ndarray
    per_flow_mbps: np.ndarray
    aggregate_mbps: np.ndarray
    demands: np.ndarray
    residence: np.ndarray
    utilisation: np.ndarray

    @property
    def bottleneck(self) -> np.ndarray:
        """Index of the most utilised station, ``(B, P)``."""
        return self.utilisation.argmax(axis=-1)

    def bottleneck_names(self) -> list[list[str]]:
        """:attr:`bottleneck` as station names, a list (B) of lists (P)."""
        return [[self.stations[k] for k in row] for row in self.bottleneck]


def cpu_slowdown(flows: ArrayLike, cpus_per_flow: ArrayLike, cpus: ArrayLike,
                 smt: ArrayLike, smt_gain: ArrayLike) -> np.ndarray:
    """Factor on a flow's CPU time when ``flows`` flows keep their threads busy.

    ``T = flows * cpus_per_flow`` threads on ``cpus / smt`` cores, idle cores first:
    1 up to one thread per core; then ``2 (T - cores)`` threads share a core at
    ``(1 + smt_gain) / 2`` of a lone thread's speed; past ``cpus`` threads, time
    sharing multiplies the full-machine factor by ``T / cpus``.

    >>> cpu_slowdown([18, 27, 36, 72], 2, 72, 2, 0.25).round(3).tolist()
    [1.0, 1.4, 1.6, 3.2]
    """
    t = np.asarray(flows, dtype=float) * cpus_per_flow
    cpus = np.asarray(cpus, dtype=float)
    cores = cpus / smt
    busy = np.minimum(t, cpus)
    paired = 2.0 * np.clip(busy - cores, 0.0, None)
    factor = (busy - paired + paired * 2.0 / (1.0 + smt_gain)) / busy
    return factor * np.maximum(t / cpus, 1.0)


def chargepath_throughput(load: ChargePathLoad, params: ChargePathParams) -> ChargePathResult:
    """Exact MVA of the charge-path network at each client count, for each parameter point."""
    b, p = params.batch()
    memcg = np.asarray(load.memcg_cycles, dtype=float)
    if memcg.ndim == 2 and memcg.shape[0] != 1:
        if b not in (1, memcg.shape[0]):
            raise ValueError(f"load.memcg_cycles has {memcg.shape[0]} rows: must be 1 or "
                             f"the parameter batch's {b}")
        b = memcg.shape[0]
    clients = np.asarray(load.clients, dtype=np.int64)
    n = clients[None, :].astype(float)                                  # (1, P)
    col = {k: np.broadcast_to(v, (b,))[:, None] for k, v in p.items()}  # (B, 1)
    hz = col["ghz"] * 1e9
    cycles = (np.broadcast_to(memcg, (b, clients.size)) + col["memcg_extra_cycles"]
              + col["other_cycles"]) * col["busiest_cpu_share"]
    slow = cpu_slowdown(n, col["cpus_per_flow"], col["cpus"], col["smt"], col["smt_gain"])
    cpu = cycles * slow / hz                                            # (B, P)
    private = np.asarray(load.private, dtype=float)[None, :] * col["c2c_cycles"] / hz
    sharers = np.minimum(n * col["cpus_per_flow"], col["cpus"])
    hold = ((1 - col["cross_socket_fraction"]) * col["c2c_cycles"]
            + col["cross_socket_fraction"] * col["c2c_cross_cycles"]
            + col["cycles_per_sharer"] * np.clip(sharers - 2.0, 0.0, None)) / hz
    lines = np.asarray(load.shared, dtype=float)[None, :, :] * hold[:, :, None]
    demands = np.concatenate([cpu[..., None], private[..., None], lines], axis=-1)
    delay = np.array([True, True] + [False] * len(load.names))
    result = mva_at(demands, 0.0, clients[None, :], delay=delay)       # (B, P)
    x = result.throughput                                               # aggregate, msgs/s
    per_flow = x / clients[None, :]
    util = np.where(delay, per_flow[..., None], x[..., None]) * demands
    bits = col["message_bytes"] * 8 / 1e6
    return ChargePathResult(clients=clients, stations=("cpu", "private lines", *load.names),
                            per_flow_rate=per_flow, aggregate_rate=x,
                            per_flow_mbps=per_flow * bits, aggregate_mbps=x * bits,
                            demands=demands, residence=result.residence,
                            utilisation=util)
