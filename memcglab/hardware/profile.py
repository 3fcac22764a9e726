"""Machine profiles: a machine's facts plus the hardware priors that hold on it.

A profile file (``data/hardware/profiles/NAME.toml``, or one written by
``memcglab probe``) has a ``[machine]`` table of facts (``cpus``, ``sockets``,
``cores``, ``smt``, ``ghz``, optional ``model`` and ``memory_gb``, the list
``inferred`` of the facts that were guessed rather than stated, and ``source``) and
``[priors.*]`` / ``[curves.*]`` tables that override the generic ones of
``data/hardware/priors.toml``. Loading validates both.

>>> p = load_profile("lkp-2s-224t-spr")
>>> p.cpus, p.sockets, p.smt
(224, 2, 2)
>>> p.priors["l1_hit"].typical, p.cost_params().l1_hit
(5.0, 5.0)
>>> import tempfile, pathlib
>>> f = pathlib.Path(tempfile.mkdtemp()) / "copy.toml"
>>> _ = f.write_text(p.to_toml())
>>> load_profile(f) == p
True
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from memcglab.cost import CostParams
from memcglab.hardware import tomlio
from memcglab.hardware.curves import Curve, curve_from_table
from memcglab.hardware.schema import (
    CURVES,
    PARAMETERS,
    HardwareDataError,
    check_keys,
    number,
    prior_from_table,
    prior_to_table,
    text,
)
from memcglab.resources import data_dir
from memcglab.uncertainty.priors import Prior

__all__ = ["MachineProfile", "hardware_dir", "load_priors", "load_curves",
           "load_profile", "profiles"]

_FACTS = ("cpus", "sockets", "cores", "smt", "ghz")
_FACTS_OPTIONAL = ("model", "memory_gb", "inferred", "source", "note", "family")
_WHICH = ("low", "typical", "high")


def hardware_dir() -> Path:
    """``data/hardware``, installed or in a checkout (:func:`memcglab.resources.data_dir`)."""
    return data_dir() / "hardware"


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise HardwareDataError(path, "", f"not valid TOML: {e}") from None


def _sections(file: object, doc: Mapping[str, Any]) -> tuple[dict[str, Prior], dict[str, Curve]]:
    if doc.get("schema") != 1:
        raise HardwareDataError(file, "schema", f"={doc.get('schema')!r}: must be 1")
    priors = {n: prior_from_table(file, n, t) for n, t in doc.get("priors", {}).items()}
    curves = {n: curve_from_table(file, n, t) for n, t in doc.get("curves", {}).items()}
    return priors, curves


def _generic(directory: Path | None) -> tuple[Path, dict[str, Prior], dict[str, Curve]]:
    path = (directory or hardware_dir()) / "priors.toml"
    doc = _read(path)
    check_keys(path, "top level", doc, ("schema", "priors"), ("curves",))
    priors, curves = _sections(path, doc)
    for name, missing in (("priors", set(PARAMETERS) - set(priors)),
                          ("curves", set(CURVES) - set(curves))):
        if missing:
            raise HardwareDataError(path, name, f": the generic file must define every one; "
                                    f"lacks {', '.join(sorted(missing))}")
    return path, priors, curves


def load_priors(directory: Path | None = None) -> dict[str, Prior]:
    """The generic priors of ``data/hardware/priors.toml`` (or ``directory``), validated.

    >>> sorted(load_priors())[:3]
    ['atomic_rmw', 'c2c_transfer', 'c2c_transfer_cross_socket']
    """
    return _generic(directory)[1]


def load_curves(directory: Path | None = None) -> dict[str, Curve]:
    """The generic curves of ``data/hardware/priors.toml`` (or ``directory``), validated."""
    return _generic(directory)[2]


@dataclass(frozen=True)
class MachineProfile:
    """A machine's facts and the priors of its hardware costs (generic ones overridden).

    ``overrides`` names the priors and curves the profile file sets itself; the rest
    come from ``data/hardware/priors.toml``. ``inferred`` names the facts that were
    guessed, not stated by the source.
    """

    name: str
    cpus: int
    sockets: int
    cores: int
    smt: int
    ghz: float
    priors: dict[str, Prior]
    curves: dict[str, Curve]
    overrides: frozenset[str] = field(default=frozenset(), compare=False)
    model: str = ""
    #: the scenario contract's machine family (data/hardware/families.toml)
    family: str = "generic"
    memory_gb: float | None = None
    inferred: tuple[str, ...] = ()
    source: str = ""
    note: str = ""
    path: Path | None = field(default=None, compare=False)

    def cost_params(self, which: str = "typical") -> CostParams:
        """:class:`CostParams` at every prior's ``low``, ``typical`` or ``high`` value.

        >>> load_profile("generic-x86-64").cost_params("high").c2c_transfer
        350.0
        """
        if which not in _WHICH:
            raise ValueError(f"which={which!r}: must be one of {', '.join(_WHICH)}")
        return CostParams(**{n: float(getattr(self.priors[n], which))
                             for n in CostParams.names()})

    def table(self) -> pd.DataFrame:
        """One row per prior: parameter, unit, low, typical, high, shape, source, overridden.

        >>> float(load_profile("generic-x86-64").table().loc["c2c_transfer", "typical"])
        150.0
        """
        rows = [{"parameter": n, "unit": p.unit, "low": p.low, "typical": p.typical,
                 "high": p.high, "shape": p.shape, "source": p.source,
                 "overridden": n in self.overrides} for n, p in self.priors.items()]
        return pd.DataFrame(rows).set_index("parameter")

    def with_priors(self, priors: Mapping[str, Prior],
                    curves: Mapping[str, Curve] | None = None) -> MachineProfile:
        """A copy where ``priors`` and ``curves`` replace (and override) the current ones."""
        curves = curves or {}
        return replace(self, priors={**self.priors, **priors}, curves={**self.curves, **curves},
                       overrides=self.overrides | set(priors) | set(curves))

    def to_dict(self, full: bool = False) -> dict[str, Any]:
        """The profile as a TOML document: the overrides only, or every prior (``full``)."""
        machine: dict[str, Any] = {"cpus": self.cpus, "sockets": self.sockets,
                                   "cores": self.cores, "smt": self.smt, "ghz": self.ghz}
        if self.model:
            machine["model"] = self.model
        if self.family != "generic":
            machine["family"] = self.family
        if self.memory_gb is not None:
            machine["memory_gb"] = self.memory_gb
        machine |= {"inferred": list(self.inferred), "source": self.source}
        if self.note:
            machine["note"] = self.note
        keep = (lambda n: True) if full else (lambda n: n in self.overrides)
        doc: dict[str, Any] = {"schema": 1, "name": self.name, "machine": machine}
        pri = {n: prior_to_table(p) for n, p in self.priors.items() if keep(n)}
        cur = {n: c.to_table() for n, c in self.curves.items() if keep(n)}
        return doc | ({"priors": pri} if pri else {}) | ({"curves": cur} if cur else {})

    def to_toml(self, full: bool = False) -> str:
        """The profile as TOML text that :func:`load_profile` reads back."""
        return tomlio.dumps(self.to_dict(full))


def _int_fact(file: object, m: Mapping[str, Any], k: str) -> int:
    v = m[k]
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise HardwareDataError(file, f"machine.{k}", f"={v!r}: must be an integer >= 1")
    return v


def _machine(file: object, m: Any) -> dict[str, Any]:
    check_keys(file, "machine", m, _FACTS, _FACTS_OPTIONAL)
    f: dict[str, Any] = {k: _int_fact(file, m, k) for k in ("cpus", "sockets", "cores", "smt")}
    f["ghz"] = number(file, "machine.ghz", m["ghz"])
    if not 0.2 <= f["ghz"] <= 8.0:
        raise HardwareDataError(file, "machine.ghz", f"={f['ghz']}: must lie in [0.2, 8] GHz")
    if not f["sockets"] <= f["cores"] <= f["cpus"] <= f["cores"] * f["smt"]:
        raise HardwareDataError(file, "machine", f": cpus={f['cpus']}, cores={f['cores']}, "
                                f"smt={f['smt']}, sockets={f['sockets']}: need sockets <= "
                                "cores <= cpus <= cores * smt")
    inferred = m.get("inferred", [])
    valid = (*_FACTS, "model", "memory_gb")
    if not isinstance(inferred, list) or any(i not in valid for i in inferred):
        raise HardwareDataError(file, "machine.inferred", f"={inferred!r}: must list facts "
                                f"among {', '.join(valid)}")
    f["inferred"] = tuple(inferred)
    f["model"] = text(file, "machine.model", m.get("model", ""), empty_ok=True)
    f["source"] = text(file, "machine.source", m.get("source", ""))
    f["note"] = text(file, "machine.note", m.get("note", ""), empty_ok=True)
    if "family" in m:
        from memcglab.hardware.families import families

        if m["family"] not in families():
            raise HardwareDataError(file, "machine.family", f"={m['family']!r}: valid: "
                                    f"{', '.join(families())}")
        f["family"] = m["family"]
    if "memory_gb" in m:
        f["memory_gb"] = number(file, "machine.memory_gb", m["memory_gb"])
    return f


def profiles(directory: Path | None = None) -> list[str]:
    """Names of the shipped profiles (``data/hardware/profiles/*.toml``).

    >>> "generic-x86-64" in profiles()
    True
    """
    return sorted(p.stem for p in ((directory or hardware_dir()) / "profiles").glob("*.toml"))


#: shipped profiles renamed in memcglab 0.2.0 (their threads' names, not the project's
#: seed numbers); the old name still loads the profile, under its new name, so the
#: pre-registrations written before the rename read as they did.
FORMER_NAMES = {"seed000-72cpu": "butt-netperf-72cpu", "seed003-40cpu": "hahn-madvise-40cpu",
                "seed004-176cpu-1socket": "lkp-mremap-176cpu-1socket"}


def load_profile(name_or_path: str | Path, directory: Path | None = None) -> MachineProfile:
    """Load a shipped profile by name, or a profile file by path, and validate it.

    >>> load_profile("seed000-72cpu").name  # a name before 0.2.0
    'butt-netperf-72cpu'
    """
    s = FORMER_NAMES.get(str(name_or_path), str(name_or_path))
    path = (Path(s) if s.endswith(".toml") or "/" in s
            else (directory or hardware_dir()) / "profiles" / f"{s}.toml")
    if not path.exists():
        raise FileNotFoundError(f"hardware profile {s!r}: no file {path}; shipped profiles: "
                                f"{', '.join(profiles(directory)) or 'none'}")
    doc = _read(path)
    check_keys(path, "top level", doc, ("schema", "name", "machine"), ("priors", "curves"))
    name = text(path, "name", doc["name"])
    facts = _machine(path, doc["machine"])
    own_priors, own_curves = _sections(path, doc)
    _, priors, curves = _generic(directory)
    if facts.get("family", "generic") != "generic":
        from memcglab.hardware.families import load_family

        priors |= load_family(facts["family"]).priors
    priors |= own_priors
    curves |= own_curves
    for k, pname in (("ghz", "cpu_ghz"), ("smt", "smt_per_core")):
        p = priors[pname]
        if not p.low <= facts[k] <= p.high:
            raise HardwareDataError(path, f"machine.{k}", f"={facts[k]}: outside its prior "
                                    f"{pname} [{p.low}, {p.high}]; override priors.{pname}")
    return MachineProfile(name=name, priors=priors, curves=curves,
                          overrides=frozenset(own_priors) | frozenset(own_curves),
                          path=path, **facts)
