"""The fair baselines (issue 22, item 7): the laws, their fits, and folds that never read
the held-out source's measurements."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.validation.baselines import (
    BASELINES,
    BottleneckLaw,
    CaseInputs,
    InverseCycles,
    NoChange,
    case_inputs,
    fold_predictions,
    predictive,
    source_weights,
)
from memcglab.validation.dataset import case_models


def case(source="a", i=0, y=0.0, n=8, outside=1e-6, wb=1.0, wn=0.5, ab=1000.0, an=1000.0,
         tb=1.0, tn=1.0, c2c=100.0):
    return CaseInputs(f"{source}/{i}", source, y, n, outside, ab, an, tb, tn, c2c, 2.0, wb, wn)


def test_the_bottleneck_law_allows_gains_and_losses_and_caps_at_the_line():
    law = BottleneckLaw()
    p = {"s": 1e-6, "z": 1.0}
    # saturated both ways (N / (Z + D) > 1 / D): the ratio of the busiest lines' transfers
    gain, loss = law.predict(p, [case(n=100, wb=1.0, wn=0.5), case(n=100, wb=0.5, wn=1.0)])
    assert gain == pytest.approx(np.log(2)) and loss == pytest.approx(-np.log(2))
    # one customer never saturates: N / (Z + D) on both kernels
    (one,) = law.predict(p, [case(n=1, wb=1.0, wn=0.5)])
    assert one == pytest.approx(np.log((1e-6 + 1e-6) / (1e-6 + 0.5e-6)))
    # no shared line in either kernel: no change
    assert law.predict(p, [case(wb=0.0, wn=0.0)])[0] == 0.0


@settings(max_examples=20, deadline=None)
@given(st.floats(-8, -6), st.floats(-1, 1))
def test_the_bottleneck_law_depends_on_z_over_s_only(log_s, log_z):
    law = BottleneckLaw()
    cs = [case(n=n, wb=wb, wn=wn) for n, wb, wn in ((4, 1, 0.3), (40, 0.2, 0.9), (9, 0, 1))]
    a = law.predict({"s": 10 ** log_s, "z": 10 ** log_z}, cs)
    b = law.predict({"s": 10 ** log_s * 3, "z": 10 ** log_z * 3}, cs)
    assert np.allclose(a, b)


def synthetic(baseline, params, rng, sources=("a", "b", "c"), per=4):
    cs = []
    for s in sources:
        for i in range(per):
            cs.append(case(s, i, n=int(rng.integers(1, 64)), wb=rng.uniform(0, 1),
                           wn=rng.uniform(0, 1), tb=rng.uniform(0, 5), tn=rng.uniform(0, 5),
                           ab=rng.uniform(500, 2000), an=rng.uniform(500, 2000)))
    y = baseline.predict(params, cs)
    return [dataclasses.replace(c, y=float(v)) for c, v in zip(cs, y, strict=True)]


def test_fits_recover_the_constants_of_their_own_law():
    rng = np.random.default_rng(3)
    cs = synthetic(InverseCycles(), {"lambda": 7.0}, rng)
    assert InverseCycles().fit(cs)["lambda"] == pytest.approx(7.0, rel=1e-3)
    law = BottleneckLaw()
    truth = {"s": 2e-7, "z": 0.5}
    cs = synthetic(law, truth, rng)
    got = law.fit(cs)
    assert got["z"] / got["s"] == pytest.approx(truth["z"] / truth["s"], rel=1e-2)
    assert np.allclose(law.predict(got, cs), [c.y for c in cs], atol=1e-4)


def test_a_fold_never_reads_the_held_out_measurements():
    rng = np.random.default_rng(5)
    cs = synthetic(InverseCycles(), {"lambda": 3.0}, rng)
    cs = [dataclasses.replace(c, y=c.y + rng.normal(0, 0.05)) for c in cs]
    changed = [dataclasses.replace(c, y=99.0) if c.source == "b" else c for c in cs]
    for b in BASELINES:
        f, g = fold_predictions(b, cs, "b"), fold_predictions(b, changed, "b")
        assert np.array_equal(f.point, g.point) and np.array_equal(f.residuals, g.residuals)
        assert f.residuals.size == 8 and f.weights.sum() == pytest.approx(1.0)


def test_residual_draws_weigh_every_training_source_the_same():
    w = source_weights(["a"] * 6 + ["b", "c", "c"])
    assert w.tolist() == pytest.approx([1 / 6] * 6 + [1.0, 0.5, 0.5])
    cs = [case("a", i, y=0.1 * i) for i in range(6)] + [case("b", 0, y=-1.0),
                                                        case("c", 0, y=0.3)]
    f = fold_predictions(NoChange(), cs, "c")
    draws, weights, lo, hi = predictive(0.0, f)
    assert sum(weights[draws == -1.0]) == pytest.approx(0.5)  # source b: one case, half
    assert lo == -1.0 and hi == pytest.approx(0.5)


def test_every_development_case_has_finite_baseline_inputs_and_predictions():
    cs = [case_inputs(m) for m in case_models()]
    assert len(cs) == 17  # the priced cases: 25 in the set, the 8 on cgroup v1 refused
    for c in cs:
        assert np.isfinite([c.outside_s, c.compute_base, c.compute_new, c.c2c]).all()
        assert c.outside_s > 0 and c.instances >= 1
    for b in BASELINES:
        f = fold_predictions(b, cs, "multi_memcg_stock")
        assert np.isfinite(f.point).all() and f.point.size == 6
        assert np.isfinite(f.residuals).all() and f.residuals.size == 17 - 6
