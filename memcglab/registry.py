"""The registry of stock models and victim policies: the one place that says what exists.

Everything that takes a ``model`` or a ``policy`` reads it: the faithful replay
(:func:`memcglab.models.build_model`), the compiled engine
(:func:`memcglab.engine.replay_compiled`), ``memcglab replay --model/--policy``, the
sweep's parameter check and its table's ``kernel_version``. A :class:`ModelEntry` says
what a model is (kernel version, faithful builder, obj stock, whether it takes slots
and a victim policy, its compiled implementation or none, its JSON stock view, the
events it counts); a :class:`PolicyEntry` gives a victim policy's faithful class and
its compiled implementation, if it has one.

The replay contract's seven models and three policies are registered by
:mod:`memcglab.models`, imported the first time the registry is read. More come from
:func:`register_policy` and :func:`register_model`, called by a plugin
(:mod:`memcglab.plugins`): a module that registers on import, named by

* the ``MEMCGLAB_PLUGINS`` environment variable (comma- or space-separated; the
  kernels a sweep starts inherit it),
* the ``memcglab.plugins`` entry-point group of an installed distribution, or
* :func:`load_plugins`, which a study calls with its ``plugins`` parameter, so a
  sweep's runs record the plugins they ran with (``-p plugins mymodule``).

The first two load the first time the registry is read. Where a registered policy
or model cannot run, it is refused by name:

>>> policy("lru").compiled, model("multi-lru").policy, model("pcstock").multi
('lru', 'lru', False)
>>> from memcglab.kernel.victim import RandomVictim
>>> register_policy("random-py", RandomVictim).compiled is None
True
>>> check_compiled("multi", "random-py")  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
ValueError: policy 'random-py' has no compiled implementation; the compiled engine runs:
random, rr, lru; use the faithful replay (memcglab.replay.replay)
>>> unregister_policy("random-py")
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memcglab.events import ALL_EVENT_NAMES
from memcglab.plugins import (
    PLUGIN_ENV,
    PLUGIN_GROUP,
    PluginError,
    load_environment,
    load_plugins,
    loaded_plugins,
)

__all__ = ["ModelEntry", "PolicyEntry", "PluginError", "STOCK_VIEWS", "PLUGIN_ENV",
           "PLUGIN_GROUP", "STOCK_KINDS", "MODELS", "POLICIES", "MODEL_NAMES",
           "KERNEL_VERSIONS", "OBJ_ERAS",
           "register_model", "register_policy", "unregister_model", "unregister_policy",
           "model", "policy", "compiled_models", "compiled_policies", "resolve_policy",
           "policy_model", "check_compiled", "load_plugins", "loaded_plugins",
           "ObjEraEntry", "OBJ_STOCK_ERAS", "register_obj_era", "obj_era", "obj_era_models"]

#: the ``stocks`` forms of the replay contract's output, by name
STOCK_VIEWS: dict[str, str] = {
    "slots": "one list per CPU, one entry per slot in slot order: [memcg, nr_pages] or null "
             "(multi*: --slots entries; single: one)",
    "counters": "one object per CPU mapping each memcg (a decimal string) to its counter's "
                "stock on that CPU, non-zero stocks only (pcstock, pcstock-v4)",
}
_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}\Z")


@dataclass(frozen=True)
class PolicyEntry:
    """A victim policy of the multi-memcg stock.

    ``cls(slots, random)`` builds the faithful policy (``victim`` and ``touch``, see
    :class:`memcglab.kernel.victim.VictimPolicy`). ``compiled`` names the compiled
    engine's victim of the same behaviour (:data:`memcglab.engine.state.VICTIMS`), or is
    None: the compiled engine then refuses the policy by name. ``model`` is the model
    a study runs the policy on; ``events`` the events it counts beyond the model's.
    """

    name: str
    cls: type
    compiled: str | None = None
    model: str = "multi"
    events: tuple[str, ...] = ()
    builtin: bool = field(default=False, compare=False)

    @property
    def description(self) -> str:
        """The first line of the class's docstring."""
        return (self.cls.__doc__ or "").strip().split("\n")[0]


#: what a model's per-CPU stock caches (:attr:`ModelEntry.stock_kind`)
STOCK_KINDS: tuple[str, ...] = ("memcg", "page_counter")


