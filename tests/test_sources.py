"""The mail threads in data/sources/: unchanged, catalogued, shipped, and they hold every
excerpt and quote the published tables take from them."""

from __future__ import annotations

import calendar
import dataclasses
import hashlib
import importlib.util
import json
import re
from pathlib import Path

import pytest

from memcglab import published, sources
from memcglab.resources import data_dir

ROOT = Path(__file__).resolve().parents[1]
README = sources.sources_dir() / "README.md"
LORE = "https://lore.kernel.org/r/"


def _seed_files(table: published.PublishedTable) -> set[str]:
    if "source" in table.meta:
        return {table.source["seed_file"]}
    return set(table.frame["seed_file"])


def test_every_file_is_catalogued_and_unchanged():
    files = {p.name for p in sources.sources_dir().iterdir()} - {"README.md", sources.CATALOGUE}
    assert files == set(sources.threads()) and len(files) == 3
    for t in sources.threads().values():
        assert hashlib.sha256(t.path.read_bytes()).hexdigest() == t.sha256, t.file


def test_each_thread_has_a_subject_author_date_and_an_archive_link():
    for t in sources.threads().values():
        assert t.subject.startswith("[PATCH") and t.author and re.fullmatch(r"\d{4}-\d\d-\d\d",
                                                                            t.date)
        if t.message_id is None:  # found on lore by its subject instead
            assert t.url.startswith("https://lore.kernel.org/all/?q=s%3A")
        else:
            assert t.url == LORE + t.message_id
        assert re.sub(r"^(\[[^\]]*\]\s*)+", "", t.subject) in t.text().splitlines()[0]


def test_the_readme_names_every_thread_as_the_catalogue_does():
    text = README.read_text()
    for t in sources.threads().values():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{t.file}`"))
        day = f"{int(t.date[8:])} {calendar.month_abbr[int(t.date[5:7])]} {t.date[:4]}"
        assert t.subject in row and f"{t.author}, {day}" in row, row
        assert f"<{t.url}>" in row
        assert (f"`{t.message_id}`" if t.message_id else "not in the text") in row
        for m in t.messages:
            assert m["message_id"] in text and m["author"] in text


def test_every_published_table_names_a_shipped_thread_by_its_subject():
    for name in published.table_names():
        table = published.load(name)
        files = _seed_files(table)
        assert files and files <= set(sources.threads()), name
        subjects = ({table.source["thread_subject"]} if "source" in table.meta
                    else set(table.frame["thread_subject"]))
        assert subjects <= {sources.thread(f).subject for f in files}, name
        if "source" in table.meta and table.source.get("message_id"):
            t = sources.thread(table.source["seed_file"])
            assert table.source["message_id"] in {t.message_id} | {
                m["message_id"] for m in t.messages}, name


@pytest.mark.parametrize("name", published.table_names())
def test_every_excerpt_and_quote_is_in_its_thread(name):
    assert sources.unverified(published.load(name)) == []


def test_a_quote_that_is_not_in_the_thread_is_reported():
    table = published.load("thread_quotes")
    frame = table.frame.copy()
    frame.loc[0, "quote"] = frame.loc[0, "quote"].replace("a", "e", 1)
    bad = dataclasses.replace(table, frame=frame)
    assert sources.unverified(bad) == [frame.loc[0, "quote"]]
    meta = json.loads(json.dumps(published.load("seed000_netperf").meta))
    meta["excerpt"][1] = meta["excerpt"][1].replace("42584.1", "42548.1")
    assert sources.unverified(dataclasses.replace(published.load("seed000_netperf"),
                                                  meta=meta)) == [meta["excerpt"][1]]


def test_an_unknown_seed_file_lists_the_threads():
    with pytest.raises(KeyError, match="seed_file='999.txt': no such thread .*valid: 000_"):
        sources.thread("999.txt")


def test_the_wheel_ships_the_threads_beside_the_tables():
    spec = importlib.util.spec_from_file_location("memcglab_setup", ROOT / "setup.py")
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    shipped = setup.shipped_files(ROOT)
    for name in [*sources.threads(), sources.CATALOGUE, "README.md"]:
        assert f"memcglab/_data/sources/{name}" in shipped
    assert sources.sources_dir() == data_dir() / "sources"


def test_the_published_readme_and_sidecars_point_only_at_files_a_clone_has():
    texts = {p.name: p.read_text() for p in (data_dir() / "published").glob("*.json")}
    texts["README.md"] = (data_dir() / "published" / "README.md").read_text()
    for name, text in texts.items():
        assert "shared/" not in text and "kernel-notes" not in text, name
        for ref in re.findall(r"data/[\w/.-]+", text):
            assert (data_dir().parent / ref).exists() or (data_dir() / ref[5:]).exists(), \
                (name, ref)
