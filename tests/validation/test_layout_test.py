"""The layout addendum's decision rule (memcglab.validation.ablation.layout_test)."""

from __future__ import annotations

import pytest

from memcglab.scenario.terms import DEFAULT_TERMS
from memcglab.validation import ablation


@pytest.mark.parametrize(("scores", "kept"), [
    ((0.900, 0.850, 0.860), "B"),    # B beats A; C beats A but not B
    ((0.900, 0.850, 0.840), "C"),    # C beats both
    ((0.900, 0.9004, 0.800), "C"),   # B ties A at three decimals; C still beats both
    ((0.900, 0.9004, 0.9001), "A"),  # ties keep the simpler
    ((0.900, 0.950, 0.920), "A"),
])
def test_a_variant_is_kept_only_below_every_simpler_one(monkeypatch, scores, kept):
    by_key = {}

    def fake(terms, points, seed):
        name = "C" if terms.prefetch_pair else "B" if terms.page_counter_fields else "A"
        by_key[name] = terms
        return {"terms": terms.key(), "interval_score": dict(zip("ABC", scores, strict=True))[name]}

    monkeypatch.setattr(ablation, "score_variant", fake)
    table, chosen = ablation.layout_test(DEFAULT_TERMS, 4, 0)
    assert chosen == by_key[kept]
    assert table.loc[table["kept"], "variant"].tolist() == [kept]
