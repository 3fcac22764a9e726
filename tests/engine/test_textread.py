"""The fast text reader against memcglab.trace.parse_text: same Trace, same TraceError."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.engine import replay_compiled
from memcglab.engine.textread import parse_text_fast, read_trace_fast, replay_text
from memcglab.replay import dumps
from memcglab.trace import TraceError, parse_text, to_text

from .tracegen import random_trace, without_nested


def outcome(fn, text, **kw):
    try:
        t = fn(text, "src", **kw)
    except TraceError as exc:
        return ("error", str(exc))
    return (t.cpus, t.ops.tobytes(), t.source)


WORDS = ["cgroup", "charge", "uncharge", "uncharge_direct", "drain_all", "cpu_dead",
         "set_max", "offline", "cpus", "nested", "max=5", "max=", "max=0", "0", "1", "2", "3",
         "00", "007", "4294967295", "4294967296", "9223372036854775807",
         "9223372036854775808", "18446744073709551615", "18446744073709551616", "8191",
         "8192", "-1", "+1", "1x", "#", "Charge", "é", "\r", "\t", ""]


def mutate(text: str, rng: np.random.Generator) -> str:
    lines = text.split("\n")
    i = int(rng.integers(0, len(lines)))
    kind = int(rng.integers(0, 6))
    fields = lines[i].split(" ")
    if kind == 0:
        fields[int(rng.integers(0, len(fields)))] = str(rng.choice(WORDS))
    elif kind == 1:
        fields.insert(int(rng.integers(0, len(fields) + 1)), str(rng.choice(WORDS)))
    elif kind == 2 and len(fields) > 1:
        del fields[int(rng.integers(0, len(fields)))]
    elif kind == 3:
        lines.insert(i, " ".join(str(w) for w in rng.choice(WORDS, size=int(rng.integers(1, 6)))))
    elif kind == 4:
        fields.append(str(rng.choice(["nested", "# note", "\r", "\r\r", "\t"])))
    else:
        lines[i], lines[-1 - i] = lines[-1 - i], lines[i]
    lines[i] = " ".join(fields) if kind != 3 else lines[i]
    return "\n".join(lines)


@pytest.mark.parametrize("number", range(60))
def test_valid_and_mutated_traces_read_identically(number):
    rng = np.random.default_rng(number)
    text = to_text(random_trace(number))
    if number % 3 == 0:  # comments, blank lines, tabs and CRLF are allowed
        text = text.replace("\n", " # c\r\n", 3).replace(" ", "\t", 5) + "\n\n"
    for single in (False, True):
        assert outcome(parse_text_fast, text, single=single) == \
            outcome(parse_text, text, single=single)
    for _ in range(15):
        bad = mutate(text, rng)
        for single in (False, True):
            assert outcome(parse_text_fast, bad, single=single) == \
                outcome(parse_text, bad, single=single), bad


@given(st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join))
@settings(max_examples=300, deadline=None)
def test_any_line_after_a_valid_prefix(line):
    text = f"memcglab-trace 1\ncpus 4\ncgroup 1 0\noffline 1\ncgroup 2 0\n{line}\n"
    assert outcome(parse_text_fast, text) == outcome(parse_text, text)


@pytest.mark.parametrize("text", [
    "", "\n", "memcglab-trace 1", "memcglab-trace 1\n", "memcglab-trace 1 \ncpus 1\n",
    "memcglab-trace 1\r\ncpus 1\r\n", "memcglab-trace 1\n# only a comment\n\n",
    "memcglab-trace 1\ncharge 0 1 1\ncpus 1\n", "memcglab-trace 1\ncpus 1\ncpus 1\n",
    "memcglab-trace 1\ncpus 1\ncgroup 1 0\ncpus 1\n", "memcglab-trace 1\ncpus 0\n",
    "memcglab-trace 1\ncpus 1\ncgroup 1 0 nested\ncharge 0 1 3", "Memcglab-trace 1\ncpus 1\n",
    "memcglab-trace 1\ncpus 1\n# caf\xe9\n", "memcglab-trace 1\ncpus 1\ncharge 0 1 1 \x85\n",
    "memcglab-trace 1\ncpus 1\n# \udcff\n", "memcglab-trace 1\ncpus 1\n\udcff\n",
])
def test_edge_cases(text):
    for single in (False, True):
        assert outcome(parse_text_fast, text, single=single) == \
            outcome(parse_text, text, single=single)


@pytest.mark.parametrize("raw", [b"memcglab-trace 1\ncpus 1\ncgroup 1 0\n# \xff\xfe\n",
                                 b"memcglab-trace 1\ncpus 9\n\xc3", b"\xffmemcglab-trace 1\n"])
def test_invalid_utf8(raw):
    assert outcome(parse_text_fast, raw) == outcome(parse_text, raw)


@pytest.mark.parametrize("number", range(12))
@pytest.mark.parametrize("block", [1, 7, 64, 1 << 20])
def test_streamed_file_replays_like_the_whole(tmp_path, number, block):
    trace = random_trace(number)
    path = tmp_path / "t.trace"
    path.write_text(to_text(trace) + "# end\n")
    model = "multi-rr" if number % 2 else "pcstock"
    want = dumps(replay_compiled(read_trace_fast(str(path)), model, 2, number))
    assert dumps(replay_text(str(path), model, 2, number, block=block)) == want
    single = without_nested(trace)
    path.write_text(to_text(single))
    assert dumps(replay_text(str(path), "single", block=block)) == \
        dumps(replay_compiled(single, "single"))


@pytest.mark.parametrize("block", [1, 5, 1 << 20])
@pytest.mark.parametrize("body", [
    b"memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 2 1 1\n# \xff\n",
    b"memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 1 1 x\n",
    b"memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 1 1 1\n\xe2\x82",
    b"memcglab-trace 1\n# nothing\n", b"memcglab-trace 1", b"", b"oops\n",
    b"memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 1 1 1 nested\n",
])
def test_streamed_errors_are_exact(tmp_path, body, block):
    path = tmp_path / "bad.trace"
    path.write_bytes(body)
    for model in ("multi", "single"):
        try:
            parse_text(body, str(path), single=model == "single")
        except TraceError as exc:
            want = str(exc)
        else:
            continue
        with pytest.raises(TraceError) as got:
            replay_text(str(path), model, block=block)
        assert str(got.value) == want


def test_missing_file_is_the_faithful_error(tmp_path):
    missing = str(tmp_path / "nope.trace")
    with pytest.raises(TraceError) as want:
        from memcglab.trace import read_trace
        read_trace(missing)
    for fn in (read_trace_fast, replay_text):
        with pytest.raises(TraceError) as got:
            fn(missing)
        assert str(got.value) == str(want.value)
