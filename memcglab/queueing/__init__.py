"""memcglab.queueing: closed queueing networks, and the charge path's throughput as one.

The cost model (:mod:`memcglab.cost`) adds cycles; it has no notion of a resource that
CPUs queue for. This package adds one: mean value analysis of closed product-form
networks, and a model of netperf's flows as jobs that cycle through their own CPU time
and the page_counter ``usage`` cache lines every hierarchy walk writes.

* :func:`mva` - exact MVA at every population 0..N, batched over parameter points;
* :func:`mva_at` - exact MVA of each network at its own population, no trajectory;
* :func:`schweitzer` - Schweitzer's approximate MVA;
* :func:`bounds` - asymptotic and balanced-job bounds;
* :mod:`~memcglab.queueing.chargepath` - the charge path's throughput model
  (:class:`ChargePathParams`, :class:`ChargePathLoad`, :func:`chargepath_throughput`);
* :mod:`~memcglab.queueing.lines` - the shared usage lines and their transfers per
  message, from an engine run's event counts (:func:`line_counts`);
* :mod:`~memcglab.queueing.netperf` - :func:`~memcglab.queueing.netperf.netperf_load`,
  the model's load for seed 000's netperf mix (imported on its own: it runs the engine).
"""

from memcglab.queueing.bounds import Bounds, bounds
from memcglab.queueing.chargepath import (
    ChargePathLoad,
    ChargePathParams,
    ChargePathResult,
    chargepath_throughput,
    cpu_slowdown,
)
from memcglab.queueing.lines import LineCounts, line_counts, trace_parents
from memcglab.queueing.mva import MvaPoint, MvaResult, check_network, mva, mva_at, schweitzer

__all__ = ["Bounds", "ChargePathLoad", "ChargePathParams", "ChargePathResult", "LineCounts",
           "MvaPoint", "MvaResult", "bounds", "chargepath_throughput", "check_network",
           "cpu_slowdown", "line_counts", "mva", "mva_at", "schweitzer", "trace_parents"]
