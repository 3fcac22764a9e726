"""The alternatives' weights learned by stacking (``rules_addendum_2026-12-03_stacking.md``).

The ablation's ``+alternatives`` variant prices each point at one combination of the
modelling alternatives (``placement``, ``server_memcg``, ``ack``, ``rx``, ``segments``,
``queue_depth``), drawn in proportion to the prior weights. Stacking learns per-option
weights ``pi`` and reweights the points, ``w_i ∝ prod_a pi_a(c_i[a]) / p_a(c_i[a])``, so
``pi = p`` is the unstacked mixture:

* :func:`case_points`: every case's points under its own source's fold (each density out
  of sample for its source): the change draws, the log density of the measured value at
  each point, and each point's option index per alternative;
* :func:`fit_weights`: ``pi`` maximising the training sources' mean log predictive density
  plus a Dirichlet penalty of one source's weight toward the prior, for the alternatives
  that two or more training sources bear on (the others stay at the prior);
* :func:`score`: every held-out source scored with the weights its training sources gave
  (interval score and CRPS, as the scoreboard scores weighted draws), beside the same code
  at ``pi = p``;
* ``python -m memcglab.validation.stacking --out DIR`` writes ``stacking.csv``,
  ``stacking_weights.csv`` and ``stacking.md``.

Why not a library: scipy has no stacking of predictive mixtures; the optimisation is
:func:`scipy.optimize.minimize` over a softmax per alternative.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from memcglab.scenario.errors import log_density
from memcglab.scenario.predict import DEFAULT_POINTS, scenario_draws
from memcglab.scenario.terms import DEFAULT_TERMS
from memcglab.validation.dataset import CaseModel, case_models, declared_noise
from memcglab.validation.scoring import case_scores, per_source
from memcglab.workloads.catalogue import ALTERNATIVES

__all__ = ["STACKED_TERMS", "CasePoints", "case_points", "fit_weights", "main",
           "point_weights", "score", "summary"]

#: the variant whose weights are stacked: the chosen model plus the alternatives
STACKED_TERMS = replace(DEFAULT_TERMS, alternatives=True)


@dataclass(frozen=True)
class CasePoints:
    """One case's points under its source's fold."""

    source: str
    case: str
    measured_change_pct: float
    noise_pct: float
    change_pct: np.ndarray  # (P,) the change draws, model error included
    log_density: np.ndarray  # (P,) log p(measured y | point)
    options: Mapping[str, np.ndarray]  # alternative -> (P,) option index per point

    def bears_on(self, name: str) -> bool:
        """Whether the case's points price more than one option of ``name``."""
        return name in self.options and np.unique(self.options[name]).size > 1


def _priors() -> dict[str, np.ndarray]:
    return {n: np.asarray(a.prior, dtype=float) / np.sum(a.prior) for n, a in ALTERNATIVES.items()}


def case_points(m: CaseModel, calibration, points: int = DEFAULT_POINTS, seed: int = 0
                ) -> CasePoints:
    """The case's points at ``calibration`` (its source's fold), as the ablation scores
    them: predict's change draws and the density of the measured value at each point."""
    sd = scenario_draws(m.model, points, seed, calibration, with_profile=False)
    L = np.log(sd.priced.new_rate / sd.priced.base_rate)
    c = m.case
    y = float(np.log1p(c.measured_change_pct / 100.0))
    noise = declared_noise(c)
    dens = log_density(m.model.terms.error, y, L[None, :], sd.values,
                       noise / (100.0 + c.measured_change_pct))
    combos = m.model.combos
    options: dict[str, np.ndarray] = {}
    for name in {n for combo in combos for n, _ in combo}:
        values = ALTERNATIVES[name].values
        per_combo = np.array([values.index(dict(combo)[name]) for combo in combos])
        options[name] = per_combo[np.asarray(sd.draws.which)]
    return CasePoints(c.source, c.case_id, float(c.measured_change_pct), float(noise),
                      np.asarray(sd.change_pct, dtype=float), np.asarray(dens, dtype=float),
                      options)


def point_weights(cp: CasePoints, pi: Mapping[str, np.ndarray]) -> np.ndarray:
    """Normalised log weights of the case's points under option weights ``pi`` (an
    alternative missing from ``pi`` stays at its prior)."""
    prior = _priors()
    lw = np.zeros(cp.change_pct.size)
    for name, idx in cp.options.items():
        if name in pi:
            lw += np.log(pi[name][idx]) - np.log(prior[name][idx])
    return lw - logsumexp(lw)


def _unpack(theta: np.ndarray, names: Sequence[str]) -> dict[str, np.ndarray]:
    out, k = {}, 0
    for n in names:
        size = len(ALTERNATIVES[n].values)
        out[n] = softmax(theta[k:k + size])
        k += size
    return out


