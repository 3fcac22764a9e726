"""Study 5 (``05_history.ipynb``): two historic behaviours of the multi-memcg stock, replayed.

Fix 2's leak, caught by the replay's invariant, and the change that refills a stock
with more than a batch.

* :mod:`~memcglab.studies.s05_history.study`: the parameters (:class:`HistoryParams`) and
  the replays;
* :mod:`~memcglab.studies.s05_history.views`: the figures, the sidecar scalars, the claim
  and count rows and the conclusion.
"""

from memcglab.studies.s05_history import study, views
from memcglab.studies.s05_history.study import HistoryParams, run

__all__ = ["HistoryParams", "run", "study", "views"]
