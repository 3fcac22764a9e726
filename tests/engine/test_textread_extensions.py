"""The compiled reader gives parse_text's trace, and its errors, for the trace extensions."""

from __future__ import annotations

import pytest

from memcglab.engine import parse_text_fast
from memcglab.trace import HEADER, TraceError, parse_text

GOOD = [
    ("cpus 4", "nodes 2", "cgroup 1 0", "obj_charge 3 1 264 irq nested", "obj_uncharge 0 1 9",
     "charge 0 1 3 irq", "uncharge 1 1 3 irq nested", "uncharge_direct 2 1 1 irq",
     "obj_uncharge 1 0 5 irq", "obj_charge 2 1 536870912"),
    ("cpus 6", "nodes 6", "# comment", "cgroup 1 0"),
    ("cpus 6", "nodes 1"),
]
BAD = [
    ("cpus 2", "cgroup 1 0", "obj_charge 0 0 8"),
    ("cpus 2", "cgroup 1 0", "obj_charge 0 1 0"),
    ("cpus 2", "cgroup 1 0", "obj_charge 0 1 536870913"),
    ("cpus 2", "cgroup 1 0", "obj_charge 0 1 8 nested irq"),
    ("cpus 2", "cgroup 1 0", "obj_charge 0 1 8 irq irq"),
    ("cpus 2", "cgroup 1 0", "drain_all 0 1 irq"),
    ("cpus 2", "cgroup 1 0 irq"),
    ("cpus 2", "cgroup 1 0", "set_max 1 5 irq"),
    ("cpus 2", "cgroup 1 0", "offline 1", "obj_uncharge 0 1 8"),
    ("cpus 2", "cgroup 1 0", "obj_uncharge 2 1 8"),
    ("nodes 2", "cpus 4"),
    ("cpus 4", "cgroup 1 0", "nodes 2"),
    ("cpus 4", "nodes 2", "nodes 2"),
    ("cpus 4", "nodes 3"),
    ("cpus 4", "nodes 8"),
    ("cpus 4", "nodes 0"),
    ("cpus 4", "nodes 2 2"),
]


def _text(lines: tuple[str, ...]) -> str:
    return "".join(f"{line}\n" for line in (HEADER, *lines))


@pytest.mark.parametrize("lines", GOOD)
def test_fast_reader_equals_parse_text(lines: tuple[str, ...]) -> None:
    want, got = parse_text(_text(lines), "t"), parse_text_fast(_text(lines), "t")
    assert got.cpus == want.cpus and got.nodes == want.nodes
    assert got.ops.tolist() == want.ops.tolist()


@pytest.mark.parametrize("lines", BAD)
def test_fast_reader_raises_parse_texts_error(lines: tuple[str, ...]) -> None:
    with pytest.raises(TraceError) as want:
        parse_text(_text(lines), "t")
    with pytest.raises(TraceError) as got:
        parse_text_fast(_text(lines), "t")
    assert str(got.value) == str(want.value)


def test_single_refuses_nested_on_object_operations_in_both_readers() -> None:
    text = _text(("cpus 1", "cgroup 1 0", "obj_charge 0 1 8 nested"))
    with pytest.raises(TraceError) as want:
        parse_text(text, "t", single=True)
    with pytest.raises(TraceError) as got:
        parse_text_fast(text, "t", single=True)
    assert str(got.value) == str(want.value)
