"""Per-CPU placement: the seed 000 reviewer's observation and the slot-count table."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.layout.catalogue import CatalogueError
from memcglab.layout.percpu import lookup_lines, slot_scan_lines, slot_table
from memcglab.published import load

# The two addresses of Vlastimil Babka's review (seed 000, objdump -t vmlinux); the test
# reads them, the layout code under test does not.
_PLACED = load("seed000_percpu_placement").frame.set_index("definition")["address"]
DEFINE_PER_CPU_ADDR = int(_PLACED["DEFINE_PER_CPU"], 16)
DEFINE_PER_CPU_ALIGNED_ADDR = int(_PLACED["DEFINE_PER_CPU_ALIGNED"], 16)


def test_reviewer_observation_two_lines_unaligned_one_line_aligned():
    lines = lookup_lines("2025-04", placement=DEFINE_PER_CPU_ADDR)
    line0 = DEFINE_PER_CPU_ADDR & ~63
    assert lines == {"stock_lock": [line0], "nr_pages": [line0],
                     "cached": [line0, line0 + 64]}
    assert slot_scan_lines(7, "2025-04", placement=DEFINE_PER_CPU_ADDR) == 2
    aligned = lookup_lines("2025-04", placement=DEFINE_PER_CPU_ALIGNED_ADDR)
    assert {a for v in aligned.values() for a in v} == {DEFINE_PER_CPU_ALIGNED_ADDR}
    assert slot_scan_lines(7, "2025-04", placement=DEFINE_PER_CPU_ALIGNED_ADDR) == 1


def test_unaligned_default_is_the_worst_phase_define_per_cpu_allows():
    assert slot_scan_lines(7, "v6.16", aligned=False) == 2
    worst = lookup_lines("v6.16", aligned=False)
    assert sum(len(v) > 1 for v in worst.values()) >= 1
    assert slot_scan_lines(1, "v6.16", aligned=False) == 2  # 16 bytes at phase 56


def test_single_stock_eras_scan_their_one_slot():
    assert slot_scan_lines(1, "2026") == 1
    with pytest.raises(CatalogueError, match="single cached memcg"):
        slot_scan_lines(7, "v6.14")
    with pytest.raises(ValueError, match="slots=0: must be between 1 and 255"):
        slot_scan_lines(0)
    with pytest.raises(CatalogueError, match="valid: v6.14"):
        lookup_lines("v9")


def test_table_columns_and_the_seven_slot_design_point():
    df = slot_table("v6.16")
    assert list(df["slots"]) == list(range(1, 33))
    row7 = df[df["slots"] == 7].iloc[0]
    assert (row7["lookup_bytes"], row7["lines_aligned"], row7["slots_in_line0"]) == (64, 1, 7)
    # Seven is the largest count whose full scan fits one aligned line.
    assert df[df["lines_aligned"] == 1]["slots"].max() == 7
    assert (df["lines_unaligned_worst"] >= df["lines_aligned"]).all()
    assert (df["lines_unaligned_mean"] <= df["lines_unaligned_worst"]).all()


@settings(max_examples=15, deadline=None)
@given(slots=st.integers(1, 32), era=st.sampled_from(["2025-04", "v6.16", "2026"]))
def test_aligned_scan_covers_exactly_the_lookup_bytes(slots, era):
    row = slot_table(era, [slots]).iloc[0]
    assert row["lines_aligned"] == -(-row["lookup_bytes"] // 64)
    assert row["lines_aligned"] == slot_scan_lines(slots, era)
    # The lock and nr_pages[] take 1 + slots bytes, rounded up to cached[]'s 8.
    head = -(-(1 + slots) // 8) * 8
    assert row["lookup_bytes"] == head + 8 * slots
