"""What every study shares, below the studies: nothing here knows a study.

* :mod:`~memcglab.studies.common.rows`: the claim and count rows a study hands the
  report, validated, and their sidecar JSON (re-exported by :mod:`memcglab.studies`);
* :mod:`~memcglab.studies.common.measure`: one replay measured and priced at the typical
  costs, the row every study's results table is made of;
* :mod:`~memcglab.studies.common.figures`: the studies' theme and one colour per model;
* :mod:`~memcglab.studies.common.text`: words chosen from a run's numbers.

Four small modules, not one: each has one job, and only ``figures`` needs matplotlib.
"""

__all__ = ["figures", "measure", "rows", "text"]
