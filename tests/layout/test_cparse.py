"""The C front end: config switches, kernel annotations, the subset and its errors."""

from __future__ import annotations

import pytest

from memcglab.layout.cparse import CParseError, parse_c
from memcglab.layout.cpp import CppError, preprocess

SMP = {"CONFIG_SMP"}


def test_conditionals_select_fields_per_config():
    text = """
    struct s {
        long a;
    #ifdef CONFIG_A
        long b;
    #elif defined(CONFIG_B) && !IS_ENABLED(CONFIG_C)
        int c;
    #else
        char d;
    #endif
    #if BITS_PER_LONG < 64
        long never;
    #endif
    };"""
    def members(cfg):
        return [m.name for m in parse_c(text, cfg).get("struct s").members]
    assert members({"CONFIG_A"}) == ["a", "b"]
    assert members({"CONFIG_B"}) == ["a", "c"]
    assert members({"CONFIG_B", "CONFIG_C"}) == ["a", "d"]
    assert members(set()) == ["a", "d"]


def test_defines_expand_and_overrides_win_over_the_text():
    text = "#define N 7\nstruct s { unsigned char n[N]; void *p[N]; };"
    assert parse_c(text).get("s").size == 64
    assert parse_c(text, defines={"N": 8}).get("s").size == 72  # n[8], then p[8] at 8


def test_member_annotation_across_lines_becomes_alignas():
    text = """struct s {
        int kmemcg_id;
        struct list_head *cgwb_list;
        struct memcg_vmstats_percpu __percpu *vmstats_percpu
            ____cacheline_aligned_in_smp;
    };"""
    lay = parse_c(text, SMP).layout("s")
    assert lay.locate("vmstats_percpu").offset == 64 and lay.size == 128
    # Without SMP the _in_smp annotations are empty.
    assert parse_c(text, set()).layout("s").locate("vmstats_percpu").offset == 16


def test_struct_level_annotations_and_cacheline_padding():
    text = """struct pc {
        long usage;
        CACHELINE_PADDING(_pad1_);
        long emin;
    } ____cacheline_internodealigned_in_smp;
    typedef struct { int counter; } __attribute__((aligned(16))) a16_t;
    struct __aligned(32) front { char c; };
    struct user { char c; a16_t a; };"""
    ts = parse_c(text, SMP)
    pc = ts.get("struct pc")
    assert (pc.size, pc.align) == (128, 64)
    assert [m.name for m in pc.members] == ["usage", "_pad1_", "emin"]
    assert ts.layout("pc").locate("emin").offset == 64
    assert ts.get("struct user").size == 32
    assert ts.get("struct front").align == 32
    no_smp = parse_c(text, set()).get("struct pc")
    assert (no_smp.size, [m.name for m in no_smp.members]) == (16, ["usage", "emin"])


def test_function_like_macros_expand_as_v6_1_page_counter_uses_them():
    # The shape of v6.1's PC_PADDING: a padding struct and a one-parameter macro, both
    # empty without CONFIG_SMP (the lone ';' left behind is accepted, as gcc accepts it).
    text = """
#if defined(CONFIG_SMP)
struct pad { char x[0]; } ____cacheline_internodealigned_in_smp;
#define PAD(name)  struct pad name
#else
#define PAD(name)
#endif
#define PAIR(t, a, b) t a; t b
struct s { long u; PAD(_p1_); PAIR(long, lo, hi); };
"""
    smp = parse_c(text, {"CONFIG_SMP"}).layout("s")
    assert [(f.path, f.offset) for f in smp.fields] == [
        ("u", 0), ("_p1_", 64), ("lo", 64), ("hi", 72)]
    up = parse_c(text).layout("s")
    assert [(f.path, f.offset) for f in up.fields] == [("u", 0), ("lo", 8), ("hi", 16)]
    with pytest.raises(CParseError, match=r"line 2: PAIR takes 3 argument\(s\), given 2"):
        parse_c("#define PAIR(t, a, b) t a; t b\nstruct s { PAIR(long, x); };")
    with pytest.raises(CParseError, match="variadic macro V"):
        parse_c("#define V(...) __VA_ARGS__\nstruct s { long x; };")


def test_sparse_annotations_are_dropped_and_kernel_typedefs_predefined():
    text = """struct s {
        struct obj_cgroup __rcu *objcg;
        u8 a; s16 b; u32 c; u64 d; bool e; atomic_t f; atomic_long_t g;
        int n;
        long data[] __counted_by(n);
    };"""
    lay = parse_c(text).layout("s")
    assert [(f.path, f.offset) for f in lay.fields] == [
        ("objcg", 0), ("a", 8), ("b", 10), ("c", 12), ("d", 16), ("e", 24), ("f", 28),
        ("g", 32), ("n", 40), ("data", 48)]


def test_enum_constants_size_arrays_and_comments_are_ignored():
    text = """enum ev { LOW, HIGH = 5, /* a comment */ NR };  // trailing
    struct s { long counts[NR * 2]; enum ev e; };"""
    ts = parse_c(text)
    assert ts.constants == {"LOW": 0, "HIGH": 5, "NR": 6}
    assert ts.get("s").size == 12 * 8 + 8


@pytest.mark.parametrize("text, message", [
    ("struct s { int a:3; };", "bit-fields are outside"),
    ("struct s { int a; } __packed;", "packed structs are outside"),
    ("struct s { int a; } __attribute__((packed));", "does not support"),
    ("struct s {\n int x;\n foo_t *y;\n};", r"line 3.*'foo_t' is not a known type"),
    ("struct s { struct later l; };", "struct later is incomplete"),
    ("int x;", "only type definitions"),
    ("struct s { int a[UNKNOWN]; };", "'UNKNOWN' is not a known constant"),
    ("#ifdef X\nstruct s { int a; };", "unterminated #if"),
    ("struct s { int a; };\n#endif", "line 2: #endif without #if"),
])
def test_errors_name_the_problem(text, message):
    with pytest.raises((CParseError, CppError), match=message):
        parse_c(text)


def test_preprocess_keeps_line_numbers():
    src = "/* one\n two */\n#ifdef CONFIG_X\nint a;\n#endif\nint b;"
    out = preprocess(src)
    assert out.count("\n") == src.count("\n")
    assert out.splitlines()[5] == "int b;"


def test_unknown_type_lookup_lists_the_defined_structs():
    ts = parse_c("struct a { int x; }; struct b { int y; };")
    with pytest.raises(KeyError, match="defined: struct a, struct b"):
        ts.get("c")
