"""docs/accounting.md is generated from the catalogue's rows: the committed page is current."""

from __future__ import annotations

import re
from pathlib import Path

from memcglab.workloads.catalogue import TESTS, BenchmarkSpec, Machine
from memcglab.workloads.catalogue.audit import render
from memcglab.workloads.catalogue.rows import SOURCES

PAGE = Path(__file__).resolve().parents[2] / "docs" / "accounting.md"


def test_the_committed_page_is_what_the_rows_make():
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/accounting.md is stale: python -m memcglab.workloads.catalogue.audit "
        "--write docs/accounting.md")


def test_every_row_cites_a_pinned_source_and_every_test_has_a_section():
    repos = {repo for repo, _, _ in SOURCES}
    text = render()
    for (family, test), t in TESTS.items():
        assert f"### {family} {test}" in text
        keys = {"netperf": {"instances": 1}, "lmbench": {"instances": 1},
                "hackbench": {"groups": 1}, "madvise": {"cgroups": 1},
                "will-it-scale": {"instances": 1}}[family]
        rows = t.rows(BenchmarkSpec(family, test, keys, Machine(4)).resolved_keys())
        for row in rows.values():
            assert row.cites, f"{family} {test} {row.key} cites nothing"
            for c in row.cites:
                assert c.repo in repos and re.fullmatch(r"[0-9a-f]{40}", c.commit), c
                assert c.path and c.function


def test_the_page_keeps_the_second_reading_section_and_no_placeholder():
    text = render()
    assert "## Second reading and disagreements" in text
    for marker in ("TODO", "TBD", "XXX", "FIXME", "lorem"):
        assert marker not in text
