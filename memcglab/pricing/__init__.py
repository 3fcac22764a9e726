"""Charge-path pricing: counted loads in, throughput changes with their inputs out.

The layer between the counts (what a replay of a kernel's charge path counted per unit of
work) and whoever asks what those counts cost: the studies and ``memcglab predict``. It
takes plain inputs, a machine profile (:class:`memcglab.hardware.MachineProfile`), the
priors drawn over and the counted loads, and returns throughput per flow or its change
between two kernels at every drawn point; it knows no study, no notebook and no
published number.

* :mod:`~memcglab.pricing.priors`: the space a price is drawn over for one workload on one
  machine (:func:`chargepath_space`): the profile's hardware priors, the work outside
  memcg per unit of the workload (:data:`OTHER_CYCLES`), the cross-socket and
  busiest-CPU shares, the caller's modelling alternatives and seeds;
* :mod:`~memcglab.pricing.chargepath`: one kernel's counted load (:class:`FlowLoad`)
  priced into units of work per second per flow (:func:`per_flow_rate`) with the
  contention model of :mod:`memcglab.queueing`, and two kernels' loads into the %
  change between them (:func:`throughput_change`);
* :mod:`~memcglab.pricing.groups`: draws grouped by the discrete inputs that pick a trace
  (:func:`group_points`), and a replay's cost-model units per unit of work
  (:func:`per_unit_coefficients`).

Propagation (:func:`memcglab.uncertainty.summarise`) stays the caller's: it builds a
quantity function from these, grouping its points by trace (:func:`group_points`) as its
counts are keyed. These names are the layer's stable API.
"""

from memcglab.pricing.chargepath import DRAWN, FlowLoad, per_flow_rate, throughput_change
from memcglab.pricing.groups import group_points, per_unit_coefficients, subset
from memcglab.pricing.priors import (
    BUSIEST_CPU_SHARE,
    HARDWARE_PRIORS,
    OTHER_CYCLES,
    PROFILE_OTHER_CYCLES,
    SMT_GAIN_FALLBACK,
    WORKLOADS,
    busiest_cpu_prior,
    chargepath_space,
    cross_socket_prior,
    other_cycles_prior,
)

__all__ = ["BUSIEST_CPU_SHARE", "DRAWN", "HARDWARE_PRIORS", "OTHER_CYCLES",
           "PROFILE_OTHER_CYCLES", "SMT_GAIN_FALLBACK", "WORKLOADS", "FlowLoad",
           "busiest_cpu_prior", "chargepath_space", "cross_socket_prior", "group_points",
           "other_cycles_prior", "per_flow_rate", "per_unit_coefficients", "subset",
           "throughput_change"]
