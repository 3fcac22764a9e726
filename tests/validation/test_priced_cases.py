"""The scoreboard scores the cases the model can price and reports the others."""

from __future__ import annotations

from memcglab.validation.dataset import case_models, priced_cases, unpriced_cases
from memcglab.validation.devset import load_cases
from memcglab.validation.scoreboard import cases_in_order


def test_the_refused_cases_are_the_cgroup_v1_ones_with_the_contract_message():
    refused = unpriced_cases()
    assert {c.source for c, _ in refused} == {"page_counter_relayout"}
    assert all("cgroups.version: 1 is not priced yet" in why and "(valid: 2)" in why
               for _, why in refused)


def test_priced_and_refused_split_the_set_in_order():
    every = load_cases()
    priced = priced_cases()
    refused = {c.case_id for c, _ in unpriced_cases()}
    assert [c.case_id for c in priced] == [c.case_id for c in every
                                            if c.case_id not in refused]
    assert len(priced) + len(refused) == len(every)
    assert cases_in_order() == [c.case_id for c in priced]


def test_a_subset_is_split_on_its_own():
    every = load_cases()
    one_refused = next(c for c in every if c.source == "page_counter_relayout")
    one_priced = next(c for c in every if c.source != "page_counter_relayout")
    assert priced_cases([one_refused, one_priced]) == (one_priced,)
    assert [m.case.case_id for m in case_models([one_priced])] == [one_priced.case_id]
