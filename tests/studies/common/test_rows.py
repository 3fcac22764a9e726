"""The claim and count rows studies hand to the sidecar and to ``memcglab reproduce``."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcglab.stats import Measurement, judge, load_rules, verdict_words
from memcglab.studies import (
    CLAIM_COLUMNS,
    CLAIM_KEYS,
    COUNT_KEYS,
    OPTIONAL_KEYS,
    check_claims,
    check_counts,
    claim_row,
    claims_json,
    count_row,
    counts_json,
    read_claims,
    read_counts,
)

text = st.text(min_size=1, max_size=40)
finite = st.floats(-1e6, 1e6, allow_nan=False)
IV = SimpleNamespace(low=0.3, high=2.3, sources={"parameters"}, coverage=0.9,
                     samples=np.linspace(0.3, 2.3, 64))
MISS = judge("measured", measured=Measurement.point(4.38, 1.2, "%"), interval=IV)
EXACT = judge("exact", computed=136, published=136)
PRED = judge("prediction", interval=IV)
PRICE = {"estimate": 1.1, "low": 0.3, "high": 2.3, "unit": "%", "driver": "c2c_transfer",
         "driver_st": 0.93}


def test_the_keys_and_the_columns_keep_them_in_order():
    assert CLAIM_KEYS == ("claim", "source", "rule", "published", "simulated", "reason",
                          "rules_sha256")
    assert set(CLAIM_COLUMNS) == set(CLAIM_KEYS) | set(OPTIONAL_KEYS) | {"verdict",
                                                                        "prediction"}
    assert CLAIM_COLUMNS[:3] == ("claim", "source", "rule")
    assert COUNT_KEYS == ("study", "quantity", "configuration", "value", "note")


@given(st.lists(st.tuples(text, text, text, text, st.sampled_from([MISS, EXACT, PRED]),
                          st.booleans()), max_size=5))
def test_claims_round_trip_through_the_sidecar_string(rows):
    made = [claim_row(*r[:5], **(PRICE if r[5] else {})) for r in rows]
    encoded = claims_json(made)
    assert isinstance(encoded, str)
    assert read_claims({"claims": encoded}) == made
    assert read_claims({"claims": json.loads(encoded)}) == made
    for r, row in zip(rows, made, strict=True):
        assert row["rule"] == r[4].rule and row["reason"] == r[4].reason
        assert row.get("verdict") == r[4].word and row.get("prediction") == r[4].prediction
        assert row["rules_sha256"] == load_rules().sha256
        assert list(row) == [k for k in CLAIM_COLUMNS if k in row]  # column order
        assert None not in row.values()


def test_a_row_takes_its_words_and_p_from_judge(tmp_path):
    row = claim_row("regression", "a thread", "4.38%", "+0.8%", MISS, **PRICE)
    assert row["verdict"] == "misses" and row["p_text"] == "< 1/64" and row["p_holds"] == 0.0
    (tmp_path / "result.json").write_text(json.dumps({"claims": claims_json([row])}))
    assert read_claims(tmp_path) == [row] == read_claims(tmp_path / "result.json")
    assert read_counts(tmp_path) == []  # no "counts" key: no rows
    with pytest.raises(ValueError, match="pass the Verdict memcglab.stats.judge returned"):
        claim_row("c", "s", "p", "x", "agrees")


def test_numbers_become_plain_floats_and_none_means_absent():
    row = dict(claim_row("c", "s", "p", "x", MISS), low=np.float32(1), high=2,
               unit="cycles/packet", driver_st=np.float64(0.5), would_take=None)
    row = check_claims([row])[0]
    assert row["low"] == 1.0 and type(row["low"]) is float and type(row["high"]) is float
    assert "would_take" not in row  # None is absent
    assert claim_row("c", "s", "p", "x", MISS).get("would_take") is None


GOOD = {"claim": "c", "source": "s", "rule": "measured", "published": "p", "simulated": "x",
        "reason": "r", "rules_sha256": "0" * 64, "verdict": "agrees"}


@pytest.mark.parametrize("change, match", [
    ({"verdict": None}, "field verdict=None: a measured row's verdict is one of agrees"),
    ({"verdict": "reproduced"}, "verdict='reproduced'"),
    ({"rule": "exact"}, "a exact row's verdict is one of matches, differs, not comparable"),
    ({"rule": "prediction"}, "a prediction row has a prediction phrase and no verdict"),
    ({"rule": "vibes"}, "field rule='vibes': must be one of measured"),
    ({"source": None}, "lacks source; every claim row needs claim, source"),
    ({"rules_sha256": "abc"}, "field rules_sha256='abc': must be a SHA-256"),
    ({"x": "y"}, r"unknown keys \['x'\]; a claim row has claim, source"),
    ({"published": 1.5}, "field published=1.5: must be a non-empty str"),
    ({"low": "0.1"}, "field low='0.1': must be a finite number"),
    ({"low": 1.0}, "has low but not all of low, high, unit"),
    ({"low": 5.0, "high": 4.9, "unit": "%"}, "fields low=5.0, high=4.9: low must not exceed"),
    ({"p_holds": 1.2}, r"field p_holds=1.2: must be in \[0, 1\]"),
    ({"driver_st": math.nan}, "field driver_st=nan: must be a finite number"),
])
def test_bad_rows_are_named(change, match):
    with pytest.raises(ValueError, match=match):
        check_claims([{**GOOD, **change}])


def test_every_verdict_word_of_a_row_is_judges():
    assert {"agrees", "misses", "matches", "goal met", "shown in the port"} <= verdict_words()


def test_a_total_sobol_index_a_little_outside_0_1_is_kept_as_estimated():
    row = claim_row("c", "s", "p", "x", MISS, **{**PRICE, "driver_st": 1.03})
    assert row["driver_st"] == 1.03


def test_a_non_dict_row_is_named():
    with pytest.raises(ValueError, match=r"claim row 1=\['c'\]: must be a dict"):
        check_claims([GOOD, ["c"]])


def test_a_sidecar_without_claims_says_what_it_has():
    with pytest.raises(KeyError, match="has slots, walks"):
        read_claims({"walks": 1, "slots": 7})


# -- counts ---------------------------------------------------------------------------


@given(st.lists(st.tuples(text, text, text, st.integers(-2**53, 2**53) | finite,
                          st.text(max_size=20)), max_size=5))
def test_counts_round_trip_and_keep_integers(rows):
    made = [count_row(*r) for r in rows]
    assert read_counts({"counts": counts_json(made)}) == made
    assert read_counts({"counts": json.loads(counts_json(made))}) == made
    for r, row in zip(rows, made, strict=True):
        assert list(row) == list(COUNT_KEYS) and type(row["value"]) is type(r[3])


def test_counts_from_a_result_file(tmp_path):
    rows = [count_row("02", "walks per 1000 charges", "multi, 7 slots, netperf 36 clients",
                      np.float64(92.6), "LRU and random alike")]
    (tmp_path / "result.json").write_text(json.dumps({"counts": counts_json(rows)}))
    assert read_counts(tmp_path) == rows and rows[0]["value"] == 92.6


@pytest.mark.parametrize("change, match", [
    ({"note": None}, "count row 0 field note=None: must be a str"),
    ({"study": ""}, "count row 0 field study='': must be a non-empty str"),
    ({"value": "3"}, "count row 0 field value='3': must be a finite number"),
    ({"value": False}, "count row 0 field value=False: must be a finite number"),
    ({"unit": "x"}, "count row 0 has keys .*; need exactly study, quantity, configuration"),
])
def test_bad_count_rows_are_named(change, match):
    row = {"study": "02", "quantity": "evictions", "configuration": "lru", "value": 3,
           "note": "", **change}
    with pytest.raises(ValueError, match=match):
        check_counts([row])
