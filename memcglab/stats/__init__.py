"""Statistics: tests from summary statistics, calibration, and the verdicts on the seeds.

The only layer, with ``memcglab.published``, that reads published numbers. It
compares them with what memcglab simulates; nothing here feeds a simulation.

* :mod:`~memcglab.stats.inference`: Welch, TOST, equivalence margins, bootstrap CIs,
  paired Wilcoxon, effect sizes, perf stat's "( +- x% )";
* :mod:`~memcglab.stats.calibration`: least-squares calibration with parameter
  intervals, out-of-sample and leave-one-out errors;
* :mod:`~memcglab.stats.netperf_fit`: seed 000's registered contention model fitted on
  the "without" column alone (study 1 predicts "with" from it);
* :mod:`~memcglab.stats.verdicts`: seed 003, seed 004, LRU vs random;
* :mod:`~memcglab.stats.verdict_rules`: the pre-registered rules, applied by ``judge``.
"""

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
from memcglab.stats.verdict_rules import Verdict, judge, load_rules
from memcglab.stats.verdicts import (
    verdict_003,
    verdict_003_simulated,
    verdict_004_rules,
    verdict_lru_random_rules,
)

__all__ = [
    "Fit", "calibrate", "leave_one_out", "mape", "prediction_errors",
    "TostResult", "WelchResult", "bootstrap_ci", "cohens_d", "equivalence_margin", "hedges_g",
    "paired_wilcoxon", "perf_rse_to_sd", "tost", "welch", "welch_df",
    "verdict_003", "verdict_003_simulated", "verdict_004_rules", "verdict_lru_random_rules",
    "Verdict", "judge", "load_rules",
]
