"""Seconds per `memcglab predict` scenario: every catalogue test on the 224-thread profile.

The scenario contract asks for at most 30 s per scenario on 2 cores at the default
``--points``. This prints, per test, the wall time of one prediction (its counts, the
alternatives' traces and replays, and the pricing at every point), the robot's instance
counts (netperf nr_threads=200%: 448 pairs; lmbench 44; hackbench 224 groups; madvise 32
cgroups), multi against pcstock-v4, and the slowest.

    python benchmarks/predict_speed.py [--points N] [--tests TCP_RR,bw_unix,...]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from memcglab.scenario.predict import DEFAULT_POINTS, predict

WORKLOADS = {
    "TCP_STREAM": ("netperf", "instances = 448"), "TCP_SENDFILE": ("netperf", "instances = 448"),
    "TCP_MAERTS": ("netperf", "instances = 448"), "TCP_RR": ("netperf", "instances = 448"),
    "UDP_RR": ("netperf", "instances = 448"), "SCTP_RR": ("netperf", "instances = 448"),
    "SCTP_STREAM_MANY": ("netperf", "instances = 448"),
    "bw_unix": ("lmbench", "instances = 44"), "bw_tcp": ("lmbench", "instances = 44"),
    "lat_tcp": ("lmbench", "instances = 44"), "lat_unix": ("lmbench", "instances = 44"),
    "socket": ("hackbench", "groups = 224"), "pipe": ("hackbench", "groups = 224"),
    "fault_release": ("madvise", "cgroups = 32"),
}


def scenario(test: str) -> str:
    family, size = WORKLOADS[test]
    return (f'schema = 1\nname = "{family} {test}"\n[machine]\nprofile = "lkp-2s-224t-spr"\n'
            f'[workload]\nfamily = "{family}"\ntest = "{test}"\n{size}\n'
            '[base]\nmodel = "multi"\n[new]\nmodel = "pcstock-v4"\n')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=DEFAULT_POINTS)
    ap.add_argument("--tests", default=",".join(WORKLOADS))
    args = ap.parse_args()
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        for test in args.tests.split(","):
            f = Path(tmp) / f"{test}.toml"
            f.write_text(scenario(test))
            start = time.perf_counter()
            out = predict(f, points=args.points)
            times[test] = time.perf_counter() - start
            c = out["change_pct"]
            print(f"{test:18s} {times[test]:6.1f} s   change {c['median']:+7.2f}% "
                  f"[{c['low']:+.2f}, {c['high']:+.2f}]", flush=True)
    slowest = max(times, key=times.get)
    print(f"slowest: {slowest} {times[slowest]:.1f} s per scenario at {args.points} points "
          "(the contract's limit: 30 s on 2 cores)")


if __name__ == "__main__":
    main()
