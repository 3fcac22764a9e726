"""``memcglab replay --engine compiled``: the same bytes, statuses and messages as faithful."""

from __future__ import annotations

import pytest

from memcglab.cli import main
from memcglab.trace import to_text
from memcglab.workloads import NetperfRxSpec, netperf_rx

BAD = "memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 0 1 3\ncharge 2 1 1\n"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(["replay", *argv])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


@pytest.fixture(scope="module")
def netperf_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "netperf.trace"
    spec = NetperfRxSpec(cpus=8, clients=6, messages=3000, seed=3)
    path.write_text(to_text(netperf_rx(spec)))
    return str(path)


@pytest.mark.parametrize("model", ["single", "multi", "multi-rr", "multi-lru", "pcstock",
                                   "pcstock-v4"])
def test_compiled_output_is_byte_identical(capsys, netperf_file, model):
    faithful = run(capsys, netperf_file, "--model", model, "--slots", "4", "--check")
    compiled = run(capsys, netperf_file, "--model", model, "--slots", "4", "--check",
                   "--engine", "compiled")
    assert faithful[0] == 0 and compiled == faithful


def test_compiled_errors_and_violations_match(capsys, tmp_path):
    bad = tmp_path / "bad.trace"
    bad.write_text(BAD)
    assert run(capsys, str(bad), "--engine", "compiled") == run(capsys, str(bad))
    leak = tmp_path / "leak.trace"
    leak.write_text(BAD.rsplit("charge 2", 1)[0])
    faithful = run(capsys, str(leak), "--model", "multi-fix2", "--check")
    compiled = run(capsys, str(leak), "--model", "multi-fix2", "--check", "--engine", "compiled")
    assert faithful[0] == 1 and faithful[1] == "" and compiled == faithful
