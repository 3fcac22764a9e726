"""Charge-path pricing: the package's one pricing core, counted loads in, throughput out.

The layer between the counts (what a replay of a kernel's charge path counted per unit of
work) and whoever asks what those counts cost: the studies and ``memcglab predict``. It
takes plain inputs (one name per quantity, the names predict uses: ``hold_cycles``,
``hold_cycles_cross``, ``cpu_ghz``, ...), a load, and returns throughput per flow or its
change between two kernels at every point; it knows no study, no notebook and no
published number.

* :mod:`~memcglab.pricing.network`: the package's one queueing network
  (:func:`closed_network`: exact MVA over a CPU delay station, a private-lines delay
  station and one FCFS station per shared line);
* :mod:`~memcglab.pricing.cpu`: the CPU slowdown of SMT pairing and time sharing
  (:func:`cpu_slowdown`);
* :mod:`~memcglab.pricing.load`: the one load type (:class:`FlowLoad`, one kernel's
  counted load at one or more flow counts) and the charge path's cycles at drawn costs
  (:func:`charge_cycles`);
* :mod:`~memcglab.pricing.chargepath`: the one pricing function (:func:`price_flows`,
  with :func:`per_flow_rate` and :func:`throughput_change` over it) and its
  :data:`INPUTS`: ``memcglab predict`` and the studies price through it;
* :mod:`~memcglab.pricing.priors`: the space the studies draw a price over for one
  workload on one machine (:func:`chargepath_space`) and its map to the core's inputs
  (:func:`core_inputs`);
* :mod:`~memcglab.pricing.groups`: draws grouped by the discrete inputs that pick a trace
  (:func:`group_points`), and a replay's cost-model units per unit of work
  (:func:`per_unit_coefficients`).

Propagation (:func:`memcglab.uncertainty.summarise`) stays the caller's: it builds a
quantity function from these, grouping its points by trace (:func:`group_points`) as its
counts are keyed. These names are the layer's stable API.
"""

from memcglab.pricing.chargepath import (
    INPUTS,
    OPTIONAL_INPUTS,
    per_flow_rate,
    price_flows,
    throughput_change,
)
from memcglab.pricing.cpu import cpu_slowdown
from memcglab.pricing.groups import group_points, per_unit_coefficients, subset
from memcglab.pricing.load import FlowLoad, charge_cycles
from memcglab.pricing.network import MAX_INSTANCES, NetworkResult, closed_network
from memcglab.pricing.priors import (
    BUSIEST_CPU_SHARE,
    DRAWN,
    HARDWARE_PRIORS,
    OTHER_CYCLES,
    PROFILE_OTHER_CYCLES,
    SMT_GAIN_FALLBACK,
    WORKLOADS,
    busiest_cpu_prior,
    chargepath_space,
    core_inputs,
    cross_socket_prior,
    other_cycles_prior,
)

__all__ = ["BUSIEST_CPU_SHARE", "DRAWN", "HARDWARE_PRIORS", "INPUTS", "MAX_INSTANCES",
           "OPTIONAL_INPUTS", "OTHER_CYCLES", "PROFILE_OTHER_CYCLES", "SMT_GAIN_FALLBACK",
           "WORKLOADS", "FlowLoad", "NetworkResult", "busiest_cpu_prior", "charge_cycles",
           "chargepath_space", "closed_network", "core_inputs", "cpu_slowdown",
           "cross_socket_prior", "group_points", "other_cycles_prior", "per_flow_rate",
           "per_unit_coefficients", "price_flows", "subset", "throughput_change"]
