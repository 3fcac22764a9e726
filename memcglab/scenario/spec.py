"""A scenario file (the scenario contract): parsed, checked, every default filled in.

A scenario describes one published-style experiment: a benchmark on a machine, in a
cgroup layout, run on two kernels, ``base`` and ``new`` (``docs/scenario-contract.md``).
:func:`load_scenario` reads one TOML file into a frozen :class:`Scenario`; a bad file
raises :class:`ScenarioError` whose text is the contract's one line
``SCENARIO: key: what is wrong (valid: ...)``. Nothing is simulated here, so a bad file
fails before any work starts.

>>> import pathlib, tempfile
>>> f = pathlib.Path(tempfile.mkdtemp()) / "rr.toml"
>>> _ = f.write_text('''schema = 1
... name = "netperf TCP_RR"
... [machine]
... profile = "lkp-2s-224t-spr"
... [workload]
... family = "netperf"
... test = "TCP_RR"
... instances = 448
... [base]
... model = "multi"
... [new]
... model = "pcstock-v4"
... ''')
>>> s = load_scenario(f)
>>> s.cgroups.layout, s.cgroups.depth, s.workload.keys["rr_size"], s.base.batch
('lkp', 2, 1, 64)
>>> _ = f.write_text(f.read_text().replace('"TCP_RR"', '"TCP_XX"'))
>>> load_scenario(f)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
memcglab.scenario.spec.ScenarioError: .../rr.toml: workload.test: 'TCP_XX' is not a netperf ...
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcglab import registry
from memcglab.scenario.keys import (
    DESIGN_KEYS,
    ERA_KEYS,
    FAMILIES,
    LAYOUTS,
    MACHINE_FAMILIES,
    WORKLOAD_TESTS,
    KeySpec,
    cgroup_v1_problem,
    compiled_problem,
    design_models,
    obj_stock_problem,
    workload_keys,
)

__all__ = ["Cgroups", "Design", "Machine", "Measured", "Scenario", "ScenarioError",
           "Workload", "load_scenario", "parse_scenario"]

_TOP = {"schema": True, "name": True, "machine": True, "cgroups": False, "workload": True,
        "base": True, "new": True}
_INLINE = ("cpus", "sockets", "threads_per_core", "family")
#: bounds of the inline machine facts (the trace format's 8192 CPUs; sockets as built)
MAX_CPUS, MAX_SOCKETS, MAX_SMT, MAX_DEPTH = 8192, 32, 8, 16


class ScenarioError(ValueError):
    """A scenario file is wrong; ``str()`` is the contract's one-line message."""

    def __init__(self, file: object, key: str, what: str, valid: str) -> None:
        super().__init__(f"{file}: {key}: {what} (valid: {valid})")
        self.file, self.key = str(file), key


@dataclass(frozen=True)
class Machine:
    """A shipped (or given) profile, or the inline facts of the contract."""

    profile: str | None
    cpus: int | None = None
    sockets: int | None = None
    threads_per_core: int | None = None
    family: str | None = None
    ghz: float | None = None


@dataclass(frozen=True)
class Cgroups:
    """Where the benchmark's tasks are charged (the contract's cgroup layouts)."""

    layout: str = "lkp"
    depth: int = 2
    protection: bool = False
    #: cgroup version (revision 2): on 1 kernel memory also charges memcg->kmem
    version: int = 2
    #: cgroup v1 with swap accounting: the memsw counter too
    swap: bool = False


@dataclass(frozen=True)
class Workload:
    """A benchmark test and its keys, every default filled in (``keys`` sorted by name)."""

    family: str
    test: str
    keys: dict[str, Any]

    def __hash__(self) -> int:
        return hash((self.family, self.test, tuple(sorted(self.keys.items()))))


@dataclass(frozen=True)
class Design:
    """One kernel: the replay model and the contract's design keys."""

    model: str
    batch: int = 64
    slots: int = 7
    refill: str = "always"
    sk_reclaim: str = "eager"
    #: revision 2's ``obj_stock``: an obj-stock era to run beside the model; None is the
    #: model's own era (its registry entry's ``obj_stock_era``)
    obj_stock: str | None = None
    #: revision 2's ``page_counter_layout``; None is the model's era's (its registry
    #: entry's ``page_counter_layout``)
    page_counter_layout: str | None = None

    @property
    def layout(self) -> str | None:
        """The struct page_counter layout this kernel runs (None for ``model = "none"``,
        which walks no counter)."""
        if self.page_counter_layout is not None or self.model == "none":
            return self.page_counter_layout
        return registry.model(self.model).page_counter_layout

    @property
    def kernel(self) -> str:
        """The kernel era whose accounting the benchmark follows (the catalogue's
        ``BenchmarkSpec.kernel``): the design's ``obj_stock`` era, else its model's own
        (the registry entry's ``obj_stock_era``), else v6.18, the catalogue's default."""
        if self.obj_stock is not None:
            return self.obj_stock
        if self.model != "none":
            era = registry.model(self.model).obj_stock_era
            if era is not None:
                return era
        return "v6.18"


