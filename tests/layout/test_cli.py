"""``memcglab layout``: the pahole view, the listing, and user errors (exit 2, stderr)."""

from __future__ import annotations

import re

import pytest

from memcglab.cli import main


def _run(capsys, *argv):
    rc = main(["layout", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_reviewer_placement_shows_the_slots_straddling(capsys):
    rc, out, err = _run(capsys, "memcg_stock_pcp", "--era", "2025-04",
                        "--placement", "ffffffff83a26e60")
    assert rc == 0 and err == ""
    cached = next(line for line in out.splitlines() if " cached[7];" in line)
    assert cached.split("/*")[1].split() == ["8", "56", "L0-1", "*/"]
    assert "/* size: 136, cachelines: 3, members: 10 */" in out
    rc, out, _ = _run(capsys, "memcg_stock_pcp", "--era", "2025-04",
                      "--placement", "0xffffffff83a2c5c0")
    cached = next(line for line in out.splitlines() if " cached[7];" in line)
    assert cached.split("/*")[1].split() == ["8", "56", "L0", "*/"]


def test_mem_cgroup_blamed_puts_the_pair_on_one_line(capsys):
    rc, out, _ = _run(capsys, "mem_cgroup", "--era", "blamed", "--config", "MEMCG_V1=n")
    assert rc == 0
    row = {}
    for line in out.splitlines():
        m = re.search(r"(\w+)(?:\[\d+\])*;\s+/\*(.*)\*/", line)
        if m:
            row[m.group(1)] = m.group(2).split() + ["*/"]
    ev_off, _, ev_lines, _ = row["memory_events_local"]
    vm_off, _, vm_lines, _ = row["vmstats_percpu"]
    # SWAP_FAIL is the 9th counter of the local array; it shares vmstats_percpu's line.
    assert (int(ev_off) + 64) // 64 == int(vm_off) // 64
    assert ev_lines.endswith(vm_lines[1:])


def test_list_names_every_struct_with_sizes_and_sources(capsys):
    rc, out, err = _run(capsys, "--list")
    assert rc == 0 and err == ""
    assert re.search(r"2025-04\s+136 bytes \(0x88\)", out)
    for needle in ("memcg_stock_pcp", "obj_stock_pcp", "page_counter_stock", "vmpressure",
                   "mem_cgroup", "source: multi-memcg percpu charge cache: 20250416180229"):
        assert needle in out


def test_slot_table_and_file_input(capsys, tmp_path):
    rc, out, _ = _run(capsys, "memcg_stock_pcp", "--slot-table")
    assert rc == 0 and out.splitlines()[0].split()[:3] == ["slots", "sizeof", "lookup_bytes"]
    assert len(out.splitlines()) == 33
    h = tmp_path / "mine.h"
    h.write_text("struct mine { char c; long l ____cacheline_aligned_in_smp; };")
    rc, out, _ = _run(capsys, "mine", "--file", str(h))
    assert rc == 0 and "/* size: 128, cachelines: 2, members: 2 */" in out


@pytest.mark.parametrize("argv, needle", [
    (["memcg_stock"], "the catalogue has: memcg_stock_pcp, obj_stock_pcp"),
    (["memcg_stock_pcp", "--era", "v9"], "valid: v6.14, v6.15, 2025-04, v6.16, 2026"),
    (["mem_cgroup", "--config", "MEMCG_V2"], "valid: CONFIG_CGROUP_WRITEBACK"),
    (["memcg_stock_pcp", "--placement", "xyz"], "hexadecimal address"),
    (["memcg_stock_pcp", "--define", "NR_MEMCG_STOCK"], "expected NAME=VALUE"),
    ([], "a STRUCT is required"),
    (["vmpressure", "--slot-table"], "memcg_stock_pcp only"),
    (["x", "--file", "/nonexistent/x.h"], "--file '/nonexistent/x.h'"),
])
def test_user_errors_exit_2_with_stderr_only(capsys, argv, needle):
    rc, out, err = _run(capsys, *argv)
    assert rc == 2 and out == ""
    assert needle in err and err.startswith("memcglab layout: error:")


def test_parse_error_in_a_file_names_the_line(capsys, tmp_path):
    h = tmp_path / "bad.h"
    h.write_text("struct s {\n  int a;\n  mystery_t b;\n};\n")
    rc, out, err = _run(capsys, "s", "--file", str(h))
    assert rc == 2 and out == "" and "line 3" in err and "mystery_t" in err
