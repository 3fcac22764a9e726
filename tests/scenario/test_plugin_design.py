"""A plugin's stock model in a scenario: refused by ``load_scenario`` with the contract's
one line when the compiled engine cannot count it, before any simulation."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from memcglab import registry
from memcglab.scenario.keys import design_models
from memcglab.scenario.spec import ScenarioError, load_scenario

from .test_predict import SMALL

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = '''
from memcglab import registry

multi = registry.model("multi")
registry.register_model(registry.ModelEntry(
    "multi-py", "v6.16 (6.18.y 312d9602fe3e)", "a faithful port only", multi.build,
    multi.obj_stock, multi.obj_era, policy="random"))
'''


def _entry(name: str, **kwargs) -> registry.ModelEntry:
    multi = registry.model("multi")
    return registry.ModelEntry(name, "v6.16 (6.18.y 312d9602fe3e)", "a test design",
                               multi.build, multi.obj_stock, multi.obj_era, policy="random",
                               **kwargs)


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    f = tmp_path / "plugin.toml"
    f.write_text(SMALL.replace('model = "multi"', 'model = "multi-py"'))
    return f


def test_a_model_without_a_compiled_twin_is_the_contracts_one_line(scenario):
    registry.register_model(_entry("multi-py"))
    try:
        with pytest.raises(ScenarioError) as info:
            load_scenario(scenario)
        assert str(info.value) == (
            f"{scenario}: base.model: 'multi-py' has no compiled implementation; the scenario "
            "model counts every kernel with the compiled engine (valid: none, single, multi, "
            "multi-rr, multi-lru, pcstock, pcstock-v4)")
        assert "multi-py" not in design_models()
    finally:
        registry.unregister_model("multi-py")


def test_a_model_with_its_own_replay_function_is_refused_too(scenario):
    registry.register_model(_entry("multi-py", compiled=lambda trace, **options: {}))
    try:
        with pytest.raises(ScenarioError, match="base.model: 'multi-py' brings a compiled "
                                                "replay function of its own"):
            load_scenario(scenario)
    finally:
        registry.unregister_model("multi-py")


def test_a_model_on_a_policy_without_a_compiled_twin_is_refused(scenario):
    from memcglab.kernel.victim import RandomVictim

    registry.register_policy("random-py", RandomVictim)
    registry.register_model(replace(_entry("multi-py", compiled="multi"), policy="random-py"))
    try:
        with pytest.raises(ScenarioError, match="'multi-py' runs victim policy 'random-py', "
                                                "which has no compiled implementation"):
            load_scenario(scenario)
    finally:
        registry.unregister_model("multi-py")
        registry.unregister_policy("random-py")


def test_a_model_with_a_compiled_twin_registered_after_import_is_accepted(scenario):
    registry.register_model(_entry("multi-py", compiled="multi"))
    try:
        assert design_models()[-1] == "multi-py"
        assert load_scenario(scenario).base.model == "multi-py"
    finally:
        registry.unregister_model("multi-py")


def test_memcglab_predict_exits_2_before_any_simulation(scenario, tmp_path):
    (tmp_path / "multi_py_plugin.py").write_text(PLUGIN)
    out = tmp_path / "never.json"
    env = {**os.environ, "MEMCGLAB_PLUGINS": "multi_py_plugin",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run([sys.executable, "-m", "memcglab", "predict", str(scenario),
                           "--out", str(out)], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=300)
    assert done.returncode == 2 and done.stdout == "" and not out.exists()
    lines = done.stderr.splitlines()
    assert lines == [f"{scenario}: base.model: 'multi-py' has no compiled implementation; "
                     "the scenario model counts every kernel with the compiled engine (valid: "
                     "none, single, multi, multi-rr, multi-lru, pcstock, pcstock-v4)"]
