"""The C core's build: its generated constants, its cache, its lock and its errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memcglab import trace
from memcglab.cli import main
from memcglab.engine import native, state
from memcglab.resources import example_trace as _example


def example_trace() -> str:
    return str(_example())

ROOT = Path(__file__).resolve().parents[2]


def defines(text: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in
            re.finditer(r"^#define (\w+) \(?(?:INT64_C\()?(-?\d+)\)?\)?$", text, re.M)}


def test_the_header_is_generated_from_the_python_constants():
    got = defines(native.header_text())
    for name in ("G_VICTIM", "G_SIZE", "F_OBJPAGES", "S_STAMP", "P_OBJ_DRAIN_IDX",
                 "E_OBJ_UNCHARGES", "M_PCSTOCK_V4", "V_FEWEST", "OE_MULTI_V4", "OC_MEMCG",
                 "OB_NR", "RN_NEXT", "R_NEVER", "LIMIT_CLAMP"):
        assert got[name] == getattr(state, name), name
    for name in trace.OP_NAMES:
        assert got[f"OP_{name.upper()}"] == getattr(trace, f"OP_{name.upper()}")
    assert got["PAGE_COUNTER_MAX"] == trace.PAGE_COUNTER_MAX
    assert got["OPF_ARG"] == trace.OP_DTYPE.fields["arg"][1]
    # no number is written by hand in the C sources' constants
    for path in native.HERE.glob("*.[ch]"):
        assert not re.search(r"^#define [GFSPEMV]_", path.read_text(), re.M), path


def test_the_key_follows_the_sources_constants_and_compiler():
    cc = native.compiler()
    header = native.header_text()
    assert native._key(cc, header) == native._key(cc, header)
    assert native._key(cc, header + "/* changed */") != native._key(cc, header)


def _replay_in_a_new_process(cache: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "MEMCGLAB_CACHE": str(cache), **env}
    return subprocess.Popen([sys.executable, "-m", "memcglab", "replay", example_trace(),
                             "--engine", "compiled"], env=environ, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_concurrent_first_uses_build_one_library(tmp_path):
    procs = [_replay_in_a_new_process(tmp_path) for _ in range(2)]
    outs = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert outs[0][0] == outs[1][0]
    assert len(list((tmp_path / "engine").glob("memcglab-engine-*.so"))) == 1
    assert not list((tmp_path / "engine").glob(".build-*"))  # no half-built file left


@pytest.mark.parametrize(("cc", "problem"), [
    ("/nonexistent/cc", "the compiled engine needs a C compiler: CC='/nonexistent/cc' is "
                        "not found"),
    ("false", "the compiled engine's C core did not build with false: exit 1"),
])
def test_a_missing_or_failing_compiler_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys,
                                                              cc, problem):
    monkeypatch.setattr(native, "_LIB", None)
    monkeypatch.setenv("CC", cc)
    monkeypatch.setenv("MEMCGLAB_CACHE", str(tmp_path))
    assert main(["replay", example_trace(), "--engine", "compiled"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"memcglab replay: error: {problem}; use --engine faithful\n"
    with pytest.raises(native.BuildError, match="C co"):
        native.load()
    assert main(["replay", example_trace()]) == 0  # the faithful replay needs no compiler


def test_cache_off_builds_in_a_directory_of_this_process(monkeypatch):
    monkeypatch.setenv("MEMCGLAB_CACHE", "off")
    first, second = native._cache_dir(), native._cache_dir()
    assert first != second and first.name.startswith("memcglab-engine-")
    assert Path.home() not in first.parents