def fit_weights(train: Sequence[CasePoints]) -> tuple[dict[str, np.ndarray], tuple[str, ...]]:
    """Stacked option weights on the ``train`` cases (module doc, the addendum's objective)
    and the alternatives stacked: those two or more training sources bear on."""
    prior = _priors()
    sources = sorted({c.source for c in train})
    names = tuple(sorted(n for n in ALTERNATIVES
                         if sum(any(c.bears_on(n) for c in train if c.source == s)
                                for s in sources) >= 2))
    if not names:
        return {}, ()
    per_source = {s: [c for c in train if c.source == s] for s in sources}

    def loss(theta: np.ndarray) -> float:
        pi = _unpack(theta, names)
        total = 0.0
        for cases in per_source.values():
            total += np.mean([logsumexp(point_weights(c, pi) + c.log_density)
                              for c in cases])
        penalty = sum(float(prior[n] @ np.log(pi[n])) for n in names)
        return -(total + penalty)

    start = np.concatenate([np.log(prior[n]) for n in names])
    res = minimize(loss, start, method="L-BFGS-B")
    return _unpack(res.x, names), names


def score(points_: Sequence[CasePoints], progress: Callable[[str], None] | None = None
          ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per (method, case) the registered scores, ``stacked`` with each held-out source's
    weights fitted on the others and ``prior`` at ``pi = p``; and the fitted weights per
    fold (``all`` for the weights on every source)."""
    rows, weights = [], []
    sources = sorted({c.source for c in points_})
    for held in [*sources, "all"]:
        train = [c for c in points_ if c.source != held]
        pi, names = fit_weights(train)
        if progress:
            progress(f"weights without {held}: stacked {', '.join(names) or 'none'}")
        for n, w in pi.items():
            for value, x, p in zip(ALTERNATIVES[n].values, w, _priors()[n], strict=True):
                weights.append({"fold": held, "alternative": n, "option": str(value),
                                "prior": float(p), "stacked": float(x)})
        if held == "all":
            continue
        for c in (c for c in points_ if c.source == held):
            for method, lw in (("stacked", point_weights(c, pi)),
                               ("prior", point_weights(c, {}))):
                s = case_scores(c.change_pct, c.measured_change_pct, c.noise_pct, np.exp(lw))
                rows.append({"method": method, "source": c.source, "case": c.case,
                             "interval_score": s["interval_score"], "crps": s["crps"],
                             "log_score": float(logsumexp(lw + c.log_density)),
                             "stacked": ",".join(names)})
    return pd.DataFrame(rows), pd.DataFrame(weights)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method: the mean over sources of the per-source means (the selection score)."""
    out = {}
    for method, g in frame.groupby("method", sort=False):
        _, overall = per_source(g, ("interval_score", "crps", "log_score"))
        out[method] = overall
    return pd.DataFrame(out).T


def _markdown(table: pd.DataFrame, weights: pd.DataFrame) -> str:
    lines = ["| method | interval_score | crps | log_score |", "|---|---|---|---|"]
    lines += [f"| {m} | {r['interval_score']:.3f} | {r['crps']:.3f} | {r['log_score']:.3f} |"
              for m, r in table.iterrows()]
    w = weights[weights["fold"] == "all"]
    lines += ["", "weights fitted on all five sources:", "",
              "| alternative | option | prior | stacked |", "|---|---|---|---|"]
    lines += [f"| {r.alternative} | {r.option} | {r.prior:.3f} | {r.stacked:.3f} |"
              for r in w.itertuples()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m memcglab.validation.stacking --out DIR [--points N]``."""
    from memcglab.results import atomic_write
    from memcglab.validation.scoreboard import fold

    ap = argparse.ArgumentParser(prog="python -m memcglab.validation.stacking",
                                 description="stack the alternatives' weights (addendum "
                                             "2026-12-03) and score them leave one source out")
    ap.add_argument("--out", required=True, type=Path, help="directory for the tables")
    ap.add_argument("--points", type=int, default=DEFAULT_POINTS,
                    help=f"points per prediction (default {DEFAULT_POINTS}, the registered)")
    a = ap.parse_args(argv)
    if not 16 <= a.points <= 4096:
        ap.error(f"--points {a.points}: must be from 16 to 4096")
    models = case_models(terms=STACKED_TERMS)
    pts = []
    for source in sorted({m.case.source for m in models}):
        print(f"calibrating without {source}", file=sys.stderr, flush=True)
        cf = fold(source, models).calibration
        pts += [case_points(m, cf, a.points) for m in models if m.case.source == source]
    frame, weights = score(pts, lambda s: print(s, file=sys.stderr, flush=True))
    table = summary(frame)
    a.out.mkdir(parents=True, exist_ok=True)
    for name, text in (("stacking.csv", frame.to_csv(index=False)),
                       ("stacking_weights.csv", weights.to_csv(index=False)),
                       ("stacking.md", _markdown(table, weights))):
        atomic_write(a.out / name, lambda f, t=text: f.write(t.encode()))
    print(_markdown(table, weights))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