@dataclass(frozen=True)
class Measured:
    """``[base.measured]`` (contract revision 2): what the user measured on the base kernel."""

    throughput: float
    unit: str = ""
    per: str = "total"
    #: function -> % of all cycles, as ``profile_kind`` says
    profile: tuple[tuple[str, float], ...] = ()
    profile_kind: str = "children"
    idle_pct: float | None = None


@dataclass(frozen=True)
class Scenario:
    """One scenario file, checked."""

    file: str
    name: str
    machine: Machine
    cgroups: Cgroups
    workload: Workload
    base: Design
    new: Design
    measured: Measured | None = None


def _unknown(file: object, where: str, table: dict[str, Any], known: dict[str, Any]) -> None:
    for k in table:
        if k not in known:
            key = f"{where}.{k}" if where else k
            raise ScenarioError(file, key, "unknown key", ", ".join(known))


def _table(file: object, doc: dict[str, Any], key: str) -> dict[str, Any]:
    v = doc.get(key, {})
    if not isinstance(v, dict):
        raise ScenarioError(file, key, f"{v!r} is not a table", f"a [{key}] table")
    return v


def _check(file: object, key: str, spec: KeySpec, value: Any) -> Any:
    problem = spec.problem(value)
    if problem:
        raise ScenarioError(file, key, f"{value!r} {problem}", spec.valid)
    return value


def _beside(file: object, profile: str) -> str:
    """A relative profile path is read beside the scenario file that names it, as a
    config file's includes are; a path found only from the current directory still is."""
    path = Path(profile)
    if (profile.endswith(".toml") or "/" in profile) and not path.is_absolute() \
            and isinstance(file, (str, Path)) and Path(file).is_file():
        beside = Path(file).parent / path
        if beside.is_file():
            return str(beside)
    return profile


def _machine(file: object, m: dict[str, Any]) -> Machine:
    known = {"profile": 1, **dict.fromkeys(_INLINE), "ghz": 1}
    _unknown(file, "machine", m, known)
    if "profile" in m:
        extra = [k for k in m if k != "profile"]
        if extra:
            raise ScenarioError(file, f"machine.{extra[0]}", "given with a profile",
                                "a profile alone, or the inline facts without one")
        p = m["profile"]
        if not isinstance(p, str) or not p:
            raise ScenarioError(file, "machine.profile", f"{p!r} is not a profile name",
                                "a file name under data/hardware/profiles/ or a path")
        return Machine(profile=_beside(file, p))
    for k in _INLINE:
        if k not in m:
            raise ScenarioError(file, f"machine.{k}", "missing",
                                "a profile, or all of cpus, sockets, threads_per_core, family")
    for k, hi in (("cpus", MAX_CPUS), ("sockets", MAX_SOCKETS), ("threads_per_core", MAX_SMT)):
        v = m[k]
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= hi:
            raise ScenarioError(file, f"machine.{k}", f"{v!r} is out of range",
                                f"an integer from 1 to {hi}")
    if m["family"] not in MACHINE_FAMILIES:
        raise ScenarioError(file, "machine.family", f"{m['family']!r} is unknown",
                            ", ".join(MACHINE_FAMILIES))
    if m["cpus"] % (m["sockets"] * m["threads_per_core"]):
        raise ScenarioError(file, "machine.cpus", f"{m['cpus']} is not a multiple of "
                            "sockets x threads_per_core", "cpus = sockets x cores x threads")
    ghz = m.get("ghz")
    if ghz is not None and (isinstance(ghz, bool) or not isinstance(ghz, int | float)
                            or not 0.2 <= ghz <= 8.0):
        raise ScenarioError(file, "machine.ghz", f"{ghz!r} is out of range",
                            "a number from 0.2 to 8 (GHz)")
    return Machine(profile=None, cpus=m["cpus"], sockets=m["sockets"],
                   threads_per_core=m["threads_per_core"], family=m["family"],
                   ghz=None if ghz is None else float(ghz))


