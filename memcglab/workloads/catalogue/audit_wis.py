"""The will-it-scale part of ``docs/accounting.md``: each test's rows and counts per era.

The will-it-scale tests are the catalogue's only ones whose accounting depends on the
kernel era (:func:`memcglab.workloads.catalogue.wis.accounting_kernel`), so the page
gives each test its rows in every era and what one operation adds up to in each,
from small builds (2 instances, process mode: one 128 MiB cycle for the page faults).
"""

from __future__ import annotations

import functools

from memcglab.workloads.catalogue.build import build
from memcglab.workloads.catalogue.spec import BenchmarkSpec, Machine
from memcglab.workloads.catalogue.tests import TESTS
from memcglab.workloads.catalogue.wis import CYCLE, ERAS, WIS_TESTS

__all__ = ["render_wis", "wis_per_operation"]

_MACHINE = Machine(8, 1, 2)
_OPS = ("charge", "uncharge", "uncharge_direct", "obj_charge", "obj_uncharge")

INTRO = """\
## will-it-scale

The rows implement the settled table of
[the will-it-scale comparison](audit/will-it-scale-comparison.md) (section 5, with the
settlements of section 4) for x86-64 bare metal, THP off for anonymous faults. The
accounting depends on the kernel: `BenchmarkSpec.kernel` is mapped to an era by
`accounting_kernel` (by version order: the newest era not newer than the kernel; v6.2
to v6.17 take v6.1's, since when v6.18's page-table and `folio_batch` paths arrived is
open, section 6 items 1 and 2). Eras v5.9, v5.14 and v6.1 make the same trace; the
stock batch (32, or 64 from v6.1) is the replayed kernel's. Thread mode: one process,
so every instance charges the first instance's memcg. Not in the trace: the VMA,
`anon_vma_chain` and `anon_vma` objects (obj-stock byte moves with no page traffic in
steady state; sizes open, section 6 item 4), the pv-TLB guest rows of D1 (a machine
property, section 6 item 3), and page_fault2/3's first-pass file pages and xarray
nodes (not per operation)."""

_NOTES = {
    "page_fault1": "One operation: a write fault on a fresh page of a 128 MiB anonymous "
                   "mapping, unmapped every 32768 operations.",
    "page_fault2": "As page_fault1, the charged page being the COW copy of a private file "
                   "mapping (`do_cow_fault`); the file's pages are charged on the first "
                   "pass only.",
    "page_fault3": "Writes to a shared file mapping: no page charge in steady state, only "
                   "the page tables (tmpfs has no `page_mkwrite`, D12).",
    "malloc1": "One `malloc(128 MiB)` and `free`: glibc's mmap, one header write (one anon "
               "page and one PTE page), munmap.",
    "unix1": "A 1-byte write and read on the task's own socketpair: the `sk_buff` and its "
             "head, charged and freed on the same CPU through the obj stock (v5.8: the "
             "per-memcg cache clones, no charge; v6.18: no `sk_buff` charge while the NAPI "
             "skb cache holds objects, the `napi_cache` alternative).",
    "lock1": "One `fcntl(F_SETLKW)`: `file_lock_cache` is not accounted in any era (D6), so "
             "no row.",
}


@functools.cache
def wis_per_operation(test: str, kernel: str) -> dict[str, tuple[float, float]]:
    """Trace op -> (count, pages or bytes) per operation of ``test`` under ``kernel``."""
    n = CYCLE if test.startswith("page_fault") else 1000
    bt = build(BenchmarkSpec("will-it-scale", test, {"instances": 2}, _MACHINE,
                             operations=n, kernel=kernel))
    ops = bt.trace.ops[bt.warmup_rows:]
    origin = bt.origin[bt.warmup_rows:]
    out = {op: (0.0, 0.0) for op in _OPS}
    for k, row in enumerate(bt.rows):
        mine = origin == k
        c, a = out[row.trace_op]
        out[row.trace_op] = (c + mine.sum() / bt.operations,
                             a + ops["arg"][mine].sum() / bt.operations)
    return out


def render_wis(row_table, cites) -> list[str]:
    """The section's lines (``row_table`` and ``cites`` are the page's own formatters)."""
    lines = [INTRO, ""]
    for test in WIS_TESTS:
        t = TESTS[("will-it-scale", test)]
        lines += [f"### will-it-scale {test}", "", _NOTES[test], "",
                  f"The benchmark counts {t.counted}.", ""]
        seen: dict[tuple, list[str]] = {}
        for era in ERAS:
            rows = tuple(t.rows({}, era).values())
            seen.setdefault(rows, []).append(era)
        for rows, eras in seen.items():
            lines += [f"Rows, {', '.join(eras)}:", ""]
            lines += [*row_table(rows), "", "Cited:", "", *cites(rows), ""] if rows else \
                ["(none: nothing is charged)", ""]
        lines += ["Per operation (count, and pages or bytes in brackets):", "",
                  "| era | " + " | ".join(_OPS) + " |", "|---|" + "---|" * len(_OPS)]
        for era in ERAS:
            got = wis_per_operation(test, era)
            cells = ["-" if got[op][0] == 0 else f"{got[op][0]:.5f} ({got[op][1]:.4f})"
                     for op in _OPS]
            lines.append(f"| {era} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines
