"""Exact MVA against a discrete-event simulation (SimPy) of the same closed networks.

Each job thinks for an exponential time of mean Z, then visits every station once,
in order, waiting FCFS for its single server and holding it for an exponential time
of mean D_k: a product-form network whose mean values MVA gives exactly. Throughput
and per-station queue lengths are measured after a warm-up, with batch means for a
confidence interval; the test requires the interval to be narrow (so it can fail)
and the MVA value within 2%.
"""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.queueing import mva

simpy = pytest.importorskip("simpy")


def simulate(demands, think, n, cycles, seed, batches=20):
    """Throughput per batch and time-average jobs at each station of a closed network."""
    rng = np.random.default_rng(seed)
    env = simpy.Environment()
    servers = [simpy.Resource(env, capacity=1) for _ in demands]
    done: list[float] = []
    area = np.zeros(len(demands))          # integral of jobs present, per station
    present = np.zeros(len(demands))
    last = [0.0]

    def account():
        area[:] += present * (env.now - last[0])
        last[0] = env.now

    def job():
        while True:
            if think > 0:
                yield env.timeout(rng.exponential(think))
            for k, (server, d) in enumerate(zip(servers, demands, strict=True)):
                account()
                present[k] += 1
                with server.request() as req:
                    yield req
                    yield env.timeout(rng.exponential(d))
                account()
                present[k] -= 1
            done.append(env.now)

    for _ in range(n):
        env.process(job())
    warm = cycles // 10
    while len(done) < cycles + warm:
        env.step()
    t = np.array(done[warm:])
    edges = np.linspace(t[0], t[-1], batches + 1)
    per_batch = np.histogram(t, edges)[0] / np.diff(edges)
    return per_batch, area / env.now


@pytest.mark.parametrize("demands,think,n,cycles,seed", [
    ([0.5, 1.0, 0.25], 2.0, 4, 30_000, 1),    # near the knee, with think time
    ([1.0, 0.8], 0.0, 6, 50_000, 2),           # batch network past the knee
])
def test_mva_matches_simulation(demands, think, n, cycles, seed):
    per_batch, jobs = simulate(demands, think, n, cycles=cycles, seed=seed)
    x_sim = per_batch.mean()
    half_width = 2.1 * per_batch.std(ddof=1) / np.sqrt(len(per_batch))   # ~95%, 19 dof
    assert half_width / x_sim < 0.01, "the simulation is too short to tell 2% apart"
    exact = mva(demands, think, n)
    assert x_sim == pytest.approx(exact.throughput[n], rel=0.02)
    # Queue lengths (the time-average, warm-up included) within 2% of the bottleneck's.
    assert jobs == pytest.approx(exact.queue_lengths[n], abs=0.02 * exact.queue_lengths[n].max())
