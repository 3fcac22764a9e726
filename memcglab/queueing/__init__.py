"""memcglab.queueing: closed queueing networks, and the charge path's throughput as one.

The cost model (:mod:`memcglab.cost`) adds cycles; it has no notion of a resource that
CPUs queue for. This package adds one: mean value analysis of closed product-form
networks, and a model of netperf's flows as jobs that cycle through their own CPU time
and the page_counter ``usage`` cache lines every hierarchy walk writes.

* :func:`mva` - exact MVA at every population 0..N, batched over parameter points;
* :func:`schweitzer` - Schweitzer's approximate MVA;
* :func:`bounds` - asymptotic and balanced-job bounds;
* :mod:`~memcglab.queueing.chargepath` - the charge path's throughput model
  (:class:`ChargePathParams`, :func:`chargepath_throughput`);
* :mod:`~memcglab.queueing.lines` - the shared usage lines and their transfers per
  message, from an engine run's event counts.
"""

from memcglab.queueing.bounds import Bounds, bounds
from memcglab.queueing.mva import MvaResult, check_network, mva, schweitzer

__all__ = ["Bounds", "MvaResult", "bounds", "check_network", "mva", "schweitzer"]
