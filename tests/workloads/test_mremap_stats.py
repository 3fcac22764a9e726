"""mremap_stats: vmstats_percpu loads per swap-fail event along stress-ng mremap's kernel paths."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.workloads.mremap_stats import (
    PATHS,
    READ_RANGE,
    StressorLoop,
    iteration_counts,
    loads_per_event,
    lock_fraction,
    path_table,
    read_range,
)

PAGEOUT_ONLY = StressorLoop(pageout_probability=1.0, other_probability=0.0, tables_per_step=1.0)


def test_the_paths_are_the_docstring_table():
    assert [(p.path, p.unit, p.loads, p.under_lru_lock) for p in PATHS] == [
        ("fault: PGFAULT", "faults", 1, False),
        ("fault: NR_ANON_MAPPED", "faults", 1, False),
        ("fault: LRU add", "faults", 1, True),
        ("zero-page fault: PGFAULT", "zero_faults", 1, False),
        ("pageout: isolate", "swap_fail_events", 1, True),
        ("pageout: PGACTIVATE", "swap_fail_events", 1, False),
        ("pageout: putback", "swap_fail_events", 1, True),
        ("cold: deactivate", "deactivations", 3, True),
        ("unmap: NR_ANON_MAPPED", "faults", 1, False),
        ("free: LRU del", "faults", 1, True),
        ("page tables: MEMCG_KMEM, NR_PAGETABLE", "page_tables", 4, False),
    ]
    # a failed pageout's own updates are the old model's 3 loads per event
    assert sum(p.loads for p in PATHS if p.unit == "swap_fail_events") == 3


def test_sizes_follow_the_stressors_halving_and_doubling():
    down, up = StressorLoop().sizes()  # 256 MiB / 176 = 1525201 bytes -> 372 pages
    assert down == [372, 186, 93, 47, 24, 12, 6, 3, 2]
    assert up == [2, 3, 6, 12, 24, 47, 93, 186, 372]
    down, up = StressorLoop(mremap_bytes=8 * 4096, instances=1).sizes()
    assert down == [8, 4, 2] and up == [2, 4]  # 32 KiB is not < 32 KiB: the loop stops


def test_pageout_at_every_step_counts_exactly():
    c = iteration_counts(PAGEOUT_ONLY)
    down, up = PAGEOUT_ONLY.sizes()
    events = sum(down) + 2 * len(up)  # the doubling phase keeps the last 2 pages only
    assert c["swap_fail_events"] == pytest.approx(events)
    assert c["faults"] == 372 and c["zero_faults"] == 0 and c["deactivations"] == 0
    assert c["steps"] == 17 and c["page_tables"] == 17
    loads = 3 * events + 5 * 372 + 4 * 17
    assert loads_per_event(PAGEOUT_ONLY) == pytest.approx(loads / events)
    under = 2 * events + 2 * 372
    assert lock_fraction(PAGEOUT_ONLY) == pytest.approx(under / loads)


def _monte_carlo(loop: StressorLoop, iterations: int, seed: int) -> dict[str, float]:
    """A direct per-iteration simulation of the advice draws, to check the exact sum."""
    rng = np.random.default_rng(seed)
    p, q = loop.pageout_probability, loop.other_probability
    probs = [p, q, q, q, 1 - p - 3 * q]  # pageout, cold, populate read, populate write, other
    down, up = loop.sizes()
    tot = dict.fromkeys(("swap_fail_events", "faults", "zero_faults", "deactivations"), 0.0)
    draws = rng.choice(5, size=(iterations, len(down) + len(up)), p=probs).tolist()
    for row in draws:
        n, active, zero = down[0], 0, 0
        tot["faults"] += n
        advices = iter(row)
        for phase, sizes in (("down", down), ("up", up)):
            for i, size in enumerate(sizes):
                if phase == "down" and i:
                    n, active, zero = size, min(active, size), 0
                advice = next(advices)
                if advice == 0:
                    tot["swap_fail_events"] += n
                    active = n
                elif advice == 1:
                    tot["deactivations"] += active
                    active = 0
                elif advice == 2:
                    tot["zero_faults"] += max(size - max(n, zero), 0)
                    zero = max(zero, size)
                elif advice == 3:
                    tot["faults"] += max(size - n, 0)
                    n, zero = max(n, size), max(zero, size)
    return {k: v / iterations for k, v in tot.items()}


def test_the_exact_expectation_matches_a_direct_simulation():
    loop = StressorLoop(pageout_probability=0.2, other_probability=0.2)
    exact = iteration_counts(loop)
    mc = _monte_carlo(loop, 4000, seed=1)
    for key, value in mc.items():
        assert value == pytest.approx(exact[key], rel=0.06, abs=0.5), key


def test_the_range_orders_and_names_its_loops():
    assert READ_RANGE.low < READ_RANGE.typical < READ_RANGE.high
    assert [round(x, 1) for x in READ_RANGE[:3]] == [5.5, 48.1, 62.0]
    assert READ_RANGE.loops[1] == StressorLoop()
    assert all(0 < lock_fraction(loop) < 1 for loop in READ_RANGE.loops)
    # the rate per event does not depend on the region size: pages and events scale together
    assert read_range(88).typical == pytest.approx(READ_RANGE.typical, rel=0.05)


def test_the_table_sums_to_the_rate():
    rows = path_table()
    assert sum(r["loads_per_event"] for r in rows) == pytest.approx(loads_per_event(
        StressorLoop()))
    assert {r["path"] for r in rows} == {p.path for p in PATHS}


@pytest.mark.parametrize("changes, message", [
    ({"instances": 0}, "instances=0: must be an integer between 1 and 8192"),
    ({"pageout_probability": 0.0}, "pageout_probability=0.0: must be a number in (0.0, 1.0]"),
    ({"pageout_probability": 0.5, "other_probability": 0.2},
     "pageout_probability=0.5 and other_probability=0.2: the four advices' probabilities"),
    ({"tables_per_step": -1.0}, "tables_per_step=-1.0: must be a number in [0.0, 64.0]"),
])
def test_invalid_loops_name_the_field(changes, message):
    with pytest.raises(ValueError) as info:
        StressorLoop(**changes)
    assert str(info.value).startswith(message)
