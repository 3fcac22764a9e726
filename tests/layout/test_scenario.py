"""Seed 004 through the coherence simulator: streams name fields, layouts place them."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.layout.access import AccessStream
from memcglab.layout.catalogue import struct_layout
from memcglab.layout.scenario import (
    compare_eras,
    contention_stream,
    run_stream,
    stream_addresses,
)

FIELDS = ["memory_events_local[8]", "vmstats_percpu", "memory_events[8]"]


def test_fields_map_to_addresses_through_the_chosen_layout():
    s = AccessStream.from_records(FIELDS, [(0.0, 0, 0, True), (1.0, 1, 1, False),
                                           (2.0, 2, 2, True)])
    s.accesses["instance"][2] = 1
    lay = struct_layout("mem_cgroup", "blamed")
    addr, size = stream_addresses(s, lay, base=0x1000)
    stride = lay.size  # already a whole number of lines
    assert addr.tolist() == [0x1000 + lay.locate(FIELDS[0]).offset,
                             0x1000 + lay.locate(FIELDS[1]).offset,
                             0x1000 + stride + lay.locate(FIELDS[2]).offset]
    assert size.tolist() == [8, 8, 8]


def test_unknown_stream_field_is_named():
    s = AccessStream.from_records(["vmstats_percpu", "no_such_field"], [(0.0, 0, 1, True)])
    with pytest.raises(KeyError, match="stream field 'no_such_field' is not in"):
        run_stream(s)


def test_hand_built_stream_shows_the_blamed_false_sharing_and_its_fix():
    # CPU 0 bumps MEMCG_SWAP_FAIL, CPUs 1-3 then load vmstats_percpu, ten rounds.
    recs = []
    t = 0.0
    for _ in range(10):
        recs.append((t, 0, 0, True))
        for c in (1, 2, 3):
            t += 1e-6
            recs.append((t, c, 1, False))
    s = AccessStream.from_records(FIELDS[:2], recs)
    df = compare_eras(s)
    assert df["same_line"].tolist() == [False, True, False]
    # Blamed, round 1: cpu1's cold load finds the line Modified (a HITM, charged to
    # the write); cpu2 and cpu3 take plain cold misses. Rounds 2-10: the write
    # invalidates three copies and each reader misses again, the first one on a HITM.
    assert df.loc["blamed", "pair_misses"] == 1 + 9 * 3
    assert df.loc["blamed", "invalidations"] == 27
    assert df.loc["blamed", "hitm"] == 10
    for era in ("parent", "fixed"):
        assert df.loc[era, "pair_misses"] == 0
        assert df.loc[era, "false_sharing_misses"] == 0
        assert df.loc[era, "hitm"] == 0


def test_rates_are_parameters_and_transfers_scale_with_them():
    cpus = 4

    def per_s(write_rate):
        s = contention_stream(cpus=cpus, duration=1e-2, seed=3,
                              writes={"memory_events_local[8]": write_rate},
                              reads={"vmstats_percpu": 2e6})
        return compare_eras(s, eras=("blamed", "fixed")), s
    (lo, s_lo), (hi, s_hi) = per_s(5e3), per_s(2e4)
    assert lo.loc["fixed", "pair_per_s"] == 0 == hi.loc["fixed", "pair_per_s"]
    # Reads are plentiful (about a hundred between writes), so nearly every other CPU
    # holds the line when a write lands and misses on its next load: a write costs
    # about cpus - 1 false-sharing misses, whatever the write rate.
    for df, s in ((lo, s_lo), (hi, s_hi)):
        per_write = df.loc["blamed", "pair_misses"] / int(s.accesses["write"].sum())
        assert abs(per_write - (cpus - 1)) < 0.25


def test_contention_stream_is_time_ordered_and_reproducible():
    kw = dict(cpus=4, duration=1e-3, writes={"a": 1e4}, reads={"b": 1e4}, seed=9,
              instances=3)
    s1, s2 = contention_stream(**kw), contention_stream(**kw)
    assert np.array_equal(s1.accesses, s2.accesses)
    assert np.all(np.diff(s1.accesses["time"]) >= 0)
    assert set(s1.accesses["instance"]) <= {0, 1, 2}
    with pytest.raises(ValueError, match="must be >= 0"):
        contention_stream(cpus=1, duration=1.0, writes={"a": -1.0}, reads={})


def test_the_mremap_pageout_workload_stream_shows_the_regression_and_the_fix():
    mremap = pytest.importorskip("memcglab.workloads.mremap")
    spec = mremap.MremapPageoutSpec(cpus=16, swap_fail_rate=2e5, duration=0.01, seed=1)
    df = compare_eras(mremap.mremap_pageout(spec))
    assert df.loc["blamed", "pair_misses"] > 0
    assert df.loc["parent", "false_sharing_misses"] == 0
    assert df.loc["fixed", "false_sharing_misses"] == 0
