"""memcglab.registry: one registry of models and policies, read by every layer that takes one.

The contract's entries must describe what the code does (compiled names the engine has,
stock views the ports produce, events the engine counts); registered entries must reach
the faithful replay, ``memcglab replay``, the compiled engine (or be refused by name)
and the sweep's check, in this process and, through plugins, in a fresh one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memcglab import registry
from memcglab.engine import Engine, replay_compiled, replay_text
from memcglab.engine.state import MODELS as ENGINE_MODELS
from memcglab.engine.state import VICTIMS
from memcglab.kernel.victim import RandomVictim
from memcglab.models import MODEL_NAMES, build_model
from memcglab.replay import dumps, replay
from memcglab.sweep.params import ParameterError
from memcglab.sweep.registered import check_registered
from memcglab.trace import parse_text
from tests.engine.tracegen import random_obj_trace, random_trace, without_nested

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "example.trace"
CONTRACT = ("single", "multi", "multi-rr", "multi-lru", "multi-fix2", "pcstock", "pcstock-v4")

FIFO = '''
from memcglab.registry import register_policy


class FifoVictim:
    """First in, first out: evict the slot filled longest ago (a test plugin)."""

    def __init__(self, slots, random=None):
        self.slots, self.filled = slots, {}

    def victim(self, stock):
        order = self.filled[stock.cpu]
        while True:
            slot, memcg = order.pop(0)
            if stock.cached[slot] is memcg:
                return slot

    def touch(self, stock, slot):
        order = self.filled.setdefault(stock.cpu, [])
        if (slot, stock.cached[slot]) not in order:
            order.append((slot, stock.cached[slot]))


register_policy("fifo", FifoVictim)
'''


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    (tmp_path / "fifo_plugin.py").write_text(FIFO)
    (tmp_path / "broken_plugin.py").write_text("raise RuntimeError('half-written plugin')\n")
    return tmp_path


def _cli(args: list[str], env_extra: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, **env_extra}
    env.setdefault("PYTHONPATH", str(cwd))
    return subprocess.run([sys.executable, "-m", "memcglab", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=300)


def test_the_contract_entries_come_first_and_name_what_the_engine_has():
    assert tuple(MODEL_NAMES)[:7] == CONTRACT
    assert tuple(registry.POLICIES)[:3] == ("random", "rr", "lru")
    for name in CONTRACT:
        entry = registry.model(name)
        assert entry.builtin and entry.compiled in ENGINE_MODELS
        assert entry.multi == name.startswith("multi")
    for name in ("random", "rr", "lru"):
        entry = registry.policy(name)
        assert entry.compiled in VICTIMS and registry.policy_model(name) == (entry.model, None)
        assert registry.model(entry.model).policy == name


def test_faithful_stocks_have_the_registered_view():
    trace = random_trace(5, batch=8)
    for name in CONTRACT:
        t = without_nested(trace) if name == "single" else trace
        stocks = replay(t, name, 3, 5, 8)["stocks"]
        view = registry.model(name).stock_view
        for cpu in stocks:
            if view == "counters":
                assert isinstance(cpu, dict)
            else:
                assert isinstance(cpu, list) and len(cpu) == (3 if name != "single" else 1)


@pytest.mark.parametrize("name", CONTRACT)
def test_the_compiled_engine_counts_only_the_registered_events(name):
    entry = registry.model(name)
    allowed = set(entry.events) | set(registry.policy(entry.policy).events if entry.multi
                                      else ())
    seen: set[str] = set()
    for number in range(40):
        small = (64, 8, 3)[number % 3]
        for trace, batch in ((random_trace(number, batch=small, bursts=True), small),
                             (random_obj_trace(number), 64)):
            t = without_nested(trace) if name == "single" else trace
            _, events = replay_compiled(t, name, 2, number, batch, events=True)
            seen |= {e for e in events.per_cpu if events.total(e)}
    assert seen <= allowed, f"{name} counts {sorted(seen - allowed)}, not registered"
    assert allowed <= seen, f"{name} never counted {sorted(allowed - seen)}"


def test_views_follow_registration_and_the_contract_entries_stay():
    entry = registry.ModelEntry(
        "multi-again", "v6.16 (6.18.y 312d9602fe3e)", "multi, registered again",
        build=registry.model("multi").build, obj_stock=registry.model("multi").obj_stock,
        obj_era=registry.model("multi").obj_era, policy="random", compiled="multi")
    registry.register_model(entry)
    try:
        assert "multi-again" in MODEL_NAMES and MODEL_NAMES[-1] == "multi-again"
        assert registry.KERNEL_VERSIONS["multi-again"] == "v6.16 (6.18.y 312d9602fe3e)"
        assert registry.OBJ_ERAS["multi-again"] == registry.OBJ_ERAS["multi"]
        trace = random_trace(2)
        # an entry may reuse one of the engine's models under its own name
        assert replay_compiled(trace, "multi-again") == replay(trace, "multi-again") == \
            replay(trace, "multi") | {"model": "multi-again"}
        registry.register_model(entry)  # the same entry again: nothing happens
        with pytest.raises(ValueError, match="'multi-again' is already registered"):
            registry.register_model(registry.ModelEntry(**{**entry.__dict__,
                                                           "description": "another"}))
    finally:
        registry.unregister_model("multi-again")
    assert "multi-again" not in MODEL_NAMES
    with pytest.raises(ValueError, match="'multi' is one of the replay contract's; it stays"):
        registry.unregister_model("multi")


@pytest.mark.parametrize("change, match", [
    ({"stock_view": "grid"}, "stock_view='grid'; valid: slots, counters"),
    ({"policy": "clock"}, "policy='clock' is not registered; valid: random, rr, lru"),
    ({"events": ("walks", "hops")}, "unknown events hops; valid: charges"),
    ({"name": "Multi 2"}, "model name 'Multi 2': must be 1-64 characters"),
    ({"per_memcg": "sockets"}, "per_memcg='sockets'"),
    ({"kernel_version": ""}, "kernel_version must say which kernel it ports"),
    ({"compiled": 7}, "compiled=7 must name an engine model"),
])
def test_a_bad_model_entry_names_its_field(change, match):
    base = registry.model("multi").__dict__ | {"name": "bad-entry", "builtin": False}
    with pytest.raises(ValueError, match=match):
        registry.register_model(registry.ModelEntry(**(base | change)))
    assert "bad-entry" not in MODEL_NAMES


def test_a_model_without_a_compiled_implementation_is_refused_by_name():
    multi = registry.model("multi")
    registry.register_model(registry.ModelEntry(
        "multi-py", "v6.16 (6.18.y 312d9602fe3e)", "faithful only", multi.build,
        multi.obj_stock, multi.obj_era, policy="random"))
    try:
        trace = random_trace(1)
        assert replay(trace, "multi-py")["model"] == "multi-py"
        for call in (lambda: replay_compiled(trace, "multi-py"), lambda: Engine(2, "multi-py")):
            with pytest.raises(ValueError) as info:
                call()
            assert str(info.value).startswith("model 'multi-py' has no compiled implementation;"
                                              " the compiled engine runs: single, multi, ")
    finally:
        registry.unregister_model("multi-py")


def test_a_model_may_bring_a_compiled_replay_of_its_own(tmp_path):
    calls = []

    def own_engine(trace, **options):
        calls.append(options)
        return replay(trace, "multi", options["slots"], options["seed"], options["batch"],
                      options["check"], policy=options["policy"]) | {"model": options["model"]}

    multi = registry.model("multi")
    registry.register_model(registry.ModelEntry(
        "multi-own", "v6.16 (6.18.y 312d9602fe3e)", "its own compiled replay", multi.build,
        multi.obj_stock, multi.obj_era, policy="random", compiled=own_engine))
    try:
        trace = random_trace(3)
        want = replay(trace, "multi-own", 2, 9, policy="rr")
        assert replay_compiled(trace, "multi-own", 2, 9, policy="rr") == want
        assert calls[-1] == {"model": "multi-own", "slots": 2, "seed": 9, "batch": 64,
                             "check": False, "events": False, "refill": "always",
                             "policy": "rr"}
        path = tmp_path / "t.trace"
        path.write_text("memcglab-trace 1\ncpus 1\ncgroup 1 0\ncharge 0 1 3\n")
        assert replay_text(str(path), "multi-own")["model"] == "multi-own"
        with pytest.raises(ValueError, match="runs through replay_compiled only"):
            Engine(1, "multi-own")
    finally:
        registry.unregister_model("multi-own")


def test_a_policy_registered_in_this_process_reaches_build_model():
    registry.register_policy("random-py", RandomVictim)
    try:
        machine = build_model("multi-fix2", 2, 3, 0, policy="random-py")
        assert isinstance(machine.policy, RandomVictim) and machine.fix2
        assert registry.policy_model("random-py") == ("multi", "random-py")
        assert "random-py" not in registry.compiled_policies()
    finally:
        registry.unregister_policy("random-py")


def test_the_cli_output_is_the_contracts_without_policy(plugin_dir):
    plain = _cli(["replay", str(EXAMPLE)], {}, plugin_dir)
    assert plain.returncode == 0 and plain.stdout == dumps(replay_compiled(
        parse_text(EXAMPLE.read_text())))
    named = _cli(["replay", str(EXAMPLE), "--policy", "random"], {}, plugin_dir)
    assert json.loads(named.stdout) == json.loads(plain.stdout) | {"policy": "random"}


def test_a_plugin_named_by_the_environment_reaches_memcglab_replay(plugin_dir):
    env = {"MEMCGLAB_PLUGINS": "fifo_plugin"}
    args = ["replay", str(EXAMPLE), "--model", "multi", "--policy", "fifo"]
    done = _cli(args, env, plugin_dir)
    assert done.returncode == 0 and json.loads(done.stdout)["policy"] == "fifo"
    refused = _cli([*args, "--engine", "compiled"], env, plugin_dir)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == ("memcglab replay: error: policy 'fifo' has no compiled "
                              "implementation; the compiled engine runs: random, rr, lru; use "
                              "--engine faithful\n")
    helped = _cli(["replay", "--help"], env, plugin_dir)
    assert "random, rr, lru, fifo" in " ".join(helped.stdout.split())
    unknown = _cli(args, {}, plugin_dir)
    assert unknown.returncode == 2
    assert "policy='fifo': unknown; valid: random, rr, lru" in unknown.stderr


def test_a_plugin_that_cannot_be_imported_is_named(plugin_dir):
    done = _cli(["replay", str(EXAMPLE)], {"MEMCGLAB_PLUGINS": "fifo_plugin,broken_plugin"},
                plugin_dir)
    assert done.returncode == 2 and done.stdout == ""
    assert ("MEMCGLAB_PLUGINS: cannot import plugin module 'broken_plugin': RuntimeError: "
            "half-written plugin") in done.stderr
    with pytest.raises(registry.PluginError, match="plugins: cannot import plugin module "
                                                   "'no_such_plugin': ModuleNotFoundError"):
        registry.load_plugins("no_such_plugin")


def test_an_installed_entry_point_is_loaded_in_a_fresh_process(plugin_dir):
    dist = plugin_dir / "memcglab_fifo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: memcglab-fifo\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[memcglab.plugins]\nfifo = fifo_plugin\n")
    code = textwrap.dedent("""
        from memcglab import registry
        print(registry.policy("fifo").cls.__name__, registry.loaded_plugins())
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=plugin_dir, env={**os.environ, "PYTHONPATH": str(plugin_dir)},
                          timeout=120)
    assert done.stdout == "FifoVictim {'fifo_plugin': 'memcglab.plugins'}\n", done.stderr


