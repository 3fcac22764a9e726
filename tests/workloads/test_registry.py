"""The workloads facade: registries, generate(), write_trace, and documented specs."""

from __future__ import annotations

import ast
import dataclasses
import inspect

import pytest

from memcglab.layout.access import AccessStream
from memcglab.trace import Trace, TraceError, make_ops, read_trace
from memcglab.workloads import ACCESS_WORKLOADS, WORKLOADS, generate, write_trace
from tests.workloads.checks import same_ops

SMALL = {
    "netperf_rx": {"cpus": 6, "clients": 4, "messages": 200},
    "madvise_fault": {"cpus": 6, "cgroups": 3, "region_pages": 20, "iterations": 2, "trials": 2},
    "synthetic": {"cpus": 3, "memcgs": 10, "active_per_cpu": 4, "charges_per_cpu": 100},
    "loopback_rr": {"cpus": 6, "instances": 3, "transactions": 60},
    "loopback_stream": {"cpus": 6, "instances": 3, "messages": 60},
    "unix_stream": {"cpus": 6, "pairs": 3},
    "netperf_migrating": {"cpus": 6, "clients": 4, "messages": 200},
    "sched_migration": {"cpus": 6, "cgroups": 8, "operations": 200},
    "many_cgroups": {"cpus": 3, "cgroups_per_cpu": 9, "operations": 200},
    "netperf_paired": {"cpus": 6, "clients": 4, "messages": 200},
}


def test_registries_name_the_issue_workloads():
    assert set(WORKLOADS) == {"netperf_rx", "madvise_fault", "synthetic", "loopback_rr",
                              "loopback_stream", "unix_stream", "netperf_migrating",
                              "sched_migration", "many_cgroups",
                              "netperf_paired"}
    assert set(ACCESS_WORKLOADS) == {"mremap_pageout"}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_each_workload_writes_a_file_the_replay_reads_back(tmp_path, name):
    trace = generate(name, **SMALL[name])
    assert isinstance(trace, Trace)
    path = write_trace(trace, tmp_path / f"{name}.trace")
    back = read_trace(str(path))
    assert same_ops(trace, back)
    assert path.read_text().startswith("memcglab-trace 1\n")


def test_write_trace_refuses_an_invalid_trace_unless_told(tmp_path):
    bad = Trace(2, make_ops([(1, 0, 5, 3)]))  # charge of a memcg never created
    with pytest.raises(TraceError, match="unknown memcg 5"):
        write_trace(bad, tmp_path / "bad.trace")
    assert not (tmp_path / "bad.trace").exists()
    write_trace(bad, tmp_path / "bad.trace", check=False)
    assert "charge 0 5 3" in (tmp_path / "bad.trace").read_text()


def test_generate_makes_access_streams_too():
    assert isinstance(generate("mremap_pageout", cpus=4, duration=1e-3), AccessStream)


def test_generate_names_unknown_workloads_and_parameters():
    with pytest.raises(ValueError, match=r"unknown workload 'iperf'; valid: netperf_rx, "):
        generate("iperf")
    with pytest.raises(ValueError, match=r"netperf_rx has no parameter 'client'; valid: cpus, "):
        generate("netperf_rx", client=3)


@pytest.mark.parametrize("name", sorted({**WORKLOADS, **ACCESS_WORKLOADS}))
def test_specs_are_frozen_hashable_and_every_field_is_documented(name):
    spec_type = {**WORKLOADS, **ACCESS_WORKLOADS}[name].spec
    spec = spec_type()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.seed = 1
    assert hash(spec) == hash(spec_type())
    # Each field carries a "#:" comment (its meaning and the reason for its default).
    source = inspect.getsource(spec_type)
    lines = source.splitlines()
    body = ast.parse(source).body[0].body
    fields = [node for node in body if isinstance(node, ast.AnnAssign)]
    assert [f.target.id for f in fields] == [f.name for f in dataclasses.fields(spec_type)]
    for node in fields:
        above = lines[node.lineno - 2].strip()
        assert above.startswith("#:"), f"{name}.{node.target.id} has no '#:' doc comment"
