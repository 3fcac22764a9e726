"""Study 1 (``01_single_vs_multi.ipynb``): the netperf "with" column predicted from "without".

The contention model is fitted on the multi-memcg thread's netperf "without" column alone, its
prediction of the "with" column written down, and only then scored, as
``data/preregistration/study01.md`` registers (that frozen document names this study's
modules by their earlier flat paths, ``memcglab.studies.netperf_*``).

* :mod:`~memcglab.studies.s01_single_vs_multi.prereg`: the registration, read from
  ``study01.toml``;
* :mod:`~memcglab.studies.s01_single_vs_multi.counts`: each registered trace replayed and
  counted per message;
* :mod:`~memcglab.studies.s01_single_vs_multi.pricing`: the contention model fitted on
  "without" and its written prediction of "with";
* :mod:`~memcglab.studies.s01_single_vs_multi.score`: the prediction scored against "with";
* :mod:`~memcglab.studies.s01_single_vs_multi.claims`: the claim rows, every verdict from
  :func:`memcglab.stats.judge`;
* :mod:`~memcglab.studies.s01_single_vs_multi.calibrated`: the second prediction of a dated
  addendum (``study01_addendum_2026-12-01_calibrated.md``): "with" from ``memcglab predict``
  calibrated on the development set without the "with" column
  (:mod:`memcglab.validation.study01`), written, then scored;
* :mod:`~memcglab.studies.s01_single_vs_multi.third`: the third prediction
  (``study01_addendum_2026-12-03_chosen_model.md``): the chosen model with and without the
  base run given, scored by the proper rule beside the fair baselines;
* :mod:`~memcglab.studies.s01_single_vs_multi.views`: the figures and the conclusion;
* :mod:`~memcglab.studies.s01_single_vs_multi.study`: the parameters
  (:class:`NetperfParams`) and the steps the notebook runs, with the claim and count rows.
"""

from memcglab.studies.s01_single_vs_multi import (
    calibrated,
    claims,
    counts,
    prereg,
    pricing,
    score,
    study,
    third,
    views,
)
from memcglab.studies.s01_single_vs_multi.study import NetperfParams, run

__all__ = ["NetperfParams", "calibrated", "claims", "counts", "prereg", "pricing", "run", "score",
           "study", "third", "views"]
