"""Machine families: the priors that change with the CPU family (``data/hardware/families.toml``).

A scenario names its machine by a shipped profile or by four facts and a family
(the scenario contract's "Machine families"). :func:`load_family` reads one family's
priors (checked like every hardware prior); :func:`profile_from_facts` builds a
:class:`~memcglab.hardware.MachineProfile` from the facts: the generic priors, then
the family's, then the machine's own (the clock, SMT).

>>> f = load_family("ice-lake")
>>> f.priors["c2c_transfer"].typical, sorted(f.priors)[:2]
(135.0, ['c2c_transfer', 'c2c_transfer_cross_socket'])
>>> p = profile_from_facts(cpus=128, sockets=2, threads_per_core=2, family="ice-lake")
>>> p.cores, p.ghz, p.family, p.priors["cpu_ghz"].typical
(64, 2.8, 'ice-lake', 2.8)
>>> load_family("ice lake")
Traceback (most recent call last):
...
ValueError: family='ice lake': unknown; valid: sapphire-rapids, emerald-rapids, ice-lake, \
cooper-lake, cascade-lake, skylake, haswell, zen2, zen3, zen4, generic
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from memcglab.hardware.schema import (
    HardwareDataError,
    check_keys,
    prior_from_table,
    text,
)
from memcglab.resources import data_dir
from memcglab.uncertainty.priors import Prior

__all__ = ["Family", "families", "load_family", "profile_from_facts"]


@dataclass(frozen=True)
class Family:
    """One machine family: its name, what it is, and the priors it overrides."""

    name: str
    description: str
    priors: dict[str, Prior]


def _path() -> Path:
    return data_dir() / "hardware" / "families.toml"


@lru_cache(maxsize=1)
def _load_all() -> dict[str, Family]:
    path = _path()
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise HardwareDataError(path, "", f"not valid TOML: {e}") from None
    check_keys(path, "top level", doc, ("schema", "families"))
    if doc["schema"] != 1:
        raise HardwareDataError(path, "schema", f"={doc['schema']!r}: must be 1")
    out: dict[str, Family] = {}
    for name, t in doc["families"].items():
        where = f"families.{name}"
        check_keys(path, where, t, ("description",), ("priors",))
        priors = {k: prior_from_table(path, k, v) for k, v in t.get("priors", {}).items()}
        out[name] = Family(name, text(path, f"{where}.description", t["description"]), priors)
    return out


def families() -> tuple[str, ...]:
    """The family names, in the file's order."""
    return tuple(_load_all())


def load_family(name: str) -> Family:
    """One family; ValueError names the valid ones."""
    known = _load_all()
    if name not in known:
        raise ValueError(f"family={name!r}: unknown; valid: {', '.join(known)}")
    return known[name]


def profile_from_facts(cpus: int, sockets: int, threads_per_core: int, family: str,
                       ghz: float | None = None):
    """A machine profile from the scenario contract's inline facts.

    The clock is ``ghz`` when given (then a point prior), else the family's typical
    all-core clock; the SMT prior is the stated ``threads_per_core``.
    """
    from memcglab.hardware.profile import load_profile

    fam = load_family(family)
    base = load_profile("generic-x86-64")
    priors = dict(fam.priors)
    clock = priors.get("cpu_ghz", base.priors["cpu_ghz"])
    if ghz is not None:
        clock = Prior("cpu_ghz", "GHz", ghz, ghz, ghz, "point", "stated in the scenario file")
    priors["cpu_ghz"] = clock
    priors["smt_per_core"] = Prior("smt_per_core", "threads", float(threads_per_core),
                                   float(threads_per_core), float(threads_per_core), "point",
                                   "stated in the scenario file")
    profile = base.with_priors(priors)
    return replace(profile, name=f"{family}-{sockets}s-{cpus}t", cpus=cpus, sockets=sockets,
                   cores=cpus // threads_per_core, smt=threads_per_core,
                   ghz=float(clock.typical), family=family, model="inline facts",
                   inferred=() if ghz is not None else ("ghz",),
                   source="the scenario file's [machine] facts", note="", path=None)
