"""The input space: mapping unit points to priors, Params, blocks, variates, alternatives
and seeds."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import norm

from memcglab.calibration import Param
from memcglab.uncertainty import Alternative, Block, Prior, Space, Variate

P = Prior("c2c_transfer", "cycles", 50.0, 150.0, 400.0, "triangular", "t")


def test_alternative_weights_give_frequencies():
    a = Alternative("cpus_per_flow", (1, 2, 4), weights=(1, 2, 1))
    idx = a.pick((np.arange(4000) + 0.5) / 4000)
    assert np.bincount(idx).tolist() == [1000, 2000, 1000]
    assert a.default == 1 and a.default_index == 0


@pytest.mark.parametrize("kw, match", [
    (dict(options=()), "empty"),
    (dict(options=(1, 1)), "distinct"),
    (dict(options=(1, 2), weights=(1,)), "weights"),
    (dict(options=(1, 2), weights=(0, 0)), "weights"),
    (dict(options=(1, 2), default=3), "default=3"),
])
def test_alternative_errors_name_the_field(kw, match):
    with pytest.raises(ValueError, match=match):
        Alternative("alt", **kw)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=50))
def test_pick_always_a_valid_index(us):
    a = Alternative("a", ("x", "y", "z"), weights=(0.2, 0.0, 0.8))
    idx = a.pick(np.array(us))
    assert set(idx.tolist()) <= {0, 2}  # a zero weight is never drawn


def test_draws_map_priors_through_ppf_and_hold_fixed_inputs():
    s = Space([P, Prior("k", "cycles", 3.0, 3.0, 3.0, "point", "t")],
              [Alternative("placement", ("same", "softirq", "reader")),
               Alternative("only", ("one",))], seeds=[11, 12])
    assert s.varying == ("c2c_transfer", "placement", "seed")
    u = np.array([[0.0, 0.5, 0.0], [1.0, 0.99, 0.99]])
    d = s.draws(u)
    assert d["c2c_transfer"].tolist() == [50.0, 400.0]
    assert d["k"].tolist() == [3.0, 3.0]
    assert d["placement"].tolist() == ["softirq", "reader"]
    assert d["only"].tolist() == ["one", "one"]
    assert d["seed"].tolist() == [11.0, 12.0] and d.index["seed"].tolist() == [0, 1]
    assert d.matrix(["c2c_transfer", "k"]).shape == (2, 2)
    with pytest.raises(ValueError, match="3 inputs"):
        s.draws(np.zeros((1, 2)))


def test_at_sets_typical_defaults_and_overrides():
    s = Space([P], [Alternative("placement", ("same", "reader"), default="reader")], seeds=[1])
    d = s.at({"c2c_transfer": [60.0, 70.0]}, n=2)
    assert d["c2c_transfer"].tolist() == [60.0, 70.0]
    assert d["placement"].tolist() == ["reader", "reader"]
    with pytest.raises(ValueError, match="must be one of"):
        s.at({"placement": "elsewhere"})
    with pytest.raises(KeyError, match="unknown inputs"):
        s.at({"nope": 1})


def test_sources_say_what_varies():
    assert Space([P]).sources == {"parameters"}
    assert Space(seeds=[1, 2]).sources == {"seeds"}
    assert Space(seeds=[1]).sources == frozenset()
    assert Space([P], {"a": [1, 2]}, [1, 2]).sources == {"parameters", "alternatives", "seeds"}


def test_duplicate_names_rejected():
    with pytest.raises(ValueError, match="twice"):
        Space([P, P])
    with pytest.raises(ValueError, match="seed factor"):
        Space(alternatives={"seed": [1, 2]}, seeds=[1, 2])


def test_sample_methods_and_errors():
    s = Space([P], {"a": [1, 2]})
    for method in ("sobol", "lhs"):
        d = s.sample(256, method=method, seed=3)
        assert d.n == 256 and 50 <= d["c2c_transfer"].min() <= d["c2c_transfer"].max() <= 400
        assert set(d["a"].tolist()) == {1.0, 2.0}
    with pytest.raises(ValueError, match="power of 2"):
        s.sample(1000)
    with pytest.raises(ValueError, match="method"):
        s.sample(16, method="grid")


# the kinds of input predict's design needs: a block, Params, variates, fixed columns

def test_block_owns_one_coordinate_per_name_in_order():
    b = Block(("x", "y"), lambda u: {"x": 2.0 * u[:, 0], "y": u[:, 0] + u[:, 1]})
    s = Space([P, b, Variate("z")])
    assert s.varying == ("c2c_transfer", "x", "y", "z") and s["y"] is b
    d = s.draws(np.array([[0.0, 0.25, 0.5, 0.5]]))
    assert d["c2c_transfer"].tolist() == [50.0]
    assert d["x"].tolist() == [0.5] and d["y"].tolist() == [0.75] and d["z"].tolist() == [0.0]
    assert s.sources == {"parameters"}


def test_block_errors_name_the_field():
    with pytest.raises(ValueError, match="each once"):
        Block(("x", "x"), dict)
    bad = Space([Block(("x",), lambda u: {"w": u[:, 0]})])
    with pytest.raises(ValueError, match=r"returned \['w'\]"):
        bad.draws(np.array([[0.5]]))
    with pytest.raises(ValueError, match="twice"):
        Space([Block(("c2c_transfer",), dict), P])


def test_param_is_normal_in_its_unconstrained_scale():
    h = Param("h", "cycles", 100.0, 0.5, "t")              # lognormal: median 100, sd 0.5
    g = Param("g", "exponent", 0.0, 0.4, "t", positive=False)
    s = Space([h, g])
    d = s.draws(np.array([[0.5, 0.5], [norm.cdf(1.0), norm.cdf(-1.0)]]))
    assert d["h"] == pytest.approx([100.0, 100.0 * np.exp(0.5)])
    assert d["g"] == pytest.approx([0.0, -0.4])
    assert s.at()["h"] == pytest.approx([100.0]) and s.at({"g": 0.3})["g"].tolist() == [0.3]


def test_variates_normal_and_student_t():
    z, t4 = Variate("z"), Variate("t4", df=4)
    assert z.ppf(np.array([norm.cdf(1.0)])) == pytest.approx([1.0])
    assert t4.ppf(np.array([0.5, 0.975])) == pytest.approx([0.0, 2.776445], abs=1e-6)
    assert np.isfinite(z.ppf(np.array([0.0, 1.0]))).all()   # clipped off 0 and 1
    with pytest.raises(ValueError, match="df=0"):
        Variate("bad", df=0)


def test_own_fixed_gives_fixed_inputs_a_column_they_ignore():
    k = Prior("k", "cycles", 3.0, 3.0, 3.0, "point", "t")
    only = Alternative("only", ("one",))
    assert Space([k, only]).varying == ()
    s = Space([k, P, only], own_fixed=True)
    assert s.varying == ("k", "c2c_transfer", "only")
    d = s.draws(np.array([[0.1, 1.0, 0.9]]))
    assert d["k"].tolist() == [3.0] and d["c2c_transfer"].tolist() == [400.0]
    assert d["only"].tolist() == ["one"] and d.index["only"].tolist() == [0]
