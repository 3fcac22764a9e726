"""The layout term in the scenario model: a no-op on v6.1, re-fetches on the old layouts."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memcglab.scenario.model import ScenarioModel
from memcglab.scenario.spec import load_scenario
from memcglab.scenario.terms import DEFAULT_TERMS, Terms

from .test_model_core import _values

#: the chosen model without the layout term (the default has it since the layout addendum)
OFF = dataclasses.replace(DEFAULT_TERMS, page_counter_fields=False, prefetch_pair=False)
ON = dataclasses.replace(OFF, page_counter_fields=True)
PAIR = dataclasses.replace(ON, prefetch_pair=True)

#: 24 instances in one memcg on 48 CPUs: the shared usage lines are the bottleneck
TEXT = """schema = 1
name = "netperf TCP_STREAM, one memcg"
[machine]
cpus = 48
sockets = 2
threads_per_core = 2
family = "cascade-lake"
[workload]
family = "netperf"
test = "TCP_STREAM"
instances = 24
[cgroups]
protection = {protection}
[base]
model = "single"
batch = 1
page_counter_layout = "{base}"
[new]
model = "single"
batch = 1
page_counter_layout = "{new}"
"""


def model(tmp_path, terms: Terms, base: str, new: str, protection: bool = False):
    f = tmp_path / f"{base}-{new}-{protection}.toml"
    f.write_text(TEXT.format(base=base, new=new, protection=str(protection).lower()))
    return ScenarioModel(load_scenario(f), terms=terms)


@pytest.mark.parametrize("protection", [False, True])
def test_on_the_v6_1_layout_the_term_changes_nothing(tmp_path, protection):
    off = model(tmp_path, OFF, "v6.1", "v6.1", protection)
    on = model(tmp_path, ON, "v6.1", "v6.1", protection)
    v, which = _values(off), np.zeros(4, dtype=np.int64)
    a, b = off.evaluate(v, which), on.evaluate(v, which)
    assert a.base_rate.tobytes() == b.base_rate.tobytes()
    assert a.base_bottleneck == b.base_bottleneck


def test_without_the_term_the_layout_key_changes_nothing(tmp_path):
    m = model(tmp_path, OFF, "v5.12", "v6.1")
    priced = m.evaluate(_values(m), np.zeros(4, dtype=np.int64))
    assert priced.change.tolist() == [0.0] * 4


def test_the_old_layouts_refetch_and_run_slower(tmp_path):
    m = model(tmp_path, ON, "v5.12", "aligned")
    v, which = _values(m), np.zeros(4, dtype=np.int64)
    priced = m.evaluate(v, which)
    assert np.all(priced.new_rate > priced.base_rate)  # aligned: no re-fetch of usage's line
    # the re-fetches are bounded by the levels that could make them, and the base kernel
    # at the fixed point is slower than with none but no slower than with every one
    c = m.base[0]
    chances = m._refetches(c, m.scenario.base, c.names)
    assert np.allclose(chances, c.writes) and chances.sum() > 0  # one chance per level
    v51 = model(tmp_path, ON, "v5.11", "v5.12")
    assert v51.evaluate(v, which).change.tolist() == [0.0] * 4  # both re-fetch once


def test_the_prefetch_pair_leaves_aligned_only_the_walkers_gain(tmp_path):
    # with the pair, aligned's usage line (4) drags its partner (5, min ... elow) along as
    # v5.12's line 3 holds max: one re-fetch per level in both; what aligned still saves
    # is the socket-pressure walks' css.parent reads (line 3: usage's pair in v5.12 only)
    m = model(tmp_path, PAIR, "v5.12", "aligned")
    b, n = m.base[0], m.new[0]
    assert np.allclose(m._refetches(b, m.scenario.base, b.names),
                       m._refetches(n, m.scenario.new, n.names))
    assert not m._walker_transfers(n, m.scenario.new, n.names).any()
    assert m._walker_transfers(b, m.scenario.base, b.names).sum() > 0
    priced = m.evaluate(_values(m), np.zeros(4, dtype=np.int64))
    assert np.all(priced.change > 0)


def test_the_socket_pressure_walks_read_usages_line_in_the_v5_layouts(tmp_path):
    m = model(tmp_path, ON, "v5.12", "aligned")
    b = m.base[0]
    reads = m._walker_transfers(b, m.scenario.base, b.names)
    # every level of every freed skb's walk, bounded by the reads made (one per level
    # per __sk_mem_reduce_allocated, one such call per socket uncharge) and by nothing
    # when the line is not written
    assert np.all(reads > 0) and np.all(reads <= b.per_op["uncharges"] + 1e-12)
    off = model(tmp_path, OFF, "v5.12", "aligned")
    assert not off._walker_transfers(off.base[0], off.scenario.base, off.base[0].names).any()


def test_protection_on_the_old_layout_exchanges_on_one_line_off_usages(tmp_path):
    m = model(tmp_path, ON, "v5.12", "v6.1", protection=True)
    c = m.base[0]
    stations = [name for name, _, _ in m._lines(c, m.scenario.base)]
    # memory at byte 208: min_usage (256) and low_usage (280) share mem_cgroup's line 4
    assert stations.count("protection:system.slice") == 1
    assert [n for n in stations if n.startswith("protection:")] == ["protection:system.slice"]
    aligned = model(tmp_path, ON, "aligned", "v6.1", protection=True)
    names = [n for n, _, _ in aligned._lines(aligned.base[0], aligned.scenario.base)]
    assert [n for n in names if n.startswith("protection:")] == ["protection:system.slice",
                                                                   "protection:system.slice#2"]


def test_prefetch_pair_needs_the_layout_term():
    with pytest.raises(ValueError, match="prefetch_pair is an alternative of "
                                         "page_counter_fields"):
        Terms(prefetch_pair=True)
