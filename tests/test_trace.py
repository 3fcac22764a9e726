"""The trace text format of the replay contract (shared/spec/replay-contract.md).

Every error class the contract lists is checked with the exact line it must name;
round trips and ``validate`` cover the in-memory form.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcglab.trace import (
    HEADER,
    MAX_CPUS,
    MEMCG_ID_MAX,
    NR_MAX,
    OP_CGROUP,
    OP_CHARGE,
    OP_CPU_DEAD,
    OP_DRAIN_ALL,
    OP_DTYPE,
    OP_NAMES,
    OP_OFFLINE,
    OP_SET_MAX,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
    PAGE_COUNTER_MAX,
    PAGES_MAX,
    Trace,
    TraceError,
    make_ops,
    parse_text,
    to_text,
    validate,
)
from tests.contract import EXAMPLE


def trace(*lines: str) -> str:
    """A trace text: the header, then ``lines`` (line 2 onwards), each ending in \\n."""
    return "".join(f"{line}\n" for line in (HEADER, *lines))


def fields(t: Trace) -> list[tuple]:
    """Each operation without its line number: (op, nested, cpu, memcg, parent, arg, irq)."""
    return [row[:6] + row[7:] for row in t.ops.tolist()]


def contract_rows(t: Trace) -> list[tuple]:
    """The contract's fields of each row, (op, nested, cpu, memcg, parent, arg, line),
    after checking that no row has the extension's ``irq`` flag."""
    assert not t.ops["irq"].any()
    return [row[:7] for row in t.ops.tolist()]


def test_contract_example_parses_to_its_fields():
    t = parse_text(EXAMPLE, "ex.trace")
    assert t.cpus == 4 and t.source == "ex.trace" and t.ops.dtype == OP_DTYPE
    # (op, nested, cpu, memcg, parent, arg, line)
    assert contract_rows(t) == [
        (OP_CGROUP, False, -1, 1, 0, PAGE_COUNTER_MAX, 3),
        (OP_CGROUP, False, -1, 2, 1, 5000, 4),
        (OP_CHARGE, False, 0, 2, -1, 3, 5),
        (OP_UNCHARGE, False, 1, 2, -1, 3, 6),
        (OP_UNCHARGE_DIRECT, False, 1, 2, -1, 1, 7),
        (OP_DRAIN_ALL, False, 0, 1, -1, 0, 8),
        (OP_CPU_DEAD, False, 3, 0, -1, 0, 9),
        (OP_SET_MAX, False, -1, 2, -1, 4000, 10),
        (OP_OFFLINE, False, -1, 2, -1, 0, 11),
    ]


def test_bytes_and_str_parse_alike():
    assert parse_text(EXAMPLE.encode()).ops.tolist() == parse_text(EXAMPLE).ops.tolist()


# ----------------------------------------------------------------- accepted forms

def test_trailing_carriage_return_is_ignored_on_every_line():
    crlf = EXAMPLE.replace("\n", "\r\n")
    assert parse_text(crlf).ops.tolist() == parse_text(EXAMPLE).ops.tolist()


def test_comments_blank_lines_tabs_and_leading_zeros():
    messy = trace(
        "# a comment before cpus",
        "",
        "\tcpus\t004   # four",
        "   ",
        "#",
        "cgroup  01 \t 0 max=005000",
        "charge\t0\t01\t0003 nested",
        "charge 0 1 3#no space needed before a comment",
        "\t",
    )
    t = parse_text(messy)
    assert t.cpus == 4
    assert contract_rows(t) == [
        (OP_CGROUP, False, -1, 1, 0, 5000, 7),
        (OP_CHARGE, True, 0, 1, -1, 3, 8),
        (OP_CHARGE, False, 0, 1, -1, 3, 9),
    ]


def test_utf8_in_comments_is_accepted():
    text = trace("cpus 1  # café ✓ 漢字", "# ٣ is not a digit here, only a comment")
    assert parse_text(text.encode("utf-8")).cpus == 1


