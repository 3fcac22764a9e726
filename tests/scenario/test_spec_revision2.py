"""Revision 2, second part: [cgroups] version and swap, obj_stock and page_counter_layout.

Every valid value parses to what it says, every default is the design's era (the
registry's entry), and every bad value is the contract's one line naming the key.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from memcglab import registry
from memcglab.layout.pclines import PAGE_COUNTER_LAYOUTS
from memcglab.scenario.spec import ScenarioError, load_scenario

BASE = """schema = 1
name = "revision 2 keys"
[machine]
profile = "lkp-2s-224t-spr"
[workload]
family = "hackbench"
test = "pipe"
groups = 4
[base]
model = "multi"
[new]
model = "single"
"""


def write(tmp_path, text):
    f = tmp_path / "s.toml"
    f.write_text(text)
    return f


def test_the_defaults_are_the_models_eras(tmp_path):
    s = load_scenario(write(tmp_path, BASE))
    assert (s.cgroups.version, s.cgroups.swap) == (2, False)
    for d in (s.base, s.new):
        assert d.obj_stock is None and d.page_counter_layout is None
        entry = registry.model(d.model)
        assert d.layout == entry.page_counter_layout == "v6.1"


@pytest.mark.parametrize("layout", PAGE_COUNTER_LAYOUTS)
def test_every_layout_parses(tmp_path, layout):
    text = BASE.replace('model = "multi"', f'model = "multi"\npage_counter_layout = "{layout}"')
    s = load_scenario(write(tmp_path, text))
    assert s.base.layout == layout and s.new.layout == "v6.1"


@pytest.mark.parametrize("era", ["memcg-caches", "v5.9", "v5.14-vmstat", "v5.14-refill",
                                 "v5.14", "v6.16"])
def test_obj_stock_eras_beside_multi(tmp_path, era):
    text = BASE.replace('model = "multi"', f'model = "multi"\nobj_stock = "{era}"')
    assert load_scenario(write(tmp_path, text)).base.obj_stock == era


def test_cgroup_v1_with_swap(tmp_path):
    s = load_scenario(write(tmp_path, BASE + "[cgroups]\nversion = 1\nswap = true\n"))
    assert (s.cgroups.version, s.cgroups.swap) == (1, True)


BAD = [
    ("version", "[cgroups]\nversion = 3\n", "cgroups.version: 3 is unknown (valid: 1, 2)"),
    ("version bool", "[cgroups]\nversion = true\n", "cgroups.version: True is unknown"),
    ("swap type", "[cgroups]\nversion = 1\nswap = 1\n", "cgroups.swap: 1 is not a boolean"),
    ("swap on v2", "[cgroups]\nswap = true\n", "cgroups.swap: true needs cgroup v1"),
]


@pytest.mark.parametrize(("label", "extra", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_cgroups_keys(tmp_path, label, extra, message):
    f = write(tmp_path, BASE + extra)
    with pytest.raises(ScenarioError) as e:
        load_scenario(f)
    assert str(e.value).startswith(f"{f}: ") and message in str(e.value), str(e.value)


BAD_DESIGN = [
    ("layout", 'page_counter_layout = "v5.13"',
     "base.page_counter_layout: 'v5.13' is unknown (valid: v5.11, v5.12, v6.1, aligned)"),
    ("era", 'obj_stock = "v5.10"', "base.obj_stock: 'v5.10' is unknown (valid: v6.15, v6.16"),
    ("era beside multi", 'obj_stock = "v6.15"',
     "base.obj_stock: 'v6.15' cannot run beside model 'multi' (the registry runs v6.15 "
     "beside single"),
]


@pytest.mark.parametrize(("label", "line", "message"), BAD_DESIGN, ids=[b[0] for b in BAD_DESIGN])
def test_bad_design_keys(tmp_path, label, line, message):
    f = write(tmp_path, BASE.replace('model = "multi"', f'model = "multi"\n{line}'))
    with pytest.raises(ScenarioError) as e:
        load_scenario(f)
    assert message in str(e.value), str(e.value)


def test_an_era_key_on_the_root_memcg_is_refused(tmp_path):
    f = write(tmp_path, BASE.replace('model = "multi"', 'model = "none"\n'
                                     'page_counter_layout = "v5.12"'))
    with pytest.raises(ScenarioError, match="base.page_counter_layout: is given for model "
                                            "'none'"):
        load_scenario(f)


def test_single_runs_no_other_obj_era(tmp_path):
    f = write(tmp_path, BASE.replace('model = "single"', 'model = "single"\nobj_stock = "v5.9"'))
    with pytest.raises(ScenarioError, match=r"new.obj_stock: 'v5.9' cannot run beside model "
                                            r"'single'.*\(valid: v6.15\)"):
        load_scenario(f)


def test_cgroup_v1_refuses_a_page_counter_stock(tmp_path):
    text = BASE.replace('model = "single"', 'model = "pcstock-v4"') + "[cgroups]\nversion = 1\n"
    with pytest.raises(ScenarioError, match="cgroups.version: 1 cannot run new.model = "
                                            "'pcstock-v4'"):
        load_scenario(write(tmp_path, text))


def test_predict_refuses_a_bad_value_with_one_line_and_exit_2(tmp_path):
    f = write(tmp_path, BASE.replace('model = "multi"', 'model = "multi"\n'
                                     'page_counter_layout = "packed"'))
    run = subprocess.run([sys.executable, "-m", "memcglab", "predict", str(f)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip().count("\n") == 0
    assert "base.page_counter_layout: 'packed' is unknown" in run.stderr


def test_predict_refuses_cgroup_v1_until_the_traces_carry_its_accounting(tmp_path):
    f = write(tmp_path, BASE + "[cgroups]\nversion = 1\n")
    load_scenario(f)  # a valid file ...
    run = subprocess.run([sys.executable, "-m", "memcglab", "predict", str(f)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == ""  # ... that predict cannot price yet
    assert run.stderr.strip() == (f"{f}: cgroups.version: 1 is not priced yet: the benchmark "
                                  "traces carry cgroup v2's accounting (no kmem flag on "
                                  "page-level charges, v2's socket charges) (valid: 2)")


def test_a_designs_kernel_is_its_obj_stock_era_else_its_models():
    from memcglab.scenario.spec import Design

    assert Design("single").kernel == "v6.15"
    assert Design("multi", obj_stock="v5.9").kernel == "v5.9"
    assert Design("multi-fix2").kernel == "v6.18"   # no era of its own: the catalogue's
    assert Design("none").kernel == "v6.18"


def test_will_it_scale_follows_the_designs_kernel(tmp_path):
    # v5.8's per-memcg slab caches charge no object, v5.9's obj stock charges each
    from memcglab.scenario.model import ScenarioModel
    from memcglab.scenario.spec import load_scenario

    text = """schema = 1
name = "wis"
[machine]
cpus = 8
sockets = 1
threads_per_core = 2
family = "cascade-lake"
[workload]
family = "will-it-scale"
test = "unix1"
instances = 4
[base]
model = "multi"
obj_stock = "memcg-caches"
[new]
model = "multi"
obj_stock = "v5.9"
"""
    f = tmp_path / "wis.toml"
    f.write_text(text)
    m = ScenarioModel(load_scenario(f))
    assert m.base[0].per_op.get("obj_charges", 0.0) == 0.0
    assert m.new[0].per_op["obj_charges"] > 0.0
