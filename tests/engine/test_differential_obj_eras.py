"""Differential test of the obj-stock eras: the compiled engine against the faithful port.

Random traces with object operations (``random_obj_trace``) and slab workloads
(``random_slab_trace``, tests/engine/tracegen.py) x every obj-stock era of
``memcglab.models.OBJ_STOCK_ERAS`` x every model the faithful port runs it beside x
slots {1, 7}, under the refill variants: byte for byte as ``memcglab.replay.dumps``, with
``--check`` too (same outcome, same first violation), and the same ``counts`` (the
operations, ``memcglab.events.CALL_EVENTS`` and the era's ``OBJ_ERA_EVENTS``).
"""

from __future__ import annotations

import numpy as np
import pytest

from memcglab.engine import replay_chunks, replay_compiled
from memcglab.engine.textread import replay_text
from memcglab.events import CALL_EVENTS, OBJ_ERA_EVENTS
from memcglab.kernel.observer import Observer
from memcglab.models import OBJ_STOCK_ERAS as REGISTERED
from memcglab.registry import obj_era_models
from memcglab.replay import InvariantViolation, dumps, replay
from memcglab.trace import parse_text

from .tracegen import (
    OBJ_STOCK_ERAS,
    random_obj_trace,
    random_slab_trace,
    random_trace,
    without_nested,
)

#: the models' own eras, run beside the other models an obj_stock option allows
OWN_ERAS = ("v6.15", "v6.16", "multi-objcg", "pcstock-v4")
OBJ_TRACES, SLAB_TRACES, BLOCKS = 48, 30, 6


def _outcome(fn, *args, **kwargs) -> str | tuple:
    try:
        return dumps(fn(*args, **kwargs))
    except InvariantViolation as exc:
        return ("violation", exc.index, exc.line, str(exc))


def _compare(trace, era: str, number: int, batch: int, refill: str) -> list[tuple]:
    bad = []
    for model in obj_era_models(era):
        t = without_nested(trace) if model == "single" else trace
        for slots in (1, 7):
            args, kw = (t, model, slots, number, batch), {"refill": refill, "obj_stock": era}
            want_counts: dict[str, int] = {}
            got_counts: dict[str, int] = {}
            want = _outcome(replay, *args, counts=want_counts, **kw)
            if _outcome(replay_compiled, *args, counts=got_counts, **kw) != want:
                bad.append((t.source, era, model, slots, refill))
            elif got_counts != want_counts:
                bad.append((t.source, era, model, slots, refill, "counts",
                            {k: (want_counts.get(k), got_counts.get(k))
                             for k in want_counts | got_counts
                             if want_counts.get(k) != got_counts.get(k)}))
            want = _outcome(replay, *args, check=True, **kw)
            if _outcome(replay_compiled, *args, check=True, **kw) != want:
                bad.append((t.source, era, model, slots, refill, "check"))
            if isinstance(want, tuple):  # a correct port keeps every invariant
                bad.append((t.source, era, model, slots, refill, "invariant", want))
    return bad


