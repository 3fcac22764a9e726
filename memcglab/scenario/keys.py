"""The scenario contract's vocabulary: families, tests, layouts, and every key's rule.

Each key is a :class:`KeySpec`: its default (``None`` when required), what is valid,
and a check. The workload keys, tests and layouts are the benchmark catalogue's
(:mod:`memcglab.workloads.catalogue.spec`, which holds the contract's "Workloads" and
"Cgroup layouts" tables once); the design keys and machine families are here.

>>> workload_keys("netperf", "TCP_RR")["rr_size"].default
1
>>> sorted(workload_keys("netperf", "TCP_SENDFILE"))
['instances', 'ip', 'send_size']
>>> DESIGN_KEYS["refill"].problem("sometimes")
'is unknown'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memcglab import registry
from memcglab.models import BATCH_MAX
from memcglab.models import MODEL_NAMES as REPLAY_MODELS
from memcglab.workloads.catalogue.spec import FAMILIES as CATALOGUE_FAMILIES
from memcglab.workloads.catalogue.spec import LAYOUTS, MAX_INSTANCES, keys_of

__all__ = ["DESIGN_KEYS", "ERA_KEYS", "FAMILIES", "cgroup_v1_problem", "obj_stock_problem",
           "LAYOUTS", "MACHINE_FAMILIES", "MODEL_NAMES",
           "compiled_problem", "design_models",
           "WORKLOAD_TESTS", "KeySpec", "workload_keys", "MAX_INSTANCES"]

#: the designs' models: the replay contract's that the registry offers to scenarios (not
#: the historic multi-fix2), plus none (as registered when this module was imported;
#: :func:`design_models` is the live list)
MODEL_NAMES: tuple[str, ...] = ("none", *(m for m in REPLAY_MODELS
                                          if registry.model(m).in_scenarios))


def compiled_problem(name: str) -> str | None:
    """Why the scenario model cannot count registered model ``name``, or None when it can.

    Every kernel of a scenario is counted by the compiled engine
    (:class:`memcglab.engine.Engine`, fed chunk by chunk), so a model needs a compiled
    twin the engine has by name, with a victim policy that has one too; a model that
    brings a replay function of its own runs through ``replay_compiled`` only.

    >>> compiled_problem("multi") is None
    True
    """
    entry = registry.model(name)
    if entry.compiled is None:
        return "has no compiled implementation"
    if not isinstance(entry.compiled, str):
        return ("brings a compiled replay function of its own, which runs whole traces "
                "only, not the scenario model's chunked engine")
    pol = registry.resolve_policy(name, None)
    if pol is not None and pol.compiled is None:
        return f"runs victim policy {pol.name!r}, which has no compiled implementation"
    return None


def design_models() -> tuple[str, ...]:
    """The models a ``[base]`` or ``[new]`` table may name, now: ``none``, then every
    registered model the registry offers to scenarios (not the historic ``multi-fix2``:
    ``in_scenarios``) that the compiled engine counts (plugins included,
    :func:`compiled_problem`), in registration order."""
    return ("none", *(m for m in registry.MODEL_NAMES
                      if registry.model(m).in_scenarios and compiled_problem(m) is None))
MACHINE_FAMILIES: tuple[str, ...] = (
    "sapphire-rapids", "emerald-rapids", "ice-lake", "cooper-lake", "cascade-lake",
    "skylake", "haswell", "zen2", "zen3", "zen4", "generic")

#: the contract's workload tests (the catalogue's table)
WORKLOAD_TESTS: dict[str, tuple[str, ...]] = dict(CATALOGUE_FAMILIES)
FAMILIES: tuple[str, ...] = tuple(WORKLOAD_TESTS)


@dataclass(frozen=True)
class KeySpec:
    """One key: its default (None: required), valid text, and its kind's bounds."""

    default: Any
    valid: str
    kind: str  # "int", "choice" or "bool"
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        """True when the key has no default."""
        return self.default is None

    def problem(self, v: Any) -> str:
        """What is wrong with ``v`` ('' when it is valid)."""
        if self.kind == "int":
            if isinstance(v, bool) or not isinstance(v, int):
                return "is not an integer"
            return "" if self.low <= v <= self.high else "is out of range"
        if self.kind == "bool":
            return "" if isinstance(v, bool) else "is not a boolean"
        return "" if v in self.choices else "is unknown"


def _int(default: int, low: int, high: int, unit: str = "") -> KeySpec:
    return KeySpec(default, f"an integer from {low} to {high}{unit}", "int", low, high)


def _choice(default: str, *choices: str) -> KeySpec:
    return KeySpec(default, ", ".join(choices), "choice", choices=choices)


def workload_keys(family: str, test: str) -> dict[str, KeySpec]:
    """The keys test ``test`` of ``family`` takes: the catalogue's table
    (:func:`memcglab.workloads.catalogue.spec.keys_of`), which is the contract's."""
    out = {}
    for name, key in keys_of(family, test).items():
        if key.choices:
            out[name] = KeySpec(key.default, key.valid, "choice", choices=key.choices)
        else:
            out[name] = KeySpec(key.default, key.valid, "int", key.low, key.high)
    return out


#: [base] / [new] keys other than model
DESIGN_KEYS: dict[str, KeySpec] = {
    "batch": _int(64, 1, BATCH_MAX, " (MEMCG_CHARGE_BATCH)"),
    "slots": _int(7, 1, 255, " (NR_MEMCG_STOCK)"),
    "refill": _choice("always", "always", "not-in-irq", "never"),
    "sk_reclaim": _choice("eager", "eager", "lazy"),
}


def obj_stock_problem(model: str, era: str) -> str | None:
    """Why obj-stock era ``era`` cannot run beside ``model`` in a scenario, or None.

    The registry says which models an era runs beside (an era whose obj stock is part
    of another model's memcg stock cannot), and a scenario counts with the compiled
    engine, so the era needs its compiled twin.

    >>> obj_stock_problem("multi", "v5.14") is None
    True
    >>> obj_stock_problem("single", "v5.9")  # doctest: +ELLIPSIS
    "cannot run beside model 'single' (the registry runs v5.9 beside multi, ...)"
    """
    entry = registry.model(model)
    if entry.obj_stock_era == era:
        return None
    runs = registry.obj_era_models(era)
    if model not in runs:
        return (f"cannot run beside model {model!r} (the registry runs {era} beside "
                f"{', '.join(runs)}: single's memcg stock holds its own obj stock)")
    if registry.obj_era(era).compiled is None:
        return "has no compiled implementation, which a scenario's counts need"
    return None


def cgroup_v1_problem(model: str) -> str | None:
    """Why ``model`` cannot run on cgroup v1 in a scenario, or None (the engine's rule:
    :func:`memcglab.models.check_cgroup_version`, a page_counter stock has no v1 port)."""
    from memcglab.models import check_cgroup_version

    try:
        check_cgroup_version(model, 1, False)
    except ValueError as exc:
        return str(exc)
    return None


def _layouts() -> tuple[str, ...]:
    from memcglab.layout.pclines import PAGE_COUNTER_LAYOUTS

    return PAGE_COUNTER_LAYOUTS


#: revision 2's per-design era keys: name -> their valid values now (the registry's obj-stock
#: eras, the struct catalogue's page_counter layouts); their default is the model's own
ERA_KEYS = {
    "obj_stock": lambda: tuple(registry.OBJ_STOCK_ERAS),
    "page_counter_layout": _layouts,
}
