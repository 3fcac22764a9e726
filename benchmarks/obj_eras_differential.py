"""The obj-stock eras, compiled against faithful: a long differential run, and their speed.

    .venv/bin/python benchmarks/obj_eras_differential.py [--traces 1000] [--ops 20000]

The long form of tests/engine/test_differential_obj_eras.py: ``--traces`` random object
traces and as many slab-workload traces (tests/engine/tracegen.py), each through every
obj-stock era beside every model the faithful port runs it with, slots 1 and 7, under
the refill variant of its number, with and without ``--check``; it prints the
mismatches (the output, the ``counts``, or the ``--check`` outcome differing) and stops
with status 1 if there is one. Then, per era, the replay rate of both engines on one
slab trace of ``--ops`` operations beside ``multi``, the compiled engine's build (or
cache load) done before timing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memcglab.engine import replay_compiled  # noqa: E402
from memcglab.registry import obj_era_models  # noqa: E402
from memcglab.replay import InvariantViolation, dumps, replay  # noqa: E402
from tests.engine.tracegen import (  # noqa: E402
    OBJ_STOCK_ERAS,
    random_obj_trace,
    random_slab_trace,
)


def outcome(fn, *args, **kwargs) -> tuple:
    counts: dict[str, int] = {}
    try:
        return dumps(fn(*args, counts=counts, **kwargs)), counts
    except InvariantViolation as exc:
        return ("violation", exc.index, exc.line, str(exc)), None


def differential(traces: int) -> list[tuple]:
    bad = []
    for number in range(traces):
        batch = (64, 8, 64, 3)[number % 4]
        refill = ("always", "always", "not-in-irq", "never")[number % 4]
        for trace in (random_obj_trace(number, batch=batch), random_slab_trace(number)):
            for era in OBJ_STOCK_ERAS:
                for model in obj_era_models(era):
                    for slots in (1, 7):
                        for check in (False, True):
                            args = (trace, model, slots, number, batch)
                            kw = {"refill": refill, "obj_stock": era, "check": check}
                            if outcome(replay, *args, **kw) != outcome(replay_compiled, *args,
                                                                       **kw):
                                bad.append((trace.source, era, model, slots, refill, check))
    return bad


def speed(ops: int) -> None:
    trace = random_slab_trace(7, n_ops=ops)
    replay_compiled(random_slab_trace(1), obj_stock="v5.9")  # build or load the C core
    for era in OBJ_STOCK_ERAS:
        t0 = time.perf_counter()
        replay(trace, "multi", obj_stock=era)
        t1 = time.perf_counter()
        replay_compiled(trace, "multi", obj_stock=era)
        t2 = time.perf_counter()
        n = len(trace.ops)
        print(f"{era:13} faithful {n / (t1 - t0) / 1e3:9.1f} k ops/s, compiled "
              f"{n / (t2 - t1) / 1e6:7.2f} M ops/s ({(t1 - t0) / (t2 - t1):6.0f}x), "
              f"{n:,} ops")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=1000)
    parser.add_argument("--ops", type=int, default=20000)
    args = parser.parse_args()
    t0 = time.perf_counter()
    bad = differential(args.traces)
    print(f"{2 * args.traces} traces x {len(OBJ_STOCK_ERAS)} eras x their models x slots "
          f"{{1, 7}} x --check: {len(bad)} mismatches in {time.perf_counter() - t0:.0f} s")
    for row in bad[:20]:
        print("  mismatch:", row)
    speed(args.ops)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
