"""The benchmark catalogue: every test in every layout, its rows, its keys, its bounds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.replay import replay
from memcglab.trace import OP_CGROUP, OP_NAMES, validate
from memcglab.workloads.catalogue import (
    ALTERNATIVES,
    MAX_TRACE_ROWS,
    TESTS,
    BenchmarkSpec,
    Machine,
    build,
)
from memcglab.workloads.catalogue.spec import TEST_ALTERNATIVES
from tests.workloads.checks import same_ops

ALL = sorted(TESTS)
SMALL = {"netperf": {"instances": 3}, "lmbench": {"instances": 3},
         "hackbench": {"groups": 2, "fds": 3}, "madvise": {"cgroups": 3, "pages": 40},
         "will-it-scale": {"instances": 3}}


def small(family: str, test: str, **kw) -> BenchmarkSpec:
    ops = 400 if family == "hackbench" else 20
    return BenchmarkSpec(family, test, dict(SMALL[family]), kw.pop("machine", Machine(8, 2, 2)),
                         operations=kw.pop("operations", ops), **kw)


@pytest.mark.parametrize("layout, depth", [("lkp", None), ("per-instance", None),
                                           ("shared", None), ("lkp", 4), ("per-instance", 3)])
@pytest.mark.parametrize("family, test", ALL)
def test_every_test_in_every_layout_generates_a_valid_trace(family, test, layout, depth):
    bt = build(small(family, test, layout=layout, depth=depth))
    validate(bt.trace)
    assert bt.trace.nodes == 2 and bt.trace.cpus == 8
    assert len(bt.origin) == len(bt.trace.ops) and 0 < bt.warmup_rows <= len(bt.trace.ops)
    head = bt.trace.ops[bt.trace.ops["op"] == OP_CGROUP]
    assert set(bt.memcgs) == {0, *head["memcg"].tolist()}
    d = depth if depth is not None else {"lkp": 2, "per-instance": 2, "shared": 1}[layout]
    # the walk of an instance's memcg passes d counters below the root
    parent = dict(zip(head["memcg"].tolist(), head["parent"].tolist(), strict=True))
    m, levels = int(bt.instance_memcg[0]), 0
    while m:
        m, levels = parent[m], levels + 1
    assert levels == d


@pytest.mark.parametrize("family, test", ALL)
def test_each_trace_row_is_what_its_accounting_row_says(family, test):
    """The drift check: every row's op, irq word, memcg and CPU follow its AccountingRow."""
    for server in ("hierarchy", "root"):
        alts = {"server_memcg": server} if "server_memcg" in TEST_ALTERNATIVES[(family,
                                                                                test)] else {}
        bt = build(small(family, test, layout="per-instance", alternatives=alts))
        t = TESTS[(family, test)]
        body, origin = bt.trace.ops[origin_body(bt)], bt.origin[origin_body(bt)]
        for k, row in enumerate(bt.rows):
            mine = body[origin == k]
            if not len(mine):
                continue
            assert {OP_NAMES[o] for o in mine["op"]} <= set(row.trace_op.split(", "))
            assert (mine["irq"] == row.irq).all()
            memcgs = bt.server_memcg if row.target in t.server else bt.instance_memcg
            assert set(mine["memcg"].tolist()) <= set(memcgs.tolist()) - {0}
            assert set(mine["cpu"].tolist()) <= set(bt.placement[row.cpu].ravel().tolist())
        if server == "root" and t.server:
            server_rows = [k for k, r in enumerate(bt.rows) if r.target in t.server]
            assert not np.isin(origin, server_rows).any()  # a root daemon charges nothing


def origin_body(bt):
    return bt.origin >= 0


@pytest.mark.parametrize("family, test", ALL)
def test_every_unconditional_row_appears_with_the_defaults(family, test):
    bt = build(small(family, test))
    seen = {bt.rows[k].key for k in np.unique(bt.origin[bt.origin >= 0]).tolist()}
    eager = {r.key for r in bt.rows if not r.per_op.startswith(("if ", "when "))
             and "if " not in r.per_op}
    # socket rows whose event the reserve always absorbs are the only silent ones: the
    # 1-byte copies after a forced head, the response's fast-path receive, UDP's reads
    silent = eager - seen
    rr = {"req_copy", "rsp_copy", "rsp_rx"}
    quiet = {("netperf", "TCP_RR"): rr, ("lmbench", "lat_tcp"): rr,
             ("netperf", "UDP_RR"): {"req_read", "rsp_read"}}.get((family, test), set())
    assert silent <= quiet, f"{family} {test}: rows never emitted: {sorted(silent - quiet)}"


