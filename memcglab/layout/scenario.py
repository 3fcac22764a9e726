"""Seed 004: run a field-access stream over the struct mem_cgroup layouts of each era.

An :class:`~memcglab.layout.access.AccessStream` names fields; :func:`stream_addresses`
turns each access into an address through a catalogue layout (era and config), and
:func:`compare_eras` feeds the same stream through the coherence simulator once per
layout. With the ``blamed`` layout (ea928e9e18da, ``CONFIG_MEMCG_V1`` off)
``memory_events_local[MEMCG_SWAP_FAIL]`` and ``vmstats_percpu`` share a line, so
every SWAP_FAIL write invalidates the line the statistics paths read; the ``parent``
and ``fixed`` layouts keep them apart and those transfers vanish. Rates come from the
stream: nothing here knows the published ones.

>>> s = contention_stream(cpus=4, duration=1e-3, seed=1,
...                       writes={"memory_events_local[8]": 4e3},
...                       reads={"vmstats_percpu": 4e4})
>>> df = compare_eras(s)
>>> int(df.loc["blamed", "pair_misses"]) > 0, int(df.loc["fixed", "pair_misses"])
(True, 0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from memcglab.layout.abi import align_up
from memcglab.layout.access import ACCESS_DTYPE, AccessStream
from memcglab.layout.catalogue import struct_layout
from memcglab.layout.coherence import CoherenceResult, simulate
from memcglab.layout.layout import CACHELINE, StructLayout

__all__ = ["SEED004_FIELDS", "stream_addresses", "run_stream", "compare_eras",
           "contention_stream"]

#: The two fields seed 004 is about: the written event counter and the read pointer.
SEED004_FIELDS = ("memory_events_local[8]", "vmstats_percpu")


def stream_addresses(stream: AccessStream, lay: StructLayout, base: int = 0,
                     stride: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(address, size) of every access: instance ``i`` lives at ``base + i * stride``.

    ``stride`` defaults to the struct size rounded up to a whole line, as separate
    allocations of a cacheline-aligned struct would be. An access's ``size`` of 0
    means the whole field.
    """
    stride = align_up(lay.size, CACHELINE) if stride is None else stride
    offsets = np.empty(len(stream.field_names), np.int64)
    sizes = np.empty(len(stream.field_names), np.int64)
    for i, name in enumerate(stream.field_names):
        try:
            loc = lay.locate(name)
        except KeyError as exc:
            raise KeyError(f"stream field {name!r} is not in {lay.name}: {exc.args[0]}") from exc
        offsets[i], sizes[i] = loc.offset, loc.size
    acc = stream.accesses
    f = acc["field"].astype(np.int64)
    addr = base + acc["instance"].astype(np.int64) * stride + offsets[f]
    size = np.where(acc["size"] > 0, acc["size"].astype(np.int64), sizes[f])
    return addr, size


def run_stream(stream: AccessStream, era: str = "blamed",
               config: Iterable[str] | Mapping[str, bool] | None = None,
               struct: str | None = None, base: int = 0) -> CoherenceResult:
    """Simulate ``stream`` over the catalogue layout of ``struct`` (default: the stream's)."""
    lay = struct_layout(struct or stream.struct, era, config)
    addr, size = stream_addresses(stream, lay, base)
    acc = stream.accesses
    return simulate(acc["cpu"], addr, size, acc["write"], acc["field"],
                    stream.field_names)


def compare_eras(stream: AccessStream, eras: Sequence[str] = ("parent", "blamed", "fixed"),
                 config: Iterable[str] | Mapping[str, bool] | None = None,
                 pair: tuple[str, str] = SEED004_FIELDS) -> pd.DataFrame:
    """One row per era: where the pair sits, and the coherence traffic per second.

    ``pair`` is (written field, read field); ``same_line`` says whether the layout
    puts them on one line. ``false_sharing_misses`` counts misses charged to a
    write of a *different* field on the same line; ``pair_misses`` those charged to
    ``pair[0]`` and suffered by ``pair[1]``. ``*_per_s`` divide by the stream's
    ``duration``.
    """
    rows = []
    dur = stream.duration if stream.duration > 0 else float("nan")
    for era in eras:
        lay = struct_layout(stream.struct, era, config)
        a, b = lay.locate(pair[0]), lay.locate(pair[1])
        r = run_stream(stream, era, config)
        fs = r.false_sharing()
        pm = fs[(fs["writer"] == pair[0]) & (fs["victim"] == pair[1])]
        tot = r.totals()
        rows.append({
            "era": era,
            "sizeof": lay.size,
            f"{pair[0]}@": a.offset,
            f"{pair[1]}@": b.offset,
            "same_line": a.offset // CACHELINE == b.offset // CACHELINE,
            "hitm": tot["hitm"],
            "invalidations": tot["invalidations"],
            "false_sharing_misses": int(fs["misses"].sum()),
            "pair_misses": int(pm["misses"].sum()),
            "hitm_per_s": tot["hitm"] / dur,
            "false_sharing_per_s": int(fs["misses"].sum()) / dur,
            "pair_per_s": int(pm["misses"].sum()) / dur,
        })
    return pd.DataFrame(rows).set_index("era")


def contention_stream(cpus: int, duration: float, writes: Mapping[str, float],
                      reads: Mapping[str, float], seed: int = 0, instances: int = 1,
                      struct: str = "mem_cgroup") -> AccessStream:
    """A synthetic stream: Poisson accesses at given total rates (per second).

    Each ``writes``/``reads`` entry is ``field -> accesses per second`` summed over all
    CPUs and instances; every access picks its CPU and instance uniformly. Meant for
    tests and what-if runs; the workload generators build the realistic streams.
    """
    if cpus < 1 or instances < 1 or duration <= 0:
        raise ValueError(f"cpus={cpus}, instances={instances}, duration={duration}: "
                         "all must be positive")
    rng = np.random.default_rng(seed)
    names = list(dict.fromkeys([*writes, *reads]))
    parts = []
    for is_write, rates in ((True, writes), (False, reads)):
        for name, rate in rates.items():
            if rate < 0:
                raise ValueError(f"rate for {name!r} is {rate}: must be >= 0")
            k = rng.poisson(rate * duration)
            rec = np.zeros(k, ACCESS_DTYPE)
            rec["time"] = rng.uniform(0.0, duration, k)
            rec["cpu"] = rng.integers(0, cpus, k)
            rec["field"] = names.index(name)
            rec["write"] = is_write
            rec["size"] = 8
            rec["instance"] = rng.integers(0, instances, k)
            parts.append(rec)
    acc = np.concatenate(parts) if parts else np.zeros(0, ACCESS_DTYPE)
    acc = acc[np.argsort(acc["time"], kind="stable")]
    return AccessStream(tuple(names), acc, struct, duration)
