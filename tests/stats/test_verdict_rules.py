"""The verdict rules and their addendum: the pinned files, and judge on hand-made cases."""

import hashlib
import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from memcglab.stats import Measurement, Take, format_p, judge, load_rules, p_inside
from memcglab.stats.verdict_rules import addendum_path, rules_path, verdict_words

# Change these only together with the rules, in a commit that says why (a dated addendum).
PINNED = {
    "verdict_rules.toml": "fb9e8ecfae1577865698bf077dd324acb6b40fc658efad019c62607e997cd7cb",
    "verdict_rules.md": "8150aed788cc45d65aef6cc47ca574ef71d931b8bda512e149dffba54a38613b",
    "verdict_rules_addendum_2026-12-01.toml":
        "89e49bef136a50f960f1de09aa683ed49c94f390d1694df3d0c57500d2f8df56",
    "verdict_rules_addendum_2026-12-01.md":
        "58c9b799cf52c644b8746d65b18578e4b53011e3250b71a681c14464dde2aa35",
}
FULL = frozenset({"parameters", "alternatives", "seeds"})


def iv(lo, hi, sources=FULL, samples=None, coverage=0.9):
    return SimpleNamespace(low=lo, high=hi, sources=sources, coverage=coverage,
                           samples=samples)


def measured(m, lo, hi, **kw):
    return judge("measured", measured=m, interval=iv(lo, hi, samples=kw.pop("samples", None)),
                 **kw)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_rules_files_are_pinned(name):
    data = (rules_path().parent / name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == PINNED[name], (
        f"{name} changed: update PINNED in the same commit, saying why the rules changed")


def test_a_verdict_carries_the_digest_of_both_rule_files():
    both = rules_path().read_bytes() + addendum_path().read_bytes()
    v = measured(Measurement.point(2.0, 0.5), 1.0, 3.0)
    assert v.rules_sha256 == hashlib.sha256(both).hexdigest() == load_rules().sha256


def test_the_addendum_retires_the_old_words_and_lists_every_kind():
    r = load_rules()
    assert set(r.retired) == {"reproduced", "refuted"}
    assert not {"reproduced", "refuted"} & verdict_words()
    assert r.words["measured"] == ("agrees", "misses", "undetermined")
    assert r.words["prediction"] == ()
    text = (rules_path().parent / "verdict_rules_addendum_2026-12-01.md").read_text()
    for word in verdict_words():
        assert f"`{word}`" in text, word


@pytest.mark.parametrize("m, interval, word, why", [
    (Measurement.point(4.38, 1.2), (0.3, 2.3), "misses", "below"),
    (Measurement.point(4.38, 1.2), (6.0, 9.0), "misses", "above"),
    (Measurement.point(4.38, 1.2), (2.0, 5.0), "agrees", "informative"),
    (Measurement.point(4.38, 1.2), (3.5, 3.5), "undetermined", "degenerate"),
    (Measurement.point(4.38, 1.2), (0.0, 40.0), "undetermined", "too wide"),
    (Measurement.point(4.38, 1.2), (3.0, 3.18), "agrees", "informative"),  # touching
    (Measurement(1.0, 3.0, 0.0), (-0.5, 0.9), "misses", "below"),
    (Measurement(-math.inf, 0.5, 0.0), (0.1, 0.4), "agrees", "informative"),
])
def test_measured_hand_made_cases(m, interval, word, why):
    v = measured(m, *interval)
    assert v.word == word and why in v.reason, v.reason
    assert v.rule == "measured"


def test_default_noise_widens_a_measurement_that_states_none():
    m = Measurement.point(100.0)
    assert m.band(load_rules()) == pytest.approx((95.0, 105.0))
    assert measured(m, 90.0, 96.0).word == "agrees"
    assert measured(m, 80.0, 94.0).word == "misses"


def test_seed_only_is_undetermined_and_says_so():
    v = judge("measured", measured=Measurement.point(2.0, 0.1),
              interval=iv(1.9, 2.1, sources=frozenset({"seeds", "alternatives"})))
    assert v.word == "undetermined" and v.reason.startswith("seed-only")


def test_a_difference_whose_sign_is_measured_must_settle_it():
    m = Measurement.point(-1.2, 0.5)
    assert measured(m, -1.0, 0.4, difference=True, tolerance=2.0).word == "undetermined"
    assert measured(m, -1.0, -0.1, difference=True, tolerance=2.0).word == "agrees"
    # a measured difference whose band holds zero: no sign to settle
    assert measured(Measurement.point(0.06, 0.16), -0.3, 0.1, difference=True,
                    tolerance=2.0).word == "agrees"


def test_a_miss_must_hold_under_every_alternative():
    m = Measurement.point(4.38, 1.2)
    alts = {"growth=writes": (0.3, 1.0), "growth=reads": (0.5, 3.5)}
    v = measured(m, 0.3, 2.3, alternatives=alts)
    assert v.word == "undetermined" and "growth=reads" in v.reason
    alts["growth=reads"] = (0.5, 2.5)
    v = measured(m, 0.3, 2.3, alternatives=alts)
    assert v.word == "misses" and "2 alternatives" in v.reason


def test_alternatives_that_disagree_are_named():
    m = Measurement.point(4.38, 1.2)
    v = measured(m, 0.6, 70.0, alternatives={"growth=writes": (0.6, 2.0),
                                              "growth=reads": (3.0, 70.0)})
    assert v.word == "undetermined" and "alternatives disagree" in v.reason
    assert "growth=writes [0.6, 2]: misses" in v.reason


def test_what_it_would_take_is_printed_with_a_miss_only():
    take = [Take("c2c_transfer", "cycles", 1770.0, (45.0, 350.0), "the line's utilisation "
                 "is 1.3 there"), Take("lock_waiters", "CPUs", None, searched=(0.0, 500.0))]
    v = measured(Measurement.point(4.38, 1.2), 0.3, 2.3, would_take=take)
    assert v.would_take == ("c2c_transfer = 1770 cycles (outside its prior 45-350; "
                            "infeasible: the line's utilisation is 1.3 there); lock_waiters: "
                            "no value in 0-500 CPUs reaches it")
    assert measured(Measurement.point(4.38, 1.2), 2.0, 5.0, would_take=take).would_take is None


# P(holds): one definition, on hand-made distributions
def test_p_is_the_share_of_draws_inside_the_widened_measurement():
    draws = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    assert p_inside(draws, 2.0, 5.0) == 0.5
    v = measured(Measurement.point(3.5, 1.5), 0.0, 7.0, samples=draws)
    assert v.p_holds == 0.5 and v.p_text == "0.50"      # [2, 5] holds 2, 3, 4, 5
    v = measured(Measurement.point(20.0, 1.0), 0.0, 7.0, samples=draws)
    assert v.p_holds == 0.0 and v.p_text == "< 1/8"
    one_sided = measured(Measurement(-math.inf, 1.0, 0.0), 0.0, 7.0, samples=draws)
    assert one_sided.p_holds == 0.25
    assert format_p(1.0, 8) == "1.00" and format_p(None, 8) == "—"


@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=60),
       st.floats(-50, 50, allow_nan=False), st.floats(0, 10, allow_nan=False))