@dataclass(frozen=True)
class ModelEntry:
    """A stock model: what ``--model NAME`` runs.

    * ``build(nr_cpus, slots, seed, batch, observer, victim)``: a fresh faithful machine
      (a :class:`memcglab.kernel.memcontrol.MemcgCharge`); ``victim`` is the built
      victim policy for a model that takes one, else None.
    * ``obj_stock(machine, nodes)``: its obj stock; ``obj_era`` names that era.
    * ``policy``: the victim policy it runs by default; None for a model without slots
      and policy (``--slots`` is then echoed and ignored).
    * ``compiled``: the compiled engine's model of the same behaviour
      (:data:`memcglab.engine.state.MODELS`), a function with the signature of
      :func:`memcglab.engine.replay_compiled` (a compiled engine of its own), or None.
    * ``stock_view``: the form of its ``stocks`` output (:data:`STOCK_VIEWS`);
      ``stock_top``: what one stock may hold, as an offset below the batch (the
      invariant's bound: ``batch - stock_top``); ``events``: the
      :class:`~memcglab.events.ChargeEvents` it can count (others stay 0).
    * ``per_memcg``: what it keeps per memcg that grows with an argument (``"cpus"``,
      ``"nodes"`` or None: :func:`memcglab.trace.check_per_memcg`); ``nested``: whether
      a trace may use ``nested``; ``batch_max`` and its reason: the largest ``--batch``.
    * ``stock_kind``: what a CPU's stock caches (:data:`STOCK_KINDS`): ``"memcg"``, a
      per-CPU stock of memcgs' pre-charged pages (``memcg_stock_pcp``), or
      ``"page_counter"``, a per-CPU stock in each page_counter (the page_counter-stock
      series); pricing and the stock bound read it, never the model's name.
    * ``in_scenarios``: whether the scenario contract offers it as a design (the historic
      ``multi-fix2`` is replay-only); ``colour``: its colour in every study's figures.
    """

    name: str
    kernel_version: str
    description: str
    build: Callable[..., Any]
    obj_stock: Callable[[Any, int], Any]
    obj_era: str
    policy: str | None = None
    compiled: str | Callable[..., Any] | None = None
    stock_view: str = "slots"
    stock_top: int = 0
    events: tuple[str, ...] = ()
    per_memcg: str | None = None
    nested: bool = True
    batch_max: int | None = None
    batch_max_reason: str = ""
    builtin: bool = field(default=False, compare=False)
    #: the scenario contract's ``obj_stock`` name of its obj stock (:data:`OBJ_STOCK_ERAS`),
    #: or None when the scenario contract names none (``multi-fix2``, ``pcstock``)
    obj_stock_era: str | None = None
    #: the scenario contract's ``page_counter_layout`` of its era (revision 2): the struct
    #: page_counter its kernel has (memcglab.layout.pclines.PAGE_COUNTER_LAYOUTS); every
    #: era ported so far is v6.1 or later, where ``usage`` has a cache line of its own
    page_counter_layout: str = "v6.1"
    stock_kind: str = "memcg"
    in_scenarios: bool = True
    colour: str | None = None

    def __post_init__(self) -> None:
        if self.stock_kind not in STOCK_KINDS:
            raise ValueError(f"model {self.name!r}: stock_kind={self.stock_kind!r}; valid: "
                             f"{', '.join(STOCK_KINDS)}")

    @property
    def multi(self) -> bool:
        """Whether it takes ``--slots`` and a victim policy (the ``multi*`` models)."""
        return self.policy is not None


_MODELS: dict[str, ModelEntry] = {}
_POLICIES: dict[str, PolicyEntry] = {}
_STATE = {"builtins": False, "plugins": False}


def _ensure_builtins() -> None:
    if not _STATE["builtins"]:
        _STATE["builtins"] = True
        importlib.import_module("memcglab.models")  # registers the contract's entries


def _ensure() -> None:
    """The contract's entries, then the plugins of the environment, once per process."""
    _ensure_builtins()
    if not _STATE["plugins"]:
        _STATE["plugins"] = True  # first: a plugin that reads the registry must not recurse
        try:
            load_environment()
        except PluginError:
            _STATE["plugins"] = False
            raise


