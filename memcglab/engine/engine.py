"""The engine driver: argument checks, chunked validation and replay, results.

:class:`Engine` holds one replay's compiled state between chunks, so a trace of
any length streams through in bounded memory; :func:`replay_compiled` and
:func:`replay_chunks` are the one-call forms. Results are the replay contract's
JSON object (the dict ``memcglab.replay.replay`` returns) and, on request,
:class:`memcglab.events.ChargeEvents`.

>>> from memcglab.trace import parse_text
>>> t = parse_text("memcglab-trace 1\\ncpus 2\\ncgroup 5 0\\ncharge 1 5 3\\n")
>>> r = replay_compiled(t)
>>> r["counters"], r["stocks"][1][0], r["memcgs"]["5"]["usage"]
({'walks': 1, 'stock_hits': 0, 'evictions': 0}, [5, 61], 64)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from memcglab import registry
from memcglab.engine.loop import run_chunk
from memcglab.engine.results import (
    charge_events,
    contract_dict,
    obj_dict,
    obj_violation,
    v1_dict,
    v1_violation,
)
from memcglab.engine.state import (
    F_HELD,
    F_OBJPAGES,
    F_PARENT,
    F_USAGE,
    G_NMEMCG,
    G_OBJERA,
    G_OBJUSED,
    G_RUSED,
    MODEL_CODES,
    OBJ_ERA_CODES,
    OBJ_ERA_G,
    OBJ_ERA_NAMES,
    OE_MEMCG_CACHES,
    S_CACHED,
    S_NR,
    V1_G,
    VICTIM_CODES,
    State,
    grow,
    grow_runs,
    new_state,
)
from memcglab.engine.validate import ChunkValidator
from memcglab.events import CALL_EVENTS, OBJ_ERA_EVENTS, V1_EVENTS, ChargeEvents
from memcglab.models import (
    REFILLS,
    check_cgroup_version,
    check_obj_stock,
    check_options,
    check_refill,
    nested_allowed,
    per_memcg_bound,
    stock_slots,
)
from memcglab.replay import InvariantViolation as FaithfulViolation
from memcglab.trace import OP_DTYPE, OP_NAMES, OP_OBJ_CHARGE, Trace, check_stock_slots

__all__ = ["Engine", "InvariantViolation", "replay_compiled", "replay_chunks", "check_args",
           "check_own_engine", "victim_code", "obj_era_code", "CHUNK", "REPLAY_COUNTS"]

CHUNK = 1 << 22  # rows validated per compiled call
#: the operation counts of ``counts`` (memcglab.replay.replay's ``counts``), besides the
#: calls of memcglab.events.CALL_EVENTS and OBJ_ERA_EVENTS
REPLAY_COUNTS = ("charges", "uncharges", "uncharges_direct", "obj_charges", "obj_uncharges")


class InvariantViolation(FaithfulViolation):
    """``check=True``: the conservation invariant fails after operation ``index``.

    A subclass of the faithful replay's exception with the same attributes
    (``index``: 0-based operation index, ``line``: its text line, 0 for a trace
    built in memory) and the same message, so callers handle both engines alike.
    """


def check_args(model: str, slots: int, seed: int, batch: int, policy: str | None = None
               ) -> int:
    """Validate the replay options (the faithful replay's checks, then whether this
    engine runs the model and the policy); return the model code.

    >>> check_args("multi", 7, 0, 128)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: batch=128: the multi model allows at most 127 ...
    """
    check_options(model, slots, seed, batch)
    registry.check_compiled(model, policy)
    compiled = registry.model(model).compiled
    if not isinstance(compiled, str) or compiled not in MODEL_CODES:
        raise ValueError(f"model {model!r}: its compiled implementation {compiled!r} is not "
                         f"one of this engine's models ({', '.join(MODEL_CODES)}); a replay "
                         "function of its own runs through replay_compiled only")
    return MODEL_CODES[compiled]


def check_own_engine(model: str, slots: int, seed: int, batch: int, policy: str | None
                     ) -> bool:
    """Validate the options of a replay of ``model`` by :func:`replay_compiled`; whether
    the model brings a compiled replay function of its own (else :func:`check_args`)."""
    if not callable(registry.model(model).compiled):
        check_args(model, slots, seed, batch, policy)
        return False
    check_options(model, slots, seed, batch)
    registry.check_compiled(model, policy)
    return True


def victim_code(model: str, policy: str | None) -> int | None:
    """The engine's code of the victim policy a run of ``model`` uses (None: its own)."""
    entry = registry.resolve_policy(model, policy)
    if policy is None or entry is None:
        return None
    if entry.compiled not in VICTIM_CODES:
        raise ValueError(f"policy {policy!r}: its compiled implementation {entry.compiled!r} "
                         f"is not one of this engine's victims ({', '.join(VICTIM_CODES)})")
    return VICTIM_CODES[entry.compiled]