def _cgroups(file: object, c: dict[str, Any]) -> Cgroups:
    _unknown(file, "cgroups", c, {"layout": 1, "depth": 1, "protection": 1, "version": 1,
                                  "swap": 1})
    layout = c.get("layout", "lkp")
    if layout not in LAYOUTS:
        raise ScenarioError(file, "cgroups.layout", f"{layout!r} is unknown", ", ".join(LAYOUTS))
    depth = c.get("depth", LAYOUTS[layout])
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise ScenarioError(file, "cgroups.depth", f"{depth!r} is out of range",
                            f"an integer from 1 to {MAX_DEPTH}")
    if layout == "per-instance" and depth < 2:
        raise ScenarioError(file, "cgroups.depth", f"{depth} leaves no shared parent",
                            "2 or more for per-instance (depth - 1 shared ancestors)")
    protection = c.get("protection", False)
    if not isinstance(protection, bool):
        raise ScenarioError(file, "cgroups.protection", f"{protection!r} is not a boolean",
                            "true, false")
    version = c.get("version", 2)
    if isinstance(version, bool) or version not in (1, 2):
        raise ScenarioError(file, "cgroups.version", f"{version!r} is unknown", "1, 2")
    swap = c.get("swap", False)
    if not isinstance(swap, bool):
        raise ScenarioError(file, "cgroups.swap", f"{swap!r} is not a boolean", "true, false")
    if swap and version != 1:
        raise ScenarioError(file, "cgroups.swap", "true needs cgroup v1 (cgroup v2 charges "
                            "swap to its own counter, off the memory charge path)",
                            "false, or version = 1")
    return Cgroups(layout=layout, depth=depth, protection=protection, version=version,
                   swap=swap)


def _workload(file: object, w: dict[str, Any]) -> Workload:
    family = w.get("family")
    if family not in FAMILIES:
        raise ScenarioError(file, "workload.family",
                            "missing" if family is None else f"{family!r} is unknown",
                            ", ".join(FAMILIES))
    test = w.get("test")
    if test not in WORKLOAD_TESTS[family]:
        raise ScenarioError(file, "workload.test",
                            "missing" if test is None else f"{test!r} is not a {family} test",
                            ", ".join(WORKLOAD_TESTS[family]))
    specs = workload_keys(family, test)
    _unknown(file, "workload", w, {"family": 1, "test": 1, **specs})
    keys: dict[str, Any] = {}
    for k, spec in specs.items():
        if k not in w and spec.required:
            raise ScenarioError(file, f"workload.{k}", f"missing (required by {family} {test})",
                                spec.valid)
        keys[k] = _check(file, f"workload.{k}", spec, w.get(k, spec.default))
    return Workload(family=family, test=test, keys=dict(sorted(keys.items())))


#: the functions a ``[base.measured] profile`` may name (the output's profile list)
PROFILE_NAMES = ("try_charge_memcg", "page_counter_try_charge", "page_counter_uncharge",
                 "refill_stock", "drain_stock", "obj_cgroup_charge")
_MEASURED = {"throughput": 1, "unit": 1, "per": 1, "profile": 1, "profile_kind": 1,
             "idle_pct": 1}


def _number(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, int | float)


def _measured(file: object, m: Any) -> Measured:
    where = "base.measured"
    if not isinstance(m, dict):
        raise ScenarioError(file, where, f"{m!r} is not a table", "a [base.measured] table")
    _unknown(file, where, m, _MEASURED)
    t = m.get("throughput")
    if t is None:
        raise ScenarioError(file, f"{where}.throughput", "missing",
                            "the base kernel's operations per second, a number > 0")
    if not _number(t) or not 0 < t < 1e15:
        raise ScenarioError(file, f"{where}.throughput", f"{t!r} is out of range",
                            "a number > 0 (operations per second)")
    unit = m.get("unit", "")
    if not isinstance(unit, str) or len(unit) > 64:
        raise ScenarioError(file, f"{where}.unit", f"{unit!r} is not a short string",
                            "free text of at most 64 characters")
    per = m.get("per", "total")
    if per not in ("total", "instance"):
        raise ScenarioError(file, f"{where}.per", f"{per!r} is unknown", "total, instance")
    kind = m.get("profile_kind", "children")
    if kind not in ("children", "self"):
        raise ScenarioError(file, f"{where}.profile_kind", f"{kind!r} is unknown",
                            "children, self")
    prof = m.get("profile", {})
    if not isinstance(prof, dict):
        raise ScenarioError(file, f"{where}.profile", f"{prof!r} is not a table",
                            "an inline table of function = % of all cycles")
    for fn, share in prof.items():
        if fn not in PROFILE_NAMES:
            raise ScenarioError(file, f"{where}.profile.{fn}", "unknown function",
                                ", ".join(PROFILE_NAMES))
        if not _number(share) or not 0 <= share <= 100:
            raise ScenarioError(file, f"{where}.profile.{fn}", f"{share!r} is out of range",
                                "a number from 0 to 100 (% of all cycles)")
    idle = m.get("idle_pct")
    if idle is not None and (not _number(idle) or not 0 <= idle < 100):
        raise ScenarioError(file, f"{where}.idle_pct", f"{idle!r} is out of range",
                            "a number from 0 to below 100 (% of CPU time)")
    return Measured(throughput=float(t), unit=unit, per=per,
                    profile=tuple((fn, float(v)) for fn, v in prof.items()),
                    profile_kind=kind, idle_pct=None if idle is None else float(idle))