@pytest.mark.parametrize("body", [
    ("cpus 8192", "cgroup 1 0", f"charge {MAX_CPUS - 1} 1 {NR_MAX}"),
    ("cpus 1", f"cgroup {MEMCG_ID_MAX} 0 max={PAGES_MAX}", f"set_max {MEMCG_ID_MAX} {PAGES_MAX}"),
    ("cpus 2", "cgroup 1 0", "cpu_dead 1", "charge 1 1 1"),  # a dead CPU comes back
    ("cpus 1", "cgroup 1 0", "cgroup 2 1", "offline 2", "offline 1"),  # child first
    ("cpus 1", "uncharge 0 0 5", "uncharge_direct 0 0 5", "drain_all 0 0"),  # root allowed
    ("cpus 1", "cgroup 1 0 nested", "charge 0 1 1 nested", "uncharge 0 1 1 nested",
     "uncharge_direct 0 1 1 nested", "drain_all 0 1 nested", "cpu_dead 0 nested",
     "set_max 1 9 nested", "offline 1 nested", "cgroup 2 0 max=7 nested"),
    ("cpus 1",),  # no operations at all
])
def test_valid_traces_parse(body):
    t = parse_text(trace(*body))
    assert len(t.ops) == len(body) - 1
    assert t.ops["line"].tolist() == list(range(3, 3 + len(body) - 1))


def test_nested_with_single_is_only_an_error_for_single():
    text = trace("cpus 1", "cgroup 1 0", "charge 0 1 1 nested")
    assert bool(parse_text(text).ops["nested"][1])
    with pytest.raises(TraceError) as err:
        parse_text(text, "s.trace", single=True)
    assert (err.value.line, str(err.value)[:10]) == (4, "s.trace:4:")
    assert "nested" in err.value.message and "single" in err.value.message


# ------------------------------------------------------------------ every error

H = HEADER
ONE = ("cpus 2", "cgroup 1 0")  # lines 2-3: a CPU pair and memcg 1 under the root
GONE = (*ONE, "offline 1")      # line 4: memcg 1 offlined

