"""The trace extensions of docs/trace-extensions.md: obj_charge / obj_uncharge, irq, nodes.

The syntax is fixed (workload generators code against it): ``obj_charge CPU MEMCG
BYTES``, ``obj_uncharge CPU MEMCG BYTES``, an optional ``irq`` word before the
optional ``nested`` on the (un)charges and the object operations, and an optional
``nodes K`` header line after ``cpus``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.trace import (
    HEADER,
    IRQ_OPS,
    MAX_NODES,
    OBJ_BYTES_MAX,
    OP_CGROUP,
    OP_CHARGE,
    OP_DRAIN_ALL,
    OP_DTYPE,
    OP_NAMES,
    OP_OBJ_CHARGE,
    OP_OBJ_UNCHARGE,
    OP_UNCHARGE,
    PAGE_COUNTER_MAX,
    Trace,
    TraceError,
    make_ops,
    node_of,
    parse_text,
    to_text,
    validate,
)


def trace(*lines: str) -> str:
    return "".join(f"{line}\n" for line in (HEADER, *lines))


def error(text: str, **kw) -> TraceError:
    with pytest.raises(TraceError) as info:
        parse_text(text, "t", **kw)
    return info.value


def test_codes_are_appended_and_dtype_keeps_the_contract_fields_first() -> None:
    assert OP_NAMES[:8] == ("cgroup", "charge", "uncharge", "uncharge_direct", "drain_all",
                            "cpu_dead", "set_max", "offline")
    assert OP_NAMES[OP_OBJ_CHARGE] == "obj_charge" and OP_NAMES[OP_OBJ_UNCHARGE] == "obj_uncharge"
    assert OP_DTYPE.names == ("op", "nested", "cpu", "memcg", "parent", "arg", "line", "irq",
                              "kmem")
    assert [OP_NAMES[o] for o in IRQ_OPS] == ["charge", "uncharge", "uncharge_direct",
                                              "obj_charge", "obj_uncharge"]


def test_object_operations_parse_to_their_fields() -> None:
    t = parse_text(trace("cpus 2", "cgroup 7 0", "obj_charge 1 7 264",
                         "obj_uncharge 0 7 264 irq", "obj_uncharge 1 0 9 nested",
                         "charge 0 7 3 irq nested"))
    rows = t.ops.tolist()
    assert rows[1:] == [
        (OP_OBJ_CHARGE, False, 1, 7, -1, 264, 4, False, 0),
        (OP_OBJ_UNCHARGE, False, 0, 7, -1, 264, 5, True, 0),
        (OP_OBJ_UNCHARGE, True, 1, 0, -1, 9, 6, False, 0),
        (OP_CHARGE, True, 0, 7, -1, 3, 7, True, 0),
    ]
    assert t.nodes == 1


@pytest.mark.parametrize(("line", "message"), [
    ("obj_charge 0 0 8", "obj_charge: the root memcg 0 cannot be used here"),
    ("obj_charge 0 1 0", "obj_charge: BYTES 0 out of range 1..536870912"),
    (f"obj_charge 0 1 {OBJ_BYTES_MAX + 1}", "out of range 1..536870912"),
    ("obj_uncharge 2 1 8", "obj_uncharge: cpu 2 out of range 0..1"),
    ("obj_charge 0 9 8", "unknown memcg 9"),
    ("obj_charge 0 1", "obj_charge: expected 'obj_charge CPU MEMCG BYTES [irq] [nested]'"),
    ("obj_charge 0 1 8 nested irq", "'nested' must be the last field"),
    ("obj_charge 0 1 8 irq irq", "obj_charge: expected"),
    ("drain_all 0 1 irq", "drain_all: 'irq' is valid only on charge, uncharge, "
                          "uncharge_direct, obj_charge, obj_uncharge"),
    ("cgroup 5 0 irq", "cgroup: 'irq' is valid only on"),
    ("cpu_dead 1 irq nested", "cpu_dead: 'irq' is valid only on"),
    ("obj_charge 0 1 x", "obj_charge: BYTES must be a decimal integer"),
    ("frob 1", "(valid: cpus, nodes, cgroup, charge"),
])
def test_object_operation_errors_name_the_line(line: str, message: str) -> None:
    err = error(trace("cpus 2", "cgroup 1 0", line))
    assert err.line == 4 and message in err.message, err.message


def test_object_operations_on_an_offlined_memcg_are_errors() -> None:
    err = error(trace("cpus 1", "cgroup 1 0", "offline 1", "obj_uncharge 0 1 8"))
    assert err.line == 5 and "memcg 1 is offline" in err.message


def test_nested_still_rejected_for_single_on_the_new_operations() -> None:
    err = error(trace("cpus 1", "cgroup 1 0", "obj_charge 0 1 8 irq nested"), single=True)
    assert err.line == 4 and "'nested' is invalid with the single model" in err.message
    assert parse_text(trace("cpus 1", "cgroup 1 0", "obj_charge 0 1 8 irq"), single=True)


def test_nodes_line_splits_cpus_into_contiguous_blocks() -> None:
    t = parse_text(trace("cpus 6", "nodes 3", "cgroup 1 0"))
    assert t.nodes == 3 and [node_of(t, c) for c in range(6)] == [0, 0, 1, 1, 2, 2]
    assert to_text(t) == trace("cpus 6", "nodes 3", "cgroup 1 0")
    # nodes 1 is the default, written only when it is not 1
    assert to_text(parse_text(trace("cpus 6", "nodes 1"))) == trace("cpus 6")


@pytest.mark.parametrize(("lines", "line", "message"), [
    (("nodes 2", "cpus 4"), 2, "'nodes' must come after 'cpus'"),
    (("cpus 4", "cgroup 1 0", "nodes 2"), 4, "'nodes' must come after 'cpus' and before"),
    (("cpus 4", "nodes 2", "nodes 2"), 4, "'nodes' appears more than once"),
    (("cpus 4", "nodes 3"), 3, "nodes 3: must divide cpus 4"),
    (("cpus 4", "nodes 8"), 3, "nodes 8: must divide cpus 4"),
    (("cpus 4", "nodes 0"), 3, "nodes 0 out of range 1..1024"),
    (("cpus 4", "nodes"), 3, "'nodes' takes exactly one field"),
    (("cpus 4", "nodes 2 2"), 3, "'nodes' takes exactly one field"),
])
def test_nodes_line_errors(lines: tuple[str, ...], line: int, message: str) -> None:
    err = error(trace(*lines))
    assert err.line == line and message in err.message, err.message


def test_validate_checks_nodes_and_irq_as_the_text_does() -> None:
    ops = make_ops([(OP_CGROUP, -1, 1, PAGE_COUNTER_MAX, 0), (OP_OBJ_CHARGE, 0, 1, 100)])
    validate(Trace(4, ops, nodes=2))
    with pytest.raises(TraceError, match="nodes 3: must divide cpus 4"):
        validate(Trace(4, ops, nodes=3))
    bad = make_ops([(OP_CGROUP, -1, 1, PAGE_COUNTER_MAX, 0), (OP_DRAIN_ALL, 0, 1, 0)],
                   irq=[False, True])
    with pytest.raises(TraceError, match="drain_all: 'irq' is valid only on"):
        validate(Trace(1, bad))
    with pytest.raises(TraceError, match="BYTES 0 out of range"):
        validate(Trace(1, make_ops([(OP_CGROUP, -1, 1, PAGE_COUNTER_MAX, 0),
                                    (OP_OBJ_UNCHARGE, 0, 1, 0)])))
    assert MAX_NODES == 1024


def test_make_ops_irq_keyword() -> None:
    rows = [(OP_CGROUP, -1, 1, PAGE_COUNTER_MAX, 0), (OP_CHARGE, 0, 1, 5)]
    assert make_ops(rows)["irq"].tolist() == [False, False]
    assert make_ops(rows, irq=True)["irq"].tolist() == [True, True]
    assert make_ops(rows, irq=np.array([False, True]))["irq"].tolist() == [False, True]
    with pytest.raises(ValueError, match="irq: 1 flags for 2 rows"):
        make_ops(rows, irq=[True])


_OP = st.sampled_from([OP_CHARGE, OP_UNCHARGE, OP_OBJ_CHARGE, OP_OBJ_UNCHARGE])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_OP, st.integers(0, 3), st.integers(1, OBJ_BYTES_MAX),
                          st.booleans(), st.booleans()), max_size=20),
       st.sampled_from([1, 2, 4]))
def test_text_round_trip_with_extensions(rows, nodes) -> None:
    ops = make_ops([(OP_CGROUP, -1, 1, PAGE_COUNTER_MAX, 0)]
                   + [(op, cpu, 1, min(arg, 2**32 - 1), -1, nested)
                      for op, cpu, arg, nested, _irq in rows],
                   irq=[False] + [irq for *_, irq in rows])
    t = Trace(4, ops, nodes=nodes)
    validate(t)
    back = parse_text(to_text(t))
    assert back.nodes == nodes and back.cpus == 4
    strip = ["op", "nested", "cpu", "memcg", "parent", "arg", "irq"]
    assert back.ops[strip].tolist() == t.ops[strip].tolist()