def _design(file: object, which: str, d: dict[str, Any]) -> Design:
    d = {k: v for k, v in d.items() if not (which == "base" and k == "measured")}
    _unknown(file, which, d, {"model": 1, **DESIGN_KEYS, **ERA_KEYS})
    models = design_models()  # live: a plugin registered after import counts
    if "model" not in d:
        raise ScenarioError(file, f"{which}.model", "missing", ", ".join(models))
    if d["model"] not in models:
        name = d["model"]
        known = isinstance(name, str) and name in registry.MODEL_NAMES \
            and registry.model(name).in_scenarios
        what = (f"{name!r} {compiled_problem(name)}; the scenario model counts every kernel "
                "with the compiled engine" if known else f"{name!r} is unknown")
        raise ScenarioError(file, f"{which}.model", what, ", ".join(models))
    vals = {k: _check(file, f"{which}.{k}", s, d.get(k, s.default))
            for k, s in DESIGN_KEYS.items()}
    limit = registry.model(d["model"]).batch_max if d["model"] != "none" else None
    if limit is not None and vals["batch"] > limit:
        entry = registry.model(d["model"])
        raise ScenarioError(file, f"{which}.batch", f"{vals['batch']} is too large for "
                            f"{d['model']!r} ({entry.batch_max_reason})",
                            f"1..{limit} for {d['model']!r}")
    eras = {k: _era(file, which, k, d["model"], d[k]) for k in ERA_KEYS if k in d}
    return Design(model=d["model"], **vals, **eras)


def _era(file: object, which: str, key: str, model: str, value: Any) -> str:
    """A design's ``obj_stock`` or ``page_counter_layout`` (revision 2), checked against
    the registry's eras and layouts and against what the model can run beside."""
    where = f"{which}.{key}"
    valid = ERA_KEYS[key]()
    if value not in valid:
        raise ScenarioError(file, where, f"{value!r} is unknown", ", ".join(valid))
    if model == "none":
        raise ScenarioError(file, where, "is given for model 'none', which charges nothing "
                            "(the root memcg)", "no such key with model = \"none\"")
    if key == "obj_stock":
        problem = obj_stock_problem(model, value)
        if problem:
            raise ScenarioError(file, where, f"{value!r} {problem}", ", ".join(
                e for e in valid if not obj_stock_problem(model, e)))
    return value


def _cgroup_fits(file: object, cgroups: Cgroups, which: str, design: Design) -> None:
    if design.model == "none" or cgroups.version == 2:
        return
    problem = cgroup_v1_problem(design.model)
    if problem:
        raise ScenarioError(file, "cgroups.version", f"1 cannot run {which}.model = "
                            f"{design.model!r} ({problem})",
                            "2, or a model without a page_counter stock")


def parse_scenario(doc: dict[str, Any], file: object = "<scenario>") -> Scenario:
    """Check a parsed TOML document against the contract; fill every default."""
    _unknown(file, "", doc, _TOP)
    for k, required in _TOP.items():
        if required and k not in doc:
            raise ScenarioError(file, k, "missing", "a scenario has schema, name, [machine], "
                                "[workload], [base] and [new]")
    if doc["schema"] != 1 or isinstance(doc["schema"], bool):
        raise ScenarioError(file, "schema", f"{doc['schema']!r} is unsupported", "1")
    name = doc["name"]
    if not isinstance(name, str) or not name.strip():
        raise ScenarioError(file, "name", f"{name!r} is not a non-empty string", "free text")
    base = _table(file, doc, "base")
    measured = _measured(file, base["measured"]) if "measured" in base else None
    machine = _machine(file, _table(file, doc, "machine"))
    cgroups = _cgroups(file, _table(file, doc, "cgroups"))
    workload = _workload(file, _table(file, doc, "workload"))
    designs = {w: _design(file, w, base if w == "base" else _table(file, doc, w))
               for w in ("base", "new")}
    for which, design in designs.items():
        _cgroup_fits(file, cgroups, which, design)
    return Scenario(file=str(file), name=name, machine=machine, cgroups=cgroups,
                    workload=workload, base=designs["base"], new=designs["new"],
                    measured=measured)


def load_scenario(path: str | Path) -> Scenario:
    """Read and check one scenario file; :class:`ScenarioError` names what is wrong."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(p, "file", "does not exist", "a readable TOML file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(p, "file", f"cannot be read ({e.__class__.__name__})",
                            "a readable UTF-8 TOML file") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(p, "file", f"is not valid TOML ({e})", "TOML 1.0") from None
    return parse_scenario(doc, p)