def test_the_sweep_check_loads_the_grids_plugins_then_reads_the_registry(plugin_dir,
                                                                      monkeypatch):
    monkeypatch.syspath_prepend(str(plugin_dir))
    try:
        with pytest.raises(ParameterError, match="policy=fifo: not a registered victim "
                                                 "policy; valid: random, rr, lru"):
            check_registered({"policy": ["lru", "fifo"]})
        check_registered({"plugins": ["fifo_plugin"], "policy": ["lru", "fifo"]})
        with pytest.raises(ParameterError, match="model=nostock: not a registered stock "
                                                 "model; valid: single, multi"):
            check_registered({"model": ["multi", "nostock"]})
        with pytest.raises(ParameterError, match="plugins=broken_plugin: cannot import plugin "
                                                 "module 'broken_plugin'"):
            check_registered({"plugins": ["broken_plugin"]})
    finally:
        registry.unregister_policy("fifo")
        sys.modules.pop("fifo_plugin", None)


def test_design_facts_live_in_the_registry_entries():
    # issue 23, item 7: pricing, the scenario contract, the stock bound and the figures
    # read these facts from the entries, never from the model's name
    from memcglab.pricing.profile import _stock_kind
    from memcglab.scenario.keys import design_models
    from memcglab.studies.common.figures import MODEL_PALETTE

    kinds = {n: registry.model(n).stock_kind for n in registry.MODEL_NAMES}
    assert {n for n, k in kinds.items() if k == "page_counter"} == {"pcstock", "pcstock-v4"}
    assert _stock_kind("pcstock-v4") == "page_counter" and _stock_kind("none") == "memcg"
    assert "multi-fix2" not in design_models() and not registry.model("multi-fix2").in_scenarios
    assert set(MODEL_PALETTE) == set(registry.MODEL_NAMES)
    assert registry.model("multi").batch_max == 127
    with pytest.raises(ValueError, match="stock_kind='per-socket'; valid: memcg, page_counter"):
        registry.ModelEntry("x", "v", "d", lambda *a: None, lambda *a: None, "e",
                            stock_kind="per-socket")
