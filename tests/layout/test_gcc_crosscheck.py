"""The layout model against gcc: random structs, sizeof/_Alignof/every offsetof.

Hypothesis draws 25 lists of 10 random structs; each struct is checked three ways:
the Python-built model, the model of the same struct written as C and parsed back,
and gcc, which compiles all 250 in one file (one invocation) and prints sizeof,
_Alignof and every offsetof.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcglab.layout.abi import SCALARS, Array, CType, Enum, Member, Pointer, Record
from memcglab.layout.cemit import leaf_paths, to_c
from memcglab.layout.cparse import parse_c

GCC = shutil.which("gcc")
pytestmark = pytest.mark.skipif(
    GCC is None, reason="gcc not found on PATH: the layout cross-check needs a C compiler")

# Hypothesis draws structs in small lists (a long list of recursive structs overruns
# its choice buffer); all of them are then compiled in one gcc invocation.
PER_EXAMPLE = 10
EXAMPLES = 25
_scalars = [t for n, t in SCALARS.items() if "__int128" not in n]
_names = st.sampled_from([f"m{i}" for i in range(40)])


def _enum() -> st.SearchStrategy[CType]:
    small = st.integers(-(2**31), 2**31 - 1)
    big = st.integers(-(2**40), 2**40)
    return st.lists(st.one_of(small, big), min_size=1, max_size=3).map(
        lambda vs: Enum(None, tuple((f"V{i}", v) for i, v in enumerate(vs))))


leaf = st.one_of(st.sampled_from(_scalars), st.just(Pointer("void")), _enum())


def _member_align(t: CType) -> st.SearchStrategy[int]:
    # _Alignas may only make a member stricter (C11 6.7.5).
    return st.one_of(st.just(0), st.sampled_from([a for a in (1, 2, 4, 8, 16, 32, 64, 128)
                                                   if a >= t.align]))


def _records(children: st.SearchStrategy[CType]) -> st.SearchStrategy[CType]:
    @st.composite
    def build(draw: st.DrawFn) -> Record:
        kind = draw(st.sampled_from(["struct", "struct", "union"]))
        n = draw(st.integers(0, 6))
        used: set[str] = set()
        members: list[Member] = []
        for _ in range(n):
            t = draw(st.one_of(children, children.map(lambda e: e),
                               st.tuples(children, st.integers(0, 4)).map(
                                   lambda p: Array(p[0], p[1]))))
            anon = isinstance(t, Record) and draw(st.booleans())
            name = None
            if not anon:
                name = draw(_names.filter(lambda x: x not in used))
                used.add(name)
            members.append(Member(name, t, draw(_member_align(t)) if name else 0))
        if anon_clash(members):
            members = [m for m in members if m.name is not None]
        align_attr = draw(st.sampled_from([0, 0, 0, 2, 8, 16, 64]))
        return Record(kind, None, tuple(members), align_attr)
    return build()


def anon_clash(members: list[Member]) -> bool:
    """Anonymous members' names share the outer namespace; avoid duplicates."""
    seen: list[str] = []
    for m in members:
        if m.name is not None:
            seen.append(m.name)
        elif isinstance(m.type, Record):
            seen += leaf_paths(m.type)
    return len(seen) != len(set(seen))


types = st.recursive(leaf, _records, max_leaves=12)


@st.composite
def top_records(draw: st.DrawFn) -> Record:
    rec = draw(_records(types))
    assert isinstance(rec, Record)
    if rec.kind == "struct" and rec.members and draw(st.integers(0, 4)) == 0:
        # A flexible array member, last in a struct with other named members.
        elem = draw(leaf)
        name = draw(_names.filter(lambda x: x not in leaf_paths(rec)))
        rec = Record("struct", None, rec.members + (Member(name, Array(elem, None)),),
                     rec.align_attr)
    return rec


def _gcc_layouts(tmp_path, recs: list[Record]) -> list[list[int]]:
    counter = itertools.count()
    defs = [to_c(r, f"t{i}", counter) for i, r in enumerate(recs)]
    prints = []
    for i, r in enumerate(recs):
        t = f"{r.kind} t{i}"
        args = [f"sizeof({t})", f"_Alignof({t})"]
        args += [f"__builtin_offsetof({t}, {p})" for p in leaf_paths(r)]
        fmt = " ".join(["%zu"] * len(args))
        prints.append(f'    printf("{fmt}\\n", {", ".join(f"(size_t){a}" for a in args)});')
    src = "#include <stdio.h>\n#include <stddef.h>\n" + "\n".join(defs) + (
        "\nint main(void)\n{\n" + "\n".join(prints) + "\n    return 0;\n}\n")
    c = tmp_path / "layout.c"
    exe = tmp_path / "layout"
    c.write_text(src)
    cc = subprocess.run([GCC, "-std=gnu11", "-w", "-O0", str(c), "-o", str(exe)],
                        capture_output=True, text=True)
    assert cc.returncode == 0, f"gcc rejected the generated C:\n{cc.stderr[:2000]}"
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return [[int(x) for x in line.split()] for line in out.splitlines()], "\n".join(defs)


def _model(rec: Record) -> list[int]:
    from memcglab.layout.layout import layout
    lay = layout(rec)
    return [rec.size, rec.align] + [lay.locate(p).offset for p in leaf_paths(rec)]


def test_model_matches_gcc_on_random_structs(tmp_path):
    batch: list[Record] = []

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.lists(top_records(), min_size=PER_EXAMPLE, max_size=PER_EXAMPLE))
    def model_and_parser_agree(recs: list[Record]) -> None:
        counter = itertools.count()
        text = "\n".join(to_c(r, f"t{i}", counter) for i, r in enumerate(recs))
        parsed = parse_c(text)
        for i, rec in enumerate(recs):
            back = parsed.get(f"{rec.kind} t{i}")
            assert isinstance(back, Record)
            assert _model(back) == _model(rec), f"parsed struct t{i}:\n{to_c(rec, f't{i}')}"
        batch.extend(recs)

    model_and_parser_agree()
    assert len(batch) >= 200
    gcc, _ = _gcc_layouts(tmp_path, batch)
    bad = [i for i, rec in enumerate(batch) if _model(rec) != gcc[i]]
    assert not bad, "\n".join(
        f"struct t{i}: model {_model(batch[i])} gcc {gcc[i]}\n{to_c(batch[i], f't{i}')}"
        for i in bad[:3])
