"""The layout term's field facts, worked by hand from the gcc-checked struct catalogue.

The catalogue's lines (``memcglab layout page_counter --era E``):

* v5.11: line 0 usage min low high max parent emin min_usage; line 1 the rest
* v5.12: line 0 usage min low high max emin min_usage children_min_usage; parent on line 1
* aligned: line 0 usage alone; line 1 min ... elow; line 2 low_usage ... parent
* v6.1: line 0 usage alone; line 1 the protection and legacy fields; line 2 min low high
  max parent
"""

from __future__ import annotations

import pytest

from memcglab.layout.pclines import PAGE_COUNTER_LAYOUTS
from memcglab.pricing.layout import WALK_ACCESSES, line_of, reacquisitions, written_lines


def test_every_layout_has_its_walk_accesses():
    assert set(WALK_ACCESSES) == set(PAGE_COUNTER_LAYOUTS)
    for layout, walk in WALK_ACCESSES.items():
        for a in (*walk.charge, *walk.uncharge):  # every accessed field exists there
            line_of(layout, a.field)


@pytest.mark.parametrize(("layout", "max_line", "parent_line", "min_usage_line"), [
    ("v5.11", 0, 0, 0), ("v5.12", 0, 1, 0), ("aligned", 1, 2, 1), ("v6.1", 2, 2, 1)])
def test_where_the_walks_fields_sit(layout, max_line, parent_line, min_usage_line):
    assert line_of(layout, "usage") == 0
    assert (line_of(layout, "max"), line_of(layout, "parent"),
            line_of(layout, "min_usage")) == (max_line, parent_line, min_usage_line)


@pytest.mark.parametrize(("layout", "refetch"), [
    ("v5.11", 1.0), ("v5.12", 1.0), ("aligned", 0.0), ("v6.1", 0.0)])
def test_a_level_touches_usages_line_again_only_in_the_old_layouts(layout, refetch):
    # page_counter_try_charge reads max after the update; propagate_protected_usage
    # reads min and min_usage: on usage's line in v5.11 and v5.12 only
    for protection in (False, True):
        assert reacquisitions(layout, protection) == (refetch, refetch)


def test_protections_exchanges_land_where_the_layout_puts_them():
    assert written_lines("v6.1", True) == (1,)     # min_usage and low_usage share line 1
    assert written_lines("aligned", True) == (1, 2)  # min_usage on 1, low_usage on 2
    assert written_lines("v5.12", True) == (1,)    # min_usage on usage's line, low_usage on 1
    assert written_lines("v5.12", False) == ()


def test_the_prefetch_pair_joins_usages_partner_line():
    # v6.1 and aligned put usage alone on line 0, but line 1 is its 128-byte partner
    assert reacquisitions("aligned", False, pair=True) == (1.0, 1.0)
    # v6.1: propagate_protected_usage reads min_usage and low_usage (min and low are 0)
    assert reacquisitions("v6.1", False, pair=True) == (1.0, 1.0)
    assert written_lines("v6.1", True, pair=True) == ()
