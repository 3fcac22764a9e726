"""What every study shares, below the studies: nothing here knows a study.

* :mod:`~memcglab.studies.common.rows`: the claim and count rows a study hands the
  report, validated, and their sidecar JSON (re-exported by :mod:`memcglab.studies`);
* :mod:`~memcglab.studies.common.measure`: one replay measured and priced at the typical
  costs, the row every study's results table is made of;
* :mod:`~memcglab.studies.common.figures`: the studies' theme and one colour per model;
* :mod:`~memcglab.studies.common.text`: words chosen from a run's numbers (plurals,
  intervals);
* :mod:`~memcglab.studies.common.sources`: the sources, named as their readers know them;
* :mod:`~memcglab.studies.common.constraints`: nuisance inputs set by the repository's
  data (the published netperf throughput; the development-set calibration, when it ships);
* :mod:`~memcglab.studies.common.judging`: what a verdict needs besides an interval (what
  it would take, a derived measurement's band).

Small modules, not one: each has one job, and only ``figures`` needs matplotlib.
"""

__all__ = ["constraints", "figures", "judging", "measure", "rows", "sources", "text"]
