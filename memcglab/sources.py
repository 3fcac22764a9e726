"""The mail threads the published tables were transcribed from, shipped in ``data/sources/``.

Each published table (:mod:`memcglab.published`) names its thread by ``seed_file``; this
module finds that file in a checkout or an installed wheel
(:func:`memcglab.resources.data_dir`), names the thread as its readers know it, and
checks a table's excerpts and quotes against the mail text, so every transcribed
figure can be traced to the words it came from.

>>> t = thread("000_3cd0fb658cd1bdf0.txt")
>>> t.label
'memcg: multi-memcg percpu charge cache (Shakeel Butt, April 2025)'
>>> t.url
'https://lore.kernel.org/r/20250416180229.2902751-1-shakeel.butt@linux.dev'
>>> is_verbatim("the dumb one was always better ... by 1% to 3%", t.text())
True
"""

from __future__ import annotations

import calendar
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from memcglab.resources import data_dir

__all__ = ["CATALOGUE", "Thread", "is_verbatim", "sources_dir", "thread", "threads",
           "unverified"]

#: the catalogue of the threads in data/sources/
CATALOGUE = "sources.json"
_TAGS = re.compile(r"^(\[[^\]]*\]\s*)+")
_MARKERS = re.compile(r"^[>+*\s]+")


def sources_dir() -> Path:
    """``data/sources/``: the mail threads, as text, and their catalogue."""
    return data_dir() / "sources"


@dataclass(frozen=True)
class Thread:
    """One mail thread: where it is, and how its readers name and find it."""

    file: str
    subject: str
    author: str
    date: str
    message_id: str | None
    url: str
    contains: str
    sha256: str
    messages: tuple[dict[str, Any], ...] = field(default=())

    @property
    def path(self) -> Path:
        """The thread's text file."""
        return sources_dir() / self.file

    @property
    def label(self) -> str:
        """Subject without its ``[PATCH ...]`` tags, then (author, month year)."""
        year, month = int(self.date[:4]), int(self.date[5:7])
        return (f"{_TAGS.sub('', self.subject)} "
                f"({self.author}, {calendar.month_name[month]} {year})")

    def text(self) -> str:
        """The thread as text (UTF-8), unchanged."""
        return self.path.read_text(encoding="utf-8")


@cache
def threads() -> dict[str, Thread]:
    """Every thread of the catalogue, by file name."""
    raw = json.loads((sources_dir() / CATALOGUE).read_text(encoding="utf-8"))
    out = {}
    for entry in raw["threads"]:
        entry = dict(entry)
        entry["messages"] = tuple(entry.get("messages", ()))
        out[entry["file"]] = Thread(**entry)
    return out


def thread(file: str) -> Thread:
    """The thread a published table's ``seed_file`` names; KeyError lists the valid ones."""
    known = threads()
    if file not in known:
        raise KeyError(f"seed_file={file!r}: no such thread in {sources_dir()}; valid: "
                       f"{', '.join(sorted(known))}")
    return known[file]


def _flat(text: str) -> str:
    # mail bodies wrap lines, and quoting ("> "), diff ("+") and comment (" * ") markers
    # start them: a quote is verbatim up to these
    return " ".join(" ".join(_MARKERS.sub("", line) for line in text.splitlines()).split())


def is_verbatim(quote: str, text: str) -> bool:
    """``quote`` is in ``text`` up to line wrapping and markers, its `` ... `` gaps any words.

    >>> mail = "> The older behavior (fully drain) might be due to\\n> a limit\\n"
    >>> is_verbatim("The older behavior (fully drain) ... a limit", mail)
    True
    >>> is_verbatim("The older behavior (fully drain) a limit", mail)
    False
    """
    pos, flat = 0, _flat(text)
    for part in quote.split(" ... "):
        pos = flat.find(_flat(part), pos)
        if pos < 0:
            return False
        pos += len(_flat(part))
    return True


def unverified(table: Any) -> list[str]:
    """The excerpt lines and quotes of a published table that its thread does not hold.

    ``table`` is a :class:`memcglab.published.PublishedTable`. An excerpt line must
    appear exactly in the mail; a quote verbatim up to :func:`is_verbatim`. A table
    from several threads names each row's in its ``seed_file`` column.
    """
    if "source" in table.meta:
        files = [table.meta["source"]["seed_file"]] * len(table.frame)
    else:
        files = table.frame["seed_file"].tolist()
    missing = []
    if table.meta.get("excerpt"):
        text = thread(files[0]).text()
        missing += [line for line in table.meta["excerpt"] if line not in text]
    if "quote" in table.frame:
        for file, quote in zip(files, table.frame["quote"], strict=True):
            if not is_verbatim(quote, thread(file).text()):
                missing.append(quote)
    return missing
