"""RunSpec hashing and grid expansion."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcglab.sweep.spec import RunSpec, canonical_json, expand_grid, spec_items, stable_hash

from .points import Point

values = st.one_of(st.integers(-10**6, 10**6), st.booleans(), st.text(max_size=5),
                   st.floats(allow_nan=False))
grids = st.dictionaries(
    st.from_regex(r"[a-z]{1,6}", fullmatch=True),
    st.lists(values, min_size=1, max_size=3, unique_by=lambda v: canonical_json({"v": v})),
    max_size=3,
)


@given(grids)
def test_grid_is_the_cartesian_product_with_distinct_ids(grid):
    specs = expand_grid("n.ipynb", grid)
    assert len(specs) == math.prod(len(v) for v in grid.values())
    assert len({s.run_id for s in specs}) == len(specs)
    for s in specs:
        assert set(s.as_dict()) == set(grid)
        assert all(s.as_dict()[k] in grid[k] for k in grid)


def test_first_parameter_varies_slowest():
    specs = expand_grid("n.ipynb", {"policy": ["random", "lru"], "slots": [1, 2, 4]})
    assert [(s.as_dict()["policy"], s.as_dict()["slots"]) for s in specs] == [
        ("random", 1), ("random", 2), ("random", 4), ("lru", 1), ("lru", 2), ("lru", 4)]


def test_an_empty_grid_is_one_run_with_the_notebook_defaults():
    assert [s.params for s in expand_grid("n.ipynb", {})] == [()]


def test_run_id_ignores_parameter_order_but_not_types_or_notebook():
    a = RunSpec.make("n.ipynb", {"slots": 1, "policy": "lru"})
    assert a == RunSpec.make("n.ipynb", {"policy": "lru", "slots": 1})
    assert a.run_id == RunSpec.make("n.ipynb", {"policy": "lru", "slots": 1}).run_id
    assert a.run_id != RunSpec.make("n.ipynb", {"policy": "lru", "slots": 1.0}).run_id
    assert a.run_id != RunSpec.make("n.ipynb", {"policy": "lru", "slots": True}).run_id
    assert a.run_id != RunSpec.make("m.ipynb", {"policy": "lru", "slots": 1}).run_id
    assert len(a.run_id) == 16 and int(a.run_id, 16) >= 0


def test_run_id_is_the_same_in_another_process():
    # hash() is salted per process; the run id must not be, or resume would never match.
    spec = RunSpec.make("n.ipynb", {"slots": 7, "policy": "lru", "scale": 0.5})
    code = ("from memcglab.sweep.spec import RunSpec; "
            "print(RunSpec.make('n.ipynb', {'policy': 'lru', 'scale': 0.5, 'slots': 7}).run_id)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONHASHSEED": "12345"})
    assert out.stdout.strip() == spec.run_id


def test_specs_are_frozen_and_hashable():
    spec = RunSpec.make("n.ipynb", {"xs": [1, 2]})
    assert spec.params == (("xs", (1, 2)),) and spec.as_dict() == {"xs": [1, 2]}
    assert {spec: 1}[RunSpec.make("n.ipynb", {"xs": [1, 2]})] == 1
    with pytest.raises(AttributeError):
        spec.notebook = "other.ipynb"


@pytest.mark.parametrize("value, message", [
    (float("nan"), "x=nan: NaN cannot identify a run"),
    (object, "x=<class 'object'>: a run parameter must be int, float, bool, str, None"),
])
def test_unhashable_parameters_are_refused_by_name(value, message):
    with pytest.raises((ValueError, TypeError), match=message.replace("(", r"\(")):
        RunSpec.make("n.ipynb", {"x": value})


def test_duplicate_and_empty_value_lists_are_refused():
    with pytest.raises(ValueError, match="slots: value 2 is given twice"):
        expand_grid("n.ipynb", {"slots": [1, 2, 2]})
    with pytest.raises(ValueError, match="slots: no values given"):
        expand_grid("n.ipynb", {"slots": []})


def test_stable_hash_distinguishes_what_json_distinguishes():
    assert stable_hash({"a": 1}) != stable_hash({"a": "1"})
    assert stable_hash({"a": 1, "b": 2}) == stable_hash({"b": 2, "a": 1})


def test_spec_items_accepts_dataclasses_and_mappings_only():
    assert spec_items(Point(slots=2, policy="rr")) == {"slots": 2, "policy": "rr"}
    assert spec_items({"slots": 2}) == {"slots": 2}
    with pytest.raises(TypeError, match=r"spec \(2, 'rr'\): must be a dataclass instance"):
        spec_items((2, "rr"))
