"""Study 2 (``02_policy_and_slots.ipynb``): the multi-memcg stock's victim policy and slots.

How often a CPU has more memcgs than slots; random, round-robin or LRU victims priced per
mix with 90% intervals and LRU's recency line; how many slots.

* :mod:`~memcglab.studies.s02_policy_and_slots.study`: the parameters
  (:class:`PolicyParams`) and the replays;
* :mod:`~memcglab.studies.s02_policy_and_slots.counts`: the exact counts, and how often a
  CPU has too many memcgs;
* :mod:`~memcglab.studies.s02_policy_and_slots.recency`: where an LRU stock would keep its
  recency state, and the lines that costs;
* :mod:`~memcglab.studies.s02_policy_and_slots.pricing`: random's advantage over LRU,
  priced per mix;
* :mod:`~memcglab.studies.s02_policy_and_slots.verdict`: the analysis after the replays,
  the multi-memcg thread's claim judged, claim and count rows and the conclusion;
* :mod:`~memcglab.studies.s02_policy_and_slots.views`: the figures.
"""

from memcglab.studies.s02_policy_and_slots import counts, pricing, recency, study, verdict, views
from memcglab.studies.s02_policy_and_slots.study import PolicyParams, run

__all__ = ["PolicyParams", "counts", "pricing", "recency", "run", "study", "verdict", "views"]
