"""memcglab.queueing: closed queueing networks, and the usage lines a charge path moves.

The cost model (:mod:`memcglab.cost`) adds cycles; it has no notion of a resource that
CPUs queue for. This package holds the generic solvers of closed product-form networks
and the trace-side counting of the lines that become a network's stations; the charge
path's one network and its pricing are :mod:`memcglab.pricing`'s.

* :func:`mva` - exact MVA at every population 0..N, batched over parameter points;
* :func:`mva_at` - exact MVA of each network at its own population, no trajectory;
* :func:`schweitzer` - Schweitzer's approximate MVA;
* :func:`bounds` - asymptotic and balanced-job bounds;
* :mod:`~memcglab.queueing.lines` - the shared usage lines and their transfers per
  message, from an engine run's event counts (:func:`line_counts`);
* :mod:`~memcglab.queueing.netperf` - :func:`~memcglab.queueing.netperf.netperf_load`,
  the pricing core's load for seed 000's netperf mix (imported on its own: it runs the
  engine);
* :func:`cpu_slowdown` - re-exported from :mod:`memcglab.pricing.cpu`, its home.
"""

# memcglab.pricing imports this package's submodules (mva, lines), never its names, so
# either package may be imported first.
from memcglab.pricing.cpu import cpu_slowdown
from memcglab.queueing.bounds import Bounds, bounds
from memcglab.queueing.lines import LineCounts, line_counts, trace_parents
from memcglab.queueing.mva import MvaPoint, MvaResult, check_network, mva, mva_at, schweitzer

__all__ = ["Bounds", "LineCounts", "MvaPoint", "MvaResult", "bounds", "check_network",
           "cpu_slowdown", "line_counts", "mva", "mva_at", "schweitzer", "trace_parents"]