def obj_era_code(model: str, obj_stock: str | None) -> int | None:
    """The engine's code of obj-stock era ``obj_stock`` beside ``model`` (None: the model's
    own obj stock); ValueError for an era that cannot run beside the model (the faithful
    replay's check) or that this engine does not run, by name.

    >>> obj_era_code("multi", "v5.14") == OBJ_ERA_CODES["v5.14"], obj_era_code("multi", None)
    (True, None)
    """
    if obj_stock is None:
        return None
    check_obj_stock(model, obj_stock)
    if registry.model(model).obj_stock_era == obj_stock:
        return None  # the model's own era: the default replay, named
    entry = registry.obj_era(obj_stock)
    compiled = entry.compiled  # the registry names the era's compiled twin, or None
    if compiled not in OBJ_ERA_CODES:
        raise ValueError(f"obj_stock={obj_stock!r} has no compiled implementation; the "
                         f"compiled engine runs: {', '.join(OBJ_ERA_NAMES)}; use the "
                         "faithful replay (memcglab.replay.replay)")
    return OBJ_ERA_CODES[compiled]


def _counts(events: ChargeEvents, era_totals: dict[str, int] | None) -> dict[str, int]:
    # memcglab.replay.replay's counts: the operations, the calls, the era's events
    out = {name: events.total(name) for name in (*REPLAY_COUNTS, *CALL_EVENTS)}
    if era_totals is not None:
        out.update(era_totals)
    return out


