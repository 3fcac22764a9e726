"""The claim rows studies 1-3 hand to the sidecar and to ``memcglab reproduce``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcglab.studies import CLAIM_KEYS, check_claims, claim_row, claims_json, read_claims

text = st.text(min_size=1, max_size=40)


def test_claim_keys_are_the_report_columns():
    assert CLAIM_KEYS == ("claim", "published", "simulated", "verdict")


@given(st.lists(st.tuples(text, text, text, text), max_size=5))
def test_claims_round_trip_through_the_sidecar_string(rows):
    made = [claim_row(*r) for r in rows]
    encoded = claims_json(made)
    assert isinstance(encoded, str)
    assert read_claims({"claims": encoded}) == made
    assert read_claims({"claims": json.loads(encoded)}) == made


def test_read_claims_from_a_result_file_or_its_directory(tmp_path):
    rows = [claim_row("seed 003: negligible", "-1.2%", "-0.3%", "reproduced")]
    (tmp_path / "result.json").write_text(json.dumps({"walks": 3, "claims": claims_json(rows)}))
    assert read_claims(tmp_path) == rows
    assert read_claims(tmp_path / "result.json") == rows


@pytest.mark.parametrize("row, match", [
    ({"claim": "c", "published": "p", "simulated": "s"}, "need exactly claim, published"),
    ({"claim": "c", "published": "p", "simulated": "s", "verdict": "v", "x": "y"},
     "need exactly"),
    ({"claim": "c", "published": 1.5, "simulated": "s", "verdict": "v"},
     "published=1.5: must be a non-empty str"),
    ({"claim": "", "published": "p", "simulated": "s", "verdict": "v"},
     "claim='': must be a non-empty str"),
])
def test_bad_rows_are_named(row, match):
    with pytest.raises(ValueError, match=match):
        check_claims([row])


def test_a_sidecar_without_claims_says_what_it_has():
    with pytest.raises(KeyError, match="has slots, walks"):
        read_claims({"walks": 1, "slots": 7})
