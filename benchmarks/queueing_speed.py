"""How fast the charge-path model evaluates a batch of parameter points.

The uncertainty layer evaluates :func:`memcglab.queueing.chargepath_throughput` for
thousands of parameter points at once; exact MVA runs once over the populations with
the batch (points x client counts) as numpy axes. Run:

    python benchmarks/queueing_speed.py [--points 4096]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from memcglab.queueing import ChargePathLoad, ChargePathParams, chargepath_throughput, mva


def _load(clients: np.ndarray) -> ChargePathLoad:
    p = clients.size
    return ChargePathLoad(clients=clients, names=("usage:0", "usage:1"),
                          shared=np.full((p, 2), 0.5), private=np.full(p, 0.2),
                          memcg_cycles=np.full(p, 150.0))


def main() -> None:
    """Time a few batch shapes and print seconds per call and per parameter point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=4096)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    b = args.points
    params = ChargePathParams(c2c_cycles=rng.uniform(45, 350, b), ghz=rng.uniform(2, 3.8, b),
                              other_cycles=rng.uniform(3000, 80000, b))
    for clients in (np.arange(6, 37, 6), np.arange(1, 37), np.arange(8, 225, 8),
                    np.arange(1, 225)):
        load = _load(clients)
        t = time.perf_counter()
        chargepath_throughput(load, params)
        s = time.perf_counter() - t
        print(f"{b} points x {clients.size} client counts (N <= {clients.max()}): "
              f"{s:.3f} s, {1e6 * s / b:.1f} us per point")
    d = rng.uniform(0, 1, (b, 4))
    t = time.perf_counter()
    mva(d, 1.0, 224)
    print(f"mva: {b} networks of 4 stations to N = 224: {time.perf_counter() - t:.3f} s")


if __name__ == "__main__":
    main()