# (trace text, line the error must name, a word the message must contain)
ERRORS = [
    # header: exactly "memcglab-trace 1", nothing after it
    ("", 1, "memcglab-trace 1"),
    ("memcglab-trace 1 \ncpus 1\n", 1, "first line"),
    ("memcglab-trace 1 # comment\ncpus 1\n", 1, "first line"),
    ("memcglab-trace 1#\ncpus 1\n", 1, "first line"),
    ("memcglab-trace 1\tx\ncpus 1\n", 1, "first line"),
    ("memcglab-trace 2\ncpus 1\n", 1, "first line"),
    ("memcglab-trace 01\ncpus 1\n", 1, "first line"),
    ("memcglab-trace  1\ncpus 1\n", 1, "first line"),
    ("memcglab-trace\t1\ncpus 1\n", 1, "first line"),
    (" memcglab-trace 1\ncpus 1\n", 1, "first line"),
    ("Memcglab-trace 1\ncpus 1\n", 1, "first line"),
    ("\ufeffmemcglab-trace 1\ncpus 1\n", 1, "first line"),
    ("memcglab-trace 1\r\r\ncpus 1\n", 1, "first line"),  # only one \r is ignored
    ("# comment\nmemcglab-trace 1\ncpus 1\n", 1, "first line"),
    ("\nmemcglab-trace 1\ncpus 1\n", 1, "first line"),
    # cpus: exactly once, before any operation, 1..8192
    (trace(), 1, "cpus"),
    (trace("# only", "", "# comments"), 4, "cpus"),
    (trace("cgroup 1 0", "cpus 1"), 2, "cpus"),
    (trace("# c", "", "charge 0 1 1"), 4, "cpus"),
    (trace("cpus 1", "cpus 1"), 3, "cpus"),
    (trace("cpus 2", "cgroup 1 0", "cpus 2"), 4, "cpus"),
    (trace("cpus 0"), 2, "cpus"),
    (trace(f"cpus {MAX_CPUS + 1}"), 2, "cpus"),
    (trace("cpus"), 2, "cpus"),
    (trace("cpus 1 2"), 2, "cpus"),
    (trace("cpus 1 nested"), 2, "cpus"),
    (trace("cpus -1"), 2, "cpus"),
    (trace("cpus four"), 2, "cpus"),
    # unknown words; keywords are case-sensitive
    (trace("Cpus 1"), 2, "Cpus"),
    (trace(*ONE, "Charge 0 1 1"), 4, "Charge"),
    (trace(*ONE, "CHARGE 0 1 1"), 4, "CHARGE"),
    (trace(*ONE, "cgroups 2 0"), 4, "cgroups"),
    (trace(*ONE, "drain 0 1"), 4, "drain"),
    (trace(*ONE, "nested"), 4, "nested"),
    (trace(*ONE, "max=5"), 4, "max=5"),
    (trace(*ONE, "cpu_Dead 0"), 4, "cpu_Dead"),
    # missing or extra fields; nested only as the last field
    (trace(*ONE, "charge 0 1"), 4, "charge"),
    (trace(*ONE, "charge 0 1 1 1"), 4, "charge"),
    (trace(*ONE, "uncharge 0 1"), 4, "uncharge"),
    (trace(*ONE, "uncharge_direct 0 1 1 2"), 4, "uncharge_direct"),
    (trace(*ONE, "drain_all 0"), 4, "drain_all"),
    (trace(*ONE, "drain_all 0 1 1"), 4, "drain_all"),
    (trace(*ONE, "cpu_dead"), 4, "cpu_dead"),
    (trace(*ONE, "cpu_dead 0 0"), 4, "cpu_dead"),
    (trace(*ONE, "set_max 1"), 4, "set_max"),
    (trace(*ONE, "set_max 1 2 3"), 4, "set_max"),
    (trace(*ONE, "offline"), 4, "offline"),
    (trace(*ONE, "offline 1 1"), 4, "offline"),
    (trace(*ONE, "cgroup 2"), 4, "cgroup"),
    (trace(*ONE, "cgroup 2 0 5"), 4, "cgroup"),
    (trace(*ONE, "cgroup 2 0 max=5 6"), 4, "cgroup"),
    (trace(*ONE, "cgroup 2 0 max=5 max=6"), 4, "cgroup"),
    (trace(*ONE, "cgroup 2 0 MAX=5"), 4, "cgroup"),
    (trace(*ONE, "cgroup max=5 2 0"), 4, "cgroup"),
    (trace(*ONE, "cgroup 2 0 max="), 4, "max"),
    (trace(*ONE, "charge 0 nested 1 1"), 4, "charge"),
    (trace(*ONE, "nested charge 0 1 1"), 4, "nested"),
    (trace(*ONE, "charge 0 1 1 nested nested"), 4, "charge"),
    (trace(*ONE, "charge 0 1 nested 1"), 4, "charge"),
    (trace(*ONE, "cgroup 2 0 nested max=5"), 4, "cgroup"),
    (trace(*ONE, "charge 0 1 1 Nested"), 4, "charge"),
    # out-of-range values
    (trace(*ONE, "charge 0 1 0"), 4, "NR"),
    (trace(*ONE, f"charge 0 1 {NR_MAX + 1}"), 4, "NR"),
    (trace(*ONE, f"uncharge 0 1 {NR_MAX + 1}"), 4, "NR"),
    (trace(*ONE, "uncharge_direct 0 1 0"), 4, "NR"),
    (trace(*ONE, "set_max 1 0"), 4, "PAGES"),
    (trace(*ONE, f"set_max 1 {PAGES_MAX + 1}"), 4, "PAGES"),
    (trace(*ONE, "cgroup 2 0 max=0"), 4, "max"),
    (trace(*ONE, f"cgroup 2 0 max={PAGES_MAX + 1}"), 4, "max"),
    (trace(*ONE, "cgroup 0 0"), 4, "ID"),
    (trace(*ONE, f"cgroup {MEMCG_ID_MAX + 1} 0"), 4, "ID"),
    (trace(*ONE, f"charge 0 {MEMCG_ID_MAX + 1} 1"), 4, "MEMCG"),
    (trace(*ONE, "charge 0 1 " + "1" * 5000), 4, "NR"),  # past int()'s digit limit
    (trace(*ONE, "charge 0 1 " + "0" * 5000), 4, "NR"),
    (trace(*ONE, f"set_max 1 {'9' * 21}"), 4, "PAGES"),
    # non-numeric: ASCII decimal digits only, no sign, no separators
    (trace(*ONE, "charge 0 1 +5"), 4, "NR"),
    (trace(*ONE, "charge 0 1 -1"), 4, "NR"),
    (trace(*ONE, "charge 0 1 1_000"), 4, "NR"),
    (trace(*ONE, "charge 0 1 \u0663"), 4, "NR"),         # ARABIC-INDIC DIGIT THREE
    (trace(*ONE, "charge 0 1 \uff13"), 4, "NR"),         # FULLWIDTH DIGIT THREE
    (trace(*ONE, "charge \u0660 1 1"), 4, "CPU"),        # ARABIC-INDIC DIGIT ZERO
    (trace("cpus \u0662"), 2, "cpus"),
    (trace(*ONE, "cgroup \u0662 0"), 4, "ID"),
    (trace(*ONE, "cgroup 2 0 max=\u0665"), 4, "max"),
    (trace(*ONE, "charge 0 1 0x10"), 4, "NR"),
    (trace(*ONE, "charge 0 1 1e3"), 4, "NR"),
    (trace(*ONE, "charge 0 1 3.0"), 4, "NR"),
    (trace(*ONE, "charge 0 one 1"), 4, "MEMCG"),
    # only ASCII spaces and tabs separate fields; only \n ends a line
    (trace(*ONE, "charge 0 1\u00a03"), 4, "MEMCG"),     # NO-BREAK SPACE
    (trace(*ONE, "charge 0 1\f3"), 4, "MEMCG"),
    (trace(*ONE, "charge 0 1\v3"), 4, "MEMCG"),
    (trace(*ONE, "charge 0 1 3\u2028charge 0 1 3"), 4, "NR"),  # LINE SEPARATOR
    (trace(*ONE, "charge 0 1 3\rcharge 0 1 3"), 4, "NR"),
    (trace(*ONE, "charge 0 1 3 \r\r"), 4, "charge"),
    # unknown memcg or CPU
    (trace(*ONE, "charge 0 2 1"), 4, "unknown memcg 2"),
    (trace(*ONE, "uncharge 0 2 1"), 4, "unknown memcg 2"),
    (trace(*ONE, "drain_all 0 2"), 4, "unknown memcg 2"),
    (trace(*ONE, "set_max 2 5"), 4, "unknown memcg 2"),
    (trace(*ONE, "offline 2"), 4, "unknown memcg 2"),
    (trace(*ONE, "cgroup 3 2"), 4, "unknown memcg 2"),
    (trace("cpus 1", "cgroup 2 1", "cgroup 1 0"), 3, "unknown memcg 1"),  # before its use
    (trace(*ONE, "charge 2 1 1"), 4, "cpu 2"),
    (trace(*ONE, "uncharge_direct 2 1 1"), 4, "cpu 2"),
    (trace(*ONE, "drain_all 2 1"), 4, "cpu 2"),
    (trace(*ONE, "cpu_dead 2"), 4, "cpu 2"),
    (trace(*ONE, f"charge {MAX_CPUS} 1 1"), 4, "CPU"),
    # duplicate IDs, even of an offlined memcg
    (trace(*ONE, "cgroup 1 0"), 4, "already exists"),
    (trace(*GONE, "cgroup 1 0"), 5, "already exists"),
    # the root: never charged, never limited, never offlined
    (trace(*ONE, "charge 0 0 1"), 4, "root"),
    (trace(*ONE, "set_max 0 5"), 4, "root"),
    (trace(*ONE, "offline 0"), 4, "root"),
    # any use of an offlined memcg
    (trace(*GONE, "charge 0 1 1"), 5, "offline"),
    (trace(*GONE, "uncharge 0 1 1"), 5, "offline"),
    (trace(*GONE, "uncharge_direct 0 1 1"), 5, "offline"),
    (trace(*GONE, "drain_all 0 1"), 5, "offline"),
    (trace(*GONE, "set_max 1 5"), 5, "offline"),
    (trace(*GONE, "offline 1"), 5, "offline"),
    (trace(*GONE, "cgroup 2 1"), 5, "offline"),
    # cgroup v2 refuses to remove a cgroup with live children
    (trace(*ONE, "cgroup 2 1", "offline 1"), 5, "child"),
    (trace(*ONE, "cgroup 2 1", "cgroup 3 2", "offline 3", "offline 1"), 7, "child"),
]


