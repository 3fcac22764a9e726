"""Malformed hardware files fail with an error that names the file, the field and what is valid."""

from __future__ import annotations

import copy
import shutil
import tomllib
from pathlib import Path

import pytest

from memcglab.hardware import HardwareDataError, hardware_dir, load_priors, load_profile
from memcglab.hardware.tomlio import dumps

GENERIC = tomllib.loads((hardware_dir() / "priors.toml").read_text())
PROFILE = tomllib.loads((hardware_dir() / "profiles" / "lkp-2s-224t-spr.toml").read_text())


def _set(doc: dict, path: str, value) -> dict:
    doc = copy.deepcopy(doc)
    *keys, last = path.split(".")
    t = doc
    for k in keys:
        t = t[k]
    if value is _DELETE:
        del t[last]
    else:
        t[last] = value
    return doc


_DELETE = object()


def _dir_with(tmp_path: Path, priors: dict) -> Path:
    d = tmp_path / "hw"
    (d / "profiles").mkdir(parents=True)
    (d / "priors.toml").write_text(dumps(priors))
    return d


@pytest.mark.parametrize("path, value, field, valid", [
    ("priors.l1_hit.unit", "ns", "priors.l1_hit.unit", "valid units: cycles"),
    ("priors.cpu_ghz.unit", "MHz", "priors.cpu_ghz.unit", "valid units: GHz"),
    ("priors.call.source", "", "priors.call.source", "non-empty string"),
    ("priors.call.source", _DELETE, "priors.call", "lacks source"),
    ("priors.call.shape", "normal", "priors.call.shape", "triangular, pert"),
    ("priors.call.low", 99.0, "priors.call", "need low <= typical <= high"),
    ("priors.call.high", "40", "priors.call.high", "finite number"),
    ("priors.c2c_transfer.high", 1e9, "priors.c2c_transfer.high", "plausible range"),
    ("priors.c2c_transfer.colour", "red", "priors.c2c_transfer", "unknown key(s) colour"),
    ("priors.l2_hit", {"unit": "cycles", "low": 1, "typical": 2, "high": 3,
                       "shape": "uniform", "source": "x"}, "priors.l2_hit", "valid: l1_hit"),
    ("priors.random_u32", _DELETE, "priors", "lacks random_u32"),
    ("curves.contended_rmw.low", [1.0, 2.0], "curves.contended_rmw.low", "list of 7"),
    ("curves.contended_rmw.sharers", [1, 4, 2, 8, 16, 32, 64],
     "curves.contended_rmw.sharers", "strictly increasing"),
    ("curves.contended_rmw.unit", "cycles", "curves.contended_rmw.unit", "valid units: ns"),
    ("schema", 2, "schema", "must be 1"),
])
def test_malformed_priors_file(tmp_path, path, value, field, valid):
    d = _dir_with(tmp_path, _set(GENERIC, path, value))
    with pytest.raises(HardwareDataError) as e:
        load_priors(d)
    msg = str(e.value)
    assert msg.startswith(str(d / "priors.toml") + ": " + field), msg
    assert valid in msg


@pytest.mark.parametrize("path, value, field, valid", [
    ("machine.cpus", 0, "machine.cpus", "integer >= 1"),
    ("machine.cpus", 2.5, "machine.cpus", "integer >= 1"),
    ("machine.cores", 300, "machine", "need sockets <= cores <= cpus <= cores * smt"),
    ("machine.inferred", ["colour"], "machine.inferred", "among cpus, sockets"),
    ("machine.source", "", "machine.source", "non-empty string"),
    ("machine.ghz", 9.5, "machine.ghz", "[0.2, 8] GHz"),
    ("machine.ghz", 4.5, "machine.ghz", "outside its prior cpu_ghz"),
    ("machine.smt", 4, "machine.smt", "outside its prior smt_per_core"),
    ("machine", _DELETE, "top level", "lacks machine"),
    ("priors.l1_hit.unit", "ns", "priors.l1_hit.unit", "valid units: cycles"),
    ("priors.cpu_ghz.source", "  ", "priors.cpu_ghz.source", "non-empty string"),
])
def test_malformed_profile(tmp_path, path, value, field, valid):
    d = _dir_with(tmp_path, GENERIC)
    f = d / "profiles" / "bad.toml"
    f.write_text(dumps(_set(PROFILE, path, value)))
    with pytest.raises(HardwareDataError) as e:
        load_profile("bad", directory=d)
    msg = str(e.value)
    assert msg.startswith(f"{f}: {field}"), msg
    assert valid in msg


def test_invalid_toml_names_the_file(tmp_path):
    d = _dir_with(tmp_path, GENERIC)
    f = d / "profiles" / "broken.toml"
    f.write_text("schema = 1\n[machine\n")
    with pytest.raises(HardwareDataError, match=r"broken\.toml: not valid TOML"):
        load_profile(f)


def test_the_shipped_directory_is_valid_when_copied(tmp_path):
    # the loader finds everything relative to the directory it is given
    d = tmp_path / "copy"
    shutil.copytree(hardware_dir(), d)
    assert load_priors(d) == load_priors()
    assert load_profile("hahn-madvise-40cpu", directory=d).memory_gb == 50.0
