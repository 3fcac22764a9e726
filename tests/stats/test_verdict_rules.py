"""The pre-registered verdict rules: the pinned file, and judge on hand-made cases."""

import hashlib
import math
from types import SimpleNamespace

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from memcglab.stats.verdict_rules import judge, load_rules, rules_path

# Change these only together with the rules, in a commit that says why (verdict_rules.md).
PINNED = {
    "verdict_rules.toml": "fb9e8ecfae1577865698bf077dd324acb6b40fc658efad019c62607e997cd7cb",
    "verdict_rules.md": "8150aed788cc45d65aef6cc47ca574ef71d931b8bda512e149dffba54a38613b",
}
FULL = {"parameters", "alternatives", "seeds"}


def J(kind, blo, bhi, lo, hi, sources=FULL, coverage=0.9):
    return judge(kind, blo, bhi, lo, hi, sources=sources, coverage=coverage)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_rules_files_are_pinned(name):
    data = (rules_path().parent / name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == PINNED[name], (
        f"{name} changed: update PINNED in the same commit, saying why the rules changed")


def test_rules_load_and_verdict_carries_their_hash():
    r = load_rules()
    assert r.coverage == 0.9 and r.required_sources == {"parameters"}
    assert J("value", 1, 3, 0, 4).rules_sha256 == PINNED["verdict_rules.toml"]


@pytest.mark.parametrize("kind, band, interval, word", [
    # value: the interval contains a point, contains a band, lies inside a band
    ("value", (4.38, 4.38), (3.0, 6.0), "reproduced"),
    ("value", (1, 3), (0.5, 3.5), "reproduced"),
    ("value", (1, 3), (1.5, 2.5), "reproduced"),
    ("value", (None, 0.5), (0.1, 0.4), "reproduced"),      # one-sided band, inside
    ("value", (1, 3), (3.5, 5.0), "refuted"),
    ("value", (4.38, 4.38), (-1.0, 2.0), "refuted"),
    ("value", (1, 3), (2.0, 5.0), "undetermined"),         # partial overlap
    ("value", (None, 0.5), (0.1, 0.9), "undetermined"),
    # touching intervals: closed, so they overlap
    ("value", (1, 3), (3.0, 5.0), "undetermined"),
    ("value", (1, 3), (-2.0, 1.0), "undetermined"),
    ("value", (3, 3), (3.0, 5.0), "reproduced"),           # a point at the interval's end
    ("value", (1, 3), (1.0, 3.0), "reproduced"),           # identical
    # difference: must also exclude zero
    ("difference", (1, 3), (0.5, 3.4), "reproduced"),
    ("difference", (1, 3), (0.5, 4.9), "undetermined"),   # contains, but wider than 3
    # too wide to decide: contains the point, but wider than the published magnitude
    ("value", (4.38, 4.38), (0.1, 40.0), "undetermined"),
    ("value", (4.38, 4.38), (0.2, 4.5), "reproduced"),    # width 4.3 <= 4.38
    ("difference", (1, 3), (-0.1, 4.9), "undetermined"),   # crosses zero
    ("difference", (1, 3), (0.0, 4.9), "undetermined"),   # ends at zero: not excluded
    ("difference", (1, 3), (-2.0, -0.5), "refuted"),
    ("difference", (-3, -1), (-2.5, -1.5), "reproduced"),  # negative band, inside
    ("difference", (4.38, 4.38), (4.0, 8.0), "reproduced"),
    ("difference", (4.38, 4.38), (-1.0, 4.0), "refuted"),
])
def test_judge_hand_made_cases(kind, band, interval, word):
    v = J(kind, *band, *interval)
    assert v.word == word, v.reason
    assert v.kind == kind and v.reason


def test_seed_only_interval_is_never_reproduced_or_refuted():
    for interval in ((0.5, 3.5), (10.0, 11.0)):
        v = J("value", 1, 3, *interval, sources={"seeds"})
        assert v.word == "undetermined" and "parameters" in v.reason
    assert J("value", 1, 3, 0.5, 3.5, sources={"seeds", "alternatives"}).word == "undetermined"


def test_interval_object_is_accepted():
    res = SimpleNamespace(low=1.2, high=2.0, sources=frozenset({"parameters"}), coverage=0.9)
    assert judge("difference", 1, 3, interval=res).word == "reproduced"
    res = SimpleNamespace(low=1.2, high=2.0, sources=frozenset({"seeds"}), coverage=0.9)
    assert judge("difference", 1, 3, interval=res).word == "undetermined"


def test_structural_exact():
    assert judge("structural", 0x88, None, 136).word == "reproduced"
    assert judge("structural", 112, 112, 112, 112).word == "reproduced"
    assert judge("structural", 24, None, 32).word == "refuted"
    assert judge("structural", ("stock_lock", "nr_pages"), None,
                 ("stock_lock", "nr_pages")).word == "reproduced"
    with pytest.raises(ValueError, match="one exact value"):
        judge("structural", 112, 24, 112)


@pytest.mark.parametrize("kwargs, match", [
    (dict(claim_kind="ratio"), "claim_kind='ratio'"),
    (dict(coverage=0.95), "field coverage"),
    (dict(sources=None), "sources and coverage are required"),
    (dict(sources={"vibes"}), "valid sources"),
    (dict(predicted_low=3.0, predicted_high=1.0), "low <= high"),
    (dict(predicted_low=math.nan), "must be a number"),
    (dict(predicted_high=math.inf), "finite"),
    (dict(published_low=None, published_high=None), "at least one side"),
    (dict(published_low=4.0, published_high=3.0), "low <= high"),
    (dict(claim_kind="difference", published_low=-1.0), "includes zero"),
])
def test_judge_errors(kwargs, match):
    args = dict(claim_kind="value", published_low=1.0, published_high=3.0, predicted_low=0.0,
                predicted_high=4.0, sources=FULL, coverage=0.9) | kwargs
    with pytest.raises(ValueError, match=match):
        judge(**args)


GOOD = """schema_version = 1
coverage = 0.9
required_sources = ["parameters"]
touching_counts_as_overlap = true
[kinds.value]
reproduced_when = ["contains", "within"]
exclude_zero = false
max_width_ratio = 1.0
[kinds.difference]
reproduced_when = ["contains"]
exclude_zero = true
max_width_ratio = 2
[kinds.structural]
exact = true
"""


@pytest.mark.parametrize("old, new, match", [
    ("coverage = 0.9", "coverage = 1.5", "field coverage=1.5"),
    ("coverage = 0.9\n", "", "field coverage is missing"),
    ('["parameters"]', '["luck"]', "field required_sources"),
    ("touching_counts_as_overlap = true", "touching_counts_as_overlap = 1",
     "field touching_counts_as_overlap=1"),
    ('["contains"]', '["overlaps"]', "field kinds.difference.reproduced_when"),
    ("exclude_zero = true", "", "field kinds.difference.exclude_zero is missing"),
    ("exact = true", "exact = false", "field kinds.structural.exact"),
    ("max_width_ratio = 2", "max_width_ratio = 0", "field kinds.difference.max_width_ratio=0"),
    ("max_width_ratio = 1.0\n", "", "field kinds.value.max_width_ratio is missing"),
    ("[kinds.structural]\nexact = true\n", "", "field kinds="),
    ("schema_version = 1", "schema_version = 2", "field schema_version=2"),
    ("coverage = 0.9", "coverage = ", "not valid TOML"),
])
def test_rules_file_validation_names_file_and_field(tmp_path, old, new, match):
    p = tmp_path / "rules.toml"
    p.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(ValueError, match=match) as e:
        load_rules(p)
    assert str(p) in str(e.value)


def test_a_rules_file_other_than_the_default_is_applied(tmp_path):
    p = tmp_path / "rules.toml"
    p.write_text(GOOD)
    # here a difference is reproduced only by containing the band, not by lying inside it
    assert judge("difference", 1, 3, 1.5, 2.5, sources=FULL, coverage=0.9,
                 rules=p).word == "undetermined"
    p.write_text(GOOD.replace("touching_counts_as_overlap = true",
                              "touching_counts_as_overlap = false"))
    assert judge("value", 1, 3, 3.0, 5.0, sources=FULL, coverage=0.9, rules=p).word == "refuted"
    # this file lets a difference interval be twice the published magnitude
    p.write_text(GOOD)
    assert judge("difference", 1, 3, 0.5, 6.0, sources=FULL, coverage=0.9,
                 rules=p).word == "reproduced"


_num = st.floats(-100, 100, allow_nan=False)


@given(_num, _num, _num, _num, st.sampled_from(["value", "difference"]))
def test_verdicts_follow_the_declared_definitions(a, b, c, d, kind):
    b_lo, b_hi = sorted((a, b))
    lo, hi = sorted((c, d))
    assume(kind == "value" or not b_lo <= 0 <= b_hi)
    v = J(kind, b_lo, b_hi, lo, hi)
    assert (v.word == "refuted") == (hi < b_lo or lo > b_hi)
    if v.word == "reproduced":
        assert (lo <= b_lo and b_hi <= hi) or (b_lo < b_hi and b_lo <= lo and hi <= b_hi)
        assert kind == "value" or not lo <= 0 <= hi
        if not (b_lo < b_hi and b_lo <= lo and hi <= b_hi):  # reproduced by containing
            assert hi - lo <= max(abs(b_lo), abs(b_hi))
    # without parameter uncertainty nothing is decided
    assert J(kind, b_lo, b_hi, lo, hi, sources={"seeds", "alternatives"}).word == "undetermined"