@pytest.mark.parametrize("family, test", ALL)
def test_builds_are_deterministic_and_seeded(family, test):
    a, b = build(small(family, test, seed=4)), build(small(family, test, seed=4))
    assert same_ops(a.trace, b.trace)
    if family in ("hackbench", "netperf") and test not in ("UDP_RR",):
        c = build(small(family, test, seed=5, alternatives={"placement": "random"}))
        assert not same_ops(a.trace, c.trace)


@pytest.mark.parametrize("family, test", ALL)
def test_every_trace_replays_with_check_through_multi_and_v4(family, test):
    bt = build(small(family, test, layout="per-instance"))
    for model in ("multi", "pcstock-v4"):
        out = replay(bt.trace, model=model, check=True)
        assert out["failed_charges"] == 0 and out["warnings"] == 0
        assert out["short_uncharges"] == 0 and out.get("short_obj_uncharges", 0) == 0


def test_lazy_reclaim_reaches_the_memcg_far_less_often_than_eager():
    for family, test in [("netperf", "TCP_RR"), ("netperf", "TCP_STREAM"),
                         ("netperf", "SCTP_RR"), ("lmbench", "bw_tcp")]:
        eager = build(small(family, test, operations=200))
        lazy = build(small(family, test, operations=200, sk_reclaim="lazy"))
        assert len(lazy.trace.ops) * 10 < len(eager.trace.ops)


def test_sk_reclaim_changes_nothing_for_sockets_without_memory_accounting():
    for family, test in [("lmbench", "bw_unix"), ("hackbench", "socket"),
                         ("madvise", "fault_release")]:
        assert same_ops(build(small(family, test)).trace,
                        build(small(family, test, sk_reclaim="lazy")).trace)


def test_lkp_runs_every_task_and_the_server_in_one_memcg_at_depth_two():
    bt = build(small("netperf", "TCP_RR"))
    assert bt.memcgs == {0: "root", 1: "system.slice", 2: "service"}
    assert set(bt.trace.ops["memcg"][bt.trace.ops["op"] != OP_CGROUP].tolist()) == {2}


def test_per_instance_server_memcg_alternatives():
    def servers(alt):
        bt = build(small("netperf", "TCP_RR", layout="per-instance",
                         alternatives={"server_memcg": alt}))
        return bt.memcgs, bt.instance_memcg.tolist(), bt.server_memcg.tolist()
    roles, inst, srv = servers("hierarchy")
    assert inst == [2, 3, 4] and srv == [5, 5, 5] and roles[5] == "server"
    assert servers("instance")[1:] == ([2, 3, 4], [2, 3, 4])
    assert servers("root")[2] == [0, 0, 0]


def test_placement_follows_the_scheduler_order_and_reports_topology():
    bt = build(BenchmarkSpec("netperf", "TCP_RR", {"instances": 6}, Machine(8, 2, 2),
                             operations=2))
    # 2 cores per socket: pairs on one socket, first threads of both sockets, then SMT
    assert bt.placement["client"].ravel().tolist() == [0, 4, 2, 6, 0, 4]
    assert bt.placement["server"].ravel().tolist() == [1, 5, 3, 7, 1, 5]
    assert bt.topology["socket"].tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert bt.topology["thread"].tolist() == [0, 0, 1, 1, 0, 0, 1, 1]
    assert bt.softirq_cpus == ("client", "server")


def test_result_says_what_an_operation_is():
    bt = build(small("lmbench", "bw_unix"))
    assert (bt.operation, bt.bytes_per_operation, bt.operations) == ("message", 65536, 60)
    assert bt.summary()["operations"] == 60 and bt.summary()["layout"] == "lkp"
    assert build(small("netperf", "TCP_RR", protection=True)).protection is True


def test_default_sizes_aim_at_a_million_bound_rows_and_stay_within_the_limit():
    for family, test in ALL:
        keys = {"netperf": {"instances": 448}, "lmbench": {"instances": 448},
                "hackbench": {"groups": 224}, "madvise": {"cgroups": 32},
                "will-it-scale": {"instances": 448}}[family]
        spec = BenchmarkSpec(family, test, keys, Machine(224, 2, 2))
        from memcglab.workloads.catalogue import default_operations
        n = default_operations(spec)
        t = TESTS[(family, test)]
        k = spec.resolved_keys()
        assert 1 <= n and 448 * (n + t.warm(k)) * t.bound(k) <= MAX_TRACE_ROWS or \
            family in ("hackbench", "madvise")


