"""A catalogue entry checked by gcc: the kernel's C text compiled, every offsetof compared.

:func:`gcc_check` hands gcc the same text the catalogue parses (the building-block
types and the era's struct, kernel annotations and ``#ifdef``\\ s as written) with
the kernel's macros defined as include/linux/cache.h and compiler_attributes.h
define them for x86-64, the config's options as ``-D`` flags, and a ``main`` that
prints ``sizeof``, ``_Alignof`` and the ``offsetof`` of every member path. The
model passes when all of them agree. Unlike the random-struct cross-check
(tests/layout/test_gcc_crosscheck.py), this one also tests the catalogue's own
preprocessing: padding macros, ``_in_smp`` alignments, config switches.

>>> import shutil
>>> check = gcc_check("page_counter", "v6.1") if shutil.which("gcc") else None
>>> check is None or (check.ok, check.size, check.align) == (True, 192, 64)
True
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from memcglab.layout.catalogue import _entry, era_text, resolve_config, struct_layout
from memcglab.layout.cemit import leaf_paths
from memcglab.layout.cparse import prelude_for
from memcglab.layout.cpp import PREDEFINED, STRUCT_ALIGN_MARKER
from memcglab.layout.kernel_types import KERNEL_TYPES

__all__ = ["GccCheck", "GccError", "KERNEL_MACROS", "gcc_check"]

#: The kernel's layout macros for gcc: include/linux/cache.h (x86-64, no vSMP, so
#: INTERNODE_CACHE_SHIFT is L1_CACHE_SHIFT) and compiler_attributes.h; the sparse
#: annotations are empty for the compiler, as they are in the kernel.
KERNEL_MACROS = r"""
#define __aligned(x) __attribute__((__aligned__(x)))
#define ____cacheline_aligned __attribute__((__aligned__(SMP_CACHE_BYTES)))
#define __cacheline_aligned ____cacheline_aligned
#ifdef CONFIG_SMP
#define ____cacheline_aligned_in_smp ____cacheline_aligned
#define __cacheline_aligned_in_smp __cacheline_aligned
#define ____cacheline_internodealigned_in_smp \
    __attribute__((__aligned__(1 << (INTERNODE_CACHE_SHIFT))))
#define CACHELINE_PADDING(name) struct cacheline_padding name
#else
#define ____cacheline_aligned_in_smp
#define __cacheline_aligned_in_smp
#define ____cacheline_internodealigned_in_smp
#define CACHELINE_PADDING(name)
#endif
#define context_lock_struct(name) struct name
#define __counted_by(x)
#define __counted_by_ptr(x)
#define __guarded_by(x)
#define __pt_guarded_by(x)
""" + "".join(f"#define {w}\n" for w in (
    "__percpu", "__rcu", "__iomem", "__user", "__force", "__private", "__bitwise",
    "__randomize_layout", "__no_randomize_layout", "__read_mostly", "__kernel", "__safe",
    "__nocast"))


class GccError(RuntimeError):
    """gcc is missing, rejected the text, or its program failed; the message says which."""


@dataclass(frozen=True)
class GccCheck:
    """gcc's layout of one catalogue struct beside the model's."""

    struct: str
    era: str
    compiler: str            # gcc's version line
    size: int                # gcc's sizeof
    align: int               # gcc's _Alignof
    checked: int             # member paths whose offsetof was compared
    mismatches: tuple[str, ...]  # "min: model 8, gcc 64", sizeof and _Alignof included

    @property
    def ok(self) -> bool:
        """Whether sizeof, _Alignof and every offsetof agree."""
        return not self.mismatches

    def summary(self) -> str:
        """One line for the CLI's header."""
        verdict = ("sizeof, _Alignof and all offsetof agree" if self.ok else
                   f"{len(self.mismatches)} differences: " + "; ".join(self.mismatches))
        return f"gcc check ({self.compiler}): {self.checked} offsets; {verdict}"


def _flags(config: Iterable[str], defines: Mapping[str, str]) -> list[str]:
    out = [f"-D{k}={v}" for k, v in PREDEFINED.items()]
    out += [f"-D{opt}=1" for opt in sorted(config)]
    out += [f"-D{k}={v}" for k, v in sorted(defines.items())]
    return out


def gcc_check(name: str, era: str | None = None,
              config: Iterable[str] | Mapping[str, bool] | None = None,
              defines: Mapping[str, int | str] | None = None,
              gcc: str | None = None) -> GccCheck:
    """Compile catalogue struct ``name`` in ``era`` with gcc and compare it with the model.

    ``config`` and ``defines`` are those of
    :func:`~memcglab.layout.catalogue.struct_layout`. Raises :class:`GccError` when
    there is no gcc or it rejects the text.
    """
    entry = _entry(name)
    era = entry.default_era if era is None else era
    et = era_text(entry.name, era)
    cfg = resolve_config(config)
    defs = {**dict(et.defines), **{k: str(v) for k, v in (defines or {}).items()}}
    lay = struct_layout(entry.name, era, config, defines)
    cc = gcc or shutil.which("gcc")
    if cc is None:
        raise GccError("gcc not found on PATH: the check compiles the struct's C text")
    tag = f"struct {entry.name}"
    paths = [p for p in leaf_paths(lay.record) if STRUCT_ALIGN_MARKER not in p]
    text = KERNEL_TYPES + et.text
    prints = [f'    printf("%lu %lu\\n", (unsigned long)sizeof({tag}), '
              f"(unsigned long)_Alignof({tag}));"]
    prints += [f'    printf("%lu\\n", (unsigned long)__builtin_offsetof({tag}, {p}));'
               for p in paths]
    src = "\n".join(["int printf(const char *, ...);", KERNEL_MACROS, prelude_for(text), text,
                     "int main(void)", "{", *prints, "    return 0;", "}", ""])
    with tempfile.TemporaryDirectory(prefix="memcglab-gcc-") as tmp:
        c, exe = Path(tmp) / "layout.c", Path(tmp) / "layout"
        c.write_text(src)
        try:
            built = subprocess.run([cc, "-std=gnu11", "-w", "-O0", *_flags(cfg, defs), str(c),
                                    "-o", str(exe)], capture_output=True, text=True)
        except OSError as exc:
            raise GccError(f"cannot run {cc}: {exc.strerror}") from None
        if built.returncode != 0:
            first = next((ln for ln in built.stderr.splitlines() if "error" in ln),
                         built.stderr.strip()[:300])
            raise GccError(f"gcc rejected {entry.name} era {era}: {first}")
        ran = subprocess.run([str(exe)], capture_output=True, text=True)
        if ran.returncode != 0:
            raise GccError(f"the layout program for {entry.name} era {era} failed")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    nums = [int(x) for x in ran.stdout.split()]
    size, align, offsets = nums[0], nums[1], nums[2:]
    bad = []
    if size != lay.size:
        bad.append(f"sizeof: model {lay.size}, gcc {size}")
    if align != lay.align:
        bad.append(f"_Alignof: model {lay.align}, gcc {align}")
    for p, off in zip(paths, offsets, strict=True):
        mine = lay.locate(p).offset
        if mine != off:
            bad.append(f"{p}: model {mine}, gcc {off}")
    return GccCheck(entry.name, era, version.splitlines()[0] if version else cc, size, align,
                    len(paths), tuple(bad))
