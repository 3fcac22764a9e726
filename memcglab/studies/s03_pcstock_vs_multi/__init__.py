"""Study 3 (``03_pcstock_vs_multi.ipynb``): the RFC's page_counter stock vs the multi stock.

The page_counter-stock RFC's madvise test (TOST and a priced ±2% band) and the netperf receive mix's
throughput, with the release's placement and the pair's migration as axes.

* :mod:`~memcglab.studies.s03_pcstock_vs_multi.counts`: the netperf scenarios and their
  exact counts under both stocks;
* :mod:`~memcglab.studies.s03_pcstock_vs_multi.pricing`: the priced changes (netperf
  throughput through :mod:`memcglab.pricing`, charge-path cycles, the madvise trial);
* :mod:`~memcglab.studies.s03_pcstock_vs_multi.study`: the parameters
  (:class:`PcstockParams`), the replays, the verdicts and the count rows;
* :mod:`~memcglab.studies.s03_pcstock_vs_multi.claims`: claim rows and the conclusion;
  :mod:`~memcglab.studies.s03_pcstock_vs_multi.views`: the figures.
"""

from memcglab.studies.s03_pcstock_vs_multi import claims, counts, pricing, study, views
from memcglab.studies.s03_pcstock_vs_multi.study import PcstockParams, run

__all__ = ["PcstockParams", "claims", "counts", "pricing", "run", "study", "views"]
