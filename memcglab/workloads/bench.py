"""Generation speed of the workloads: ``python -m memcglab.workloads.bench``.

For each generator, times a trace and one 8 times longer in the same run and
prints seconds, operations per second and the time ratio (8 for linear scaling).
The headline case is the issue's 4,000,000-operation netperf mix. Not a test:
numbers depend on the machine, so they are printed, never asserted.
"""

from __future__ import annotations

import argparse
import time

from memcglab.workloads import generate

#: name -> (parameter that sets the length, its value for the long case, other parameters)
CASES = {
    "netperf_rx": ("messages", 2_000_000, {}),  # 4,000,000 operations
    "madvise_fault": ("trials", 30, {"iterations": 50}),  # seed 003 defaults: 12.7M ops
    "synthetic": ("charges_per_cpu", 250_000, {}),  # 4,000,000 operations
    "mremap_pageout": ("duration", 0.1, {}),  # ~1.8M accesses (48 vmstats_percpu loads/event)
}


def _timed(name: str, params: dict) -> tuple[float, int]:
    start = time.perf_counter()
    out = generate(name, **params)
    elapsed = time.perf_counter() - start
    rows = len(out.ops) if hasattr(out, "ops") else len(out.accesses)
    return elapsed, rows


def main(argv: list[str] | None = None) -> int:
    """Time the named workloads (default: all) and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(CASES), help="workloads to time")
    args = parser.parse_args(argv)
    print(f"{'workload':16} {'rows':>11} {'seconds':>8} {'rows/s':>11} {'ratio 8x':>8}")
    for name in args.names:
        key, value, extra = CASES[name]
        small = value / 8 if isinstance(value, float) else max(1, value // 8)
        short, _ = _timed(name, {**extra, key: small})
        long, rows = _timed(name, {**extra, key: value})
        print(f"{name:16} {rows:>11,} {long:>8.2f} {rows / long:>11,.0f} {long / short:>8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