def test_p_counts_exactly_the_draws_inside(draws, m, e):
    y = np.array(draws)
    v = measured(Measurement.point(m, e), float(y.min()), float(y.max()), samples=y)
    if y.min() == y.max():  # degenerate: no P, never agreement
        assert v.p_holds is None and v.word == "undetermined"
    else:
        assert v.p_holds == pytest.approx(np.mean((y >= m - e) & (y <= m + e)))


@given(st.floats(-100, 100, allow_nan=False), st.floats(0, 10, allow_nan=False),
       st.floats(-100, 100, allow_nan=False), st.floats(0, 50, allow_nan=False))
def test_verdicts_follow_the_declared_definitions(m, e, a, w):
    lo, hi = a, a + w
    v = measured(Measurement.point(m, e), lo, hi, tolerance=5.0)
    apart = hi < m - e or lo > m + e
    assert (v.word == "misses") == (apart and hi > lo)
    if v.word == "agrees":
        assert not apart and 0 < hi - lo <= 10.0


@given(st.floats(-100, 100, allow_nan=False), st.floats(-100, 100, allow_nan=False),
       st.floats(0, 10, allow_nan=False))
def test_a_degenerate_interval_is_never_agreement(m, x, e):
    assume(math.isfinite(m))
    v = measured(Measurement.point(m, e), x, x)
    assert v.word == "undetermined" and v.reason.startswith("degenerate")
    p = judge("prediction", interval=iv(x, x))
    assert p.word is None and p.prediction.startswith("no prediction (zero by construction")


def test_qualitative_states_its_number_and_combines_configurations():
    band = Measurement(-2.0, 2.0, 0.0, "%")
    conf = {f"{c} cgroups": {"measured": band, "interval": iv(lo, hi), "tolerance": 2.0}
            for c, lo, hi in ((1, -0.1, 0.0), (4, -0.3, -0.1), (32, -0.5, -0.2))}
    v = judge("qualitative", operationalised="a change within +-2%",
              differences="40 CPUs, 50G; the lab replays the loop", configurations=conf)
    assert v.word == "agrees" and v.reason.startswith("made a number as a change within")
    conf["32 cgroups"]["interval"] = iv(-5.0, -3.0)
    assert judge("qualitative", operationalised="x", differences="y",
                 configurations=conf).word == "undetermined"
    with pytest.raises(ValueError, match="operationalised"):
        judge("qualitative", operationalised="", differences="y", configurations=conf)


