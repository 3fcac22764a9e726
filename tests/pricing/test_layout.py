"""The layout term's field facts, worked by hand from the gcc-checked struct catalogue.

The catalogue's lines (``memcglab layout page_counter --era E``), placed where struct
mem_cgroup embeds ``memory`` (byte 208 for v5.11/v5.12, 256 for the aligned layouts) and
numbered as mem_cgroup's lines (line 3 is bytes 192-255 and holds ``css.parent``):

* v5.11 @208: line 3 css.parent id usage min low high max parent; line 4 emin min_usage ...
* v5.12 @208: line 3 css.parent id usage min low high max emin; line 4 min_usage ...
  watermark failcnt parent
* aligned @256: line 4 usage alone; line 5 min ... elow; line 6 low_usage ... parent
* v6.1 @256: line 4 usage alone; line 5 the protection and legacy fields; line 6 min low
  high max parent
"""

from __future__ import annotations

import pytest

from memcglab.layout.pclines import PAGE_COUNTER_LAYOUTS
from memcglab.pricing.layout import (
    WALK_ACCESSES,
    line_of,
    parent_on_usage_line,
    reacquisitions,
    written_lines,
)


def test_every_layout_has_its_walk_accesses():
    assert set(WALK_ACCESSES) == set(PAGE_COUNTER_LAYOUTS)
    for layout, walk in WALK_ACCESSES.items():
        for a in (*walk.charge, *walk.uncharge):  # every accessed field exists there
            line_of(layout, a.field)


@pytest.mark.parametrize(("layout", "usage_line", "max_line", "parent_line", "min_usage_line"), [
    ("v5.11", 3, 3, 3, 4), ("v5.12", 3, 3, 4, 4), ("aligned", 4, 5, 6, 5), ("v6.1", 4, 6, 6, 5)])
def test_where_the_walks_fields_sit(layout, usage_line, max_line, parent_line, min_usage_line):
    assert line_of(layout, "usage") == usage_line
    assert (line_of(layout, "max"), line_of(layout, "parent"),
            line_of(layout, "min_usage")) == (max_line, parent_line, min_usage_line)
    assert line_of(layout, "css.parent") == 3


@pytest.mark.parametrize(("layout", "memory_parent", "css_parent"), [
    ("v5.11", True, True), ("v5.12", False, True), ("aligned", False, False),
    ("v6.1", False, False)])
def test_which_parent_mem_cgroup_reads_fall_on_usages_line(layout, memory_parent, css_parent):
    # v5.11's parent_mem_cgroup reads memory.parent (byte 248, usage's line); v5.19's
    # reads css.parent (192): on usage's line while memory starts at 208
    assert parent_on_usage_line(layout, "memory.parent") is memory_parent
    assert parent_on_usage_line(layout, "css.parent") is css_parent


@pytest.mark.parametrize(("layout", "refetch"), [
    ("v5.11", 1.0), ("v5.12", 1.0), ("aligned", 0.0), ("v6.1", 0.0)])
def test_a_level_touches_usages_line_again_only_in_the_old_layouts(layout, refetch):
    # page_counter_try_charge reads max after the update; propagate_protected_usage
    # reads min and min_usage: on usage's line in v5.11 and v5.12 only
    for protection in (False, True):
        assert reacquisitions(layout, protection) == (refetch, refetch)


def test_protections_exchanges_land_where_the_layout_puts_them():
    assert written_lines("v6.1", True) == (5,)     # min_usage and low_usage share line 5
    assert written_lines("aligned", True) == (5, 6)  # min_usage on 5, low_usage on 6
    # at byte 208, min_usage (256) and low_usage (280) are off usage's line 3
    assert written_lines("v5.12", True) == (4,)
    assert written_lines("v5.11", True) == (4,)
    assert written_lines("v5.12", False) == ()


def test_the_prefetch_pair_joins_usages_partner_line():
    # v6.1 and aligned put usage alone on line 4, but line 5 is its 128-byte partner
    assert reacquisitions("aligned", False, pair=True) == (1.0, 1.0)
    # v6.1: propagate_protected_usage reads min_usage and low_usage (min and low are 0)
    assert reacquisitions("v6.1", False, pair=True) == (1.0, 1.0)
    assert written_lines("v6.1", True, pair=True) == ()
