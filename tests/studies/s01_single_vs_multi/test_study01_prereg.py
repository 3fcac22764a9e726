"""Study 1's pre-registration is pinned: any change is a commit of its own, with its reason."""

from __future__ import annotations

import hashlib
import tomllib

import pytest

from memcglab.resources import data_dir

PINNED = {
    "study01.md": "7629903026af0f7aa3686ecf1ea488a2bb34d40115e76bf638f9e859b7bc9e14",
    "study01.toml": "9badc69e553ff8a86be41ab006685572d4c87c9638a7642d3f74b35865a5cf1c",
    # the dated addendum: where the registered modules live now, and how the registered
    # scoring is worded under the verdict rules' addendum of the same day
    "study01_addendum_2026-12-01.md":
        "a51f87046a9f0403ece3c11b7e3241228162b636910661ad4896f92698c30827",
    # the second dated addendum: "with" predicted from the development-set calibration
    # without the thread's change observations, committed before any code computed it
    "study01_addendum_2026-12-01_calibrated.md":
        "254f1d55913a6fcff19dd50f77b455cb6002930aadac76b263c3bf343dc46ffc",
    # the third: the chosen model (issue 22), with and without [base.measured], scored by
    # the proper rule against the fair baselines, committed before any code computed it
    "study01_addendum_2026-12-03_chosen_model.md":
        "873271c43403ee4df5c0c585fe2b6e050fd077c28cee2a3d15cd40d73274486c",
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_registration_is_unchanged(name):
    data = (data_dir() / "preregistration" / name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == PINNED[name], (
        f"data/preregistration/{name} changed: a registration changes only in a commit of "
        "its own that says why; update PINNED there")


def test_the_twin_states_what_the_words_state():
    doc = tomllib.loads((data_dir() / "preregistration" / "study01.toml").read_text())
    words = (data_dir() / "preregistration" / "study01.md").read_text()
    assert doc["fit"]["parameters"] == ["other_cycles", "c2c_cycles"]
    assert doc["scoring"]["goal_mape_pct"] == 10.0 and doc["scoring"]["goal_rows_covered"] == 6
    for name in doc["priors"]:
        assert f"`{name}`" in words, name
    for name in doc["variants"]:
        assert f"`{name}`" in words, name


def test_the_addendum_names_every_module_the_registration_names_and_where_it_is_now():
    import importlib
    import re

    prereg = data_dir() / "preregistration"
    named = set(re.findall(r"memcglab\.studies\.netperf_[a-z]+",
                           (prereg / "study01.md").read_text()
                           + (prereg / "study01.toml").read_text()))
    addendum = (prereg / "study01_addendum_2026-12-01.md").read_text()
    assert named and all(f"`{n}`" in addendum for n in named)
    for new in re.findall(r"`(memcglab\.studies\.s01_single_vs_multi\.[a-z]+)`", addendum):
        importlib.import_module(new)


def test_the_calibrated_addendum_names_what_the_code_leaves_out():
    from memcglab.studies.s01_single_vs_multi.calibrated import PREDICTIONS_FILE
    from memcglab.validation import study01

    words = (data_dir() / "preregistration"
             / "study01_addendum_2026-12-01_calibrated.md").read_text()
    assert f"`{study01.SOURCE}`" in words
    for case in study01.LEFT_OUT:
        assert case.rsplit("/", 1)[1] in words, case
    assert f"`{PREDICTIONS_FILE}`" in words
    assert f"points={study01.POINTS}" in words and f"{study01.QUICK_POINTS} points" in words
