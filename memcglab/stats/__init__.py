"""Statistics: tests from summary statistics, calibration, and every verdict on the model.

The only layer, with ``memcglab.published``, that reads published numbers. It
compares them with what memcglab simulates; nothing here feeds a simulation.

* :mod:`~memcglab.stats.inference`: Welch, TOST, equivalence margins, bootstrap CIs,
  paired Wilcoxon, effect sizes, perf stat's "( +- x% )";
* :mod:`~memcglab.stats.calibration`: least-squares calibration with parameter
  intervals, out-of-sample and leave-one-out errors;
* :mod:`~memcglab.stats.netperf_fit`: the multi-memcg thread's registered contention model fitted on
  the "without" column alone (study 1 predicts "with" from it);
* :mod:`~memcglab.stats.verdicts`: Welch and TOST on the RFC's madvise table and on
  simulated trials;
* :mod:`~memcglab.stats.verdict_rules`: the pre-registered rules and their dated addendum;
* :mod:`~memcglab.stats.judging`: ``judge``, the one function every verdict word comes
  from, with :class:`Measurement` (a measured value widened by its noise) and ``p_inside``
  (P(holds)'s one definition);
* :mod:`~memcglab.stats.alternatives`: intervals per modelling alternative.
"""

from memcglab.stats.alternatives import option_intervals
from memcglab.stats.calibration import Fit, calibrate, leave_one_out, mape, prediction_errors
from memcglab.stats.inference import (
    TostResult,
    WelchResult,
    bootstrap_ci,
    cohens_d,
    equivalence_margin,
    hedges_g,
    paired_wilcoxon,
    perf_rse_to_sd,
    tost,
    welch,
    welch_df,
)
from memcglab.stats.judging import Measurement, Take, Verdict, format_p, judge, p_inside
from memcglab.stats.verdict_rules import load_rules, verdict_words
from memcglab.stats.verdicts import verdict_003, verdict_003_simulated

__all__ = [
    "Fit", "calibrate", "leave_one_out", "mape", "prediction_errors",
    "TostResult", "WelchResult", "bootstrap_ci", "cohens_d", "equivalence_margin", "hedges_g",
    "paired_wilcoxon", "perf_rse_to_sd", "tost", "welch", "welch_df",
    "verdict_003", "verdict_003_simulated",
    "Measurement", "Take", "Verdict", "format_p", "judge", "load_rules", "option_intervals",
    "p_inside", "verdict_words",
]