@pytest.mark.parametrize(("text", "line", "word"), ERRORS)
def test_every_error_names_its_line(text, line, word):
    with pytest.raises(TraceError) as err:
        parse_text(text, "bad.trace")
    assert err.value.line == line
    assert str(err.value).startswith(f"bad.trace:{line}: ")
    assert word in err.value.message
    assert len(str(err.value)) < 300  # a 5000-digit field is not echoed whole


@pytest.mark.parametrize(("data", "line"), [
    (b"\xffmemcglab-trace 1\ncpus 1\n", 1),
    (b"memcglab-trace 1\ncpus 1\n# caf\xe9\n", 3),           # Latin-1, not UTF-8
    (b"memcglab-trace 1\ncpus 1\n\n# \xc0\xaf overlong\n", 4),
    (b"memcglab-trace 1\ncpus 1\n# \xed\xa0\x80 surrogate\n", 3),
    (b"memcglab-trace 1\ncpus 1\ncgroup 1 0\ncharge 0 1 3 # \xe2\x82\n", 4),  # truncated
    (b"memcglab-trace 1\ncpus 1\ncgroup 1 0\n\n\n# \x80\n", 6),
])
def test_invalid_utf8_names_its_line(data, line):
    with pytest.raises(TraceError) as err:
        parse_text(data, "b.trace")
    assert err.value.line == line and "UTF-8" in err.value.message