@pytest.mark.parametrize("kwargs, message", [
    ({"family": "iperf"}, "family: 'iperf' is unknown (valid: netperf, lmbench, hackbench"),
    ({"test": "TCP_CRR"}, "test: 'TCP_CRR' is not a netperf test (valid: TCP_STREAM"),
    ({"keys": {}}, "keys.instances: missing (required by netperf TCP_RR; valid: an integer"),
    ({"keys": {"instances": 0}}, "keys.instances: 0 is invalid (valid: an integer from 1 to "
                                 "16384)"),
    ({"keys": {"instances": 2, "ip": "ipv5"}}, "keys.ip: 'ipv5' is invalid (valid: ipv4, ipv6)"),
    ({"keys": {"instances": 2, "send_size": 5}}, "keys.send_size: netperf TCP_RR has no such"),
    ({"layout": "flat"}, "layout: 'flat' is unknown (valid: lkp, per-instance, shared)"),
    ({"layout": "per-instance", "depth": 1}, "depth: 1 leaves no shared parent"),
    ({"depth": 17}, "depth: 17 is invalid (valid: an integer from 1 to 16)"),
    ({"sk_reclaim": "never"}, "sk_reclaim: 'never' is invalid (valid: eager, lazy)"),
    ({"operations": 0}, "operations: 0 is invalid (valid: an integer from 1 to 10^7"),
    ({"seed": -1}, "seed: -1 is invalid"),
    ({"alternatives": {"napi_cache": "warm"}}, "alternatives.napi_cache: netperf TCP_RR reads "
                                                "no such alternative (valid: placement, "
                                                "server_memcg)"),
    ({"alternatives": {"server_memcg": "cloud"}}, "alternatives.server_memcg: 'cloud' is "
                                                   "invalid (valid: hierarchy, instance, root)"),
])
def test_spec_errors_name_the_key_and_what_is_valid(kwargs, message):
    base = dict(family="netperf", test="TCP_RR", keys={"instances": 2}, machine=Machine(8))
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("^", r"\^")):
        BenchmarkSpec(**{**base, **kwargs})


def test_machine_errors_name_the_fact():
    with pytest.raises(ValueError, match="machine.cpus: 6 is not a multiple of sockets x "
                                         "threads_per_core = 4"):
        Machine(6, 4, 1)
    with pytest.raises(ValueError, match=r"machine.sockets: 0 is invalid \(valid: an integer "
                                         r"from 1 to 32\)"):
        Machine(8, 0)


def test_sizes_that_multiply_are_bounded_with_the_inputs_named():
    with pytest.raises(ValueError, match=r"instances=16000 x \(operations=5000 \+ warm-up 8\) "
                                         r"x up to 10 trace rows per operation = 801,280,000 "
                                         r"exceeds 3,000,000 \(MAX_TRACE_ROWS\)"):
        build(BenchmarkSpec("netperf", "TCP_RR", {"instances": 16000}, Machine(8),
                            operations=5000))
    with pytest.raises(ValueError, match=r"groups=1024 x \(operations=50000 \+ warm-up "
                                         r"6400\) = 57,753,600 operations exceeds 50,000,000 "
                                         r"\(MAX_OPERATIONS\)"):
        build(BenchmarkSpec("hackbench", "pipe", {"groups": 1024}, Machine(8),
                            operations=50_000))
    with pytest.raises(ValueError, match=r"groups=1024 x 2 roles x fds=1024 = 2,097,152 tasks "
                                         r"exceeds 1,048,576 \(MAX_TASKS\): give fewer groups "
                                         r"or fds"):
        build(BenchmarkSpec("hackbench", "socket", {"groups": 1024, "fds": 1024}, Machine(8),
                            operations=10))
    with pytest.raises(ValueError, match="cgroups=4096 x"):
        build(BenchmarkSpec("madvise", "fault_release", {"cgroups": 4096}, Machine(8),
                            operations=10_000))


def test_alternatives_have_one_prior_weight_per_value_summing_to_one():
    for name, alt in ALTERNATIVES.items():
        assert len(alt.values) == len(alt.prior) and alt.default in alt.values, name
        assert abs(sum(alt.prior) - 1) < 1e-9, name


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(ALL), st.integers(1, 5), st.sampled_from([(4, 1, 1), (8, 2, 2),
                                                                   (6, 1, 2), (12, 3, 1)]),
       st.sampled_from(["lkp", "per-instance", "shared"]), st.sampled_from(["eager", "lazy"]),
       st.integers(0, 2**32))
def test_any_small_benchmark_replays_cleanly(case, n, machine, layout, era, seed):
    family, test = case
    keys = {"netperf": {"instances": n}, "lmbench": {"instances": n},
            "hackbench": {"groups": n, "fds": 2}, "madvise": {"cgroups": n, "pages": 33},
            "will-it-scale": {"instances": n}}[family]
    bt = build(BenchmarkSpec(family, test, keys, Machine(*machine), layout=layout,
                             sk_reclaim=era, seed=seed,
                             operations=40 if family == "hackbench" else 5))
    out = replay(bt.trace, model="multi", check=True)
    assert out["short_uncharges"] == 0 and out.get("short_obj_uncharges", 0) == 0
