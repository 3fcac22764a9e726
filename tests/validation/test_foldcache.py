"""The fold cache's key covers everything a fold's fit reads: the development set, the
source, the code and the hardware data (machine profiles, priors, families)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memcglab import resources
from memcglab.calibration.files import read_calibration
from memcglab.validation import foldcache
from memcglab.validation.digest import devset_sha256

DEVSET = "d" * 64


@pytest.fixture
def hardware_copy(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(resources.data_dir() / "hardware", data / "hardware")
    return data


def test_changing_a_machine_profile_changes_the_key(hardware_copy):
    hw = hardware_copy / "hardware"
    before = foldcache.hardware_digest(hw)
    assert before == foldcache.hardware_digest()  # the copy digests like the original
    key = foldcache.fold_key(DEVSET, "src", before)
    assert key == foldcache.fold_key(DEVSET, "src")
    profile = hw / "profiles" / "butt-netperf-72cpu.toml"
    profile.write_text(profile.read_text() + "\n# a changed machine\n")
    after = foldcache.hardware_digest(hw)
    assert after != before
    assert foldcache.fold_key(DEVSET, "src", after) != key
    (hw / "priors.toml").write_text((hw / "priors.toml").read_text() + "\n")
    assert foldcache.hardware_digest(hw) not in (before, after)


def test_a_changed_profile_refits_instead_of_reusing_a_stale_fold(tmp_path, hardware_copy,
                                                                  monkeypatch):
    monkeypatch.setenv("MEMCGLAB_CACHE", str(tmp_path / "cache"))
    default = read_calibration(resources.data_dir() / "calibration" / "default.json")
    fold = type(default)(default.calibration, DEVSET, default.tau, ("src",),
                         default.families, "test")
    calls = []

    def fit():
        calls.append(1)
        return fold

    monkeypatch.setattr(resources, "data_dir", lambda: hardware_copy)
    foldcache.cached_fold(DEVSET, "src", fit)
    foldcache.cached_fold(DEVSET, "src", fit)
    assert len(calls) == 1
    profile = hardware_copy / "hardware" / "profiles" / "hahn-madvise-40cpu.toml"
    profile.write_text(profile.read_text() + "\n# another machine\n")
    foldcache.cached_fold(DEVSET, "src", fit)
    assert len(calls) == 2


def test_the_default_calibration_records_the_development_sets_digest():
    # any edit under data/validation/ (its README included) changes the digest; the
    # default calibration must then be refitted or re-stamped with it
    default = read_calibration(resources.data_dir() / "calibration" / "default.json")
    assert default.devset_sha256 == devset_sha256()