class _View(Mapping):
    """A read-only, live view of a table of the registry (plugins load on first read)."""

    def __init__(self, table: dict, value: Callable[[Any], Any] | None = None) -> None:
        self._table, self._value = table, value

    def __getitem__(self, key: str) -> Any:
        _ensure()
        entry = self._table[key]
        return self._value(entry) if self._value else entry

    def __iter__(self) -> Iterator[str]:
        _ensure()
        return iter(list(self._table))

    def __len__(self) -> int:
        _ensure()
        return len(self._table)

    def __repr__(self) -> str:
        return repr(dict(self))


class _Names(Sequence):
    """The registered names, in registration order, as a live tuple-like sequence."""

    def __init__(self, table: dict) -> None:
        self._table = table

    def _names(self) -> tuple[str, ...]:
        _ensure()
        return tuple(self._table)

    def __getitem__(self, index):  # type: ignore[override]
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self._names() == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._names())


#: model name -> :class:`ModelEntry`; policy name -> :class:`PolicyEntry` (live views)
MODELS: Mapping[str, ModelEntry] = _View(_MODELS)
POLICIES: Mapping[str, PolicyEntry] = _View(_POLICIES)
MODEL_NAMES: Sequence[str] = _Names(_MODELS)
KERNEL_VERSIONS: Mapping[str, str] = _View(_MODELS, lambda e: e.kernel_version)
OBJ_ERAS: Mapping[str, str] = _View(_MODELS, lambda e: e.obj_era)


def _valid(table: Mapping[str, Any]) -> str:
    return f"valid: {', '.join(table)}"


def _check_name(kind: str, name: Any) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"{kind} name {name!r}: must be 1-64 characters of a-z, 0-9, "
                         "'-', '_' or '.', starting with a letter or digit")


def _check_events(kind: str, name: str, events: Iterable[str]) -> tuple[str, ...]:
    events = tuple(events)
    bad = [e for e in events if e not in ALL_EVENT_NAMES]
    if bad:
        raise ValueError(f"{kind} {name!r}: unknown events {', '.join(bad)}; valid: "
                         f"{', '.join(ALL_EVENT_NAMES)}")
    return events


def _add(table: dict, kind: str, entry: Any, replace: bool) -> Any:
    old = table.get(entry.name)
    if old is not None and old != entry:
        if old.builtin:
            raise ValueError(f"{kind} {entry.name!r} is one of the replay contract's; "
                             "register the new one under another name")
        if not replace:
            raise ValueError(f"{kind} {entry.name!r} is already registered "
                             f"({_origin(old)}); pass replace=True to replace it")
    table[entry.name] = entry
    return entry


def _origin(entry: Any) -> str:
    obj = entry.cls if isinstance(entry, PolicyEntry) else entry.build
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', '?')}"


def register_policy(name: str, cls: type, *, compiled: str | None = None,
                    model: str = "multi", events: Iterable[str] = (), replace: bool = False,
                    _builtin: bool = False) -> PolicyEntry:
    """Register victim policy ``name``: ``cls(slots, random)`` is its faithful port.

    ``compiled`` names its compiled implementation in the engine (None: the compiled
    engine and the studies that need it refuse the policy by name); ``model`` is the
    model a study runs it on; ``events`` the events it counts beyond the model's
    (LRU: ``lru_writes``). Registering the same entry again does nothing.
    """
    _check_name("policy", name)
    if not (callable(getattr(cls, "victim", None)) and callable(getattr(cls, "touch", None))):
        raise ValueError(f"policy {name!r}: {cls!r} needs victim(stock) and touch(stock, slot) "
                         "methods (memcglab.kernel.victim.VictimPolicy)")
    if compiled is not None and not isinstance(compiled, str):
        raise ValueError(f"policy {name!r}: compiled={compiled!r} must name a compiled victim "
                         "of the engine (memcglab.engine.state.VICTIMS) or be None")
    if not _builtin:
        _ensure_builtins()
        if model not in _MODELS or not _MODELS[model].multi:
            runs = ", ".join(m for m, e in _MODELS.items() if e.multi)
            raise ValueError(f"policy {name!r}: model={model!r} is not a registered model with "
                             f"a victim policy; valid: {runs}")
    entry = PolicyEntry(name, cls, compiled, model, _check_events("policy", name, events),
                        _builtin)
    return _add(_POLICIES, "policy", entry, replace)


