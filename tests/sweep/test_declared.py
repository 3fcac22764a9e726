"""A parameter the notebook ignores or overrides is refused by the sweep's parameter check."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from memcglab.resources import study_notebooks
from memcglab.sweep.declared import names_read, read_notebook
from memcglab.sweep.params import ParameterError, check_grid, notebook_types

from .conftest import FIXTURES, make_notebook

DECLARED = FIXTURES / "sweep_declared.ipynb"
PROPOSED = json.loads((FIXTURES / "study_declarations.json").read_text())


def _refused(notebook: Path, *raw: tuple[str, str]) -> str:
    with pytest.raises(ParameterError) as err:
        check_grid(notebook, list(raw))
    return str(err.value)


def test_a_fixed_parameter_is_refused_with_the_notebooks_reason():
    assert _refused(DECLARED, ("policy", "random,lru")) == (
        "policy: sweep_declared.ipynb does not let a sweep set it: every run compares random "
        "and LRU itself, so a sweep over it changes only the column naming it; sweepable: "
        "quick, samples, seeds, slots")
    # one value is refused too: the run would carry a policy it did not use
    assert _refused(DECLARED, ("policy", "lru")).startswith("policy: sweep_declared.ipynb")


def test_what_the_declaration_allows_passes():
    assert check_grid(DECLARED, [("slots", "1,7"), ("seeds", "2,4"), ("samples", "64,4096")]) \
        == {"slots": [1, 7], "seeds": [2, 4], "samples": [64, 4096]}
    assert check_grid(DECLARED, [("quick", "true"), ("seeds", "3"), ("samples", "64,256")]) \
        == {"quick": [True], "seeds": [3], "samples": [64, 256]}


@pytest.mark.parametrize("raw, message", [
    ([("quick", "true"), ("seeds", "2,4")],
     "seeds=2: with quick=True, sweep_declared.ipynb runs seeds=3 whatever it is given (a quick "
     "run uses 3 seeds); sweep seeds without quick=True"),
    # a grid that has any run with quick=True meets the condition
    ([("quick", "false,true"), ("seeds", "4")], "seeds=4: with quick=True"),
    ([("quick", "true"), ("samples", "64,512")],
     "samples=512: with quick=True, sweep_declared.ipynb caps samples at 256 (a quick run caps "
     "the propagation at 256 points); give values up to 256, or sweep samples without "
     "quick=True"),
])
def test_values_the_notebook_overrides_are_refused(raw, message):
    assert message in _refused(DECLARED, *raw)


def _redeclared(tmp_path: Path, sweep: object) -> Path:
    nb = read_notebook(DECLARED)
    nb.metadata["memcglab"] = {"sweep": sweep}
    path = tmp_path / "redeclared.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_parameter_left_out_of_vary_is_refused(tmp_path):
    nb = _redeclared(tmp_path, {"vary": ["slots"]})
    assert _refused(nb, ("seeds", "2,4")) == (
        "seeds: redeclared.ipynb does not declare it sweepable (its metadata "
        "memcglab.sweep.vary); sweepable: slots")


@pytest.mark.parametrize("sweep, message", [
    ({"vary": ["slot"]}, "metadata memcglab.sweep.vary names slot, not a parameter of the "
                         "parameters cell; parameters: policy, quick, samples, seeds, slots"),
    ({"vary": ["slots"], "fixed": {"slots": "no"}}, "slots both in vary and fixed"),
    ({"fixed": {"policy": 3}}, "metadata memcglab.sweep.fixed must map parameters to reasons"),
    ({"varies": ["slots"]}, "metadata memcglab.sweep must be a mapping with keys among fixed, "
                            "overridden, vary"),
    ({"overridden": [{"param": "seeds", "when": {"quick": True}}]},
     "metadata memcglab.sweep.overridden[0] must be"),
    ({"overridden": [{"param": "seeds", "when": {"quick": True}, "value": 3, "max": 4}]},
     "metadata memcglab.sweep.overridden[0] must be"),
    ({"overridden": [{"param": "seeds", "when": {"fast": True}, "value": 3}]},
     "metadata memcglab.sweep.overridden[0].when names fast, not a parameter"),
    ({"overridden": [{"param": "seeds", "when": {"quick": True}, "max": "3"}]},
     "metadata memcglab.sweep.overridden[0].max must be a number"),
])
def test_a_malformed_declaration_is_named(tmp_path, sweep, message):
    text = _refused(_redeclared(tmp_path, sweep), ("slots", "1"))
    assert text.startswith("notebook redeclared.ipynb: ") and message in text


def test_without_a_declaration_a_parameter_no_code_reads_is_refused(tmp_path):
    nb = make_notebook(tmp_path / "plain.ipynb",
                       'a: int = 1\nb: int = 2  # read nowhere\nc: int = 3\noutput_dir = ""',
                       "x = a + 1  # b is only named in this comment",
                       'print(f"{c}")  # an f-string reads c')
    assert check_grid(nb, [("a", "1,2"), ("c", "5")]) == {"a": [1, 2], "c": [5]}
    assert _refused(nb, ("b", "1,2")) == (
        "b: plain.ipynb never reads it (no code cell but the parameters cell names it), so "
        "every run would be the same; sweepable: a, c")


def test_every_parameter_of_the_shipped_studies_is_read_by_their_code():
    # so that the check refuses none of them on its own; what they ignore they declare
    for path in study_notebooks():
        params = set(notebook_types(path))
        assert params and params <= names_read(read_notebook(path)), path.name


@pytest.fixture
def proposed(tmp_path):
    """The shipped study notebooks, each with its own declaration once it has one, until
    then a copy with the declaration proposed for it (study_declarations.json)."""
    assert sorted(PROPOSED) == [p.name for p in study_notebooks()]
    out = {}
    for path in study_notebooks():
        nb = read_notebook(path)
        if "sweep" in nb.metadata.get("memcglab", {}):
            out[path.name[:2]] = path
            continue
        nb.metadata["memcglab"] = {"sweep": PROPOSED[path.name]}
        nbformat.write(nb, tmp_path / path.name)
        out[path.name[:2]] = tmp_path / path.name
    return out


def test_the_proposed_study_declarations_name_real_parameters_and_keep_the_readme_sweeps(
        proposed):
    for nb in proposed.values():
        check_grid(nb, [("quick", "true")])  # parses; quick is sweepable everywhere
    assert check_grid(proposed["02"], [("slots", "1,2,4,7,8,16"),
                                       ("profile", "butt-netperf-72cpu")])["slots"][-1] == 16
    assert check_grid(proposed["02"], [("slots", "1,2,4"), ("quick", "true")])


@pytest.mark.parametrize("study, raw, message", [
    ("02", [("policy", "random,lru")], "policy: 02_policy_and_slots.ipynb does not let a sweep "
                                       "set it: every run already replays random and LRU"),
    ("02", [("quick", "true"), ("seeds", "2,6")], "seeds=2: with quick=True, "
                                                  "02_policy_and_slots.ipynb runs seeds=3"),
    ("03", [("quick", "true"), ("samples", "1024")], "samples=1024: with quick=True"),
    ("04", [("quick", "true"), ("duration", "0.05")], "caps duration at 0.01"),
    ("05", [("quick", "true"), ("mix_messages", "50000")], "caps mix_messages at 20000"),
    ("06", [("quick", "true"), ("points", "128")], "runs points=64 whatever it is given"),
    ("01", [("output_dir", "x")], "output_dir: set by the sweep itself"),
])
def test_the_proposed_study_declarations_refuse_what_the_studies_ignore(
        proposed, study, raw, message):
    assert message in _refused(proposed[study], *raw)
