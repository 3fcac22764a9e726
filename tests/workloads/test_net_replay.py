"""The network and migration workloads replay cleanly, with --check, through the models."""

from __future__ import annotations

import pytest

from memcglab.models import MODEL_NAMES
from memcglab.replay import replay
from memcglab.workloads import (
    LoopbackRRSpec,
    LoopbackStreamSpec,
    ManyCgroupsSpec,
    SchedMigrationSpec,
    UnixStreamSpec,
    loopback_rr,
    loopback_stream,
    many_cgroups,
    sched_migration,
    unix_stream,
)

MODELS = [m for m in ("multi", "pcstock", "pcstock-v4") if m in MODEL_NAMES]

TRACES = {
    "tcp_rr": lambda: loopback_rr(LoopbackRRSpec(cpus=6, instances=6, transactions=150,
                                                 placement="random")),
    "udp_rr": lambda: loopback_rr(LoopbackRRSpec(protocol="udp", cpus=6, instances=6,
                                                 transactions=150, request_size=9000,
                                                 response_size=9000)),
    "sctp_rr": lambda: loopback_rr(LoopbackRRSpec(protocol="sctp", cpus=6, instances=6,
                                                  transactions=150, server="shared")),
    "stream": lambda: loopback_stream(LoopbackStreamSpec(cpus=6, instances=3, messages=120,
                                                         message_size=40_000)),
    "unix": lambda: unix_stream(UnixStreamSpec(cpus=6, pairs=4, messages=80)),
    "sched": lambda: sched_migration(SchedMigrationSpec(cpus=6, cgroups=20, operations=600,
                                                        migration_rate=0.1)),
    "many": lambda: many_cgroups(ManyCgroupsSpec(cpus=3, cgroups_per_cpu=10, operations=600,
                                                 migration_rate=0.05)),
}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("name", sorted(TRACES))
def test_replays_with_check_and_releases_nothing_it_did_not_charge(name, model):
    trace = TRACES[name]()
    out = replay(trace, model=model, check=True)
    assert out["short_uncharges"] == 0 and out["failed_charges"] == 0 and out["warnings"] == 0
    assert out["ops"] == len(trace.ops)
