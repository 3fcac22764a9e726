"""Speed of the compiled engine against the faithful replay, measured in one run.

    .venv/bin/python benchmarks/engine_speed.py [--messages 2000000] [--stream-ops 100000000]

Generates a netperf receive mix (``memcglab.workloads.netperf_rx``: seed 000's
72 CPUs and 36 clients by default, each message one charge and one uncharge),
replays it with the compiled engine (validation included) and with the faithful
``memcglab.replay.replay``, and prints both rates and their ratio. The faithful
replay runs on a prefix of the trace (``--faithful-ops``) to keep the run short;
the output says so. Before timing, the compiled engine replays a short prefix, so
the C core's build (or cache load) is not timed. Then, end to end, the same trace as
text through the compiled reader. ``--stream-ops N`` also streams N operations through
one engine in chunks (the mix repeated without its cgroup lines) and reports the peak
resident memory of the process.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time

import numpy as np

from memcglab.engine import Engine, read_trace_fast, replay_compiled
from memcglab.replay import replay
from memcglab.trace import OP_CGROUP, Trace, to_text

try:
    from memcglab.workloads.netperf import NetperfRxSpec, netperf_rx
except ImportError:  # pragma: no cover - the workloads layer is another engineer's
    netperf_rx = None


def netperf_trace(cpus: int, clients: int, messages: int, seed: int) -> Trace:
    if netperf_rx is not None:
        return netperf_rx(NetperfRxSpec(cpus=cpus, clients=clients, messages=messages,
                                        seed=seed))
    # A stand-in with the same shape: 3-page messages charged on the sender's CPU and
    # released on the receiver's, each flow one memcg below a shared parent.
    from memcglab.trace import OP_CHARGE, OP_DTYPE, OP_UNCHARGE, PAGE_COUNTER_MAX
    rng = np.random.default_rng(seed)
    flows = rng.integers(0, clients, size=messages)
    ops = np.zeros(clients + 1 + 2 * messages, dtype=OP_DTYPE)
    ops[0] = (OP_CGROUP, False, -1, 1, 0, PAGE_COUNTER_MAX, 0, False)
    for c in range(clients):
        ops[1 + c] = (OP_CGROUP, False, -1, 2 + c, 1, PAGE_COUNTER_MAX, 0, False)
    body = ops[clients + 1:]
    body["op"][0::2], body["op"][1::2] = OP_CHARGE, OP_UNCHARGE
    body["memcg"][0::2] = body["memcg"][1::2] = 2 + flows
    body["cpu"][0::2] = flows % cpus
    body["cpu"][1::2] = (flows + cpus // 2) % cpus
    body["arg"], body["parent"] = 3, -1
    return Trace(cpus, ops, "<stand-in netperf mix>")


def rate(seconds: float, n: int) -> str:
    return f"{n / seconds / 1e6:8.2f} M ops/s ({n:,} ops in {seconds:.2f} s)"


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpus", type=int, default=72)
    ap.add_argument("--clients", type=int, default=36)
    ap.add_argument("--messages", type=int, default=2_000_000)
    ap.add_argument("--slots", type=int, default=7)
    ap.add_argument("--models", default="multi,pcstock,pcstock-v4",
                    help="comma-separated replay models")
    ap.add_argument("--faithful-ops", type=int, default=100_000)
    ap.add_argument("--stream-ops", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    trace = netperf_trace(args.cpus, args.clients, args.messages, args.seed)
    n = len(trace.ops)
    prefix = Trace(trace.cpus, trace.ops[:min(args.faithful_ops, n)], trace.source)
    print(f"trace: {trace.source}, {trace.cpus} CPUs, {args.clients} clients, {n:,} ops")
    for model in args.models.split(","):
        replay_compiled(prefix, model, args.slots)  # build or load the C core
        t0 = time.perf_counter()
        compiled = replay_compiled(trace, model, args.slots)
        tc = time.perf_counter() - t0
        t0 = time.perf_counter()
        faithful = replay(prefix, model, args.slots)
        tf = time.perf_counter() - t0
        same = replay_compiled(prefix, model, args.slots) == faithful
        print(f"{model} (slots {args.slots}):")
        print(f"  compiled engine: {rate(tc, n)}  walks {compiled['counters']['walks']:,}")
        print(f"  faithful replay: {rate(tf, len(prefix.ops))}  (first "
              f"{len(prefix.ops):,} ops only; same result there: {same})")
        print(f"  ratio compiled / faithful: {(n / tc) / (len(prefix.ops) / tf):,.0f}x")

    if args.stream_ops:
        body = trace.ops[trace.ops["op"] != OP_CGROUP]
        engine = Engine(trace.cpus, "multi", args.slots)
        engine.feed(trace.ops)
        done, t0 = n, time.perf_counter()
        while done < args.stream_ops:
            chunk = body[:args.stream_ops - done]
            engine.feed(chunk)
            done += len(chunk)
        ts = time.perf_counter() - t0
        print(f"streamed {done:,} ops through one engine: {rate(ts, done - n)}; "
              f"peak RSS {peak_rss_mib():.0f} MiB")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "netperf.trace")
        with open(path, "w") as fh:
            fh.write(to_text(trace))
        read_trace_fast(os.path.join(tmp, "netperf.trace"))  # warm
        t0 = time.perf_counter()
        replay_compiled(read_trace_fast(path), "multi", args.slots)
        te = time.perf_counter() - t0
        print(f"text end to end (read + replay, multi): {rate(te, n)}, "
              f"{os.path.getsize(path) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
