"""Study 1's building blocks: the registration's loader, the counts, the loads rebuilt."""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.queueing.netperf import netperf_load
from memcglab.studies.s01_single_vs_multi.counts import count_traces
from memcglab.studies.s01_single_vs_multi.prereg import load_prereg, prereg_path
from memcglab.studies.s01_single_vs_multi.pricing import loads_from_table

CLIENTS = (6, 24)


@pytest.fixture(scope="module")
def counted():
    r = load_prereg()
    return r, count_traces(r, quick=True, clients=CLIENTS, keys=[("task", 1, 0)],
                           messages=5000)


def test_the_loads_rebuilt_from_the_table_are_the_counted_ones(counted):
    _, c = counted
    rebuilt = loads_from_table(c.table)
    assert set(rebuilt) == set(c.loads)
    for key, load in c.loads.items():
        other = rebuilt[key]
        assert other.shared_names == load.shared_names
        for f in ("flows", "shared", "private", "memcg_cycles"):
            assert np.allclose(getattr(other, f), getattr(load, f)), (key, f)


def test_line_transfers_equal_the_queueing_packages_netperf_glue(counted):
    r, c = counted
    for model in (r.without_model, r.with_model):
        theirs = netperf_load(list(CLIENTS), model, messages=5000, seed=0)
        ours = c.loads[("task", 1, 0, model)]
        assert theirs.shared_names == ours.shared_names
        assert np.allclose(theirs.shared, ours.shared)
        assert np.allclose(theirs.private, ours.private)


def test_the_single_stock_writes_the_shared_lines_more(counted):
    r, c = counted
    t = c.table.set_index(["model", "clients"])
    for n in CLIENTS:
        assert t.loc[(r.without_model, n), "walks_per_op"] > t.loc[(r.with_model, n),
                                                                    "walks_per_op"]
        assert 0 <= t.loc[(r.with_model, n), "hit_rate"] <= 1


def test_a_registration_with_the_start_outside_its_bounds_is_refused(tmp_path):
    text = prereg_path().read_text().replace("x0 = [12000.0, 150.0]", "x0 = [1.0, 150.0]")
    bad = tmp_path / "study01.toml"
    bad.write_text(text)
    with pytest.raises(ValueError, match="x0"):
        load_prereg(bad)
    bad.write_text(prereg_path().read_text().replace('study = "01"', 'study = "02"'))
    with pytest.raises(ValueError, match="study"):
        load_prereg(bad)
