"""Cost-model speed: ``cycles_per_op`` against the labelled-frame pricing it replaced.

Not a test. Run from the repository root:

    python benchmarks/cost_speed.py [--calls 2000]

The reference builds the (event, parameter) units matrix as a pandas frame filled
cell by cell with ``.loc``, as memcglab.cost did before it moved to numpy; both price
the same event counts (a 72-CPU, 40-memcg ChargeEvents) and must agree to the last
bit. Prints the time per call of each and their ratio, measured in this run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from memcglab.cost import PRICES, CostParams, cycles_per_op, default_scan_lines, event_counts
from memcglab.events import EVENT_NAMES, ChargeEvents


def reference(events: ChargeEvents, params: CostParams, slots: int = 7) -> float:
    """Cycles per charge from a pandas matrix filled with .loc (the former code path)."""
    counts = event_counts(events)
    nops = counts["charges"]
    m = pd.DataFrame(0.0, index=list(PRICES), columns=list(CostParams.names()))
    for ev, mix in PRICES.items():
        for param, units in mix.items():
            m.loc[ev, param] = units * counts[ev] / nops
    m.loc["lookups", "l1_hit"] = default_scan_lines(slots) * counts["lookups"] / nops
    return float(m.sum(axis=0).to_numpy() @ params.to_vector())


def per_call(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    events = ChargeEvents.zeros(ncpus=72, nmemcgs=40)
    for name in EVENT_NAMES:
        events.per_cpu[name][:] = rng.integers(1, 1000, 72)
    params = CostParams()
    assert reference(events, params) == cycles_per_op(events, params)
    ref = per_call(lambda: reference(events, params), max(args.calls // 10, 1))
    new = per_call(lambda: cycles_per_op(events, params), args.calls)
    print(f"{'pricing':<22} {'ms per call':>12}")
    print(f"{'pandas .loc (before)':<22} {ref * 1e3:12.3f}")
    print(f"{'numpy (memcglab.cost)':<22} {new * 1e3:12.3f}")
    print(f"ratio: {ref / new:.1f}x")


if __name__ == "__main__":
    main()
