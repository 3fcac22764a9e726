"""The replay contract's bound on the machine's stock slots (under ``--slots``).

For a ``multi*`` model a trace whose ``cpus N`` line makes ``N x slots`` exceed 2^24
is refused at that line, exit 2, with one message line, before anything is
simulated or printed; both engines, the CLI and the Python API.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from memcglab.engine import read_trace_fast, replay_compiled, replay_text
from memcglab.models import build_model
from memcglab.replay import replay
from memcglab.trace import TraceError, parse_text

TEXT = "memcglab-trace 1\n# a comment\n\ncpus 64\ncgroup 1 0\ncharge 0 1 1\nfrob\n"
MESSAGE = ("t.trace:4: cpus 64 with --slots 16777216: 64×16777216 stock slots exceed 2^24 "
           "(cpus x slots)")


@pytest.fixture
def trace_file(tmp_path):
    path = tmp_path / "t.trace"
    path.write_text(TEXT)
    return path


# Runs `memcglab replay ARGS` and writes the process's own peak resident KiB (VmHWM of
# its address space: ru_maxrss would include the forking pytest's pages) to a file.
_WRAPPER = (
    "import re, sys\n"
    "from memcglab.cli import main\n"
    "try:\n"
    "    rc = main(sys.argv[2:])\n"
    "finally:\n"
    "    hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
    "    open(sys.argv[1], 'w').write(hwm)\n"
    "sys.exit(rc)\n"
)


@pytest.mark.parametrize("engine", ["faithful", "compiled"])
@pytest.mark.parametrize("model", ["multi", "multi-rr", "multi-lru", "multi-fix2"])
def test_cli_refuses_at_the_cpus_line(trace_file, engine, model) -> None:
    peak = trace_file.parent / "peak"
    proc = subprocess.run(
        [sys.executable, "-c", _WRAPPER, str(peak), "replay", "t.trace", "--model", model,
         "--slots", "16777216", "--engine", engine],
        cwd=trace_file.parent, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == MESSAGE + "\n"
    # Refused before any stock is allocated: 2^30 slots would take gigabytes.
    assert int(peak.read_text()) < 400 * 1024


def test_cli_accepts_the_bound_itself_and_models_without_slots(trace_file) -> None:
    text = "memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 0 1 1\n"
    trace_file.write_text(text)
    for args in (["--slots", "8388608"], ["--model", "pcstock", "--slots", "16777216"],
                 ["--model", "single", "--slots", "16777216"]):
        proc = subprocess.run([sys.executable, "-m", "memcglab", "replay", str(trace_file),
                               *args], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.endswith("}\n")


def test_python_api_raises_for_both_engines() -> None:
    t = parse_text(TEXT.replace("frob\n", ""), "t.trace")
    for fn in (replay, replay_compiled):
        with pytest.raises(TraceError) as info:
            fn(t, "multi", 2**24)
        assert str(info.value) == MESSAGE
        fn(t, "pcstock", 2**24)  # no slots: no bound
    with pytest.raises(ValueError, match="nr_cpus=64 with slots=16777216"):
        build_model("multi-lru", 64, 2**24)


def test_readers_refuse_before_later_errors(trace_file) -> None:
    for read in (lambda p: read_trace_fast(p, slots=2**24),
                 lambda p: __import__("memcglab.trace").trace.read_trace(p, slots=2**24)):
        with pytest.raises(TraceError) as info:
            read(str(trace_file))
        assert str(info.value).endswith(MESSAGE.split(":", 1)[1])
    with pytest.raises(TraceError) as info:
        replay_text(str(trace_file), "multi", 2**24)
    assert info.value.line == 4 and "64×16777216 stock slots exceed 2^24" in str(info.value)


def test_errors_before_the_cpus_line_still_come_first(trace_file) -> None:
    trace_file.write_text("memcglab-trace 1\nfrob\ncpus 64\n")
    with pytest.raises(TraceError) as info:
        replay_text(str(trace_file), "multi", 2**24)
    assert info.value.line == 2 and "unknown word" in info.value.message


def test_docs_copy_of_the_contract_equals_the_shared_one_apart_from_its_note() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    shared = root.parent / "shared" / "spec" / "replay-contract.md"
    if not shared.exists():
        pytest.skip(f"{shared} is not beside this checkout")
    doc = (root / "docs" / "replay-contract.md").read_text()
    start = doc.index("```{note}")
    end = doc.index("```\n", start + 9) + 4
    assert doc[:start].rstrip("\n") + "\n\n" + doc[end:].lstrip("\n") == shared.read_text()


def _many_cgroups(cpus: int, n: int, nodes: int = 1) -> str:
    head = f"memcglab-trace 1\ncpus {cpus}\n" + (f"nodes {nodes}\n" if nodes > 1 else "")
    return head + "".join(f"cgroup {i} 0\n" for i in range(1, n + 1)) + "charge 0 1 1\n"


@pytest.mark.parametrize("model", ["pcstock", "pcstock-v4"])
def test_per_cpu_page_counter_stocks_are_bounded(tmp_path, model) -> None:
    # 2048 memcgs besides the root on 8192 CPUs: 2049 x 8192 stocks > 2^24, refused at
    # the line of the 2048th cgroup (line 2 + 2048), before anything is allocated.
    text = _many_cgroups(8192, 2048)
    want = ("t.trace:2050: cgroup 2048: 2049 memcgs on 8192 CPUs: 2049×8192 per-CPU "
            "page_counter stocks exceed 2^24 (memcgs x cpus)")
    path = tmp_path / "t.trace"
    path.write_text(text)
    for engine in ("faithful", "compiled"):
        proc = subprocess.run([sys.executable, "-m", "memcglab", "replay", "t.trace",
                               "--model", model, "--engine", engine], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", want + "\n")
    for fn in (replay, replay_compiled):
        with pytest.raises(TraceError, match="2049×8192 per-CPU page_counter stocks"):
            fn(parse_text(text, "t.trace", per_memcg=None), model)
    assert replay_text(str(path), "multi") is not None  # the memcg-stock models: no bound
    fewer = parse_text(text.replace("cgroup 2048 0\n", ""), "t.trace")  # 2048: allowed
    assert replay_compiled(fewer, model)["ops"] == 2048


def test_per_node_objcgs_are_bounded() -> None:
    text = _many_cgroups(1024, 16384, nodes=1024)  # 16385 memcgs x 1024 nodes > 2^24
    for fn in (replay, replay_compiled):
        with pytest.raises(TraceError) as info:
            fn(parse_text(text, "t.trace"), "multi-rr")
        assert info.value.line == 3 + 16384
        assert info.value.message.endswith("16385×1024 per-node objcgs exceed 2^24 "
                                           "(memcgs x nodes)")
    with pytest.raises(TraceError, match="16385×1024 per-node objcgs"):
        read_trace_fast_text(text)


def read_trace_fast_text(text: str):
    from memcglab.engine import parse_text_fast
    return parse_text_fast(text, "t.trace", per_memcg="nodes")