# ------------------------------------------------------------------- round trips

def test_to_text_of_the_example_is_the_example():
    assert to_text(parse_text(EXAMPLE)) == EXAMPLE


def test_to_text_is_canonical():
    messy = trace(
        "# comment", "cpus\t02", "", "cgroup 001 0 max=0064", f"cgroup 2 1 max={PAGE_COUNTER_MAX}",
        "charge 1\t1  05 nested   # irq", "uncharge_direct 0 0 1", "set_max 02 7\r",
    )
    canonical = trace(
        "cpus 2", "cgroup 1 0 max=64", "cgroup 2 1", "charge 1 1 5 nested",
        "uncharge_direct 0 0 1", "set_max 2 7",
    )
    assert to_text(parse_text(messy)) == canonical
    assert to_text(parse_text(canonical)) == canonical


@st.composite
def valid_traces(draw, max_cpus: int = MAX_CPUS, max_nr: int = NR_MAX, max_ops: int = 40,
                 max_pages: int = PAGES_MAX, max_id: int = MEMCG_ID_MAX):
    """A random trace that obeys every rule of the format (unvalidated numpy form)."""
    cpus = draw(st.integers(1, max_cpus))
    online, offline, children = [0], set(), {0: 0}
    parent_of: dict[int, int] = {}
    rows = []
    for _ in range(draw(st.integers(0, max_ops))):
        cpu = draw(st.integers(0, cpus - 1))
        nested = draw(st.booleans())
        kinds = ["cgroup", "uncharge", "uncharge_direct", "drain_all", "cpu_dead"]
        if len(online) > 1:
            kinds += ["charge", "charge", "set_max", "offline"]
        kind = draw(st.sampled_from(kinds))
        live = draw(st.sampled_from(online))
        if kind == "cgroup":
            new = draw(st.integers(1, max_id).filter(
                lambda i: i not in children and i not in offline))
            limit = draw(st.one_of(st.just(PAGE_COUNTER_MAX), st.integers(1, max_pages)))
            rows.append((OP_CGROUP, -1, new, limit, live, nested))
            online.append(new)
            children[new], parent_of[new] = 0, live
            children[live] += 1
            continue
        if kind in ("charge", "set_max", "offline"):
            leaves = [m for m in online[1:] if kind != "offline" or not children[m]]
            live = draw(st.sampled_from(leaves))
        if kind in ("charge", "uncharge", "uncharge_direct"):
            rows.append((OP_NAMES.index(kind), cpu, live, draw(st.integers(1, max_nr)), -1,
                         nested))
        elif kind == "drain_all":
            rows.append((OP_DRAIN_ALL, cpu, live, 0, -1, nested))
        elif kind == "cpu_dead":
            rows.append((OP_CPU_DEAD, cpu, 0, 0, -1, nested))
        elif kind == "set_max":
            rows.append((OP_SET_MAX, -1, live, draw(st.integers(1, max_pages)), -1, nested))
        else:
            rows.append((OP_OFFLINE, -1, live, 0, -1, nested))
            online.remove(live)
            offline.add(live)
            children[parent_of[live]] -= 1
    ops = make_ops(rows) if rows else np.zeros(0, dtype=OP_DTYPE)
    return Trace(cpus, ops)


