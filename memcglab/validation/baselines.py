"""The three baselines the scoreboard holds the lab's predictions against.

Each gives a point prediction of a case's change in % (``data/validation/rules.md``):

* :func:`no_change`: 0;
* :func:`inverse_cycles`: throughput inversely proportional to the cycles per
  operation, the work outside memcg plus the charge path's cycles, every line transfer
  priced at one typical ``c2c_transfer``, all at the priors' typical values: a cost
  model with no queueing and no calibration;
* :class:`BottleneckLaw`: each walk updates each shared level's line once; the base
  kernel runs at its measured throughput ``X_base``; the new kernel at
  ``min(X_base, 1 / (walks_per_op x lines x s))`` with one hold time ``s`` per machine
  family, fitted on the fold's calibration cases (least squares in ``log(new / base)``);
  a family without calibration cases takes the fit over all of them.

>>> law = BottleneckLaw({"generic": 1e-6}, 2e-6)
>>> round(law.change(x_base=1e6, walks=1.0, lines=2, family="generic"), 1)
-50.0
>>> law.change(x_base=1e5, walks=1.0, lines=2, family="zen4")
0.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from memcglab.validation.dataset import CaseModel, typical_values

__all__ = ["BottleneckLaw", "inverse_cycles", "measured_base_rate", "no_change"]


def no_change(model: CaseModel) -> float:
    """The 'nothing changes' baseline."""
    del model
    return 0.0


def inverse_cycles(model: CaseModel) -> float:
    """Throughput inversely proportional to cycles per operation, at typical priors."""
    from memcglab.pricing.profile import function_cycles
    from memcglab.scenario.work import FIXED, UNIT

    m = model.model
    v = typical_values(m, 1)
    other = FIXED[m.cost_family].typical + UNIT[m.unit].typical * m.units
    c2c = m.profile.priors["c2c_transfer"].typical
    cost = {k: x for k, x in v.items() if k not in ("cpu_ghz", "smt_gain",
                                                     "busiest_cpu_share")}

    def cycles(counts, design) -> float:
        out = []
        for c in counts:
            compute = function_cycles(c.per_op, cost, 1.0, np.zeros(1), design.model)["total"]
            out.append(other + float(compute[0]) + c2c * (float(np.sum(c.shared)) + c.private))
        return float(np.mean(out))

    base = cycles(m.base, m.scenario.base)
    new = cycles(m.new, m.scenario.new)
    return (base / new - 1.0) * 100.0


def measured_base_rate(model: CaseModel) -> float | None:
    """The case's measured base operations per second, all instances (None: not printed)."""
    c = model.case
    if c.unit == "Mbps" and model.model.units:
        return c.base_value * 1e6 / 8.0 / model.model.units * model.model.instances
    if c.unit == "ms":
        return 1000.0 / c.base_value * model.model.instances
    return None


def _shape(model: CaseModel) -> tuple[float, int]:
    new = model.model.new
    return (float(np.mean([c.per_op["walks"] for c in new])),
            int(max(len(c.names) for c in new)))


@dataclass(frozen=True)
class BottleneckLaw:
    """The bottleneck law with a fitted hold time per machine family (module doc)."""

    hold: dict[str, float]
    pooled: float

    def change(self, x_base: float, walks: float, lines: int, family: str) -> float:
        """The law's change in % for a base rate, the new kernel's walks and lines."""
        s = self.hold.get(family, self.pooled)
        if walks <= 0 or lines <= 0:
            return 0.0
        return (min(x_base, 1.0 / (walks * lines * s)) / x_base - 1.0) * 100.0

    def predict(self, model: CaseModel) -> float | None:
        """The law's change for a case, or None where its base rate is not printed."""
        x = measured_base_rate(model)
        if x is None:
            return None
        walks, lines = _shape(model)
        return self.change(x, walks, lines, model.family)

    @classmethod
    def fit(cls, models: Sequence[CaseModel]) -> BottleneckLaw:
        """One hold time per family, and the fit over all cases for unseen families."""
        rows = []
        for m in models:
            x = measured_base_rate(m)
            if x is None:
                continue
            walks, lines = _shape(m)
            rows.append((m.family, x, walks, lines, np.log1p(m.case.measured_change_pct / 100)))

        def best(sel: list[tuple]) -> float:
            def loss(log_s: float) -> float:
                err = 0.0
                for _, x, w, n, meas in sel:
                    pred = 0.0 if w <= 0 or n <= 0 else min(0.0, -np.log(x * w * n
                                                                         * np.exp(log_s)))
                    err += (meas - pred) ** 2
                return err

            # the loss is flat wherever no case is line-bound, so search a grid first
            grid = np.linspace(np.log(1e-10), np.log(1e-3), 281)
            start = grid[int(np.argmin([loss(g) for g in grid]))]
            step = grid[1] - grid[0]
            res = optimize.minimize_scalar(loss, bounds=(start - step, start + step),
                                           method="bounded")
            return float(np.exp(res.x))

        hold = {f: best([r for r in rows if r[0] == f]) for f in sorted({r[0] for r in rows})}
        pooled = best(rows) if rows else 1e-7
        return cls(hold=hold, pooled=pooled)
