"""Generated traces replay cleanly through the faithful models (memcglab.replay)."""

from __future__ import annotations

import pytest

from memcglab.replay import replay
from memcglab.workloads import (
    MadviseFaultSpec,
    NetperfRxSpec,
    SyntheticSpec,
    madvise_fault,
    netperf_rx,
    synthetic,
)


def _clean(out: dict) -> None:
    assert out["short_uncharges"] == 0
    assert out["failed_charges"] == 0
    assert out["warnings"] == 0


def test_netperf_replays_through_multi_without_short_uncharges():
    trace = netperf_rx(NetperfRxSpec(cpus=8, clients=12, messages=1500))
    out = replay(trace, model="multi", check=True)
    _clean(out)
    assert out["ops"] == len(trace.ops)
    # Everything released: what the memcgs still hold sits in the stocks.
    stocked = sum(n for cpu in out["stocks"] for slot in cpu if slot for n in slot[1:])
    assert sum(m["usage"] for k, m in out["memcgs"].items() if int(k) >= 2) == stocked


@pytest.mark.parametrize("model", ["single", "multi-lru", "pcstock"])
def test_every_generator_replays_cleanly_through_other_models(model):
    traces = [
        netperf_rx(NetperfRxSpec(cpus=6, clients=9, messages=600, interleave=3)),
        madvise_fault(MadviseFaultSpec(cpus=8, cgroups=4, region_pages=70, iterations=2,
                                       trials=2, placement="migrating", migration_rate=0.05)),
        synthetic(SyntheticSpec(cpus=4, memcgs=20, active_per_cpu=10, charges_per_cpu=300,
                                remote_release=0.3)),
    ]
    for trace in traces:
        _clean(replay(trace, model=model, check=True))
