"""Study 4's seed-004 price: the ceiling, the count table, the cycles formula and the space."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcglab.layout.catalogue import struct_layout
from memcglab.layout.layout import CACHELINE
from memcglab.layout.scenario import run_stream
from memcglab.pricing import closed_network
from memcglab.queueing import mva_at
from memcglab.studies.s04_layout_false_sharing.pricing import (
    COUNT_COLUMNS,
    PRICE_INPUTS,
    SHARER_GROWTH,
    CountTable,
    at_ceiling,
    ceiling,
    cycles_per_event,
    identical,
    line_utilisation,
    loss_pct,
    poisson_estimate,
    pricing_space,
    study_priors,
)
from memcglab.uncertainty import Prior, Space
from memcglab.workloads import MremapPageoutSpec, mremap_pageout
from memcglab.workloads.mremap import EVENTS_LOCAL, VMSTATS_PERCPU
from memcglab.workloads.mremap_stats import READ_RANGE

#: a stand-in for the machine profile's three priors (the study reads the real profile)
HARDWARE = {
    "c2c_transfer": Prior("c2c_transfer", "cycles", 100.0, 180.0, 320.0, "triangular", "test"),
    "contended_rmw_per_sharer": Prior("contended_rmw_per_sharer", "cycles", 0.0, 5.0, 40.0,
                                      "triangular", "test"),
    "cpu_ghz": Prior("cpu_ghz", "GHz", 2.0, 2.7, 3.8, "triangular", "test"),
}


@given(st.floats(0.0, 1e4), st.integers(2, 512), st.floats(0.1, 4.0))
def test_the_poisson_estimate_never_exceeds_the_ceiling(r, cpus, w):
    assert poisson_estimate(r, cpus, w)[0] <= ceiling(r, cpus, w)[0] + 1e-9
    assert ceiling(r, cpus, w)[0] <= w * cpus + 1e-9  # every write costs each CPU once


def test_the_ceiling_is_bound_by_reads_then_by_remote_writes():
    assert ceiling([0.0, 5.0, 175.0, 1e6], cpus=176).tolist() == [1.0, 6.0, 176.0, 176.0]
    assert poisson_estimate(0.0, 176)[0] == 1.0


@pytest.mark.parametrize("reads", [2.0, 20.0, 200.0])
def test_the_simulated_line_never_beats_the_ceiling(reads):
    spec = MremapPageoutSpec(cpus=8, duration=0.02, swap_fail_rate=4e4,
                             stat_updates_per_event=reads, seed=3)
    stream = mremap_pageout(spec)
    lay = struct_layout("mem_cgroup", "blamed")
    line = lay.locate("vmstats_percpu").offset // CACHELINE * CACHELINE
    on = run_stream(stream, "blamed").lines.loc[line]
    a = stream.accesses
    events = int((a["field"] == EVENTS_LOCAL).sum())
    line_reads = int(((a["field"] == VMSTATS_PERCPU) & (a["instance"] == 0)).sum())
    assert on["writes"] == events  # one memory_events_local[8] write per event
    bound = ceiling(line_reads / events, spec.cpus)[0] * events
    assert on["coherence_misses"] + on["upgrades"] <= bound
    # and the simulator is not far below the independent-Poisson estimate
    est = poisson_estimate(line_reads / events, spec.cpus)[0] * events
    assert on["coherence_misses"] + on["upgrades"] >= 0.6 * est


def _runs(values: dict[str, list[float]], reads=(4.0, 16.0), seeds=(0, 1)) -> pd.DataFrame:
    rows = []
    for era, per_col in values.items():
        for s in seeds:
            for i, r in enumerate(reads):
                rows.append({"seed": s, "era": era, "reads_per_event": r,
                             **{c: per_col[i] * (1 + s) for c in COUNT_COLUMNS}})
    return pd.DataFrame(rows)


def test_the_count_table_interpolates_in_log_rate_per_seed():
    t = CountTable.from_runs(_runs({"parent": [1.0, 2.0], "blamed": [10.0, 30.0]}))
    assert t.seeds == (0, 1) and t.reads.tolist() == [4.0, 16.0]
    r = np.array([4.0, 8.0, 16.0, 64.0, 8.0])
    s = np.array([0, 0, 0, 0, 1])
    got = t.at("blamed", "transfers_per_event", r, s).tolist()
    assert got == pytest.approx([10.0, 20.0, 30.0, 30.0, 40.0])  # 8 is halfway in log
    with pytest.raises(KeyError, match="no counts for era 'fixed'"):
        t.at("fixed", "transfers_per_event", r, s)
    with pytest.raises(ValueError, match="need two or more rates"):
        CountTable.from_runs(_runs({"parent": [1.0]}, reads=(4.0,)))


def test_cycles_follow_the_formula():
    runs = _runs({"parent": [1.0, 1.0], "blamed": [1.0, 1.0]}, seeds=(0,))
    runs.loc[runs["era"] == "blamed", list(COUNT_COLUMNS)] = [11.0, 1.0, 9.0, 10.0, 1.0]
    runs.loc[runs["era"] == "parent", list(COUNT_COLUMNS)] = [1.0, 1.0, 1.0, 0.0, 0.0]
    t = CountTable.from_runs(runs)
    space = Space(study_priors(HARDWARE), [SHARER_GROWTH], seeds=[0])
    d = space.at({"c2c_transfer": 100.0, "contended_rmw_per_sharer": 2.0, "lock_waiters": 3.0,
                  "lock_fraction": 0.5, "reads_per_event": 8.0,
                  "sharer_growth": ["writes", "writes and reads"]}, n=2)
    # T = 11, X = I - Wt = 8 (plus M (M / W - 1) = 90 with reads), M = 10
    assert cycles_per_event(t, "blamed", d).tolist() == pytest.approx(
        [100 * 11 + 2 * 8 + 3 * 0.5 * 100 * 10, 100 * 11 + 2 * (8 + 90) + 3 * 0.5 * 100 * 10])
    assert loss_pct(t, "parent", d, 176).tolist() == pytest.approx([0.0, 0.0], abs=1e-9)


def _table(t_blamed: float) -> CountTable:
    runs = _runs({"parent": [1.0, 1.0], "blamed": [1.0, 1.0]}, seeds=(0,))
    runs.loc[runs["era"] == "blamed", list(COUNT_COLUMNS)] = [t_blamed, 1.0, 1.0, 0.0, 1.0]
    runs.loc[runs["era"] == "parent", list(COUNT_COLUMNS)] = [1.0, 1.0, 1.0, 0.0, 1.0]
    return CountTable.from_runs(runs)


def _point(c2c: float):
    space = Space(study_priors(HARDWARE), [SHARER_GROWTH], seeds=[0])
    return space.at({"c2c_transfer": c2c, "contended_rmw_per_sharer": 0.0,
                     "lock_waiters": 0.0, "reads_per_event": 8.0})


def test_a_lightly_used_line_costs_what_its_transfers_add():
    # far from saturation the queue adds no wait: the loss is the extra transfer time
    # over the parent's period per own event (what the additive price gave)
    t, d = _table(11.0), _point(1.0)
    work = 176 * 2.7e9 / (20e6 / 60)
    extra = 10.0 * 1.0
    assert line_utilisation(t, "blamed", d)[0] < 0.01
    assert loss_pct(t, "blamed", d, 176)[0] == pytest.approx(100 * extra / (work + extra),
                                                             rel=1e-2)


def test_a_line_near_saturation_queues_and_caps_the_rate():
    t = _table(80.0)
    light, busy = _point(10.0), _point(150.0)
    assert line_utilisation(t, "blamed", busy)[0] > 1.0   # offered more than it can carry
    loss = loss_pct(t, "blamed", busy, 176)[0]
    work = 176 * 2.7e9 / (20e6 / 60)
    additive = 100 * 79 * 150 / (work + 79 * 150)
    assert loss > 2 * additive  # the queue, not the sum of transfers, sets the rate
    # the blamed network can never run faster than the line serves: X <= 1 / D
    rate = 20e6 / 60
    demand = 80 * 150 / 2.7e9
    assert (1 - loss / 100) * rate <= 1 / demand * (1 + 1e-9)
    assert loss_pct(t, "blamed", light, 176)[0] < loss


def test_the_price_is_the_cores_network_with_the_own_work_as_its_cpu_delay():
    """The core's network of one line with the own work as its CPU delay is the solver's
    one-queue network with that work as think time, to the bit (issue 22: the study no
    longer runs a network of its own)."""
    line, cpu = np.array([1e-7, 5e-7, 2e-6]), np.array([2e-6, 1e-6, 1e-6])
    got = closed_network(176, cpu, 0.0, line[:, None], ("line",)).ops_per_s
    assert got.tolist() == mva_at(line[:, None], cpu, np.full(3, 176)).throughput.tolist()
    t, d = _table(80.0), _point(150.0)
    line_p, line_e = (cycles_per_event(t, e, d) / 2.7e9 for e in ("parent", "blamed"))
    period = 176 / (20e6 / 60)
    z = np.maximum(period - line_p, 1e-12)
    for _ in range(6):
        z = np.maximum(z + period - 176 / mva_at(line_p[:, None], z, [176]).throughput, 1e-12)
    x = [mva_at(ln[:, None], z, [176]).throughput for ln in (line_p, line_e)]
    assert loss_pct(t, "blamed", d, 176).tolist() == pytest.approx(
        (100.0 * (1.0 - x[1] / x[0])).tolist(), rel=1e-12)


def test_identical_eras_are_recognised():
    t = _table(1.0)
    assert identical(t, "blamed", "parent") and not identical(_table(2.0), "blamed", "parent")


def test_the_space_holds_every_input_the_price_reads():
    space = pricing_space(HARDWARE, seeds=[0, 1])
    assert set(PRICE_INPUTS) <= set(space.names) and "sharer_growth" in space.names
    r = space["reads_per_event"]
    assert (r.low, r.typical, r.high) == tuple(READ_RANGE[:3])
    assert space.sources == {"parameters", "alternatives", "seeds"}
    with pytest.raises(KeyError, match="hardware priors lack"):
        study_priors({k: v for k, v in HARDWARE.items() if k != "cpu_ghz"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        space["lock_waiters"].high = 100.0  # type: ignore[misc]


def test_at_ceiling_raises_only_the_blamed_read_misses_to_the_bound():
    runs = _runs({"parent": [1.0, 1.0], "blamed": [5.0, 9.0]}, reads=(4.0, 400.0), seeds=(0,))
    out = at_ceiling(runs, cpus=176).set_index(["era", "reads_per_event"])
    base = runs.set_index(["era", "reads_per_event"])
    assert out.loc[("blamed", 4.0), "vmstats_misses_per_event"] == 5.0  # already above 4
    assert out.loc[("blamed", 400.0), "vmstats_misses_per_event"] == 175.0  # N - 1
    added = 175.0 - 9.0
    for col in ("transfers_per_event", "invalidations_per_event"):
        assert out.loc[("blamed", 400.0), col] == base.loc[("blamed", 400.0), col] + added
    assert out.loc[("blamed", 400.0), "write_transfers_per_event"] == 9.0
    assert out.loc["parent"].equals(base.loc["parent"])
