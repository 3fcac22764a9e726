"""The sources the studies judge, named as their readers know them: subject, author, date.

Three threads are shipped in ``data/sources/`` (:mod:`memcglab.sources` finds them and
names them); the v4 posting of the page_counter stock is known from its cover letter's
message-id (the lab holds none of its numbers). A claim row names its source with
:func:`name`; the report lists every source once with :func:`cite` (name, message-id,
lore link). The keys are the shipped threads' file names, and ``"v4"``.

>>> name(MULTI)
'memcg: multi-memcg percpu charge cache (Shakeel Butt, April 2025)'
>>> name(RFC).endswith("page_counter (Joshua Hahn, RFC, April 2026)")
True
>>> short(FALSE_SHARING)
'vmstats/events false sharing (Arif, Aug 2026)'
"""

from __future__ import annotations

from dataclasses import dataclass

from memcglab.sources import thread

__all__ = ["FALSE_SHARING", "MULTI", "RFC", "SOURCES", "V4", "Source", "cite", "name",
           "short"]

#: the multi-memcg percpu charge cache thread (the netperf table, the LRU remark, fixes)
MULTI = "000_3cd0fb658cd1bdf0.txt"
#: the page_counter stock RFC (the madvise table)
RFC = "003_2ccc925aaa1f7de9.txt"
#: the vmstats/events false-sharing fix (the mremap regression)
FALSE_SHARING = "004_6be714dbfbc168cf.txt"
#: the page_counter stock as posted in v4 (no numbers in the lab)
V4 = "v4"


@dataclass(frozen=True)
class Source:
    """One source: its full name, a short one for one-line tables, its message-id and link."""

    name: str
    short: str
    message_id: str | None
    url: str


def _thread(file: str, tag: str, short_name: str) -> Source:
    t = thread(file)
    label = t.label
    if tag:  # the posting's tag, as readers distinguish the RFC from later versions
        head, _, tail = label.rpartition(" (")
        label = f"{head} ({tail[:tail.index(',')]}, {tag},{tail[tail.index(',') + 1:]}"
    return Source(label, short_name, t.message_id, t.url)


def _v4() -> Source:
    mid = "20260623180124.868655-1-joshua.hahnjy@gmail.com"
    return Source("mm/memcontrol, page_counter: move stock from mem_cgroup to page_counter "
                  "(Joshua Hahn, v4, June 2026)", "page_counter stock v4 (Hahn, Jun 2026)",
                  mid, f"https://lore.kernel.org/r/{mid}")


def _sources() -> dict[str, Source]:
    return {MULTI: _thread(MULTI, "", "multi-memcg percpu charge cache (Butt, Apr 2025)"),
            RFC: _thread(RFC, "RFC", "page_counter stock RFC (Hahn, Apr 2026)"),
            FALSE_SHARING: _thread(FALSE_SHARING, "",
                                   "vmstats/events false sharing (Arif, Aug 2026)"),
            V4: _v4()}


#: every source a study names, by key
SOURCES: dict[str, Source] = _sources()


def _get(key: str) -> Source:
    if key not in SOURCES:
        raise KeyError(f"source {key!r}: unknown; valid: {', '.join(SOURCES)}")
    return SOURCES[key]


def name(key: str) -> str:
    """The source's full name: subject, then (author, [posting,] month year)."""
    return _get(key).name


def short(key: str) -> str:
    """A short name for a one-line table: a few words of the subject, (author, Mon year)."""
    return _get(key).short


def cite(key: str) -> str:
    """The full name with its message-id (``<id>``, which resolves at
    lore.kernel.org/r/<id>), or how to find the thread when its text carries none."""
    s = _get(key)
    return f"{s.name}, <{s.message_id}>" if s.message_id else \
        f"{s.name} (its message-id is not in the shipped text; lore.kernel.org finds it by " \
        "subject)"
