"""The proper-rule table: memcglab's scored draws are predict's, and the table averages
per source (memcglab.validation.proper)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from memcglab.scenario.predict import predict_scenario
from memcglab.validation import proper
from memcglab.validation.dataset import case_models


def test_the_scored_draws_are_the_ones_predict_summarises():
    for m in case_models()[::5]:
        x = proper.change_draws(m, 64, 0, None)
        band = predict_scenario(m.model.scenario, 64, 0, None, "t", model=m.model)["change_pct"]
        lo, med, hi = np.quantile(x, [0.05, 0.5, 0.95])
        assert [lo, med, hi] == pytest.approx([band["low"], band["median"], band["high"]],
                                              abs=0.0051)


def test_the_summary_weighs_sources_and_keeps_the_secondary_columns():
    rows = []
    for method in proper.METHODS:
        for i, src in enumerate(["a"] * 6 + ["b"]):
            rows.append({"method": method, "source": src, "case": f"{src}/{i}",
                         "interval_score": 1.0 if src == "a" else 3.0, "crps": 0.5,
                         "inside": src == "a", "sign_right": True, "error_pp": float(i),
                         "width_pp": 2.0})
    t = proper.proper_summary(pd.DataFrame(rows))
    assert t.loc["memcglab", "interval_score"] == 2.0  # (1 + 3) / 2, not (6 + 3) / 7
    assert t.loc["memcglab", "interval_score:a"] == 1.0
    assert t.loc["no_change", "coverage"] == pytest.approx(6 / 7)
    assert t.loc["bottleneck_law", "sources"] == 2
    assert "IS b" in proper.proper_text(t)