def register_model(entry: ModelEntry, *, replace: bool = False) -> ModelEntry:
    """Register a stock model; ``memcglab replay --model``, the Python API and the sweeps
    then take its name. Registering the same entry again does nothing."""
    _check_name("model", entry.name)
    if not entry.builtin:
        _ensure_builtins()
    if not isinstance(entry.kernel_version, str) or not entry.kernel_version:
        raise ValueError(f"model {entry.name!r}: kernel_version must say which kernel it "
                         "ports (e.g. 'v6.16 (6.18.y 312d9602fe3e)')")
    if not callable(entry.build) or not callable(entry.obj_stock):
        raise ValueError(f"model {entry.name!r}: build and obj_stock must be callables")
    if entry.policy is not None and entry.policy not in _POLICIES:
        raise ValueError(f"model {entry.name!r}: policy={entry.policy!r} is not registered; "
                         f"{_valid(_POLICIES)}")
    if entry.stock_view not in STOCK_VIEWS:
        raise ValueError(f"model {entry.name!r}: stock_view={entry.stock_view!r}; valid: "
                         f"{', '.join(STOCK_VIEWS)}")
    if entry.per_memcg not in (None, "cpus", "nodes"):
        raise ValueError(f"model {entry.name!r}: per_memcg={entry.per_memcg!r}; valid: "
                         "None, 'cpus', 'nodes'")
    if entry.batch_max is not None and entry.batch_max < 1:
        raise ValueError(f"model {entry.name!r}: batch_max={entry.batch_max} must be at least 1")
    if entry.compiled is not None and not (isinstance(entry.compiled, str)
                                           or callable(entry.compiled)):
        raise ValueError(f"model {entry.name!r}: compiled={entry.compiled!r} must name an "
                         "engine model, be a replay function, or be None")
    _check_events("model", entry.name, entry.events)
    return _add(_MODELS, "model", entry, replace)


def _unregister(table: dict, kind: str, name: str) -> None:
    entry = table.get(name)
    if entry is None:
        return
    if entry.builtin:
        raise ValueError(f"{kind} {name!r} is one of the replay contract's; it stays")
    del table[name]


def unregister_policy(name: str) -> None:
    """Forget a registered policy (not one of the contract's); unknown names are ignored."""
    _unregister(_POLICIES, "policy", name)


def unregister_model(name: str) -> None:
    """Forget a registered model (not one of the contract's); unknown names are ignored."""
    _unregister(_MODELS, "model", name)


def model(name: str) -> ModelEntry:
    """The entry of model ``name``; ValueError names the registered models."""
    _ensure()
    if not isinstance(name, str) or name not in _MODELS:
        raise ValueError(f"model={name!r}: unknown; {_valid(_MODELS)}")
    return _MODELS[name]


def policy(name: str) -> PolicyEntry:
    """The entry of victim policy ``name``; ValueError names the registered policies."""
    _ensure()
    if not isinstance(name, str) or name not in _POLICIES:
        raise ValueError(f"policy={name!r}: unknown; {_valid(_POLICIES)}")
    return _POLICIES[name]


def compiled_models() -> tuple[str, ...]:
    """The registered models the compiled engine runs, in registration order."""
    _ensure()
    return tuple(n for n, e in _MODELS.items() if e.compiled is not None)


def compiled_policies() -> tuple[str, ...]:
    """The registered policies with a compiled implementation, in registration order."""
    _ensure()
    return tuple(n for n, e in _POLICIES.items() if e.compiled is not None)


def resolve_policy(model_name: str, policy_name: str | None) -> PolicyEntry | None:
    """The victim policy a run of ``model_name`` uses: ``policy_name`` if given (checked),
    else the model's own; None for a model without one. ValueError says why not."""
    entry = model(model_name)
    if policy_name is None:
        return _POLICIES[entry.policy] if entry.multi else None
    if not entry.multi:
        takes = ", ".join(n for n, e in _MODELS.items() if e.multi)
        raise ValueError(f"policy={policy_name!r}: only the multi* models have a victim "
                         f"policy ({takes}), not {model_name!r}")
    return policy(policy_name)


