"""Uncertainty propagation speed: pricing thousands of parameter points, Sobol indices.

Not a test. Run from the repository root:

    python benchmarks/uncertainty_speed.py [--points 4096] [--seeds 10] [--repeats 20]

Event counts stand in for the engine's (a 72-CPU ChargeEvents per seed and
``cpus_per_flow`` alternative, random counts): what is timed is everything after the
engine, which runs once per trace whatever the priors. Prints, measured in this run:
building the coefficient table (once per study), pricing ``--points`` quasi-random
points drawn over the eight cost priors, the seeds and the alternatives (best of
``--repeats``), the same points priced one at a time through ``cost.cycles_per_op``
(the loop the table replaces, on a subset, scaled), and the Sobol indices and the
whole :func:`memcglab.uncertainty.summarise`.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from memcglab.cost import CostParams, cycles_per_op
from memcglab.events import EVENT_NAMES, ChargeEvents
from memcglab.uncertainty import Alternative, CoefficientTable, Prior, Space, sobol, summarise

ALTERNATIVES = (1, 2, 4)


def fake_events(rng: np.random.Generator) -> ChargeEvents:
    """Counts shaped like one replay's (every event, 72 CPUs); values are random."""
    ev = ChargeEvents.zeros(ncpus=72, nmemcgs=40)
    for name in EVENT_NAMES:
        ev.per_cpu[name][:] = rng.integers(1, 1000, 72)
    ev.per_cpu["charges"][:] += 5000
    return ev


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=4096, help="a power of 2")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    events = {(s, c): fake_events(rng) for s in range(args.seeds) for c in ALTERNATIVES}
    priors = [Prior(n, "cycles", v / 2, v, v * 2, "triangular", "benchmark: typical x0.5-x2")
              for n, v in zip(CostParams.names(), CostParams().to_vector(), strict=True)]
    space = Space(priors, [Alternative("cpus_per_flow", ALTERNATIVES)],
                  seeds=list(range(args.seeds)))
    factors = ("seed", "cpus_per_flow")

    t_table = best_of(lambda: CoefficientTable.from_events(events, factors), 3)
    table = CoefficientTable.from_events(events, factors)
    draws = space.sample(args.points, seed=0)
    t_sample = best_of(lambda: space.sample(args.points, seed=0), args.repeats)
    t_price = best_of(lambda: table.cycles(draws), args.repeats)

    sub = range(0, args.points, max(args.points // 64, 1))
    names = CostParams.names()

    def loop() -> list[float]:
        return [cycles_per_op(events[(int(draws["seed"][i]), int(draws["cpus_per_flow"][i]))],
                              CostParams(**{n: float(draws[n][i]) for n in names}))
                for i in sub]
    t_loop = best_of(loop, 3) * args.points / len(sub)
    fast = table.cycles(draws)
    assert np.allclose([fast[i] for i in sub], loop(), rtol=1e-12)

    def fn(d):
        return table.cycles(d)
    t_sobol = best_of(lambda: sobol(fn, space, n=args.points, seed=0), 3)
    t_all = best_of(lambda: summarise(fn, space, n=args.points, seed=0), 3)

    d = len(space.varying)
    print(f"space: {len(priors)} cost priors, {args.seeds} seeds x {len(ALTERNATIVES)} "
          f"alternatives ({d} varying inputs), {args.points} points")
    rows = [
        ("coefficient table (once)", t_table, f"{len(events)} traces"),
        ("sample the space", t_sample, f"{args.points} points"),
        ("price the sample", t_price, f"{args.points} points"),
        ("price one at a time", t_loop, "cost.cycles_per_op, scaled from a subset"),
        ("Sobol indices", t_sobol, f"{args.points * (d + 2)} evaluations"),
        ("summarise (all)", t_all, "interval, Sobol, break-even, tornado"),
    ]
    print(f"{'step':<26} {'ms':>10}  what")
    for name, t, what in rows:
        print(f"{name:<26} {t * 1e3:10.2f}  {what}")
    print(f"vectorised pricing is {t_loop / t_price:.0f}x the per-point loop")


if __name__ == "__main__":
    main()