@st.composite
def messy_rendering(draw, t: Trace) -> str:
    """``t`` written with every freedom the format allows: separators, zeros, comments."""
    sep = st.text(alphabet=" \t", min_size=1, max_size=3)
    pad = st.text(alphabet=" \t", max_size=2)
    eol = st.sampled_from(["\n", "\r\n"])
    comment = st.one_of(st.just(""), st.builds(lambda s: "#" + s, st.text(
        alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\n\r"),
        max_size=8)))
    out = [HEADER + draw(eol)]
    for line in to_text(t).splitlines()[1:]:
        for _ in range(draw(st.integers(0, 2))):  # blank and comment-only lines
            out.append(draw(pad) + draw(comment) + draw(eol))
        words = [("0" * draw(st.integers(0, 2)) + w) if w.isdigit() else
                 ("max=" + "0" * draw(st.integers(0, 2)) + w[4:]) if w.startswith("max=") else w
                 for w in line.split(" ")]
        text = draw(pad) + "".join(w + draw(sep) for w in words[:-1]) + words[-1]
        out.append(text + draw(pad) + draw(comment) + draw(eol))
    return "".join(out)


@settings(max_examples=150, deadline=None)
@given(valid_traces())
def test_random_valid_traces_round_trip(t):
    validate(t)
    text = to_text(t)
    back = parse_text(text)
    assert back.cpus == t.cpus
    assert fields(back) == fields(t)
    assert back.ops["line"].tolist() == list(range(3, 3 + len(t.ops)))
    assert to_text(back) == text


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_every_allowed_spelling_parses_to_the_same_trace(data):
    t = data.draw(valid_traces(max_ops=15))
    messy = data.draw(messy_rendering(t))
    back = parse_text(messy.encode("utf-8"))
    assert back.cpus == t.cpus and fields(back) == fields(t)
    assert to_text(back) == to_text(t)


# ---------------------------------------------------------------------- validate

CG1 = (OP_CGROUP, -1, 1, PAGE_COUNTER_MAX, 0)
OFF1 = (OP_OFFLINE, -1, 1, 0)

