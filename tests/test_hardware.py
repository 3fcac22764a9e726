"""The shipped hardware priors and profiles: complete, sourced, consistent, round-trippable."""

from __future__ import annotations

import math
import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcglab.cost import CostParams
from memcglab.hardware import (
    CURVES,
    PARAMETERS,
    load_curves,
    load_priors,
    load_profile,
    profiles,
)
from memcglab.hardware.tomlio import dumps

SEED_MACHINES = {"butt-netperf-72cpu": (72, None), "hahn-madvise-40cpu": (40, None),
                 "lkp-mremap-176cpu-1socket": (176, 1), "lkp-2s-224t-spr": (224, 2)}


def test_every_cost_parameter_and_contention_input_has_a_sourced_prior():
    priors = load_priors()
    assert set(priors) == set(PARAMETERS)
    assert set(CostParams.names()) <= set(priors)
    for name, p in priors.items():
        assert p.unit in PARAMETERS[name].units
        assert len(p.source) > 20, name  # a citation, not a word
        assert p.low <= p.typical <= p.high


def test_generic_typicals_stay_near_the_cost_model_defaults():
    # The round defaults of cost.py were the seed of these priors; each must lie in its
    # prior's support, or one of the two is wrong.
    priors, defaults = load_priors(), CostParams()
    for name in CostParams.names():
        assert priors[name].low <= getattr(defaults, name) <= priors[name].high, name


def test_contended_rmw_curve_grows_from_one_sharer_to_many():
    c = load_curves()["contended_rmw"]
    assert set(load_curves()) == set(CURVES)
    assert c.typical[0] < c.typical[1] <= c.typical[-1]
    assert c.prior_at(3).typical == pytest.approx(
        c.typical[1] + (c.typical[2] - c.typical[1]) * math.log(1.5) / math.log(2))
    assert c.prior_at(1000).typical == c.typical[-1]


def test_shipped_profiles_cover_the_seed_machines():
    names = profiles()
    assert {"generic-x86-64", *SEED_MACHINES} <= set(names)
    for name, (cpus, sockets) in SEED_MACHINES.items():
        p = load_profile(name)
        assert p.cpus == cpus
        if sockets is not None:
            assert p.sockets == sockets and "sockets" not in p.inferred
        assert p.source


@pytest.mark.parametrize("name", profiles())
def test_profile_round_trips_through_toml(name, tmp_path):
    p = load_profile(name)
    for full in (False, True):
        f = tmp_path / f"{name}-{full}.toml"
        f.write_text(p.to_toml(full=full))
        q = load_profile(f)
        assert q == p
        assert q.overrides == (frozenset(p.priors) | frozenset(p.curves) if full
                               else p.overrides)


@pytest.mark.parametrize("name", profiles())
def test_cost_params_are_ordered_low_typical_high(name):
    p = load_profile(name)
    lo, ty, hi = (p.cost_params(w).to_vector() for w in ("low", "typical", "high"))
    assert (lo <= ty).all() and (ty <= hi).all() and (lo < hi).any()


def test_cost_params_rejects_an_unknown_level():
    with pytest.raises(ValueError, match="which='median'.*low, typical, high"):
        load_profile("generic-x86-64").cost_params("median")


def test_profile_overrides_replace_generic_priors_only_where_set():
    spr, generic = load_profile("lkp-2s-224t-spr"), load_priors()
    assert spr.priors["l1_hit"].shape == "point" and "l1_hit" in spr.overrides
    assert spr.priors["call"] == generic["call"] and "call" not in spr.overrides


def test_unknown_profile_name_lists_the_shipped_ones():
    with pytest.raises(FileNotFoundError, match="generic-x86-64"):
        load_profile("no-such-machine")


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
_scalar = st.one_of(st.integers(-2**60, 2**60), st.floats(allow_nan=False, allow_infinity=False),
                    _text, st.booleans())


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
                       st.one_of(_scalar, st.lists(st.floats(allow_nan=False,
                                                             allow_infinity=False), max_size=4),
                                 st.dictionaries(st.from_regex(r"[a-z]{1,5}", fullmatch=True),
                                                 _scalar, max_size=4)),
                       max_size=6))
def test_toml_writer_round_trips(doc):
    assert tomllib.loads(dumps(doc)) == doc
