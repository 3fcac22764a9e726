"""The pricing core's one pricing function: a counted load into throughput per flow.

:func:`price_flows` prices a :class:`~memcglab.pricing.load.FlowLoad` at every parameter
point and flow count through the package's one network
(:func:`memcglab.pricing.network.closed_network`). Each flow is one closed loop, a
unit of work after the last, that visits per unit

* **its CPU time** (a delay station: every flow has its own CPUs): the work outside
  memcg (``other_cycles``) plus the charge path's own cycles (the load's
  ``memcg_cycles``), times the share on the flow's busiest CPU (``busiest_cpu_share``,
  at least the even share ``1 / cpus_per_flow``: the busiest CPU runs no less than
  the mean), over the clock (``cpu_ghz``), times the slowdown of SMT pairing and time
  sharing at this flow count (:func:`memcglab.pricing.cpu.cpu_slowdown`);
* **its private lines** (a delay station): the load's private transfers at
  ``private_cycles`` each (by default ``hold_cycles``: a transfer between the flow's
  own CPUs), or, when the load counts which of them cross sockets (its
  ``private_cross``), at the hold times below;
* **one FCFS station per shared line**: the line's transfers times the hold time per
  transfer, ``hold_cycles`` within a socket and ``hold_cycles_cross`` for the
  ``cross_socket_fraction`` of transfers that cross sockets (the load's own share per
  line, its ``cross``, where it has one: then the input is not read). Contention is
  the station's waiting, once: no cost per sharer is added (issue 17).

The occupancy is ``flows * cpus_per_flow`` threads, fixed for a flow count, so each
flow count is its own product-form network with fixed demands, solved by exact MVA at
that population. Every input (:data:`INPUTS`, the names ``memcglab predict`` uses) is a
scalar, a ``(B,)`` array (one value per parameter point) or ``(B, P)`` (per point and
flow count: a hold time that depends on how many flows write the line). The machine's
``cpus`` and ``smt`` are inputs too: a study's variant may change them per point.

>>> load = FlowLoad(flows=[1, 4], memcg_cycles=0.0, shared_names=("usage:0",),
...                 shared=[[1.0], [1.0]])
>>> point = {"other_cycles": 1000.0, "busiest_cpu_share": 0.5, "cpu_ghz": 1.0,
...          "hold_cycles": 400.0, "hold_cycles_cross": 400.0, "cross_socket_fraction": 0.0,
...          "smt_gain": 0.25, "cpus_per_flow": 2, "cpus": 72, "smt": 2}
>>> r = price_flows(load, point)
>>> [round(float(x)) for x in r.per_instance[0]], r.bottleneck_names()
([1111111, 606617], [['cpu', 'usage:0']])
>>> throughput_change(load, load, point).tolist()
[[0.0, 0.0]]
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from memcglab.pricing.cpu import cpu_slowdown
from memcglab.pricing.load import FlowLoad
from memcglab.pricing.network import NetworkResult, closed_network

__all__ = ["INPUTS", "OPTIONAL_INPUTS", "per_flow_rate", "price_flows", "throughput_change"]

#: every input a price needs, with its valid range (one name per quantity)
INPUTS: dict[str, tuple[float, float]] = {
    "other_cycles": (0.0, np.inf),          # work outside memcg per unit, cycles
    "busiest_cpu_share": (0.0, 1.0),        # of a unit's CPU cycles, on the busiest CPU
    "cpu_ghz": (1e-3, np.inf),              # core clock
    "hold_cycles": (0.0, np.inf),           # a shared line's hold time per transfer
    "hold_cycles_cross": (0.0, np.inf),     # ... per transfer that crosses sockets
    "cross_socket_fraction": (0.0, 1.0),    # of shared-line transfers
    "smt_gain": (0.0, 1.0),                 # a paired core's extra work, of one thread's
    "cpus_per_flow": (1e-3, np.inf),        # hardware threads one flow keeps busy
    "cpus": (1.0, np.inf),                  # hardware threads of the machine
    "smt": (1.0, 2.0),                      # hardware threads per core
}
#: inputs with a default: a private-line transfer's cycles (default ``hold_cycles``)
OPTIONAL_INPUTS: dict[str, tuple[float, float]] = {"private_cycles": (0.0, np.inf)}


def _inputs(point: Mapping[str, ArrayLike], p: int, load: FlowLoad
            ) -> tuple[int, dict[str, np.ndarray]]:
    """Every input as a ``(B, 1)`` or ``(B, P)`` array, and the batch size B."""
    unread = {"cross_socket_fraction"} if load.cross is not None else set()
    if load.private_cross is not None and "private_cycles" in point:
        raise ValueError("private_cycles: the load counts its private lines' cross-socket "
                         "share (private_cross), which prices them at the hold times; "
                         "give one or the other")
    missing = [k for k in INPUTS if k not in point and k not in unread]
    if missing:
        raise ValueError(f"inputs lack {', '.join(missing)}; the pricing core needs "
                         f"{', '.join(INPUTS)}")
    out, sizes = {}, set()
    for name, (lo, hi) in (INPUTS | OPTIONAL_INPUTS).items():
        if name not in point or name in unread:
            continue
        v = np.asarray(point[name], dtype=float)
        v = v.reshape(1, 1) if v.ndim == 0 else v[:, None] if v.ndim == 1 else v
        if v.ndim != 2 or v.shape[1] not in (1, p) or not np.all(
                np.isfinite(v) & (v >= lo) & (v <= hi)):
            raise ValueError(f"{name}={np.asarray(point[name]).tolist()}: must be a number, "
                             f"a (B,) or a (B, {p}) array of numbers between {lo} and {hi}")
        sizes.add(v.shape[0])
        out[name] = v
    sizes.discard(1)
    if len(sizes) > 1:
        raise ValueError(f"inputs have batch sizes {sorted(sizes)}: all must have one "
                         "length B (the parameter points) or be scalars")
    return (sizes.pop() if sizes else 1), out


def price_flows(load: FlowLoad, point: Mapping[str, ArrayLike],
                extra_shared: np.ndarray | None = None) -> NetworkResult:
    """The network of ``load`` at every point and flow count, ``(B, P)`` (module doc).

    ``extra_shared`` adds transfers per unit to each shared line at each point, ``(B, L)``:
    transfers that depend on the point's own solution (the layout term's re-acquisitions
    of a line that another CPU took between a walk's write and its later reads,
    :mod:`memcglab.pricing.layout`), which a load's counts cannot hold. The result's
    ``per_instance`` is units of work per second per flow.
    """
    flows = np.asarray(load.flows, dtype=np.int64)[None, :]                 # (1, P)
    b, v = _inputs(point, flows.size, load)
    memcg = np.atleast_2d(load.memcg_cycles)
    if memcg.shape[0] not in (1, b) and b != 1:
        raise ValueError(f"load.memcg_cycles has {memcg.shape[0]} rows: must be 1 or the "
                         f"inputs' batch of {b} points")
    hz = v["cpu_ghz"] * 1e9
    busiest = np.maximum(v["busiest_cpu_share"], 1.0 / v["cpus_per_flow"])
    slow = cpu_slowdown(flows, v["cpus_per_flow"], v["cpus"], v["smt"], v["smt_gain"])
    cpu = (memcg + v["other_cycles"]) * busiest * slow / hz
    h, hc = v["hold_cycles"], v["hold_cycles_cross"]
    if load.private_cross is None:
        private_cycles = v.get("private_cycles", h)
    else:
        xp = load.private_cross[None, :]
        private_cycles = (1.0 - xp) * h + xp * hc
    private = load.private[None, :] * private_cycles / hz
    # (B, P, L): one share for every line, or the load's per flow count and line
    x = v["cross_socket_fraction"][..., None] if load.cross is None else load.cross[None]
    hold_cycles = (1.0 - x) * h[..., None] + x * hc[..., None]
    # cycles per unit first, then seconds, as for the CPU and the private lines: the
    # order predict's pinned calibration was fitted in, so its numbers are bit-identical
    shared = load.shared[None, :, :]
    if extra_shared is not None:
        extra = np.asarray(extra_shared, dtype=float)
        if extra.ndim != 2 or extra.shape[1] != len(load.shared_names) \
                or extra.shape[0] not in (1, b) or not np.all(np.isfinite(extra) & (extra >= 0)):
            raise ValueError(f"extra_shared has shape {extra.shape}: must be (B, "
                             f"{len(load.shared_names)}) transfers >= 0 per point and line")
        shared = shared + extra[:, None, :]
    lines = shared * hold_cycles / hz[..., None]
    return closed_network(flows, cpu, private, lines, load.shared_names)


def per_flow_rate(load: FlowLoad, point: Mapping[str, ArrayLike]) -> np.ndarray:
    """Units of work per second per flow, ``(B, P)``: :func:`price_flows`' ``per_instance``."""
    return price_flows(load, point).per_instance


def throughput_change(base: FlowLoad, new: FlowLoad,
                      point: Mapping[str, ArrayLike]) -> np.ndarray:
    """% change of throughput per flow, ``new`` against ``base``, at the same points and
    flow counts, ``(B, P)`` (a loss is negative)."""
    if base.flows != new.flows:
        raise ValueError(f"flows {list(base.flows)} and {list(new.flows)}: both loads must be "
                         "counted at the same flow counts")
    return (per_flow_rate(new, point) / per_flow_rate(base, point) - 1.0) * 100.0