def test_shape_states_its_power_and_misses_on_one_point():
    pts = {"6 clients": {"measured": Measurement.point(0.10, 0.02),
                         "interval": iv(0.0, 0.05)},
           "12 clients": {"measured": Measurement.point(0.39, 0.05),
                          "interval": iv(0.01, 0.08)}}
    v = judge("shape", points=pts, power=0.0, monotonic_share=0.996, n=512)
    assert v.word == "misses" and "99.6%" in v.reason and v.p_text == "< 1/512"
    pts["12 clients"]["interval"] = iv(0.3, 0.45)
    assert judge("shape", points=pts, power=0.4).word == "agrees"


def test_prediction_phrases_and_disagreeing_alternatives():
    def p(lo, hi, **kw):
        return judge("prediction", interval=iv(lo, hi), **kw).prediction
    assert p(-40.0, -3.0) == "loss beyond 2%"
    assert p(2.5, 9.0, margin=2.0) == "gain beyond 2%"
    assert p(-0.5, 0.4) == "within ±2%"
    assert p(-82.0, 0.5) == "no prediction (the interval spans ±2%)"
    assert p(87.0, 179.0, words=("saving", "cost")) == "cost beyond 2%"
    assert p(-78.0, 0.45, alternatives={"release=task": (-82.0, -1.7),
                                        "release=softirq": (0.02, 0.4)}) == (
        "no prediction (the alternatives disagree: release=task: no prediction (the interval "
        "spans ±2%); release=softirq: within ±2%)")
    seeds = judge("prediction", interval=iv(-5.0, -3.0, sources=frozenset({"seeds"})))
    assert seeds.prediction == "no prediction (seed noise only)" and seeds.word is None


def test_exact_goal_and_port_words():
    assert judge("exact", computed=136, published=136).word == "matches"
    assert judge("exact", computed=24, published=32).word == "differs"
    v = judge("exact", computed=1280, published=1216, comparable=False,
              config="the tested configuration is not stated")
    assert v.word == "not comparable" and "not stated" in v.reason
    assert judge("goal", met=False, goal="MAPE <= 10%").word == "goal missed"
    assert judge("port", shown=True, condition="the check stops fix 2").word == \
        "shown in the port"
    assert judge("port", shown=False, condition="x").word == "not shown in the port"


@pytest.mark.parametrize("rule, kw, match", [
    ("ratio", {}, "rule='ratio'"),
    ("exact", {"computed": 1}, "takes comparable, computed, config, published"),
    ("measured", {"measured": Measurement.point(1.0), "interval": iv(0, 2, coverage=0.95)},
     "field coverage"),
    ("measured", {"measured": Measurement.point(1.0), "interval": iv(2, 0)}, "low <= high"),
    ("measured", {"measured": Measurement.point(1.0)}, "interval"),
    ("shape", {"points": {}, "power": 0.5}, "at least one point"),
])
def test_judge_errors(rule, kw, match):
    with pytest.raises(ValueError, match=match):
        judge(rule, **kw)


def test_measurement_errors():
    with pytest.raises(ValueError, match="low <= high"):
        Measurement(3.0, 1.0)
    with pytest.raises(ValueError, match="noise"):
        Measurement.point(1.0, -0.5)


@pytest.mark.parametrize("old, new, match", [
    ("default_relative_noise = 0.05", "default_relative_noise = 5",
     "field measured.default_relative_noise=5"),
    ('measured = ["agrees", "misses", "undetermined"]\n', "", "field words="),
    ("prediction = []", 'prediction = ["fine"]', "field words.prediction"),
    ('retired_words = ["reproduced", "refuted"]', 'retired_words = ["agrees"]',
     "field retired_words"),
    ("min_draws_per_option = 32", "min_draws_per_option = 1.5",
     "field measured.min_draws_per_option"),
    ('amends_sha256 = "fb9e', 'amends_sha256 = "00', "field amends_sha256"),
    ("schema_version = 1", "schema_version = 2", "field schema_version=2"),
    ("shape_tolerance = 0.1", "shape_tolerance = ", "not valid TOML"),
])
def test_addendum_validation_names_file_and_field(tmp_path, old, new, match):
    text = addendum_path().read_text()
    assert old in text
    p = tmp_path / "addendum.toml"
    p.write_text(text.replace(old, new, 1))
    with pytest.raises(ValueError, match=match) as e:
        load_rules(addendum=p)
    assert str(p) in str(e.value)


@pytest.mark.parametrize("old, new, match", [
    ("coverage = 0.9", "coverage = 1.5", "field coverage=1.5"),
    ('required_sources = ["parameters"]', 'required_sources = ["luck"]',
     "field required_sources"),
    ("exact = true", "exact = false", "field kinds.structural.exact"),
])
def test_base_validation_names_file_and_field(tmp_path, old, new, match):
    p = tmp_path / "rules.toml"
    p.write_text(rules_path().read_text().replace(old, new, 1))
    a = tmp_path / "addendum.toml"
    digest = hashlib.sha256(p.read_bytes()).hexdigest()
    a.write_text(addendum_path().read_text().replace(PINNED["verdict_rules.toml"], digest))
    with pytest.raises(ValueError, match=match) as e:
        load_rules(p, a)
    assert str(p) in str(e.value)