def policy_model(name: str) -> tuple[str, str | None]:
    """The model a study runs policy ``name`` on, and the policy to pass it (None when
    it is that model's own: ``lru`` runs as ``multi-lru``).

    >>> policy_model("lru"), policy_model("random")
    (('multi-lru', None), ('multi', None))
    """
    entry = policy(name)
    own = model(entry.model).policy == name
    return entry.model, None if own else name


_HINT = "use the faithful replay (memcglab.replay.replay)"


def check_compiled(model_name: str, policy_name: str | None = None, hint: str = _HINT) -> None:
    """Refuse, by name, a model or policy the compiled engine cannot run (one line)."""
    entry = model(model_name)
    if entry.compiled is None:
        raise ValueError(f"model {model_name!r} has no compiled implementation; the compiled "
                         f"engine runs: {', '.join(compiled_models())}; {hint}")
    pol = resolve_policy(model_name, policy_name)
    if pol is not None and pol.compiled is None:
        raise ValueError(f"policy {pol.name!r} has no compiled implementation; the compiled "
                         f"engine runs: {', '.join(compiled_policies())}; {hint}")


# ---------------------------------------------------------------- obj-stock eras


@dataclass(frozen=True)
class ObjEraEntry:
    """An obj-stock era: what the scenario contract's ``obj_stock = NAME`` runs.

    * ``build(machine, nodes)``: the era's obj stock for a built machine (a
      :class:`memcglab.kernel.objcg.ObjCgroupPath`), the port of the era's
      mm/memcontrol.c byte stock;
    * ``kernel_version``: the tree or commits it ports; ``description``: what one
      object costs there;
    * ``models``: the models it can run beside (None: every model whose memcg stock
      drains the obj stock through ``drain_cpu_if_needed`` and ``drain_dead_cpu``);
    * ``compiled``: the compiled engine's era of the same behaviour, or None (the
      compiled engine then refuses it by name).

    A new era is one :func:`register_obj_era` call and its port.
    """

    name: str
    kernel_version: str
    description: str
    build: Callable[[Any, int], Any]
    models: tuple[str, ...] | None = None
    compiled: str | None = None
    builtin: bool = field(default=False, compare=False)


_OBJ_ERAS_TABLE: dict[str, ObjEraEntry] = {}
#: the models whose memcg stock keeps the obj stock inside its own struct, so that no
#: other era's obj stock can stand beside it: v6.15's combined stock, and fix 2's
#: mm-unstable tree whose drain takes both halves under one lock
_OWN_OBJ_STOCK = ("single", "multi-fix2")
#: era name -> :class:`ObjEraEntry` (live view)
OBJ_STOCK_ERAS: Mapping[str, ObjEraEntry] = _View(_OBJ_ERAS_TABLE)


def register_obj_era(entry: ObjEraEntry, *, replace: bool = False) -> ObjEraEntry:
    """Register obj-stock era ``entry.name``; :func:`memcglab.models.build_model`'s
    ``obj_stock`` then takes its name. Registering the same entry again does nothing."""
    _check_name("obj-stock era", entry.name)
    if not entry.builtin:
        _ensure_builtins()
    if not callable(entry.build):
        raise ValueError(f"obj-stock era {entry.name!r}: build must be a callable "
                         "(machine, nodes) -> obj stock")
    if not isinstance(entry.kernel_version, str) or not entry.kernel_version:
        raise ValueError(f"obj-stock era {entry.name!r}: kernel_version must say which "
                         "kernel it ports")
    return _add(_OBJ_ERAS_TABLE, "obj-stock era", entry, replace)


def obj_era(name: str) -> ObjEraEntry:
    """The entry of obj-stock era ``name``; ValueError names the registered eras."""
    _ensure()
    if not isinstance(name, str) or name not in _OBJ_ERAS_TABLE:
        raise ValueError(f"obj_stock={name!r}: unknown; {_valid(_OBJ_ERAS_TABLE)}")
    return _OBJ_ERAS_TABLE[name]


def obj_era_models(name: str) -> tuple[str, ...]:
    """The registered models obj-stock era ``name`` can run beside, in registration order."""
    entry = obj_era(name)
    if entry.models is not None:
        return tuple(m for m in entry.models if m in _MODELS)
    return tuple(m for m in _MODELS if m not in _OWN_OBJ_STOCK)
