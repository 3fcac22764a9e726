"""The inputs a charge-path throughput price is drawn over, for one workload on one machine.

:func:`chargepath_space` assembles them into an :class:`~memcglab.uncertainty.Space`:

* the machine profile's hardware priors: the line transfers (``c2c_transfer``,
  ``c2c_transfer_cross_socket``), the clock ``cpu_ghz``, every cost-model parameter
  (:meth:`memcglab.cost.CostParams.names`) and ``smt_gain`` (:data:`SMT_GAIN_FALLBACK`
  for a profile without one);
* the work outside memcg per unit of the workload, ``other_cycles``
  (:func:`other_cycles_prior`: :data:`OTHER_CYCLES` per workload; ``netperf_rx`` takes the
  profile's ``other_cycles_per_packet``, its 10 KiB message);
* ``cross_socket_fraction``, the share of shared-line transfers that cross sockets, from
  the profile's socket count (:func:`cross_socket_prior`);
* ``busiest_cpu_share``, the share of a flow's cycles on its busiest CPU
  (:func:`busiest_cpu_prior`: all of them when a flow keeps one hardware thread busy);
* the caller's modelling alternatives and trace seeds.

The order of the priors is part of the result: the same space draws the same points.
:func:`core_inputs` maps a draw of this space to the pricing core's inputs
(:data:`memcglab.pricing.chargepath.INPUTS`): the studies' hold time per transfer is the
profile's cache-to-cache transfer prior itself.

>>> from memcglab.hardware import load_profile
>>> space = chargepath_space(load_profile("butt-netperf-72cpu"), "tcp_rr", 2,
...                          {"placement": ("spread", "random")}, seeds=[0, 1])
>>> [p.name for p in space.priors][-4:]
['other_cycles', 'smt_gain', 'cross_socket_fraction', 'busiest_cpu_share']
>>> space.priors[-4].typical, [a.name for a in space.alternatives]
(30000.0, ['placement'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from numpy.typing import ArrayLike

from memcglab.cost import CostParams
from memcglab.hardware import MachineProfile
from memcglab.uncertainty import Alternative, Prior, Space

__all__ = ["BUSIEST_CPU_SHARE", "DRAWN", "HARDWARE_PRIORS", "OTHER_CYCLES",
           "PROFILE_OTHER_CYCLES", "SMT_GAIN_FALLBACK", "WORKLOADS", "busiest_cpu_prior",
           "chargepath_space", "core_inputs", "cross_socket_prior", "other_cycles_prior"]

#: the profile's priors every price draws, in the space's order (names once each).
#: ``contended_rmw_per_sharer`` is not among them: the pricing core models contention
#: once, as a line's queueing, with no cost per sharer on top (issue 17)
HARDWARE_PRIORS: tuple[str, ...] = tuple(dict.fromkeys(
    ("c2c_transfer", "c2c_transfer_cross_socket", "cpu_ghz", *CostParams.names())))
#: the names :func:`core_inputs` reads from a draw (besides the cost model's)
DRAWN: tuple[str, ...] = ("other_cycles", "busiest_cpu_share", "cpu_ghz", "c2c_transfer",
                          "c2c_transfer_cross_socket", "cross_socket_fraction", "smt_gain")

_RR_SOURCE = ("my inference, not a measurement: a loopback request/response round trip "
              "runs two sendmsg/recvmsg pairs, two softirq receives and two wakeups; "
              "10-100 k cycles is 3-40 us at 2.5-3.5 GHz, the order of the tens of "
              "thousands of transactions per second per instance netperf reports on "
              "loopback")
#: the work outside memcg per unit of each workload, cycles (all CPUs of a flow together)
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
#: the workloads whose work outside memcg is the profile's ``other_cycles_per_packet``
PROFILE_OTHER_CYCLES: tuple[str, ...] = ("netperf_rx",)
#: every workload :func:`other_cycles_prior` knows
WORKLOADS: tuple[str, ...] = (*PROFILE_OTHER_CYCLES, *OTHER_CYCLES)

#: a flow on two CPUs: how much of its cycles the busier one runs
BUSIEST_CPU_SHARE = Prior("busiest_cpu_share", "fraction", 0.5, 0.6, 1.0, "triangular",
                          "chargepath's pipelining assumption: a loopback flow's send and "
                          "receive run on its two CPUs; 0.5 is an even split, 1 all on one",
                          "my inference from where loopback's softirq runs (the sender's CPU)")
#: ``smt_gain`` for a profile that has none
SMT_GAIN_FALLBACK = Prior("smt_gain", "fraction", 0.05, 0.25, 0.45, "triangular",
                          "fallback for a profile without smt_gain: the range of "
                          "data/hardware/priors.toml's smt_gain (Marr et al. 2002; Bulpin "
                          "and Pratt 2004)")


def other_cycles_prior(profile: MachineProfile, workload: str) -> Prior:
    """The work outside memcg per unit of ``workload``, named ``other_cycles``.

    >>> from memcglab.hardware import load_profile
    >>> other_cycles_prior(load_profile("butt-netperf-72cpu"), "tcp_rx")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: workload='tcp_rx': no prior for its work outside memcg; valid: netperf_rx, ...
    """
    if workload in OTHER_CYCLES:
        return OTHER_CYCLES[workload]
    if workload in PROFILE_OTHER_CYCLES:
        return replace(profile.priors["other_cycles_per_packet"], name="other_cycles")
    raise ValueError(f"workload={workload!r}: no prior for its work outside memcg; "
                     f"valid: {', '.join(WORKLOADS)}")


def cross_socket_prior(profile: MachineProfile) -> Prior:
    """The share of shared-line transfers that cross sockets: none on one socket, else up
    to the share an even spread of writers gives (``1 - 1/sockets``)."""
    if profile.sockets <= 1:
        return Prior("cross_socket_fraction", "fraction", 0.0, 0.0, 0.0, "point",
                     "one socket: no transfer crosses")
    even = 1.0 - 1.0 / profile.sockets
    return Prior("cross_socket_fraction", "fraction", 0.5 * even, even, even, "triangular",
                 f"{profile.sockets} sockets: a shared line's next writer is on another "
                 f"socket with probability {even:g} when writers are spread evenly",
                 "lower when the scheduler keeps consecutive writers on one socket; my "
                 "inference")


def busiest_cpu_prior(cpus_per_flow: int) -> Prior:
    """``busiest_cpu_share`` for a flow that keeps ``cpus_per_flow`` hardware threads busy.

    ``memcglab predict`` draws the same quantity from another prior,
    :func:`memcglab.scenario.work.busiest_share_prior` (from an instance's task count:
    0.5, mode 0.625, 1.0 for a pair, where this gives 0.5, 0.6, 1.0). Both are registered
    inputs (this one of the studies' preregistrations, that one of predict's registered
    predictions), so each keeps its numbers: one prior for both would change registered
    results.
    """
    if cpus_per_flow == 1:
        return Prior("busiest_cpu_share", "fraction", 1.0, 1.0, 1.0, "point",
                     "one task per flow: all on one CPU")
    return BUSIEST_CPU_SHARE


def chargepath_space(profile: MachineProfile, workload: str, cpus_per_flow: int,
                     alternatives: Mapping[str, Sequence], seeds: Sequence[int]) -> Space:
    """The inputs of ``workload``'s price on ``profile`` (see the module doc).

    ``alternatives`` maps each modelling choice to its options; a choice with one option
    is fixed, not drawn. ``seeds`` are the trace seeds, a factor of the space.
    """
    if isinstance(cpus_per_flow, bool) or not isinstance(cpus_per_flow, int) \
            or cpus_per_flow < 1:
        raise ValueError(f"cpus_per_flow={cpus_per_flow!r}: must be an integer >= 1")
    priors = {n: profile.priors[n] for n in HARDWARE_PRIORS}
    priors |= {"other_cycles": other_cycles_prior(profile, workload),
               "smt_gain": profile.priors.get("smt_gain", SMT_GAIN_FALLBACK),
               "cross_socket_fraction": cross_socket_prior(profile),
               "busiest_cpu_share": busiest_cpu_prior(cpus_per_flow)}
    # c2c_transfer is the line stations' hold time (core_inputs) and the cost model's
    # transfer price; the core leaves the cost model's transfer units to the stations.
    alts = [Alternative(k, tuple(v)) for k, v in alternatives.items() if len(v) > 1]
    return Space(list(priors.values()), alts, seeds=list(seeds))


def core_inputs(draws: Mapping[str, ArrayLike], profile: MachineProfile,
                cpus_per_flow: int) -> dict[str, ArrayLike]:
    """The pricing core's inputs (:data:`memcglab.pricing.chargepath.INPUTS`) at the points
    of a :func:`chargepath_space` draw, for flows that keep ``cpus_per_flow`` threads busy.

    The hold time per transfer is the drawn ``c2c_transfer`` (within a socket) and
    ``c2c_transfer_cross_socket``: the studies take the profile's transfer prior as the
    hold time (``memcglab predict`` scales it by a calibrated ``hold_scale``). The
    machine's ``cpus`` and ``smt`` are the profile's.

    >>> from memcglab.hardware import load_profile
    >>> p = load_profile("butt-netperf-72cpu")
    >>> d = chargepath_space(p, "tcp_rr", 2, {}, [0]).at()
    >>> x = core_inputs(d, p, 2)
    >>> bool(x["hold_cycles"][0] == d["c2c_transfer"][0]), x["cpus"], x["cpus_per_flow"]
    (True, 72.0, 2.0)
    """
    missing = [k for k in DRAWN if k not in draws]
    if missing:
        raise ValueError(f"draws lack {', '.join(missing)}; chargepath_space draws them")
    return {"other_cycles": draws["other_cycles"],
            "busiest_cpu_share": draws["busiest_cpu_share"], "cpu_ghz": draws["cpu_ghz"],
            "hold_cycles": draws["c2c_transfer"],
            "hold_cycles_cross": draws["c2c_transfer_cross_socket"],
            "cross_socket_fraction": draws["cross_socket_fraction"],
            "smt_gain": draws["smt_gain"], "cpus_per_flow": float(cpus_per_flow),
            "cpus": float(profile.cpus), "smt": float(profile.smt)}
