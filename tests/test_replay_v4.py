"""``memcglab replay --model pcstock-v4`` against the contract's section "Model pcstock-v4".

Both engines: the contract's two examples byte for byte, ``nested`` as a no-op,
``--batch`` up to 524287, ``stocks`` in pcstock's dict form, and the ``--check``
bound ``[0, batch - 1]``. The kernel logic is hand-worked in tests/kernel/test_pcstock_v4.py.
"""

from __future__ import annotations

import pytest

from memcglab.engine import replay_compiled
from memcglab.replay import Replayer, conservation_violation, dumps, replay
from memcglab.trace import OP_SET_MAX, Trace, make_ops, parse_text
from tests.contract import EXAMPLE, EXAMPLE_V4_JSON, V4_DRAIN_EXAMPLE, V4_DRAIN_EXAMPLE_JSON
from tests.test_replay_cli import replay_cli  # noqa: F401 - the in-process CLI fixture

ENGINES = ["faithful", "compiled"]
STOCKED = "memcglab-trace 1\ncpus 3\ncgroup 1 0\ncgroup 2 0\ncharge 0 1 3\ncharge 0 2 5\n" \
          "charge 2 1 1\nuncharge 1 1 2\n"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("text, want", [(EXAMPLE, EXAMPLE_V4_JSON),
                                        (V4_DRAIN_EXAMPLE, V4_DRAIN_EXAMPLE_JSON)])
def test_contract_examples_byte_for_byte(replay_cli, engine, text, want):  # noqa: F811
    r = replay_cli(text, "--model", "pcstock-v4", "--engine", engine)
    assert (r.rc, r.out, r.err) == (0, want, "")
    checked = replay_cli(text, "--model", "pcstock-v4", "--engine", engine, "--check")
    assert (checked.rc, checked.out) == (0, want)


@pytest.mark.parametrize("engine", ENGINES)
def test_stocks_are_dicts_of_nonzero_stocks(replay_cli, engine):  # noqa: F811
    obj = replay_cli(STOCKED, "--model", "pcstock-v4", "--engine", engine).json
    # the uncharge on CPU 1 walks and deposits nothing; CPU 2's 1-page charge stocks 63
    assert obj["stocks"] == [{"1": 61, "2": 59}, {}, {"1": 63}]
    assert obj["counters"] == {"walks": 4, "stock_hits": 0, "evictions": 0}


@pytest.mark.parametrize("engine", [replay, replay_compiled])
def test_nested_replays_exactly_as_without_it(engine):
    body = ("cpus 2\ncgroup 1 0 max=90\ncgroup 2 1\ncharge 0 2 3{n}\ncharge 0 2 3{n}\n"
            "uncharge 1 2 4{n}\ncharge 1 2 70{n}\ndrain_all 0 1{n}\ncpu_dead 1{n}\n"
            "uncharge_direct 0 2 1{n}\nset_max 2 50{n}\noffline 2{n}\n")
    plain = parse_text("memcglab-trace 1\n" + body.format(n=""))
    nested = parse_text("memcglab-trace 1\n" + body.format(n=" nested"))
    want = dumps(engine(plain, "pcstock-v4"))
    assert dumps(engine(nested, "pcstock-v4")) == want
    assert '"stock_hits":1' in want and '"max_events":1' in want


@pytest.mark.parametrize("engine", ENGINES)
def test_the_largest_batch_is_accepted_and_one_past_it_refused(replay_cli, engine):  # noqa: F811
    obj = replay_cli(STOCKED, "--model", "pcstock-v4", "--batch", "524287",
                     "--engine", engine).json
    assert obj["stocks"][0] == {"1": 524284, "2": 524282}
    r = replay_cli(STOCKED, "--model", "pcstock-v4", "--batch", "524288", "--engine", engine)
    assert (r.rc, r.out) == (2, "") and "524287" in r.err


def test_check_bound_is_batch_minus_one():
    r = Replayer(2, "pcstock-v4", batch=8)
    r.run(parse_text("memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 1 1 1\n"))
    stock = r.machine.memcgs[1].memory.stock[1]
    assert stock.nr_pages == 7 and conservation_violation(r.machine, r.held) is None
    # a stock of a full batch keeps the pages conserved but breaks the bound (V9)
    stock.nr_pages, r.held[1] = 8, 0
    assert conservation_violation(r.machine, r.held) == (
        "cpu 1 stock of memcg 1 holds 8 pages (batch 8, at most 7)")


def test_both_engines_report_a_stock_past_batch_minus_one_alike():
    # A correct model never gets there, so both machines are pushed: CPU 1's stock of
    # memcg 1 is set to the full batch with the held pages lowered to match (conserved),
    # then one more operation runs under --check.
    from memcglab.engine import Engine
    from memcglab.engine import InvariantViolation as CompiledViolation
    from memcglab.engine.state import F_HELD
    from memcglab.replay import InvariantViolation

    first = parse_text("memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 1 1 1\n")
    then = Trace(2, make_ops([(OP_SET_MAX, -1, 1, 100)]))
    faithful = Replayer(2, "pcstock-v4", batch=8, check=True)
    faithful.run(first)
    faithful.machine.memcgs[1].memory.stock[1].nr_pages, faithful.held[1] = 8, 0
    compiled = Engine(2, "pcstock-v4", batch=8, check=True)
    compiled.feed(first.ops)
    compiled.state.pcs[1, 1], compiled.state.mc[F_HELD, 1] = 8, 0
    with pytest.raises(InvariantViolation) as want:
        faithful.run(then)
    with pytest.raises(CompiledViolation) as got:
        compiled.feed(then.ops)
    assert str(got.value).split(": ", 1)[1] == str(want.value).split(": ", 1)[1]
    assert str(want.value).endswith("holds 8 pages (batch 8, at most 7)")
