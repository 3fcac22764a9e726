"""The scenario contract's four page_counter layouts against hand-worked offsets and lines.

Each expected table below was worked out by hand from the C text in
memcglab/layout/catalogue_pc.py (x86-64: every field is 8 bytes and 8-aligned, so
a field's offset is 8 times the number of fields before it, unless an alignment
mark moves it to the next multiple of 64), not read back from the model.

Which fields the charge walk touches at each level, from mm/page_counter.c of these
kernels (the kernel notes' PC-old, torvalds/linux 063565aca373, and Shakeel Butt's
"remove unneeded atomic ops for low/min" for v6.1):

* page_counter_try_charge writes ``usage`` (atomic add-and-return), reads ``max``,
  reads ``watermark`` (and writes it on a new peak), reads ``parent`` to climb, and
  writes ``failcnt`` only when the charge fails;
* propagate_protected_usage reads ``parent`` (the root stops there), then ``min`` and
  ``min_usage``, ``low`` and ``low_usage``; when protection is set it exchanges
  ``min_usage``/``low_usage`` and adds the change to the *parent's*
  ``children_min_usage``/``children_low_usage``;
* the memcg charge path's high check (mm/memcontrol.c) reads ``usage`` and ``high``
  of every ancestor after the charge: the "false sharing between memory.usage and
  memory.high on the charge path" of Shakeel Butt's changelog.
"""

from __future__ import annotations

import pytest

from memcglab.layout import page_counter_lines
from memcglab.layout.catalogue import CatalogueError, relevant_configs, struct_layout
from memcglab.layout.pclines import PAGE_COUNTER_LAYOUTS, usage_line

# Read on every walk at every level (no protection configured, no failure).
WALK_READS = {"max", "parent", "min", "min_usage", "low", "low_usage", "watermark", "high"}


def offsets(era, config=None):
    return {f.path: f.offset for f in struct_layout("page_counter", era, config).fields}


def lines(era, placement=0, config=None):
    return [ln.fields for ln in page_counter_lines(era, placement, config)]


def test_the_contract_values_are_catalogue_eras_in_its_order():
    assert PAGE_COUNTER_LAYOUTS == ("v5.11", "v5.12", "v6.1", "aligned")
    for era in PAGE_COUNTER_LAYOUTS:
        assert struct_layout("page_counter", era).name == "struct page_counter"


def test_v5_11_parent_follows_max_on_usage_line():
    # 14 fields of 8 bytes in order: usage 0, min 8, low 16, high 24, max 32, parent 40,
    # emin 48, min_usage 56 | children_min_usage 64 ... failcnt 104; 112 bytes, align 8.
    assert offsets("v5.11") == {
        "usage": 0, "min": 8, "low": 16, "high": 24, "max": 32, "parent": 40, "emin": 48,
        "min_usage": 56, "children_min_usage": 64, "elow": 72, "low_usage": 80,
        "children_low_usage": 88, "watermark": 96, "failcnt": 104}
    lay = struct_layout("page_counter", "v5.11")
    assert (lay.size, lay.align) == (112, 8)
    assert lines("v5.11") == [
        ("usage", "min", "low", "high", "max", "parent", "emin", "min_usage"),
        ("children_min_usage", "elow", "low_usage", "children_low_usage", "watermark",
         "failcnt")]
    # On usage's line the walk reads max, parent, min, min_usage, low and high: every
    # read-mostly field of the walk but watermark and low_usage (line 1). This is the
    # usage/parent false sharing Feng Tang's perf c2c found.
    assert WALK_READS & set(usage_line("v5.11").fields) == {
        "max", "parent", "min", "min_usage", "low", "high"}


def test_v5_12_moves_only_parent_off_usage_line():
    # parent leaves slot 5; emin..failcnt move up 8 bytes, parent is last at 104.
    assert offsets("v5.12") == {
        "usage": 0, "min": 8, "low": 16, "high": 24, "max": 32, "emin": 40, "min_usage": 48,
        "children_min_usage": 56, "elow": 64, "low_usage": 72, "children_low_usage": 80,
        "watermark": 88, "failcnt": 96, "parent": 104}
    assert struct_layout("page_counter", "v5.12").size == 112
    assert lines("v5.12") == [
        ("usage", "min", "low", "high", "max", "emin", "min_usage", "children_min_usage"),
        ("elow", "low_usage", "children_low_usage", "watermark", "failcnt", "parent")]
    # The limits still share usage's line (Roman Gushchin's review asked about them), and
    # children_min_usage, which every protected child writes, joins it; parent, watermark
    # and failcnt are on line 1.
    shared = set(usage_line("v5.12").fields)
    assert WALK_READS & shared == {"max", "min", "min_usage", "low", "high"}
    assert {"parent", "watermark", "failcnt"}.isdisjoint(shared)


def test_aligned_gives_usage_a_line_and_starts_the_limits_on_the_next():
    # usage ____cacheline_aligned_in_smp: offset 0, and the struct's alignment is 64.
    # min ____cacheline_aligned_in_smp: the next multiple of 64 after 8, i.e. 64; the
    # rest follow in v5.12's order: low 72 ... elow 120 | low_usage 128 ... parent 160.
    # sizeof: 168 rounded up to the alignment, 192.
    assert offsets("aligned") == {
        "usage": 0, "min": 64, "low": 72, "high": 80, "max": 88, "emin": 96, "min_usage": 104,
        "children_min_usage": 112, "elow": 120, "low_usage": 128, "children_low_usage": 136,
        "watermark": 144, "failcnt": 152, "parent": 160}
    lay = struct_layout("page_counter", "aligned")
    assert (lay.size, lay.align) == (192, 64)
    assert [(h.offset, h.size) for h in lay.holes] == [(8, 56)]
    assert lines("aligned") == [
        ("usage",),
        ("min", "low", "high", "max", "emin", "min_usage", "children_min_usage", "elow"),
        ("low_usage", "children_low_usage", "watermark", "failcnt", "parent")]
    # Nothing shares usage's line; the limits sit with min_usage and the parent's
    # children_min_usage, parent with watermark, failcnt and low_usage.
    assert usage_line("aligned").fields == ("usage",)


def test_v6_1_groups_usage_the_written_fields_and_the_read_mostly_fields():
    # usage 0, then PC_PADDING (a zero-size member aligned to 64): emin 64 ... failcnt
    # 120, PC_PADDING again: min 128, low 136, high 144, max 152, parent 160; the struct
    # is internode aligned (64), 168 -> 192 bytes.
    got = offsets("v6.1")
    assert {k: v for k, v in got.items() if not k.startswith("_pad")} == {
        "usage": 0, "emin": 64, "min_usage": 72, "children_min_usage": 80, "elow": 88,
        "low_usage": 96, "children_low_usage": 104, "watermark": 112, "failcnt": 120,
        "min": 128, "low": 136, "high": 144, "max": 152, "parent": 160}
    assert (got["_pad1_"], got["_pad2_"]) == (64, 128)
    lay = struct_layout("page_counter", "v6.1")
    assert (lay.size, lay.align) == (192, 64)
    assert lines("v6.1") == [
        ("usage",),
        ("emin", "min_usage", "children_min_usage", "elow", "low_usage", "children_low_usage",
         "watermark", "failcnt"),
        ("min", "low", "high", "max", "parent")]
    # usage alone; the walk's read-mostly fields (max, parent, min, low, high) on line 2,
    # away from everything the walk or a child writes (line 1).
    assert usage_line("v6.1").fields == ("usage",)
    read_mostly = next(ln for ln in page_counter_lines("v6.1") if "parent" in ln.fields)
    assert set(read_mostly.fields) == {"min", "low", "high", "max", "parent"}


@pytest.mark.parametrize("era, size", [("v5.11", 112), ("v5.12", 112), ("aligned", 112),
                                       ("v6.1", 112)])
def test_without_smp_the_paddings_and_alignments_vanish(era, size):
    lay = struct_layout("page_counter", era, ["SMP=n"])
    assert (lay.size, lay.align) == (size, 8)
    # aligned is then v5.12 byte for byte; v6.1 keeps its own order: usage, emin ...
    # watermark on line 0 (56), failcnt 64, min 72 ... parent 104.
    if era == "aligned":
        assert offsets(era, ["SMP=n"]) == offsets("v5.12")
    if era == "v6.1":
        assert lines(era, config=["SMP=n"])[1] == (
            "failcnt", "min", "low", "high", "max", "parent")


def test_only_smp_changes_these_layouts():
    assert relevant_configs("page_counter", "v5.11") == []
    assert relevant_configs("page_counter", "v5.12") == []
    assert relevant_configs("page_counter", "aligned") == ["CONFIG_SMP"]
    assert relevant_configs("page_counter", "v6.1") == ["CONFIG_SMP"]


def test_placement_shifts_the_unaligned_layouts_only():
    # 16 bytes into a line (as an embedded, unaligned counter may sit): usage's line
    # holds page_counter bytes 0..47. v5.11: usage..parent (40..47); emin at
    # 48 starts line 1. v5.12: usage..emin (40..47); parent (104) stays off it.
    assert lines("v5.11", 16)[0] == ("usage", "min", "low", "high", "max", "parent")
    assert lines("v5.12", 16)[0] == ("usage", "min", "low", "high", "max", "emin")
    assert "parent" in lines("v5.12", 16)[1]
    # An address counts by its phase only; an aligned layout cannot start mid-line.
    assert lines("v5.12", 0xffff888100000010) == lines("v5.12", 16)
    assert lines("v6.1", 0xffff888100000040) == lines("v6.1")
    with pytest.raises(ValueError, match=r"placement=0x10: page_counter v6.1 is 64-byte"):
        page_counter_lines("v6.1", 16)
    with pytest.raises(ValueError, match="placement=-8"):
        page_counter_lines("v5.12", -8)


def test_line_records_are_plain_data_with_the_usage_flag():
    got = [ln.to_dict() for ln in page_counter_lines("aligned")]
    assert [d["usage"] for d in got] == [True, False, False]
    assert got[0] == {"line": 0, "fields": ["usage"], "usage": True}
    assert [d["line"] for d in got] == [0, 1, 2]


def test_every_page_counter_era_has_exactly_one_usage_line():
    from memcglab.layout.catalogue import CATALOGUE
    for era in CATALOGUE["page_counter"].eras:
        flags = [ln.usage for ln in page_counter_lines(era)]
        assert flags.count(True) == 1, era


def test_an_unknown_layout_names_the_valid_ones():
    with pytest.raises(CatalogueError, match=r"unknown era 'v5\.13' for page_counter; "
                       r"valid: v5\.10, v5\.11, v5\.12, aligned, v6\.1, v6\.16"):
        page_counter_lines("v5.13")


def test_v5_10_is_the_pre_relayout_order():
    # v5.10 (Rtoax/linux-5.10.13) has v5.11's order; the catalogue once gave it the
    # v5.12 text of torvalds/linux 0d3001e2690a.
    assert offsets("v5.10") == offsets("v5.11")
