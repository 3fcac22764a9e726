"""Study 6 (``06_page_counter_stock_v4.ipynb``): the page_counter stock as posted in v4.

Predictions stated before any measurement, as scenario files (``data/scenarios/study06/``)
that ``memcglab predict`` regenerates before any comparison: v4's throughput change
against the multi stock and the RFC on loopback request/response, streams, AF_UNIX and the
madvise loop on 72 and 224 CPUs; and the pages stranded in stocks as tasks migrate.

* :mod:`~memcglab.studies.s06_page_counter_stock_v4.counts`: the benchmarks (cases) and
  their exact event counts under multi, pcstock and pcstock-v4;
* :mod:`~memcglab.studies.s06_page_counter_stock_v4.scenarios`: the scenario files, each
  regenerated through ``memcglab predict`` and written to ``predictions.parquet``;
* :mod:`~memcglab.studies.s06_page_counter_stock_v4.staleness` and
  :mod:`~memcglab.studies.s06_page_counter_stock_v4.stale`: pages stranded in stocks,
  measured, and the sweep over migration rates and cgroups;
* :mod:`~memcglab.studies.s06_page_counter_stock_v4.madvise`: the same-CPU madvise check;
* :mod:`~memcglab.studies.s06_page_counter_stock_v4.claims`: verdicts, claim rows and the
  conclusion; :mod:`~memcglab.studies.s06_page_counter_stock_v4.views`: the figures;
* :mod:`~memcglab.studies.s06_page_counter_stock_v4.study`: the parameters
  (:class:`V4Params`) and the steps the notebook runs.
"""

from memcglab.studies.s06_page_counter_stock_v4 import (
    claims,
    counts,
    madvise,
    scenarios,
    stale,
    staleness,
    study,
    views,
)
from memcglab.studies.s06_page_counter_stock_v4.study import V4Params

__all__ = ["V4Params", "claims", "counts", "madvise", "scenarios", "stale", "staleness",
           "study", "views"]