class Engine:
    """One compiled replay, fed chunk by chunk (each an ``OP_DTYPE`` array).

    Each chunk is validated before it is replayed; a bad row raises the faithful
    ``TraceError`` (the engine's state is then unusable). With ``check``, an
    invariant failure raises :class:`InvariantViolation`. ``obj_stock`` runs an
    obj-stock era beside the model (:func:`obj_era_code`), as the faithful replay's.
    """

    def __init__(self, cpus: int, model: str = "multi", slots: int = 7, seed: int = 0,
                 batch: int = 64, check: bool = False, events: bool = False,
                 source: str = "<memory>", validator: ChunkValidator | None = None,
                 cpus_line: int = 0, refill: str = "always", nodes: int = 1,
                 policy: str | None = None, obj_stock: str | None = None,
                 cgroup_version: int = 2, swap: bool = False) -> None:
        code = check_args(model, slots, seed, batch, policy)
        victim = victim_code(model, policy)
        check_refill(refill)
        era = obj_era_code(model, obj_stock)
        check_cgroup_version(model, cgroup_version, swap)
        self.refill, self.policy, self.obj_stock = refill, policy, obj_stock
        self.cgroup_version, self.swap = cgroup_version, swap
        self.view = registry.model(model).stock_view
        # the contract's bound on the machine's stock slots, before anything is allocated
        check_stock_slots(source, cpus_line, cpus, stock_slots(model, slots))
        self.model, self.slots, self.seed, self.batch = model, slots, seed, batch
        self.source = source
        # A reader that validates as it scans hands over its validator.
        self.validator = validator or ChunkValidator(cpus, not nested_allowed(model), source,
                                                     per_memcg_bound(model), nodes)
        if not (1 <= nodes <= cpus and cpus % nodes == 0):
            raise ValueError(f"nodes={nodes}: must divide cpus={cpus} into equal blocks")
        self.state: State = new_state(code, cpus, slots, batch, seed, events=events,
                                      check=check, refill=REFILLS.index(refill), nodes=nodes,
                                      victim=victim, obj_era=era,
                                      cgroup_version=cgroup_version, swap=swap)
        self.replayed = 0

    def validate(self, ops: np.ndarray) -> np.ndarray:
        """Validate rows (in trace order) without replaying them; return their dense column."""
        if ops.dtype != OP_DTYPE:
            raise TypeError(f"chunk must have dtype OP_DTYPE, not {ops.dtype}")
        if len(ops) <= CHUNK:
            return self.validator.check(ops)
        return np.concatenate([self.validator.check(ops[start:start + CHUNK])
                               for start in range(0, len(ops), CHUNK)])

    def replay(self, ops: np.ndarray, dense: np.ndarray) -> None:
        """Replay rows that :meth:`validate` accepted, with the column it returned.

        The compiled code trusts that column (it indexes arrays with it), so rows
        must reach here only through this engine's validator, in order.
        """
        if len(dense) != len(ops) or dense.dtype != np.int32:
            raise ValueError("replay() takes the rows validate() accepted and its column")
        self.state = grow(self.state, self.validator.count)
        # an obj_charge adds at most one run (and in memcg-caches one kmalloc object)
        per = 2 if int(self.state.g[G_OBJERA]) == OE_MEMCG_CACHES else 1
        charges = int(np.count_nonzero(ops["op"] == OP_OBJ_CHARGE))
        runs = int(self.state.g[G_RUSED]) + per * charges
        self.state = grow_runs(self.state, runs)
        bad = run_chunk(self.state, ops, dense)
        if bad >= 0:
            self._violation(ops[bad], self.replayed + bad)
        self.replayed += len(ops)

    def feed(self, ops: np.ndarray) -> None:
        """Validate, then replay, the next chunk."""
        self.replay(ops, self.validate(ops))

    def result(self) -> dict:
        """The replay contract's JSON object for the operations replayed so far."""
        out = contract_dict(self.state, self.validator.ids, self.model, self.slots,
                            self.seed, self.batch, self.view)
        if self.refill != "always":  # docs/trace-extensions.md: only when not the default
            out["refill"] = self.refill
        if self.policy is not None:  # docs/extending.md: only when a policy was given
            out["policy"] = self.policy
        if self.obj_stock is not None:  # docs/trace-extensions.md: only when chosen
            out["obj_stock"] = self.obj_stock
        if self.state.g[G_OBJUSED]:  # docs/trace-extensions.md: only with object operations
            out.update(obj_dict(self.state, self.validator.ids))
        if self.cgroup_version == 1:  # docs/trace-extensions.md: only on cgroup v1
            out.update(v1_dict(self.state, self.validator.ids, self.swap))
        return out

    def events(self) -> ChargeEvents:
        """Per-CPU and per-memcg event counts (requires ``events=True``)."""
        return charge_events(self.state, self.validator.ids)

    def counts(self) -> dict[str, int]:
        """The faithful replay's ``counts`` (requires ``events=True``): the operations
        replayed, the calls of :data:`memcglab.events.CALL_EVENTS` and, with an
        ``obj_stock``, the era's :data:`memcglab.events.OBJ_ERA_EVENTS`."""
        era = None if self.obj_stock is None else \
            {name: int(self.state.g[OBJ_ERA_G[name]]) for name in OBJ_ERA_EVENTS}
        out = _counts(self.events(), era)
        if self.cgroup_version == 1:
            out.update({name: int(self.state.g[V1_G[name]]) for name in V1_EVENTS})
        return out

    def _violation(self, row: np.void, index: int) -> None:
        # The faithful replay's wording: the first memcg (creation order) whose usage
        # does not add up, else the first stock outside its bounds.
        s, ids = self.state, self.validator.ids
        n = int(s.g[G_NMEMCG])
        usage, held, parent = s.mc[F_USAGE, :n], s.mc[F_HELD, :n], s.mc[F_PARENT, :n]
        cached, nrp = s.sl[S_CACHED], s.sl[S_NR]
        pcstock = self.view == "counters"
        if pcstock:
            stocked = s.pcs[:n].sum(axis=1)
        else:
            occupied = cached >= 0
            stocked = np.bincount(cached[occupied], weights=nrp[occupied],
                                  minlength=n).astype(np.int64)
        children = np.bincount(parent[1:], weights=usage[1:], minlength=n).astype(np.int64)
        kmem = s.mc[F_OBJPAGES, :n]
        problem = None
        for m in np.flatnonzero(usage != held + stocked + kmem + children)[:1]:
            k = f"+ kmem {kmem[m]} " if kmem[m] else ""
            problem = (f"memcg {ids[m]}: usage {usage[m]} != held {held[m]} + "
                       f"stocked {stocked[m]} {k}+ children {children[m]}")
        if problem is None and pcstock:
            top = self.batch - registry.model(self.model).stock_top
            bound = f", at most {top}" if top != self.batch else ""
            for m, cpu in zip(*np.nonzero((s.pcs[:n] < 0) | (s.pcs[:n] > top)), strict=True):
                problem = (f"cpu {cpu} stock of memcg {ids[m]} holds {s.pcs[m, cpu]} pages "
                           f"(batch {self.batch}{bound})")
                break
        elif problem is None:
            per = self.slots if registry.model(self.model).multi else 1
            what = "slot" if registry.model(self.model).multi else "stock"
            for idx in np.flatnonzero(((cached < 0) & (nrp != 0)) | (nrp < 0)
                                      | (nrp > self.batch))[:1]:
                cpu, slot = divmod(int(idx), per)
                name = f"cpu {cpu} stock" if per == 1 and what == "stock" else \
                    f"cpu {cpu} slot {slot}"
                problem = (f"{name} is empty but holds {nrp[idx]} pages" if cached[idx] < 0
                           else f"{name} holds {nrp[idx]} pages (batch {self.batch})")
        if problem is None:
            problem = obj_violation(s, ids)
        if problem is None and self.cgroup_version == 1:
            problem = v1_violation(s, ids, self.swap)
        op_name = OP_NAMES[row["op"]]
        raise InvariantViolation(index, int(row["line"]),
                                 f"conservation broken after operation {index + 1} "
                                 f"({op_name}): {problem}")


