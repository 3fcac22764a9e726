"""The scenario contract's ``refill`` design key, ported into every model's charge path.

``not-in-irq``: try_charge_memcg starts with ``if (!in_task()) batch = nr_pages;``
(a trace operation with the ``irq`` word runs outside task context); ``never``:
every charge uses ``batch = nr_pages``. Uncharges reach the stock as in the model.
Exact event logs of the faithful port, and the same JSON from both engines.
"""

from __future__ import annotations

import pytest

from memcglab.engine import replay_compiled
from memcglab.kernel.memcontrol import GFP_KERNEL
from memcglab.kernel.observer import Observer
from memcglab.models import MODEL_NAMES, build_model
from memcglab.replay import dumps, replay
from memcglab.trace import parse_text

TRACE = parse_text("memcglab-trace 1\ncpus 2\ncgroup 1 0\ncharge 0 1 3 irq\ncharge 0 1 3\n"
                   "charge 1 1 2 irq\nuncharge 1 1 4 irq\n")


def _log(model: str, refill: str, irq_first: bool) -> list[tuple]:
    obs = Observer(log=[])
    m = build_model(model, nr_cpus=1, observer=obs, refill=refill)
    memcg = m.mem_cgroup_css_alloc(1, m.root_mem_cgroup)
    m.mem_cgroup_css_online(memcg)
    obs.log.clear()
    m.in_task = not irq_first
    m.try_charge(memcg, GFP_KERNEL, 3, 0)
    m.in_task = True
    m.try_charge(memcg, GFP_KERNEL, 3, 0)
    return [e for e in obs.log if e[0] in ("walk", "refill", "hit")]


@pytest.mark.parametrize("model", ["single", "multi", "multi-rr", "multi-lru"])
def test_memcg_stock_models(model: str) -> None:
    # always: the irq charge walks the batch and stocks 61; the next charge hits
    assert _log(model, "always", True) == [("walk", 1, 64, "try_charge"), ("refill", 0, 1, 61),
                                           ("hit", 0, 1, 3)]
    # not-in-irq: the irq charge walks 3 and refills nothing; the task charge refills
    assert _log(model, "not-in-irq", True) == [("walk", 1, 3, "try_charge"),
                                               ("walk", 1, 64, "try_charge"),
                                               ("refill", 0, 1, 61)]
    # never: no charge refills
    assert _log(model, "never", False) == [("walk", 1, 3, "try_charge"),
                                           ("walk", 1, 3, "try_charge")]


def test_pcstock_models_decide_the_batch_in_the_counter_charge() -> None:
    assert _log("pcstock", "not-in-irq", True) == [("walk", 1, 3, "try_charge"),
                                                   ("walk", 1, 64, "try_charge")]
    assert _log("pcstock", "never", False) == [("walk", 1, 3, "try_charge")] * 2
    v4 = _log("pcstock-v4", "not-in-irq", True)
    assert v4 == [("walk", 1, 3, "try_charge"), ("walk", 1, 64, "try_charge"),
                  ("refill", 0, 1, 61)]
    assert _log("pcstock-v4", "never", False) == [("walk", 1, 3, "try_charge")] * 2


def test_a_stocked_charge_still_hits_with_refill_never() -> None:
    # refill="never" stops refills on the charge side only: an uncharge still stocks
    t = parse_text("memcglab-trace 1\ncpus 1\ncgroup 1 0\ncharge 0 1 5\nuncharge 0 1 5\n"
                   "charge 0 1 2\n")
    out = replay(t, "multi", refill="never")
    assert out["counters"] == {"walks": 1, "stock_hits": 1, "evictions": 0}
    assert out["stocks"][0][0] == [1, 3] and out["refill"] == "never"


@pytest.mark.parametrize("model", MODEL_NAMES)
@pytest.mark.parametrize("refill", ["always", "not-in-irq", "never"])
def test_both_engines_agree_and_the_key_appears_only_off_default(model, refill) -> None:
    want = dumps(replay(TRACE, model, refill=refill))
    assert dumps(replay_compiled(TRACE, model, refill=refill)) == want
    assert ('"refill":' in want) == (refill != "always")
    if refill == "always":
        assert want == dumps(replay(TRACE, model))


def test_bad_refill_is_named() -> None:
    for fn in (replay, replay_compiled):
        with pytest.raises(ValueError, match="refill='sometimes': unknown; valid: always, "
                                             "not-in-irq, never"):
            fn(TRACE, "multi", refill="sometimes")


@pytest.mark.parametrize("engine", ["faithful", "compiled"])
def test_cli_refill_option(tmp_path, capsys, engine) -> None:
    from memcglab.cli import main
    from memcglab.trace import to_text

    path = tmp_path / "t.trace"
    path.write_text(to_text(TRACE))
    assert main(["replay", str(path), "--refill", "not-in-irq", "--engine", engine]) == 0
    assert capsys.readouterr().out == dumps(replay(TRACE, "multi", refill="not-in-irq"))
    with pytest.raises(SystemExit) as info:
        main(["replay", str(path), "--refill", "maybe"])
    assert info.value.code == 2
    assert "invalid choice: 'maybe'" in capsys.readouterr().err
