"""netperf_paired: netperf_rx exactly when tasks move independently; pairs kept together."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.engine import replay_compiled
from memcglab.trace import OP_CHARGE, OP_UNCHARGE
from memcglab.workloads import NetperfPairedSpec, netperf_paired, netperf_rx


@settings(max_examples=25, deadline=None)
@given(cpus=st.integers(1, 16), clients=st.integers(1, 6), messages=st.integers(1, 400),
       placement=st.sampled_from(["spread", "paired", "random"]),
       release=st.sampled_from(["task", "softirq", "random"]),
       rate=st.sampled_from([0.0, 0.05, 0.5]), seed=st.integers(0, 2**32))
def test_independent_is_netperf_rx_byte_for_byte(cpus, clients, messages, placement, release,
                                                 rate, seed):
    spec = NetperfPairedSpec(cpus=cpus, clients=clients, messages=messages, placement=placement,
                             release=release, migration_rate=rate, migrate="independent",
                             seed=seed)
    assert np.array_equal(netperf_paired(spec).ops, netperf_rx(spec.netperf()).ops)


def _body(spec: NetperfPairedSpec):
    ops = netperf_paired(spec).ops
    return ops[(ops["op"] == OP_CHARGE) | (ops["op"] == OP_UNCHARGE)]


def test_a_pair_that_never_moves_stays_on_its_cpu():
    body = _body(NetperfPairedSpec(cpus=8, clients=4, messages=2000, migration_rate=0.0))
    # flow f's memcg is f + 2 (one ancestor); its pair sits on CPU f
    assert (body["cpu"] == body["memcg"] - 2).all()


@pytest.mark.parametrize("placement, offset", [("paired", 0), ("spread", 1)])
def test_together_the_reader_keeps_its_offset_from_the_sender(placement, offset):
    spec = NetperfPairedSpec(cpus=16, clients=4, messages=20_000, placement=placement,
                             migration_rate=0.02, migrate="together", seed=1)
    body = _body(spec)
    last_charge: dict[int, int] = {}
    hits = total = 0
    for op, cpu, memcg in zip(body["op"], body["cpu"], body["memcg"], strict=True):
        if op == OP_CHARGE:
            last_charge[int(memcg)] = int(cpu)
        elif int(memcg) in last_charge:
            total += 1
            hits += int(cpu) == (last_charge[int(memcg)] + offset) % spec.cpus
    # a pair moves about once per 50 of its messages; releases lag 4 messages behind
    assert hits / total > 0.85


def test_pairs_moving_together_free_on_the_charging_cpu_so_pcstock_rarely_walks():
    walks = {}
    for migrate in ("together", "independent"):
        trace = netperf_paired(NetperfPairedSpec(cpus=16, clients=8, messages=20_000,
                                                 migrate=migrate, seed=2))
        _, ev = replay_compiled(trace, model="pcstock", events=True)
        walks[migrate] = ev.total("walks") / ev.total("charges")
    assert walks["independent"] > 4 * walks["together"]


def test_spec_names_a_bad_migrate_and_bad_netperf_fields():
    with pytest.raises(ValueError, match="migrate='apart': must be one of independent, together"):
        NetperfPairedSpec(migrate="apart")
    with pytest.raises(ValueError, match="clients=0"):
        NetperfPairedSpec(clients=0)
