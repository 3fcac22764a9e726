"""The claim and count rows studies hand to the sidecar and to ``memcglab reproduce``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcglab.studies import (
    CLAIM_COLUMNS,
    CLAIM_KEYS,
    COUNT_KEYS,
    PRICED_KEYS,
    check_claims,
    check_counts,
    claim_kind,
    claim_row,
    claims_json,
    count_row,
    counts_json,
    read_claims,
    read_counts,
)

text = st.text(min_size=1, max_size=40)
finite = st.floats(-1e6, 1e6, allow_nan=False)
unit_float = st.floats(0.0, 1.0)
PRICE = {"low": -0.1, "high": 4.9, "unit": "%", "p_holds": 0.83, "driver": "percpu_rmw"}


def test_the_required_keys_are_unchanged_and_the_columns_keep_them_in_order():
    assert CLAIM_KEYS == ("claim", "published", "simulated", "verdict")
    assert set(CLAIM_COLUMNS) == set(CLAIM_KEYS) | set(PRICED_KEYS)
    assert CLAIM_COLUMNS[0] == "claim" and CLAIM_COLUMNS[-1] == "verdict"
    assert COUNT_KEYS == ("study", "quantity", "configuration", "value", "note")


@st.composite
def priced(draw):
    low, high = sorted((draw(finite), draw(finite)))
    extra = {"estimate": draw(st.none() | finite), "driver_st": draw(st.none() | unit_float),
             "break_even": draw(st.none() | text), "kind": draw(st.sampled_from([None, "priced"]))}
    return dict(low=low, high=high, unit=draw(text), p_holds=draw(unit_float),
                driver=draw(text), **extra)


@given(st.lists(st.tuples(text, text, text, text, st.none() | priced()), max_size=5))
def test_claims_round_trip_through_the_sidecar_string(rows):
    made = [claim_row(*r[:4], **(r[4] or {})) for r in rows]
    encoded = claims_json(made)
    assert isinstance(encoded, str)
    assert read_claims({"claims": encoded}) == made
    assert read_claims({"claims": json.loads(encoded)}) == made
    for r, row in zip(rows, made, strict=True):
        assert claim_kind(row) == ("structural" if r[4] is None else "priced")
        assert list(row) == [k for k in CLAIM_COLUMNS if k in row]  # column order
        assert None not in row.values()


def test_a_structural_row_has_only_the_four_keys_and_old_sidecars_still_read(tmp_path):
    old = {"claim": "seed 003: negligible", "published": "-1.2%", "simulated": "-0.3%",
           "verdict": "reproduced"}
    assert claim_row(*old.values()) == old
    (tmp_path / "result.json").write_text(json.dumps({"walks": 3, "claims": json.dumps([old])}))
    assert read_claims(tmp_path) == [old]
    assert read_claims(tmp_path / "result.json") == [old]
    assert read_counts(tmp_path) == []  # no "counts" key: no rows


def test_numbers_become_plain_floats_and_none_means_absent():
    row = check_claims([{"claim": "c", "published": "p", "simulated": "s", "verdict": "v",
                         "low": np.float32(1), "high": 2, "unit": "cycles/packet",
                         "p_holds": np.float64(1.0), "driver": "d", "break_even": None}])[0]
    assert row["low"] == 1.0 and type(row["low"]) is float and type(row["high"]) is float
    assert "break_even" not in row and claim_kind(row) == "priced"
    assert claim_kind({**row, "kind": "priced"}) == "priced"


@pytest.mark.parametrize("change, match", [
    ({"verdict": None}, "claim row 0 lacks verdict; every claim row needs claim, published"),
    ({"x": "y"}, r"unknown keys \['x'\]; a claim row has claim, .* optionally kind"),
    ({"published": 1.5}, "field published=1.5: must be a non-empty str"),
    ({"claim": ""}, "field claim='': must be a non-empty str"),
    ({"kind": "guess"}, "field kind='guess': must be one of priced, structural, count-derived"),
    ({**PRICE, "low": "0.1"}, "field low='0.1': must be a finite number"),
    ({**PRICE, "high": math.inf}, "field high=inf: must be a finite number"),
    ({**PRICE, "estimate": True}, "field estimate=True: must be a finite number"),
    ({**PRICE, "p_holds": 1.2}, r"field p_holds=1.2: must be in \[0, 1\]"),
    ({**PRICE, "driver_st": math.nan}, "field driver_st=nan: must be a finite number"),
    ({**PRICE, "driver": ""}, "field driver='': must be a non-empty str"),
    ({**PRICE, "unit": None}, "is priced but lacks unit; a priced claim needs low, high"),
    ({"low": 1.0}, "is priced but lacks high, unit, p_holds, driver"),
    ({"kind": "priced"}, "is priced but lacks low, high, unit, p_holds, driver"),
    ({**PRICE, "low": 5.0}, "fields low=5.0, high=4.9: low must not exceed high"),
    ({**PRICE, "kind": "structural"}, "is structural but has low, high, unit, p_holds, driver"),
    ({"kind": "count-derived", "break_even": "x = 1"}, "is count-derived but has break_even"),
])
def test_bad_rows_are_named(change, match):
    row = {"claim": "c", "published": "p", "simulated": "s", "verdict": "v", **change}
    with pytest.raises(ValueError, match=match):
        check_claims([row])


def test_a_total_sobol_index_a_little_outside_0_1_is_kept_as_estimated():
    row = claim_row("c", "p", "s", "v", **PRICE, driver_st=1.03)
    assert row["driver_st"] == 1.03


def test_a_non_dict_row_is_named():
    with pytest.raises(ValueError, match=r"claim row 1=\['c'\]: must be a dict"):
        check_claims([claim_row("c", "p", "s", "v"), ["c"]])


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
