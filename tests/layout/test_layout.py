"""Hand-worked layouts: the System V x86-64 rules, holes, paths and cache-line spans."""

from __future__ import annotations

import pytest

from memcglab.layout.abi import (
    BOOL,
    CHAR,
    INT,
    LONG,
    U8,
    U16,
    Array,
    Enum,
    Member,
    Pointer,
    Record,
)
from memcglab.layout.layout import Location, layout


def S(*members: Member, kind: str = "struct", align: int = 0, tag: str = "t") -> Record:
    return Record(kind, tag, tuple(members), align)


def test_natural_alignment_and_tail_padding():
    r = S(Member("c", CHAR), Member("l", LONG), Member("s", U16))
    assert r.offsets == (0, 8, 16)
    assert (r.size, r.align) == (24, 8)
    lay = layout(r)
    assert [(h.offset, h.size, h.before) for h in lay.holes] == [(1, 7, "l")]
    assert lay.padding == 6


def test_gnu_empty_struct_and_zero_length_array_have_size_zero():
    assert S().size == 0 and S().align == 1
    r = S(Member("a", INT), Member("z", Array(LONG, 0)), Member("b", CHAR))
    # z takes no space but its 8-byte alignment moves it, and b, to offset 8.
    assert r.offsets == (0, 8, 8) and r.size == 16


def test_flexible_array_member_adds_alignment_not_size():
    r = S(Member("n", CHAR), Member("p", Array(Pointer(), None)))
    assert r.offsets == (0, 8) and r.size == 8
    with pytest.raises(ValueError, match="must be the last member"):
        S(Member("p", Array(INT, None)), Member("n", INT))


def test_union_is_its_largest_member_rounded_to_the_strictest_alignment():
    u = S(Member("a", Array(CHAR, 13)), Member("b", INT), kind="union")
    assert u.offsets == (0, 0) and (u.size, u.align) == (16, 4)


def test_member_and_struct_alignment_requests_only_raise():
    r = S(Member("a", CHAR), Member("b", CHAR, align=64))
    assert r.offsets == (0, 64) and (r.size, r.align) == (128, 64)
    assert S(Member("a", LONG), align=2).align == 8  # a weaker request is ignored
    padded = S(Member("x", Array(CHAR, 0)), align=64)  # struct cacheline_padding
    assert (padded.size, padded.align) == (0, 64)


def test_enum_is_int_sized_unless_a_value_needs_eight_bytes():
    assert Enum("e", (("A", 0), ("B", 2**31 - 1))).size == 4
    assert Enum("e", (("A", 0), ("B", 2**32 - 1))).size == 4  # unsigned int
    assert Enum("e", (("A", -1), ("B", 2**31))).size == 8
    assert Enum("e", (("A", 2**40),)).align == 8


def test_locate_follows_paths_through_arrays_nested_and_anonymous_records():
    inner = S(Member("x", INT), Member("y", Array(LONG, 3)), tag="in")
    anon = Record("union", None, (Member("u", INT), Member("v", LONG)))
    r = S(Member("flag", BOOL), Member(None, anon), Member("arr", Array(inner, 2)))
    lay = layout(r)
    assert lay.locate("v").offset == 8
    # arr at 16; arr[1] at 16 + 32; y at +8; y[2] at +16
    assert lay.locate("arr[1].y[2]") == Location(72, 8)
    assert lay.locate("arr").size == 64
    for bad, msg in [("nope", "no member 'nope'"), ("arr[2]", "out of range"),
                     ("flag[0]", "non-array"), ("arr[0].q", "no member 'q'")]:
        with pytest.raises(KeyError, match=msg):
            lay.locate(bad)


def test_anonymous_members_are_expanded_in_the_field_list():
    anon = Record("struct", None, (Member("a", U8), Member("b", INT)))
    lay = layout(S(Member(None, anon), Member("c", U8)))
    assert [(f.path, f.offset, f.depth, f.anonymous) for f in lay.fields] == [
        ("", 0, 0, True), ("a", 0, 1, False), ("b", 4, 1, False), ("c", 8, 0, False)]
    assert [(h.offset, h.size) for h in lay.holes] == [(1, 3)]


def test_cache_lines_follow_the_placement_phase():
    lay = layout(S(Member("lock", U8), Member("slots", Array(Pointer(), 7), align=8)))
    f = lay.field("slots")
    assert list(f.lines()) == [0]
    assert list(f.lines(placement=0x20)) == [0, 1]
    assert list(f.lines(placement=0x40)) == [1]
    assert list(lay.span_lines(0, 0)) == []  # a zero-size member touches nothing
    assert lay.lines_of(["lock", "slots"], placement=0xffffffff83a26e60) == {
        0xffffffff83a26e60 // 64, 0xffffffff83a26e60 // 64 + 1}
