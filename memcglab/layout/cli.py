"""``memcglab layout``: print a catalogue struct (or one from a C file) like pahole.

Examples::

    memcglab layout --list
    memcglab layout page_counter --era v5.11 --gcc
    memcglab layout memcg_stock_pcp --era 2025-04 --placement ffffffff83a26e60
    memcglab layout mem_cgroup --era blamed --config MEMCG_V1=n
    memcglab layout my_struct --file my.h --config CONFIG_SMP
    memcglab layout memcg_stock_pcp --slot-table

For ``page_counter`` the header also names what shares ``usage``'s cache line (the
line every charge writes); ``--gcc`` compiles the entry's C text with gcc and says
whether sizeof, _Alignof and every offsetof agree with the printed layout (exit 1 if
not).

A user error (unknown struct, era or config option, unreadable file, bad address,
no gcc for ``--gcc``) exits with status 2 and one line on stderr that names the input
and the valid choices; nothing is printed on stdout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memcglab.layout.catalogue import (
    CATALOGUE,
    DEFAULT_CONFIG,
    KNOWN_CONFIGS,
    CatalogueError,
    era_text,
    resolve_config,
    struct_layout,
)
from memcglab.layout.cparse import CParseError, parse_c
from memcglab.layout.pahole import render

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``memcglab layout``."""
    parser.add_argument("struct", nargs="?", help="catalogue struct (see --list), or a "
                        "struct tag/typedef in --file")
    parser.add_argument("--list", action="store_true", help="list the catalogue: structs, "
                        "eras, sizes under the default config, sources")
    parser.add_argument("--era", help="era of the catalogue struct (default: the entry's)")
    parser.add_argument("--config", action="append", default=[], metavar="NAME[=y|n]",
                        help="enable (NAME or NAME=y) or disable (NAME=n) a config option; "
                        "repeatable; CONFIG_ prefix optional")
    parser.add_argument("--define", action="append", default=[], metavar="NAME=VALUE",
                        help="override a #define, e.g. NR_MEMCG_STOCK=8")
    parser.add_argument("--placement", metavar="ADDR",
                        help="address the object sits at, hexadecimal as objdump -t prints "
                        "it (0x optional)")
    parser.add_argument("--file", type=Path, help="lay out STRUCT from this C file instead "
                        "of the catalogue")
    parser.add_argument("--slot-table", action="store_true", help="memcg_stock_pcp only: "
                        "cache lines a slot scan touches for 1..32 slots")
    parser.add_argument("--gcc", action="store_true", help="compile the catalogue entry's C "
                        "text with gcc and check sizeof, _Alignof and every offsetof")


def _fail(msg: str) -> int:
    one = " ".join(msg.split())  # one line, whatever the message held
    print(f"memcglab layout: error: {one}", file=sys.stderr)
    return 2


def _usage_line(era: str, placement: int | None, config: list[str]) -> str:
    """The header line naming what shares page_counter's usage line."""
    from memcglab.layout.pclines import usage_line
    try:
        ln = usage_line(era, placement or 0, config or None)
    except ValueError as exc:  # "placement=0x10: page_counter v6.1 is 64-byte aligned..."
        why = str(exc).split(": ", 1)[-1]
        raise CatalogueError(f"--placement {placement or 0:#x}: {why}") from None
    others = [f for f in ln.fields if f != "usage"]
    return (f"/* usage's line L{ln.line} also holds: "
            f"{' '.join(others) if others else 'nothing'} */")


def _defines(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise CatalogueError(f"--define {item!r}: expected NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def _placement(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text.removeprefix("0x").removeprefix("0X"), 16)
    except ValueError:
        raise CatalogueError(f"--placement {text!r}: expected a hexadecimal address such "
                             "as ffffffff83a26e60") from None


def _listing() -> str:
    lines = [f"default config: {' '.join(sorted(DEFAULT_CONFIG))}", ""]
    for e in CATALOGUE.values():
        lines.append(f"{e.name}: {e.about}")
        for era, et in e.eras.items():
            size = struct_layout(e.name, era).size
            mark = "*" if era == e.default_era else " "
            pcpu = f" [{et.percpu}]" if et.percpu else ""
            lines.append(f"  {mark}{era:<12} {size:5d} bytes ({size:#x})  {et.summary}{pcpu}")
            lines.append(f"   {'':<12} source: {et.source}")
    lines.append("")
    lines.append("config options: " + ", ".join(KNOWN_CONFIGS))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``memcglab layout``; the exit status (2 for a usage error)."""
    check = None
    try:
        if args.list:
            print(_listing())
            return 0
        if not args.struct:
            return _fail("a STRUCT is required (or --list); the catalogue has: "
                         + ", ".join(CATALOGUE))
        placement = _placement(args.placement)
        defines = _defines(args.define)
        if args.slot_table:
            if args.struct.removeprefix("struct ") != "memcg_stock_pcp" or args.file:
                return _fail("--slot-table applies to the catalogue's memcg_stock_pcp only")
            from memcglab.layout.percpu import slot_table
            print(slot_table(args.era or "v6.16", config=args.config or None).to_string(
                index=False))
            return 0
        if args.gcc and args.file is not None:
            return _fail("--gcc checks catalogue structs; --file texts are not in the catalogue")
        if args.file is not None:
            try:
                text = args.file.read_text()
            except OSError as exc:
                return _fail(f"--file {str(args.file)!r}: {exc.strerror}")
            lay = parse_c(text, resolve_config(args.config, base=["CONFIG_SMP"]),
                          defines).layout(args.struct)
            header = f"/* {args.file}: {lay.name} */"
        else:
            lay = struct_layout(args.struct, args.era, args.config, defines)
            entry = CATALOGUE[args.struct.removeprefix("struct ").strip()]
            era = args.era or entry.default_era
            et = era_text(entry.name, era)
            cfg = " ".join(sorted(resolve_config(args.config))) or "(none)"
            head = [
                f"/* {entry.name}, era {era}: {et.summary}" +
                (f"; {et.percpu}" if et.percpu else "") + " */",
                f"/* source: {et.source} */",
                f"/* config: {cfg} */",
            ]
            if entry.name == "page_counter":
                head.append(_usage_line(era, placement, args.config))
            if args.gcc:
                from memcglab.layout.gcccheck import gcc_check
                check = gcc_check(entry.name, era, args.config, defines)
                head.append(f"/* {check.summary()} */")
            header = "\n".join(head)
    except (CatalogueError, CParseError) as exc:
        return _fail(str(exc))
    except KeyError as exc:
        return _fail(str(exc.args[0]) if exc.args else str(exc))
    except RuntimeError as exc:  # GccError: no gcc, or gcc refused the text
        return _fail(str(exc))
    print(header)
    print(render(lay, placement))
    if check is not None and not check.ok:
        print(f"memcglab layout: gcc disagrees with the model: {check.summary()}",
              file=sys.stderr)
        return 1
    return 0
