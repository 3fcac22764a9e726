"""Study 4 (``04_layout_false_sharing.ipynb``): the stock's layout and vmstats/events false sharing.

The 0x88-byte stock per era, slots per cache line, and the ``vmstats_percpu`` false
sharing of the false-sharing fix, counted by the MESI simulator, bounded and priced.

* :mod:`~memcglab.studies.s04_layout_false_sharing.study`: the parameters
  (:class:`LayoutParams`), the layouts per era, the coherence runs and the priced loss;
* :mod:`~memcglab.studies.s04_layout_false_sharing.pricing`: transfers per swap-fail
  event and what they cost;
* :mod:`~memcglab.studies.s04_layout_false_sharing.views`: the figures, the count and
  claim rows and the conclusion.
"""

from memcglab.studies.s04_layout_false_sharing import pricing, study, views
from memcglab.studies.s04_layout_false_sharing.study import LayoutParams, run

__all__ = ["LayoutParams", "pricing", "run", "study", "views"]
