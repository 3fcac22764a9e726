"""The kernel struct catalogue: each struct, per era, laid out for a kernel config.

Every entry is C text in the kernel's field order (see
:mod:`~memcglab.layout.catalogue_stock`, :mod:`~memcglab.layout.catalogue_memcg`,
the 2021-2022 page_counter relayouts in :mod:`~memcglab.layout.catalogue_pc` and the
building blocks in :mod:`~memcglab.layout.kernel_types`), parsed by
:func:`~memcglab.layout.cparse.parse_c`, with its source cited per era;
:func:`~memcglab.layout.gcccheck.gcc_check` compiles the same text with gcc.

A config is a set of enabled ``CONFIG_`` options. :data:`DEFAULT_CONFIG` is the
kernel notes' convention (x86-64 SMP, no lockdep, !PREEMPT_RT) with the options a
distribution kernel of 2026 enables: ``CONFIG_MEMCG_V1`` is off (its default since
it became optional), ``CONFIG_CGROUP_WRITEBACK`` and ``CONFIG_ZSWAP`` are on.

>>> struct_layout("memcg_stock_pcp", era="2025-04").size
136
>>> struct_layout("memcg_stock_pcp", era="v6.16", defines={"NR_MEMCG_STOCK": 8}).size
120
>>> struct_layout("vmpressure", era="blamed").size, struct_layout(
...     "vmpressure", era="blamed", config=["CONFIG_MEMCG_V1"]).size
(24, 112)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from memcglab.layout.catalogue_memcg import (
    MEM_CGROUP,
    PAGE_COUNTER,
    PAGE_COUNTER_STOCK,
    VMPRESSURE,
)
from memcglab.layout.catalogue_stock import MEMCG_STOCK, OBJ_STOCK
from memcglab.layout.cparse import parse_c
from memcglab.layout.kernel_types import KERNEL_TYPES, EraText
from memcglab.layout.layout import StructLayout

__all__ = ["CatalogueError", "Entry", "CATALOGUE", "KNOWN_CONFIGS", "DEFAULT_CONFIG",
           "resolve_config", "struct_layout", "relevant_configs"]


class CatalogueError(ValueError):
    """An unknown struct, era or config option; the message lists the valid ones."""


@dataclass(frozen=True)
class Entry:
    """A catalogue struct: its C tag, what it is, and its eras (the default first)."""

    name: str
    about: str
    eras: Mapping[str, EraText]
    default_era: str


CATALOGUE: dict[str, Entry] = {e.name: e for e in [
    Entry("memcg_stock_pcp", "per-CPU memcg charge stock (mm/memcontrol.c)", MEMCG_STOCK,
          "v6.16"),
    Entry("obj_stock_pcp", "per-CPU objcg byte stock (mm/memcontrol.c)", OBJ_STOCK, "v6.16"),
    Entry("page_counter", "hierarchical page counter (include/linux/page_counter.h)",
          PAGE_COUNTER, "v6.16"),
    Entry("page_counter_stock", "per-CPU stock of the page_counter-stock series (E5)",
          PAGE_COUNTER_STOCK, "2026"),
    Entry("vmpressure", "reclaim-pressure state embedded in mem_cgroup", VMPRESSURE,
          "blamed"),
    Entry("mem_cgroup", "struct mem_cgroup from memory on (the false-sharing fix's part)",
          MEM_CGROUP, "blamed"),
]}

#: The config options the catalogue's texts test, with what they change.
KNOWN_CONFIGS: dict[str, str] = {
    "CONFIG_SMP": "cacheline alignment and CACHELINE_PADDING (off: both vanish)",
    "CONFIG_MEMCG_V1": "cgroup v1 fields in mem_cgroup and vmpressure",
    "CONFIG_CGROUP_WRITEBACK": "cgwb_list, cgwb_domain, cgwb_frn in mem_cgroup",
    "CONFIG_ZSWAP": "zswap_max and zswap_writeback in mem_cgroup",
    "CONFIG_LRU_GEN_WALKS_MMU": "mm_list in mem_cgroup",
    "CONFIG_MEMCG_NMI_SAFETY_REQUIRES_ATOMIC": "kmem_stat in mem_cgroup",
    "CONFIG_DEBUG_LOCK_ALLOC": "lockdep_map in every lock (selects CONFIG_LOCKDEP)",
    "CONFIG_LOCKDEP": "lockdep_map in work_struct and timer_list",
    "CONFIG_LOCK_STAT": "cpu and ip in lockdep_map (selects CONFIG_DEBUG_LOCK_ALLOC)",
    "CONFIG_DEBUG_SPINLOCK": "magic, owner_cpu, owner in raw_spinlock_t",
    "CONFIG_DEBUG_MUTEXES": "magic in struct mutex",
    "CONFIG_MUTEX_SPIN_ON_OWNER": "osq in struct mutex",
    "CONFIG_HOTPLUG_CPU": "list in percpu_counter",
    "CONFIG_PREEMPT_RT": "spinlock_t, mutex and local locks become rtmutex based",
}

DEFAULT_CONFIG: frozenset[str] = frozenset({
    "CONFIG_SMP", "CONFIG_CGROUP_WRITEBACK", "CONFIG_ZSWAP", "CONFIG_MUTEX_SPIN_ON_OWNER",
    "CONFIG_HOTPLUG_CPU",
})

# Kconfig "select"s that change layout.
_SELECTS = {
    "CONFIG_DEBUG_LOCK_ALLOC": ("CONFIG_LOCKDEP",),
    "CONFIG_LOCK_STAT": ("CONFIG_DEBUG_LOCK_ALLOC", "CONFIG_LOCKDEP"),
}


def _canonical(name: str) -> str:
    n = name.strip()
    return n if n.startswith("CONFIG_") else f"CONFIG_{n}"


def resolve_config(config: Iterable[str] | Mapping[str, bool] | None = None,
                   base: Iterable[str] = DEFAULT_CONFIG) -> frozenset[str]:
    """The enabled options: ``base`` changed by ``config``.

    ``config`` is either a mapping ``{name: enabled}`` or items ``NAME``, ``NAME=y`` or
    ``NAME=n`` (the ``CONFIG_`` prefix is optional). Selected options follow.

    >>> sorted(resolve_config(["LOCK_STAT", "ZSWAP=n"], base=["CONFIG_SMP"]))
    ['CONFIG_DEBUG_LOCK_ALLOC', 'CONFIG_LOCKDEP', 'CONFIG_LOCK_STAT', 'CONFIG_SMP']
    """
    enabled = set(base)
    if isinstance(config, Mapping):
        items = [(k, bool(v)) for k, v in config.items()]
    else:
        items = []
        for raw in config or ():
            name, _, val = raw.partition("=")
            if val and val.strip().lower() not in ("y", "n", "1", "0"):
                raise CatalogueError(f"config {raw!r}: the value must be y or n")
            items.append((name, val.strip().lower() not in ("n", "0")))
    for name, on in items:
        key = _canonical(name)
        if key not in KNOWN_CONFIGS:
            raise CatalogueError(f"unknown config option {name!r}; valid: "
                                 f"{', '.join(sorted(KNOWN_CONFIGS))}")
        (enabled.add if on else enabled.discard)(key)
    for opt, sel in _SELECTS.items():
        if opt in enabled:
            enabled.update(sel)
    return frozenset(enabled)


def _entry(name: str) -> Entry:
    key = name.removeprefix("struct ").strip()
    if key not in CATALOGUE:
        raise CatalogueError(f"unknown struct {name!r}; the catalogue has: "
                             f"{', '.join(CATALOGUE)}")
    return CATALOGUE[key]


def era_text(name: str, era: str | None = None) -> EraText:
    """The C text of catalogue struct ``name`` in ``era`` (default: its default era)."""
    e = _entry(name)
    era = e.default_era if era is None else era
    if era not in e.eras:
        raise CatalogueError(f"unknown era {era!r} for {e.name}; valid: {', '.join(e.eras)}")
    return e.eras[era]


@lru_cache(maxsize=256)
def _cached(name: str, era: str, config: frozenset[str],
            defines: tuple[tuple[str, str], ...]) -> StructLayout:
    et = era_text(name, era)
    space = parse_c(KERNEL_TYPES + et.text, config, dict(et.defines + defines))
    return space.layout(f"struct {_entry(name).name}")


def struct_layout(name: str, era: str | None = None,
                  config: Iterable[str] | Mapping[str, bool] | None = None,
                  defines: Mapping[str, int | str] | None = None) -> StructLayout:
    """Lay out catalogue struct ``name`` for ``era`` under ``config`` (see resolve_config)."""
    e = _entry(name)
    era = e.default_era if era is None else era
    era_text(name, era)  # validates the era
    cfg = resolve_config(config)
    defs = tuple(sorted((k, str(v)) for k, v in (defines or {}).items()))
    return _cached(e.name, era, cfg, defs)


def relevant_configs(name: str, era: str | None = None) -> list[str]:
    """The options that change this struct's layout in this era (found by toggling each)."""
    base = struct_layout(name, era)
    out = []
    for opt in KNOWN_CONFIGS:
        flipped = {opt: opt not in resolve_config()}
        other = struct_layout(name, era, flipped)
        if [(f.path, f.offset, f.size) for f in other.fields] != \
                [(f.path, f.offset, f.size) for f in base.fields] or other.size != base.size:
            out.append(opt)
    return out
