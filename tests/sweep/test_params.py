"""Checking -p parameters against a notebook's parameters cell, before anything runs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcglab.sweep.params import (
    ParameterError,
    check_grid,
    convert,
    notebook_defaults,
    notebook_types,
)

from .conftest import SWEEP_NOTEBOOK, make_notebook


def test_types_come_from_annotations_or_literal_defaults(tmp_path):
    nb = make_notebook(tmp_path / "t.ipynb", "\n".join([
        "from typing import Optional",
        "slots: int = 7  # annotated",
        "rate = 0.5  # a float literal",
        'name = "x"',
        "flag = True",
        "seed: Optional[int] = None",
        "sizes = range(4)  # not a literal",
        'output_dir = ""',
    ]))
    assert notebook_types(nb) == {
        "slots": "int", "rate": "float", "name": "str", "flag": "bool",
        "seed": "Optional[int]", "sizes": "?", "output_dir": "str",
    }
    assert notebook_defaults(nb) == {
        "slots": 7, "rate": 0.5, "name": "x", "flag": True, "seed": None, "output_dir": "",
    }


def test_the_fixture_notebook_grid_is_typed():
    grid = check_grid(SWEEP_NOTEBOOK, [("policy", "random,lru,rr"), ("slots", "1,2,4,7,8,16"),
                                       ("scale", "1,2.5"), ("quick", "true"),
                                       ("model", "multi,none")])
    assert grid == {"policy": ["random", "lru", "rr"], "slots": [1, 2, 4, 7, 8, 16],
                    "scale": [1.0, 2.5], "quick": [True], "model": ["multi", None]}
    assert isinstance(grid["scale"][0], float)


@given(st.integers(-10**12, 10**12))
def test_ints_round_trip(n):
    assert convert("slots", "int", str(n)) == n


@given(st.floats(allow_nan=False))
def test_floats_round_trip(x):
    assert convert("rate", "float", repr(x)) == x


@pytest.mark.parametrize("text, value", [
    ("true", True), ("True", True), ("YES", True), ("1", True), ("on", True),
    ("false", False), ("No", False), ("0", False), ("off", False),
])
def test_bool_spellings(text, value):
    assert convert("quick", "bool", text) is value


@pytest.mark.parametrize("raw, message", [
    ([("slots", "1,abc")], "slots=abc: not an int (e.g. 7)"),
    ([("slots", "1.5")], "slots=1.5: not an int"),
    ([("scale", "fast")], "scale=fast: not a float (e.g. 0.5)"),
    ([("quick", "maybe")], "quick=maybe: not a bool; valid are true, yes, on, 1 or false, no"),
    ([("slot", "1")], "unknown parameter 'slot' for sweep_fixture.ipynb (did you mean 'slots'?); "
                      "valid: fail (bool), model (Optional[str]), policy (str), quick (bool), "
                      "scale (float), sleep_s (float), slots (int)"),
    ([("zzz", "1")], "unknown parameter 'zzz' for sweep_fixture.ipynb; valid: fail (bool)"),
    ([("output_dir", "/tmp/x")], "output_dir: set by the sweep itself"),
    ([("slots", "1"), ("slots", "2")], "slots: given twice"),
    ([("slots", "1,,2")], "slots=1,,2: empty value in the list"),
    ([("slots", "2,02")], "slots: value 2 is given twice"),
])
def test_bad_parameters_name_the_parameter_the_value_and_what_is_valid(raw, message):
    with pytest.raises(ValueError) as err:
        check_grid(SWEEP_NOTEBOOK, raw)
    assert message in str(err.value)


def test_untyped_parameters_cannot_be_set_and_the_message_says_how_to_fix_it(tmp_path):
    nb = make_notebook(tmp_path / "t.ipynb", 'sizes = [1, 2]\noutput_dir = ""')
    with pytest.raises(ParameterError, match=r"sizes=1: the notebook gives sizes the type "
                                             r"'\?'.*annotate the parameter"):
        check_grid(nb, [("sizes", "1")])


def test_a_notebook_without_output_dir_is_refused(tmp_path):
    nb = make_notebook(tmp_path / "bare.ipynb", "slots: int = 7")
    with pytest.raises(ParameterError, match="notebook bare.ipynb has no 'output_dir' parameter"):
        check_grid(nb, [("slots", "1")])


def test_a_missing_or_broken_notebook_is_named(tmp_path):
    with pytest.raises(ParameterError, match="no_such.ipynb'?: no such file"):
        check_grid(tmp_path / "no_such.ipynb", [])
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    with pytest.raises(ParameterError, match="broken.ipynb'?: cannot read its parameters"):
        check_grid(broken, [])