# (cpus, rows, index of the bad row (its 1-based position is the line), a word)
INVALID_OPS = [
    (1, [(OP_CHARGE, 0, 1, 1)], 0, "unknown memcg 1"),
    (1, [CG1, (OP_CHARGE, 1, 1, 1)], 1, "cpu 1"),
    (1, [CG1, (OP_CHARGE, -1, 1, 1)], 1, "cpu -1"),
    (1, [CG1, (OP_CPU_DEAD, 3, 0, 0)], 1, "cpu 3"),
    (1, [CG1, (OP_CHARGE, 0, 1, 0)], 1, "NR"),
    (1, [CG1, (OP_UNCHARGE, 0, 1, NR_MAX + 1)], 1, "NR"),
    (1, [CG1, (OP_SET_MAX, -1, 1, 0)], 1, "PAGES"),
    (1, [(OP_CGROUP, -1, 1, 0, 0)], 0, "max"),
    (1, [(OP_CGROUP, -1, 0, 5, 0)], 0, "ID"),
    (1, [(OP_CGROUP, -1, -4, 5, 0)], 0, "ID"),
    (1, [(OP_CGROUP, -1, 2, 5, 1)], 0, "unknown memcg 1"),
    (1, [CG1, CG1], 1, "already exists"),
    (1, [(OP_CHARGE, 0, 0, 1)], 0, "root"),
    (1, [(OP_SET_MAX, -1, 0, 1)], 0, "root"),
    (1, [(OP_OFFLINE, -1, 0, 0)], 0, "root"),
    (1, [CG1, OFF1, (OP_UNCHARGE_DIRECT, 0, 1, 1)], 2, "offline"),
    (1, [CG1, OFF1, (OP_DRAIN_ALL, 0, 1, 0)], 2, "offline"),
    (1, [CG1, OFF1, OFF1], 2, "offline"),
    (1, [CG1, OFF1, (OP_CGROUP, -1, 2, 5, 1)], 2, "offline"),
    (1, [CG1, (OP_CGROUP, -1, 2, 5, 1), OFF1], 2, "child"),
    (1, [CG1, (len(OP_NAMES), -1, 1, 0)], 1, f"operation code {len(OP_NAMES)}"),
]


@pytest.mark.parametrize(("cpus", "rows", "index", "word"), INVALID_OPS)
def test_validate_rejects_what_the_text_format_rejects(cpus, rows, index, word):
    t = Trace(cpus, make_ops(rows), "gen")
    with pytest.raises(TraceError) as err:
        validate(t)
    assert err.value.line == index + 1 and word in err.value.message
    assert str(err.value).startswith(f"gen:{index + 1}: ")


@pytest.mark.parametrize("cpus", [0, MAX_CPUS + 1])
def test_validate_checks_the_cpu_count(cpus):
    with pytest.raises(TraceError) as err:
        validate(Trace(cpus, make_ops([CG1])))
    assert err.value.line == 0 and "cpus" in err.value.message


def test_validate_nested_only_refused_for_single():
    t = Trace(1, make_ops([CG1, (OP_CHARGE, 0, 1, 1, -1, True)]))
    validate(t)
    with pytest.raises(TraceError, match="nested"):
        validate(t, single=True)


def test_validate_reports_the_text_line_of_a_parsed_trace():
    t = parse_text(trace("cpus 1", "# c", "cgroup 1 0", "", "charge 0 1 1"))
    validate(t)
    t.ops["memcg"][1] = 9  # the charge, on line 6
    with pytest.raises(TraceError) as err:
        validate(t)
    assert err.value.line == 6


def test_validate_accepts_root_uncharges_and_drains():
    validate(Trace(2, make_ops([(OP_UNCHARGE, 1, 0, 3), (OP_UNCHARGE_DIRECT, 0, 0, 1),
                                (OP_DRAIN_ALL, 1, 0, 0)])))


def test_trace_requires_the_op_dtype():
    with pytest.raises(TypeError, match="OP_DTYPE"):
        Trace(1, np.zeros(3, dtype=np.int64))