@pytest.mark.parametrize("block", range(BLOCKS))
def test_compiled_equals_faithful_on_every_obj_era(block: int) -> None:
    mismatches = []
    for number in range(block * OBJ_TRACES // BLOCKS, (block + 1) * OBJ_TRACES // BLOCKS):
        batch = (64, 8, 64, 3)[number % 4]
        refill = ("always", "always", "not-in-irq", "never")[number % 4]
        trace = random_obj_trace(number, batch=batch)
        for era in (*OBJ_STOCK_ERAS, *OWN_ERAS):
            mismatches += _compare(trace, era, number, batch, refill)
    for number in range(block * SLAB_TRACES // BLOCKS, (block + 1) * SLAB_TRACES // BLOCKS):
        batch = (64, 3, 8, 64)[number % 4]
        refill = ("always", "never", "always", "not-in-irq")[number % 4]
        trace = random_slab_trace(number)
        for era in OBJ_STOCK_ERAS:
            mismatches += _compare(trace, era, number, batch, refill)
    assert not mismatches, f"(trace, era, model, slots, refill): {mismatches[:10]}"


def test_every_registered_era_runs_compiled() -> None:
    # A built-in era the faithful replay takes is one the compiled engine takes too.
    assert set(REGISTERED) == {*OBJ_STOCK_ERAS, *OWN_ERAS}


@pytest.mark.parametrize("era", OBJ_STOCK_ERAS)
def test_call_and_era_event_totals_agree_per_cpu_and_memcg(era: str) -> None:
    bad = []
    for number in range(12):
        trace = random_slab_trace(500 + number)
        obs, counts = Observer(), {}
        replay(trace, "multi", 7, number, 8, observer=obs, obj_stock=era)
        _, events = replay_compiled(trace, "multi", 7, number, 8, events=True, obj_stock=era,
                                    counts=counts)
        for name in (*CALL_EVENTS, *OBJ_ERA_EVENTS):
            if obs.calls.get(name, 0) != counts[name]:
                bad.append((number, name, obs.calls.get(name, 0), counts[name]))
        for name in CALL_EVENTS:  # the per-CPU and per-memcg rows add up to the totals
            assert events.per_cpu[name].sum() == events.per_memcg[name].sum() == counts[name]
        assert events.total("walks") == obs.walks == (events.total("page_counter_try_charge")
                                                      + events.total("page_counter_uncharge"))
    assert not bad, bad[:10]


def test_the_traces_exercise_every_era_path() -> None:
    # The generators are strong enough: over the traces, every era event happens, and
    # v5.14's irq stock holds an objcg at the end of some trace.
    totals: dict[tuple[str, str], int] = {}
    irq_slot = 0
    for number in range(24):
        for trace, batch in ((random_slab_trace(number), 8), (random_obj_trace(number), 3)):
            for era in OBJ_STOCK_ERAS:
                counts: dict[str, int] = {}
                out = replay_compiled(trace, "multi", 7, 0, batch, obj_stock=era,
                                      counts=counts)
                for name, value in (*counts.items(), *out["obj_counters"].items()):
                    totals[era, name] = totals.get((era, name), 0) + value
                if era == "v5.14":
                    irq_slot += sum(cpu[1] is not None for cpu in out["obj_stocks"])
    need = {"memcg-caches": ("slab_page_charges", "slab_page_uncharges",
                             "memcg_stat_updates", "failed_obj_charges"),
            "v5.9": ("obj_hits", "obj_misses", "obj_drains", "mod_objcg_state",
                     "memcg_stat_flushes", "failed_obj_charges")}
    for era in OBJ_STOCK_ERAS[2:]:
        need[era] = ("obj_hits", "obj_misses", "obj_drains", "obj_flushes",
                     "memcg_stat_updates", "failed_obj_charges")
    missing = [(era, name) for era, names in need.items() for name in names
               if not totals.get((era, name))]
    assert not missing and irq_slot, (missing, irq_slot)


@pytest.mark.parametrize("era", OBJ_STOCK_ERAS)
def test_a_cpu_dead_folds_v59s_per_cpu_stat_counters(era: str) -> None:
    """batch 3: v5.9's threshold is 3 << PAGE_SHIFT = 12288 bytes. Two 8000-byte objects
    on CPU 1 would make its per-CPU memcg and lruvec counters 16000 and flush both; the
    cpu_dead between them folds the first 8000 (memcg_hotplug_cpu_dead at 5458985533ba:
    this_cpu_xchg(..., 0)), so neither passes the threshold: no flush. The later eras have
    rstat (no per-CPU threshold) and count none either way."""
    t = parse_text("memcglab-trace 1\ncpus 2\ncgroup 1 0\nobj_charge 1 1 8000\ncpu_dead 1\n"
                   "obj_charge 1 1 8000\n")
    no_fold = parse_text("memcglab-trace 1\ncpus 2\ncgroup 1 0\nobj_charge 1 1 8000\n"
                         "obj_charge 1 1 8000\n")
    for fn in (replay, replay_compiled):
        counts: dict[str, int] = {}
        fn(t, batch=3, obj_stock=era, counts=counts)
        assert counts["memcg_stat_flushes"] == 0, fn
        fn(no_fold, batch=3, obj_stock=era, counts=counts)
        assert counts["memcg_stat_flushes"] == (2 if era == "v5.9" else 0), fn


@pytest.mark.parametrize("era", OBJ_STOCK_ERAS)
def test_an_era_leaves_a_trace_without_objects_as_the_models_own(era: str) -> None:
    for number in range(10):
        trace = random_trace(number)
        for model in obj_era_models(era):
            base = replay_compiled(trace, model, 7, number)
            got = replay_compiled(trace, model, 7, number, obj_stock=era)
            assert got.pop("obj_stock") == era
            assert dumps(got) == dumps(base), (number, model)


@pytest.mark.parametrize("era", ("memcg-caches", "v5.9", "v5.14"))
def test_chunks_and_text_stream_replay_as_one_trace(era: str, tmp_path) -> None:
    # The state grows between chunks (memcgs, objcgs, v5.9's counters, the runs).
    for number in range(6):
        trace = random_slab_trace(900 + number)
        want = dumps(replay(trace, "multi-rr", 7, number, 8, obj_stock=era))
        chunks = [trace.ops[i:i + 5] for i in range(0, len(trace.ops), 5)]
        got = replay_chunks(trace.cpus, chunks, "multi-rr", 7, number, 8, nodes=trace.nodes,
                            obj_stock=era)
        assert dumps(got) == want, number
    path = tmp_path / "slab.trace"
    rows = ["memcglab-trace 1", "cpus 2", "nodes 2", "cgroup 7 0"]
    rows += [f"obj_charge {i % 2} 7 {96 * (1 + i % 5)}" for i in range(300)]
    rows += [f"obj_uncharge {i % 2} 7 500" for i in range(100)]
    path.write_text("\n".join(rows) + "\n")
    want = dumps(replay(parse_text(path.read_text()), obj_stock=era))
    assert dumps(replay_text(str(path), block=64, obj_stock=era)) == want


def test_obj_stock_errors_name_the_input_and_what_is_valid() -> None:
    t = random_obj_trace(1)
    with pytest.raises(ValueError, match=r"obj_stock='v5\.99': unknown; .*v5\.14-refill"):
        replay_compiled(t, obj_stock="v5.99")
    for model in ("single", "multi-fix2"):
        with pytest.raises(ValueError, match=rf"obj_stock='v5\.9' cannot run with "
                                             rf"model='{model}'.*valid models: multi"):
            replay_compiled(t, model, obj_stock="v5.9")
    # the model's own era is its default replay, named
    own = replay_compiled(t, "multi-rr", obj_stock="multi-objcg")
    assert own.pop("obj_stock") == "multi-objcg"
    assert dumps(own) == dumps(replay_compiled(t, "multi-rr"))


def test_counts_without_an_era_are_the_faithful_replays() -> None:
    trace = random_obj_trace(5)
    want: dict[str, int] = {}
    got: dict[str, int] = {}
    replay(trace, "pcstock", counts=want)
    out = replay_compiled(trace, "pcstock", counts=got)
    assert got == want and not set(OBJ_ERA_EVENTS) & set(got)
    assert isinstance(out, dict)  # counts alone does not return the events
    assert np.all(np.array(list(got.values())) >= 0)
