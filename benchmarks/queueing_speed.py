"""How fast the pricing core evaluates a batch of parameter points.

The studies evaluate :func:`memcglab.pricing.price_flows` for thousands of parameter
points at once; exact MVA runs once over the populations with the batch (points x
client counts) as numpy axes. Run:

    python benchmarks/queueing_speed.py [--points 4096]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from memcglab.pricing import FlowLoad, price_flows
from memcglab.queueing import mva


def _load(clients: np.ndarray) -> FlowLoad:
    p = clients.size
    return FlowLoad(flows=tuple(int(c) for c in clients), memcg_cycles=np.full(p, 150.0),
                    shared_names=("usage:0", "usage:1"), shared=np.full((p, 2), 0.5),
                    private=np.full(p, 0.2))


def main() -> None:
    """Time a few batch shapes and print seconds per call and per parameter point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=4096)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    b = args.points
    # round figures, not fits, for the inputs that are not drawn
    point = {"hold_cycles": rng.uniform(45, 350, b), "cpu_ghz": rng.uniform(2, 3.8, b),
             "other_cycles": rng.uniform(3000, 80000, b), "hold_cycles_cross": 350.0,
             "cross_socket_fraction": 0.0, "busiest_cpu_share": 0.5, "smt_gain": 0.25,
             "cpus_per_flow": 2.0, "cpus": 72.0, "smt": 2.0}
    for clients in (np.arange(6, 37, 6), np.arange(1, 37), np.arange(8, 225, 8),
                    np.arange(1, 225)):
        load = _load(clients)
        t = time.perf_counter()
        price_flows(load, point)
        s = time.perf_counter() - t
        print(f"{b} points x {clients.size} client counts (N <= {clients.max()}): "
              f"{s:.3f} s, {1e6 * s / b:.1f} us per point")
    d = rng.uniform(0, 1, (b, 4))
    t = time.perf_counter()
    mva(d, 1.0, 224)
    print(f"mva: {b} networks of 4 stations to N = 224: {time.perf_counter() - t:.3f} s")


if __name__ == "__main__":
    main()
