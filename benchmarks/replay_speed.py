"""Faithful-replay speed: operations per second for each model on one generated trace.

Not a test. Run from the repository root:

    python benchmarks/replay_speed.py [--ops 1000000] [--cpus 8] [--memcgs 32] [--models M,..]

The trace is a multi-tenant charge/uncharge mix (charges on one CPU, releases on
any CPU, memcgs chosen uniformly, 1-16 pages), generated once and replayed through
every model (``--models`` picks some, e.g. ``pcstock,pcstock-v4``); the time excludes
generation.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from memcglab.models import MODEL_NAMES
from memcglab.replay import Replayer
from memcglab.trace import OP_CGROUP, OP_CHARGE, OP_DTYPE, OP_UNCHARGE, PAGE_COUNTER_MAX, Trace


def generate(n_ops: int, cpus: int, memcgs: int, seed: int = 1) -> Trace:
    """Pairs of (charge NR on cpu a, uncharge NR on cpu b): every charge is released."""
    rng = np.random.default_rng(seed)
    pairs = n_ops // 2
    ops = np.zeros(memcgs + 2 * pairs, dtype=OP_DTYPE)
    ops["op"][:memcgs] = OP_CGROUP
    ops["memcg"][:memcgs] = np.arange(1, memcgs + 1)
    ops["parent"][:memcgs] = 0
    ops["arg"][:memcgs] = PAGE_COUNTER_MAX
    ops["cpu"][:memcgs] = -1
    body = ops[memcgs:]
    memcg = rng.integers(1, memcgs + 1, pairs)
    nr = rng.integers(1, 17, pairs)
    body["op"][0::2], body["op"][1::2] = OP_CHARGE, OP_UNCHARGE
    body["memcg"][0::2] = body["memcg"][1::2] = memcg
    body["arg"][0::2] = body["arg"][1::2] = nr
    body["cpu"][0::2] = rng.integers(0, cpus, pairs)
    body["cpu"][1::2] = rng.integers(0, cpus, pairs)
    body["parent"] = -1
    return Trace(cpus, ops)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=1_000_000)
    parser.add_argument("--cpus", type=int, default=8)
    parser.add_argument("--memcgs", type=int, default=32)
    parser.add_argument("--models", default=",".join(MODEL_NAMES),
                        help="comma-separated replay models (default: all)")
    args = parser.parse_args()
    models = args.models.split(",")
    for model in models:
        if model not in MODEL_NAMES:
            parser.error(f"--models: {model!r} is unknown; valid: {', '.join(MODEL_NAMES)}")
    trace = generate(args.ops, args.cpus, args.memcgs)
    print(f"trace: {len(trace.ops):,} operations, {args.cpus} CPUs, {args.memcgs} memcgs")
    print(f"{'model':<12} {'seconds':>8} {'ops/s':>12}")
    for model in models:
        r = Replayer(trace.cpus, model)
        start = time.perf_counter()
        r.run(trace)
        seconds = time.perf_counter() - start
        print(f"{model:<12} {seconds:8.2f} {len(trace.ops) / seconds:12,.0f}")


if __name__ == "__main__":
    main()
