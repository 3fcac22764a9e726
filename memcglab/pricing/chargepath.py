"""A kernel's counted charge-path load, priced into throughput per flow.

A :class:`FlowLoad` is what a replay counted for one kernel (one stock model) on one
workload, per unit of work (a message, a transaction, a fault): the cost model's units
(:func:`memcglab.cost.coefficients`, in :meth:`~memcglab.cost.CostParams.names` order),
the transfers of each shared page_counter usage line and of the flows' private lines
(:func:`memcglab.queueing.line_counts`), the number of flows, and the hardware threads a
flow keeps busy.

:func:`per_flow_rate` prices it with the contention model
(:func:`memcglab.queueing.chargepath_throughput`) at every point of a draw: each flow a
closed loop of its CPU time (``other_cycles``, the work outside memcg, plus the charge
path's cycles from the cost model with line transfers left out) and the shared lines it
queues for, each an FCFS station whose service is one transfer (``c2c_transfer``, or
``c2c_transfer_cross_socket`` for the ``cross_socket_fraction`` that cross, plus
``contended_rmw_per_sharer`` per writer beyond two). The draw holds the names of
:func:`memcglab.pricing.chargepath_space`; the machine's ``cpus`` and ``smt`` are facts
of the profile. :func:`throughput_change` prices two kernels at the same points, so what
differs between them is the load alone.

>>> import numpy as np
>>> from memcglab.hardware import load_profile
>>> from memcglab.pricing import chargepath_space
>>> profile = load_profile("butt-netperf-72cpu")
>>> d = chargepath_space(profile, "tcp_rr", 2, {}, [0]).at()
>>> n = len(CostParams.names())
>>> light = FlowLoad(flows=36, coef=np.ones(n), shared_names=("usage:root",), shared=(0.1,))
>>> heavy = FlowLoad(flows=36, coef=np.ones(n), shared_names=("usage:root",), shared=(2.0,))
>>> bool(throughput_change(light, heavy, d, profile)[0] < 0)
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from memcglab.cost import CostParams
from memcglab.hardware import MachineProfile
from memcglab.queueing import ChargePathLoad, ChargePathParams, chargepath_throughput

__all__ = ["DRAWN", "FlowLoad", "per_flow_rate", "throughput_change"]

#: the names a draw must hold (besides the cost model's :meth:`CostParams.names`)
DRAWN: tuple[str, ...] = ("other_cycles", "busiest_cpu_share", "cpu_ghz", "c2c_transfer",
                          "c2c_transfer_cross_socket", "cross_socket_fraction",
                          "contended_rmw_per_sharer", "smt_gain")
_C2C_COL = CostParams.names().index("c2c_transfer")
#: the station a load without shared lines still has (empty: nothing queues there)
_NO_SHARED = ("usage:none",)


@dataclass(frozen=True, eq=False)
class FlowLoad:
    """One kernel's charge-path load per unit of work (module doc).

    ``coef``'s ``c2c_transfer`` entry is ignored when priced: the line stations price the
    transfers. A load without shared lines (a workload whose steady state charges
    nothing) is priced with one empty station.
    """

    flows: int
    coef: np.ndarray
    shared_names: tuple[str, ...] = ()
    shared: tuple[float, ...] = ()
    private: float = 0.0
    cpus_per_flow: int = 2
    _coef: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = len(CostParams.names())
        for name in ("flows", "cpus_per_flow"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
                raise ValueError(f"FlowLoad {name}={v!r}: must be an integer >= 1")
            object.__setattr__(self, name, int(v))
        coef = np.array(self.coef, dtype=float)
        if coef.shape != (n,) or not np.all(np.isfinite(coef)):
            raise ValueError(f"FlowLoad coef has shape {coef.shape}: must be {n} finite "
                             f"numbers in CostParams.names() order")
        names, shared = tuple(self.shared_names), tuple(float(x) for x in self.shared)
        if len(names) != len(shared) or not all(math.isfinite(x) and x >= 0 for x in shared):
            raise ValueError(f"FlowLoad shared={list(shared)} for shared_names="
                             f"{list(names)}: need one finite value >= 0 per name")
        if not (math.isfinite(self.private) and self.private >= 0):
            raise ValueError(f"FlowLoad private={self.private!r}: must be a finite number >= 0")
        object.__setattr__(self, "shared_names", names)
        object.__setattr__(self, "shared", shared)
        object.__setattr__(self, "private", float(self.private))
        priced = coef.copy()
        priced[_C2C_COL] = 0.0  # the line stations price the transfers
        object.__setattr__(self, "coef", coef)
        object.__setattr__(self, "_coef", priced)


def per_flow_rate(load: FlowLoad, draws: Mapping[str, np.ndarray],
                  profile: MachineProfile) -> np.ndarray:
    """Units of work per second per flow at each point of ``draws`` (module doc).

    A flow on one hardware thread runs all its cycles there, whatever
    ``busiest_cpu_share`` the draw holds.
    """
    missing = [k for k in (*DRAWN, *CostParams.names()) if k not in draws]
    if missing:
        raise ValueError(f"draws lack {', '.join(missing)}; chargepath_space draws them")
    cost = np.column_stack([np.asarray(draws[n], dtype=float) for n in CostParams.names()])
    memcg = cost @ load._coef
    names = load.shared_names or _NO_SHARED
    shared: Sequence[float] = list(load.shared) or [0.0]
    path = ChargePathLoad(clients=[load.flows], names=names, shared=[shared],
                          private=[load.private], memcg_cycles=memcg[:, None])
    one = load.cpus_per_flow == 1
    params = ChargePathParams(
        other_cycles=draws["other_cycles"],
        busiest_cpu_share=1.0 if one else draws["busiest_cpu_share"], ghz=draws["cpu_ghz"],
        c2c_cycles=draws["c2c_transfer"], c2c_cross_cycles=draws["c2c_transfer_cross_socket"],
        cross_socket_fraction=draws["cross_socket_fraction"],
        cycles_per_sharer=draws["contended_rmw_per_sharer"], cpus=float(profile.cpus),
        smt=float(profile.smt), smt_gain=draws["smt_gain"],
        cpus_per_flow=float(load.cpus_per_flow))
    return chargepath_throughput(path, params).per_flow_rate[:, 0]


def throughput_change(base: FlowLoad, new: FlowLoad, draws: Mapping[str, np.ndarray],
                      profile: MachineProfile) -> np.ndarray:
    """% change of throughput per flow, ``new`` against ``base``, at the same points (a
    loss is negative)."""
    before = per_flow_rate(base, draws, profile)
    after = per_flow_rate(new, draws, profile)
    return (after / before - 1.0) * 100.0
