"""The MESI simulator: hand-worked sequences with exact counts, and a reference model."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.layout.coherence import COUNTERS, simulate, split_lines

R, W = False, True


def run(seq, names=("a", "b", "c")):
    """seq: (cpu, addr, write, field) tuples, 8-byte accesses."""
    cpu, addr, write, field = zip(*seq, strict=True)
    return simulate(cpu, addr, 8, write, field, list(names))


def test_ping_pong_of_two_fields_on_one_line():
    # cpu0 writes a@0, cpu1 reads b@8, three times over.
    r = run([(0, 0, W, 0), (1, 8, R, 1)] * 3)
    t = r.totals()
    # write 1: cold miss. read 1: cold miss, HITM. write 2: S->M upgrade, invalidates
    # cpu1. read 2: coherence miss, HITM. Same for the third pair.
    assert t == {"reads": 3, "writes": 3, "read_misses": 3, "write_misses": 1,
                 "upgrades": 2, "hitm": 3, "clean_forwards": 0, "invalidations": 2,
                 "coherence_misses": 2}
    assert r.sharing[["writer", "victim", "op", "misses", "hitm", "kind"]].to_dict(
        "records") == [{"writer": "a", "victim": "b", "op": "read", "misses": 3, "hitm": 3,
                        "kind": "false"}]


def test_separate_lines_do_not_interfere():
    r = run([(0, 0, W, 0), (1, 64, R, 1)] * 3)
    t = r.totals()
    assert (t["hitm"], t["invalidations"], t["coherence_misses"]) == (0, 0, 0)
    assert (t["read_misses"], t["write_misses"]) == (1, 1)  # cold only
    assert r.sharing.empty


def test_true_sharing_of_one_counter():
    # Two CPUs increment the same counter: read-modify-write each time.
    seq = [(0, 0, R, 0), (0, 0, W, 0), (1, 0, R, 0), (1, 0, W, 0)] * 2
    r = run(seq)
    t = r.totals()
    # cpu0 R cold (E), W silent E->M. cpu1 R: HITM (cold, charged to a), S; W upgrade,
    # invalidates cpu0. cpu0 R: coherence miss + HITM; W upgrade invalidates cpu1.
    # cpu1 R: coherence miss + HITM; W upgrade invalidates cpu0.
    assert (t["read_misses"], t["hitm"], t["upgrades"], t["invalidations"],
            t["coherence_misses"], t["write_misses"]) == (4, 3, 3, 3, 2, 0)
    assert r.sharing["kind"].tolist() == ["true"]
    assert r.false_sharing().empty


def test_clean_forward_and_exclusive_upgrade():
    # cpu0 reads (E), cpu1 reads: clean forward, both S; cpu1 writes: upgrade,
    # one invalidation; cpu0 writes: write miss with HITM, coherence miss charged
    # to b's write.
    r = run([(0, 0, R, 0), (1, 8, R, 1), (1, 8, W, 1), (0, 0, W, 0)])
    t = r.totals()
    assert (t["clean_forwards"], t["upgrades"], t["invalidations"], t["write_misses"],
            t["hitm"], t["coherence_misses"]) == (1, 1, 2, 1, 1, 1)
    assert r.sharing[["writer", "victim", "op"]].values.tolist() == [["b", "a", "write"]]


def test_many_readers_are_all_invalidated_by_one_write():
    seq = [(c, 8, R, 1) for c in range(5)] + [(5, 0, W, 0)] + [(c, 8, R, 1) for c in range(5)]
    r = run(seq)
    t = r.totals()
    assert t["invalidations"] == 5
    assert t["coherence_misses"] == 5
    assert t["hitm"] == 1  # only the first reader after the write finds it Modified
    assert int(r.false_sharing()["misses"].sum()) == 5


def test_an_access_across_a_line_boundary_touches_both_lines():
    lines, idx = split_lines(np.array([60, 0, 120]), np.array([8, 8, 16]))
    assert lines.tolist() == [0, 1, 0, 1, 2] and idx.tolist() == [0, 0, 1, 2, 2]
    r = simulate([0], [60], 8, [True])
    assert list(r.lines.index) == [0, 64]
    assert r.lines["write_misses"].tolist() == [1, 1]


def test_input_validation_names_the_problem():
    import pytest
    with pytest.raises(ValueError, match="one entry per access"):
        simulate([0, 1], [0], 8, [True, False])
    with pytest.raises(ValueError, match="field index 3 has no name"):
        simulate([0], [0], 8, [True], [3], ["a"])
    with pytest.raises(ValueError, match="line=48"):
        simulate([0], [0], 8, [True], line=48)


def reference(cpu, addr, write, field, line=64):
    """A plain-dict MESI model written from the module docstring, for differential tests."""
    state: dict[tuple[int, int], str] = {}
    culprit: dict[tuple[int, int], int] = {}
    last_w: dict[int, int] = {}
    tot = dict.fromkeys(COUNTERS, 0)
    events: dict[tuple[int, int, int, bool], int] = {}
    for c, a, w, f in zip(cpu, addr, write, field, strict=True):
        ln = a // line
        holders = {k[1]: v for k, v in state.items() if k[0] == ln and v != "I"}
        st = state.get((ln, c), "I")
        if not w:
            tot["reads"] += 1
            if st != "I":
                continue
            tot["read_misses"] += 1
            owner = [k for k, v in holders.items() if v in "EM"]
            hitm = bool(owner) and holders[owner[0]] == "M"
            if owner:
                tot["hitm" if hitm else "clean_forwards"] += 1
                state[(ln, owner[0])] = "S"
            cu = culprit.pop((ln, c), -1)
            if cu >= 0:
                tot["coherence_misses"] += 1
            elif hitm:
                cu = last_w[ln]
            if cu >= 0:
                events[(ln, cu, f, False)] = events.get((ln, cu, f, False), 0) + 1
            state[(ln, c)] = "S" if holders else "E"
            continue
        tot["writes"] += 1
        last_w[ln] = f
        if st in "EM":
            state[(ln, c)] = "M"
            continue
        if st == "S":
            tot["upgrades"] += 1
        else:
            tot["write_misses"] += 1
            hitm = any(v == "M" for v in holders.values())
            tot["hitm"] += hitm
            cu = culprit.pop((ln, c), -1)
            if cu >= 0:
                tot["coherence_misses"] += 1
            elif hitm:
                cu = f
            if cu >= 0:
                events[(ln, cu, f, True)] = events.get((ln, cu, f, True), 0) + 1
        for k in holders:
            if k != c:
                state[(ln, k)] = "I"
                culprit[(ln, k)] = f
                tot["invalidations"] += 1
        state[(ln, c)] = "M"
        culprit.pop((ln, c), None)
    return tot, events


accesses = st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0, 8, 16, 64, 72, 128]),
                              st.booleans()), min_size=1, max_size=60)


@settings(max_examples=150, deadline=None)
@given(accesses)
def test_matches_the_reference_model(seq):
    cpu = [c for c, _, _ in seq]
    addr = [a for _, a, _ in seq]
    write = [w for _, _, w in seq]
    field = [a // 8 for a in addr]  # one field per 8-byte slot
    names = [str(i) for i in range(17)]
    r = simulate(cpu, addr, 8, write, field, names)
    tot, events = reference(cpu, addr, write, field)
    assert r.totals() == tot
    got = {(int(row.line) // 64, int(row.writer), int(row.victim), row.op == "write"):
           int(row.misses) for row in r.sharing.itertuples()}
    assert got == events
