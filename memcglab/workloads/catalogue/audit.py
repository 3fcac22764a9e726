"""The accounting audit page, ``docs/accounting.md``, generated from the catalogue's rows.

``python -m memcglab.workloads.catalogue.audit --write docs/accounting.md`` writes it;
a test checks that the committed page is what :func:`render` makes, so the page and
the generators (which emit the same :class:`AccountingRow` objects) cannot drift.
The per-operation tables come from small builds of each test in both ``sk_reclaim``
eras (:func:`per_operation`), so they show what the rows add up to.
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

from memcglab.workloads.catalogue import audit_second, audit_wis
from memcglab.workloads.catalogue.audit_text import (
    AUDIT_CHANGES,
    CHANGES,
    DIFFERENCES,
    INTRO,
    PLACEMENT,
    TEST_NOTES,
)
from memcglab.workloads.catalogue.build import build, default_operations
from memcglab.workloads.catalogue.rows import SOURCES, AccountingRow
from memcglab.workloads.catalogue.spec import (
    ALTERNATIVES,
    TEST_ALTERNATIVES,
    TEST_DEFAULTS,
    BenchmarkSpec,
    Machine,
)
from memcglab.workloads.catalogue.tests import TESTS

__all__ = ["render", "per_operation", "main"]

#: the small build each per-operation table comes from
_MACHINE = Machine(8, 1, 2)
_OPERATIONS = 1000


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _keys(family: str) -> dict:
    return {"netperf": {"instances": 4}, "lmbench": {"instances": 4},
            "hackbench": {"groups": 2}, "madvise": {"cgroups": 4}}[family]


@functools.cache
def per_operation(family: str, test: str, era: str) -> dict[str, tuple[float, float]]:
    """Row key -> (trace operations, pages or bytes) per benchmark operation, measured part."""
    # hackbench reaches its steady state only over many rounds (a receiver drains its
    # pipe or socket queue_depth of its messages at a time): its own default size
    n = None if family == "hackbench" else _OPERATIONS
    bt = build(BenchmarkSpec(family, test, _keys(family), _MACHINE, sk_reclaim=era,
                             operations=n))
    ops = bt.trace.ops[bt.warmup_rows:]
    origin = bt.origin[bt.warmup_rows:]
    out = {}
    for k, row in enumerate(bt.rows):
        mine = origin == k
        out[row.key] = (mine.sum() / bt.operations, ops["arg"][mine].sum() / bt.operations)
    return out


def _size(family: str, test: str) -> int:
    if family != "hackbench":
        return _OPERATIONS
    return default_operations(BenchmarkSpec(family, test, _keys(family), _MACHINE))


def _row_table(rows: tuple[AccountingRow, ...] | list[AccountingRow]) -> list[str]:
    out = ["| row | kind (trace op) | call chain | GFP | path | memcg of | CPU of | context | "
           "size | how often |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| `{r.key}` | {r.kind} (`{r.trace_op}`) | {_cell(r.chain)} | "
                   f"{_cell(r.gfp)} | {r.path} | {r.target} | {r.cpu} | {r.context} | "
                   f"{_cell(r.size)} | {_cell(r.per_op)} |")
    return out


def _cites(rows: tuple[AccountingRow, ...] | list[AccountingRow]) -> list[str]:
    out = []
    for r in rows:
        cites = "; ".join(f"{c.repo} `{c.path}` @ `{c.commit[:12]}`, `{c.function}`"
                          for c in r.cites)
        out.append(f"- `{r.key}`: {cites}")
    return out


def _measured(family: str, test: str, rows: list[AccountingRow]) -> list[str]:
    eager, lazy = (per_operation(family, test, era) for era in ("eager", "lazy"))
    unit = {"obj_charge": "bytes", "obj_uncharge": "bytes"}
    out = ["| row | trace op | eager: ops per operation | eager: pages or bytes | "
           "lazy: ops per operation | lazy: pages or bytes |", "|---|---|---|---|---|---|"]
    for r in rows:
        e, lz = eager[r.key], lazy[r.key]
        u = unit.get(r.kind, "pages")
        out.append(f"| `{r.key}` | `{r.trace_op}` | {e[0]:.3f} | {e[1]:.1f} {u} | "
                   f"{lz[0]:.3f} | {lz[1]:.1f} {u} |")
    return out


def _alternatives() -> list[str]:
    out = ["| alternative | values (prior) | default | read by | why |", "|---|---|---|---|---|"]
    for name, alt in ALTERNATIVES.items():
        tests = [f"{f} {t}" for (f, t), alts in TEST_ALTERNATIVES.items() if name in alts]
        reads = "every test" if len(tests) == len(TEST_ALTERNATIVES) else ", ".join(tests)
        vals = ", ".join(f"`{v}` ({p:g})" for v, p in zip(alt.values, alt.prior, strict=True))
        own = [f"{f} {t}: `{d[name]}`" for (f, t), d in TEST_DEFAULTS.items() if name in d]
        default = f"`{alt.default}`" + (f" ({'; '.join(own)})" if own else "")
        out.append(f"| `{name}` | {vals} | {default} | {reads} | {_cell(alt.why)} |")
    return out


_OPS = ("charge", "uncharge", "uncharge_direct", "obj_charge", "obj_uncharge")


def _summary() -> list[str]:
    """Per test and era: each trace operation's count and amount per benchmark operation."""
    head = " | ".join(f"{op}" for op in _OPS)
    out = ["## What one operation charges", "",
           "Per benchmark operation, from the same small builds as the per-test tables: each "
           "trace operation's count, and its pages (bytes for the obj rows).", "",
           f"| test | sk_reclaim | {head} |", "|---|---|" + "---|" * len(_OPS)]
    for (fam, test), t in TESTS.items():
        if t.by_kernel:  # per era in the will-it-scale section
            continue
        rows = {r.key: r for r in t.rows(BenchmarkSpec(fam, test, _keys(fam), _MACHINE)
                                          .resolved_keys()).values()}
        for era in ("eager", "lazy"):
            got = per_operation(fam, test, era)
            cells = []
            for op in _OPS:
                n = sum(v[0] for k, v in got.items() if rows[k].trace_op == op)
                a = sum(v[1] for k, v in got.items() if rows[k].trace_op == op)
                cells.append("-" if n == 0 else f"{n:.3f} ({a:.1f})")
            out.append(f"| {fam} {test} | {era} | " + " | ".join(cells) + " |")
    return out


