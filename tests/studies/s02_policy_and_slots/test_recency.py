"""Where LRU's recency state lives in memcg_stock_pcp, and the lines it costs."""

from __future__ import annotations

import pytest

from memcglab.layout import slot_scan_lines, struct_layout
from memcglab.studies.s02_policy_and_slots import recency as pl


@pytest.mark.parametrize("slots", range(1, 17))
def test_without_recency_state_the_layout_is_v6_16s(slots):
    ours = pl.recency_layout("none (random)", slots)
    theirs = struct_layout("memcg_stock_pcp", "v6.16", defines={"NR_MEMCG_STOCK": slots})
    assert ours.size == theirs.size
    assert pl.recency_lines("none (random)", slots).scan_lines == slot_scan_lines(slots)


def test_seven_slots_fill_the_first_line_so_recency_needs_a_second():
    lay = pl.recency_layout("none (random)", 7)
    cached = lay.locate("cached[6]")
    assert cached.offset + cached.size == 64
    after, beside = pl.recency_lines("after cached[]", 7), pl.recency_lines("beside nr_pages[]", 7)
    assert (after.scan_lines, after.extra_lines_per_write) == (1, 1)
    assert (beside.scan_lines, beside.extra_lines_per_write) == (2, 0)


def test_few_slots_leave_room_in_the_first_line():
    r = pl.recency_lines("after cached[]", 4)
    assert (r.scan_lines, r.extra_lines_per_write) == (1, 0)


def test_table_and_errors():
    t = pl.recency_table(slots=(7, 8))
    assert len(t) == 6 and set(t["layout"]) == set(pl.LAYOUTS)
    assert (t["lookup_bytes"] <= t["sizeof"]).all()
    with pytest.raises(ValueError, match="layout='order array': unknown; valid: none"):
        pl.stock_text("order array")
    with pytest.raises(ValueError, match="slots=0: must be between 1 and 255"):
        pl.stock_text("after cached[]", 0)