def replay_compiled(trace: Trace, model: str = "multi", slots: int = 7, seed: int = 0,
                    batch: int = 64, check: bool = False, events: bool = False,
                    refill: str = "always", policy: str | None = None,
                    obj_stock: str | None = None, counts: dict[str, int] | None = None,
                    cgroup_version: int = 2, swap: bool = False
                    ) -> dict | tuple[dict, ChargeEvents]:
    """Replay ``trace`` with the compiled engine: the contract's JSON object.

    The same dict as ``memcglab.replay.replay`` (so ``memcglab.replay.dumps`` of
    both is byte-identical). The whole trace is validated first. ``events=True``
    returns ``(dict, ChargeEvents)``. Raises ``ValueError`` for bad options (a model
    or policy without a compiled implementation is refused by name),
    ``memcglab.trace.TraceError`` for a bad trace and :class:`InvariantViolation`
    when ``check`` finds one. ``refill`` is the scenario contract's design key,
    ``policy`` a registered victim policy with a compiled implementation and
    ``obj_stock`` an obj-stock era (:func:`obj_era_code`), as for
    ``memcglab.replay.replay``; a ``counts`` dict is filled as that function fills it
    (the operations, :data:`memcglab.events.CALL_EVENTS` and, with ``obj_stock``,
    :data:`memcglab.events.OBJ_ERA_EVENTS`). A registered model whose compiled
    implementation is a function of its own (:class:`memcglab.registry.ModelEntry`) is
    replayed by it, without an ``obj_stock`` and on cgroup v2 only. ``cgroup_version``
    and ``swap`` run the machine on cgroup v1 as ``memcglab.replay.replay`` does
    (docs/trace-extensions.md), byte for byte.

    >>> from memcglab.trace import parse_text
    >>> t = parse_text("memcglab-trace 1\\ncpus 1\\ncgroup 1 0\\nobj_charge 0 1 264\\n"
    ...                "obj_uncharge 0 1 264\\n")
    >>> c = {}
    >>> out = replay_compiled(t, obj_stock="v5.9", counts=c)
    >>> out["obj_stock"], out["obj_stocks"], c["mod_objcg_state"], c["memcg_stat_updates"]
    ('v5.9', [[[1, 0, 4096]]], 2, 2)
    """
    compiled = registry.model(model).compiled
    want = events or counts is not None
    if callable(compiled):
        check_own_engine(model, slots, seed, batch, policy)
        check_refill(refill)
        if obj_stock is not None:
            check_obj_stock(model, obj_stock)
            raise ValueError(f"obj_stock={obj_stock!r}: model {model!r} is replayed by a "
                             "compiled function of its own, which runs the model's own obj "
                             "stock; use the faithful replay (memcglab.replay.replay)")
        check_cgroup_version(model, cgroup_version, swap)
        if cgroup_version != 2:
            raise ValueError(f"cgroup_version={cgroup_version}: model {model!r} is replayed "
                             "by a compiled function of its own, on cgroup v2; use the "
                             "faithful replay (memcglab.replay.replay)")
        got = compiled(trace, model=model, slots=slots, seed=seed, batch=batch, check=check,
                       events=want, refill=refill, policy=policy)
        if not want:
            return got
        if counts is not None:
            counts.update(_counts(got[1], None))
        return got if events else got[0]
    engine = Engine(trace.cpus, model, slots, seed, batch, check, want, trace.source,
                    cpus_line=trace.cpus_line, refill=refill, nodes=trace.nodes, policy=policy,
                    obj_stock=obj_stock, cgroup_version=cgroup_version, swap=swap)
    engine.replay(trace.ops, engine.validate(trace.ops))
    if counts is not None:
        counts.update(engine.counts())
    return (engine.result(), engine.events()) if events else engine.result()


def replay_chunks(cpus: int, chunks: Iterable[np.ndarray], model: str = "multi",
                  slots: int = 7, seed: int = 0, batch: int = 64, check: bool = False,
                  events: bool = False, source: str = "<memory>", refill: str = "always",
                  nodes: int = 1, policy: str | None = None, obj_stock: str | None = None,
                  cgroup_version: int = 2, swap: bool = False
                  ) -> dict | tuple[dict, ChargeEvents]:
    """Stream ``OP_DTYPE`` chunks through one engine (state persists between chunks).

    Memory is bounded by the largest chunk plus the per-memcg and per-CPU state.
    Each chunk is validated before it is replayed, so an error in a later chunk
    still raises before any result is returned.
    """
    engine = Engine(cpus, model, slots, seed, batch, check, events, source, refill=refill,
                    nodes=nodes, policy=policy, obj_stock=obj_stock,
                    cgroup_version=cgroup_version, swap=swap)
    for chunk in chunks:
        engine.feed(chunk)
    return (engine.result(), engine.events()) if events else engine.result()