def render() -> str:
    """The whole page, as markdown (MyST)."""
    lines = [INTRO, "", "## Sources", "", "| repository | commit | what was read |",
             "|---|---|---|"]
    lines += [f"| {repo} | `{commit}` | {what} |" for repo, commit, what in SOURCES]
    lines += ["", PLACEMENT, "", "### Modelling alternatives", "", *_alternatives(), ""]
    family = None
    for (fam, test), t in TESTS.items():
        if t.by_kernel:  # the will-it-scale section, per era
            continue
        if fam != family:
            lines += [f"## {fam}", ""]
            family = fam
        rows = list(t.rows(BenchmarkSpec(fam, test, _keys(fam), _MACHINE).resolved_keys())
                    .values())
        roles = "; ".join(f"`{r}`: {what}" for r, what in t.roles.items())
        lines += [f"### {fam} {test}", "",
                  f"One operation: a {t.operation} (the benchmark counts {t.counted}). "
                  f"Tasks per instance, in creation order: {roles}."
                  + (" The server's memcg is the `server_memcg` alternative's."
                     if t.server else ""), "", TEST_NOTES[(fam, test)], "",
                  *_row_table(rows), "", "Cited:", "", *_cites(rows), "",
                  f"Per operation, generated ({_size(fam, test)} operations per instance "
                  f"after warm-up, {_keys(fam)}, default alternatives):", "",
                  *_measured(fam, test, rows), ""]
    lines += [*audit_wis.render_wis(_row_table, _cites), *_summary(), "", CHANGES, "",
              AUDIT_CHANGES, "", DIFFERENCES, "",
              audit_second.render(), "", audit_second.render_will_it_scale(), ""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the page, or write it with ``--write PATH``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="write the page here instead of printing")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        args.write.write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
