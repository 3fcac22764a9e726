"""How long pricing each study's parameter sample takes, through the studies' own functions.

Not a test. Run from the repository root:

    python benchmarks/study_pricing_speed.py [--quick] [--repeats 3]

For each study that propagates priors (1, 2, 3, 4 and 6) this builds the study's
inputs once at its quick size (the engine's event counts: timed once, as "counting")
and then times the study's own public propagation call over its parameter sample,
at the sample size the study uses by default and at its quick size (``--quick``:
quick size only). Pricing times are the median of ``--repeats`` calls. The default
size is priced over the quick run's counts, so its seeds and alternatives are the
quick run's (the full run has more traces to pick from, not more points).

The timed calls (each module says what it propagates):

* study 1: :func:`memcglab.studies.s01_single_vs_multi.pricing.predict_with` on a fresh
  :class:`~memcglab.studies.s01_single_vs_multi.pricing.ContentionModel` (the model caches by
  input point; building it is not timed). It fits ``other_cycles`` and ``hold_cycles``
  per trace at every point and also evaluates each variant at the typical priors.
* study 2: :func:`memcglab.studies.s02_policy_and_slots.pricing.price_mix` for every mix, each mix's
  replays chosen as :func:`memcglab.studies.s02_policy_and_slots.verdict.analyse` chooses them.
* study 3: :func:`memcglab.studies.s03_pcstock_vs_multi.study.predictions` (every priced change of
  the study: one ``summarise`` each).
* study 4: :func:`memcglab.studies.s04_layout_false_sharing.study.priced` (the regression, the fixed
  layout's gap and the ceiling bound).
* study 6 prices through ``memcglab predict`` now (its scenario files); its time per
  scenario is ``benchmarks/predict_speed.py``'s.

``summarise`` evaluates more than the sample: its Sobol design adds ``n * (d + 2)``
evaluations for ``d`` varying inputs, and its break-even and tornado a few more; those
are inside the times. "per 1000 points" divides the pricing time by ``quantities *
points``, the sample points the study states its intervals over.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from memcglab.hardware import load_profile
from memcglab.studies.s01_single_vs_multi import study as netperf_study
from memcglab.studies.s01_single_vs_multi.pricing import ContentionModel, predict_with
from memcglab.studies.s02_policy_and_slots import study as policy_study
from memcglab.studies.s02_policy_and_slots import verdict as policy_verdict
from memcglab.studies.s02_policy_and_slots.pricing import price_mix
from memcglab.studies.s03_pcstock_vs_multi import study as pcstock_study
from memcglab.studies.s04_layout_false_sharing import study as layout_study
from memcglab.uncertainty import Space


@dataclass(frozen=True)
class Priced:
    """What one pricing call gave: how many quantities and the spaces they were drawn from."""

    quantities: int
    spaces: tuple[Space, ...]


@dataclass(frozen=True)
class Case:
    """One study: what it prices, the call timed, its sample sizes, and how to run it."""

    study: str
    what: str
    call: str
    default_n: int
    quick_n: int
    #: builds the inputs (the engine runs here); returns what ``price`` needs
    count: Callable[[], object]
    #: ``(inputs, n) -> prepare``; ``prepare()`` (not timed) gives the zero-argument call
    #: that is timed, afresh before each call
    price: Callable[[object, int], Callable[[], Callable[[], Priced]]]


def _results(out: dict) -> Priced:
    return Priced(len(out), tuple(r.space for r in out.values()))


def study1() -> Case:
    """Study 1: seed 000's "with" column from its "without" column."""
    p = netperf_study.NetperfParams.from_notebook(quick=True)
    full = netperf_study.NetperfParams.from_notebook(quick=False)

    without = netperf_study.published_without()

    def price(df, n: int) -> Callable[[], Callable[[], Priced]]:
        def prepare() -> Callable[[], Priced]:
            model = ContentionModel(p.prereg, df, without)  # empty cache, loads built

            def call() -> Priced:
                pred = predict_with(model, p.seeds, n)
                return Priced(1, (pred.space,))
            return call
        return prepare
    return Case("1", "'with' Mbps per client count", "netperf_contention.predict_with",
                full.samples, p.samples, lambda: netperf_study.run(p), price)


def study2() -> Case:
    """Study 2: random's advantage over LRU per mix."""
    p = policy_study.PolicyParams.from_notebook(quick=True)
    profile = load_profile(p.profile)

    def price(runs, n: int) -> Callable[[], Callable[[], Priced]]:
        mixes = []
        for mix in (policy_study.NETPERF, *p.mixes):
            try:
                sub, alts = policy_verdict.mix_runs(runs, mix, p)
            except ValueError:
                continue
            workload = policy_study.NETPERF if mix == policy_study.NETPERF else "synthetic"
            mixes.append((sub, workload, alts))

        def call() -> Priced:
            out = [price_mix(sub, w, profile, alts, range(p.seeds), n=n)
                   for sub, w, alts in mixes]
            return Priced(len(out), tuple(r.space for r in out))
        return lambda: call
    return Case("2", "random vs LRU advantage per mix", "policy_pricing.price_mix",
                policy_study.PolicyParams().samples, p.samples,
                lambda: policy_study.run(p), price)


def study3() -> Case:
    """Study 3: the per-CPU stock's changes, madvise and netperf."""
    p = pcstock_study.PcstockParams.from_notebook(quick=True)

    def price(df, n: int) -> Callable[[], Callable[[], Priced]]:
        q = replace(p, samples=n)
        return lambda: lambda: _results(pcstock_study.predictions(df, q))
    return Case("3", "pcstock vs multi changes (all)", "pcstock_study.predictions",
                pcstock_study.PcstockParams().samples, p.samples,
                lambda: pcstock_study.run(p), price)


def study4() -> Case:
    """Study 4: seed 004's regression and the fixed layout's gap."""
    p = layout_study.LayoutParams.from_notebook(quick=True)
    profile = load_profile(p.profile)

    def count():
        # the sweep run() prices: its stream, shortened to the sweep's duration
        swept = replace(p.stream, duration=min(p.sweep_duration, p.stream.duration))
        return layout_study.read_sweep(swept, p.reads, p.sweep_seeds)

    def price(sweep, n: int) -> Callable[[], Callable[[], Priced]]:
        return lambda: lambda: _results(layout_study.priced(sweep, p.stream.cpus, profile, n))
    return Case("4", "regression, fixed gap, ceiling", "layout_study.priced",
                layout_study.LayoutParams().samples, p.samples, count, price)


CASES: tuple[Callable[[], Case], ...] = (study1, study2, study3, study4)


def shape(spaces: Iterable[Space]) -> str:
    """``seeds x alternatives`` of each space (the product of the alternatives' options),
    as a range when the quantities differ."""
    seen = sorted({(len(s.seeds), math.prod(len(a.options) for a in s.alternatives))
                   for s in spaces})
    seeds = sorted({a for a, _ in seen})
    alts = sorted({b for _, b in seen})

    def span(v: list[int]) -> str:
        return str(v[0]) if len(v) == 1 else f"{v[0]}-{v[-1]}"
    return f"{span(seeds)} x {span(alts)}"


def timed(prepare: Callable[[], Callable[[], Priced]], repeats: int) -> tuple[float, Priced]:
    """Median wall time of ``repeats`` calls, each prepared (untimed) by ``prepare``, and
    the last call's result. One untimed call first keeps first-call costs out."""
    prepare()()
    times = []
    for _ in range(repeats):
        fn = prepare()
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    """Run every study's counting once and its pricing at each size; print one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="price at each study's quick sample size only")
    parser.add_argument("--repeats", type=int, default=3,
                        help="pricing calls per row; the median is shown (default 3)")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats={args.repeats}: must be >= 1")

    head = (f"{'study':<5} {'what is priced':<35} {'size':<7} {'quant':>5} {'points':>6} "
            f"{'seeds x alts':>12} {'count s':>8} {'price s':>8} {'ms/1000 pts':>11}")
    rows, calls = [], []
    total_count = total_price = 0.0
    for make in CASES:
        case = make()
        start = time.perf_counter()
        inputs = case.count()
        t_count = time.perf_counter() - start
        total_count += t_count
        calls.append(f"study {case.study}: {case.call}")
        sizes = [("quick", case.quick_n)]
        if not args.quick and case.default_n != case.quick_n:
            sizes.append(("default", case.default_n))
        for i, (label, n) in enumerate(sizes):
            t, priced = timed(case.price(inputs, n), args.repeats)
            total_price += t
            per = t * 1e3 / (priced.quantities * n) * 1000
            rows.append(f"{case.study:<5} {case.what:<35} {label:<7} {priced.quantities:>5} "
                        f"{n:>6} {shape(priced.spaces):>12} "
                        f"{(f'{t_count:.1f}' if i == 0 else ''):>8} {t:8.2f} {per:11.1f}")
        print(f"study {case.study} done", flush=True)
    print()
    print(head)
    print("-" * len(head))
    print("\n".join(rows))
    print()
    print(f"counting (once, quick size): {total_count:.1f} s; pricing (medians of "
          f"{args.repeats}, every row): {total_price:.1f} s")
    print("timed calls: " + "; ".join(calls))
    print("every row prices the quick run's counts: a full run has more traces (seeds, "
          "client counts, cases), so more quantities or fits per call, at the default points")
    print("quant: priced quantities in the call; points: sample points per quantity; "
          "seeds x alts: seeds times the product of the alternatives' options; "
          "ms/1000 pts: pricing ms per 1000 (quantity, point) pairs, Sobol and "
          "break-even evaluations included")


if __name__ == "__main__":
    main()
