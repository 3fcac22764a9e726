"""memcglab.engine: a compiled engine that reproduces the faithful replay exactly.

Every replay model of the contract (``single``, ``multi``, ``multi-rr``,
``multi-lru``, ``multi-fix2``, ``pcstock``, ``pcstock-v4``) over the numpy trace form, with the
contract's JSON object as result, optional per-CPU/per-memcg event counts
(:class:`memcglab.events.ChargeEvents`), the ``--check`` invariant, chunked
streaming for traces of any length, and a compiled reader of the text format.
Differential tests hold it to ``memcglab.replay``, byte for byte.

The replay is C: ``memcglab/engine/native/*.c`` port the kernel functions (one file
per part of the charge path, beside ``memcglab/kernel/*.py``) over the arrays of
:mod:`memcglab.engine.state`, and :mod:`memcglab.engine.native` builds them with the
system C compiler (``$CC``, else ``gcc``, else ``cc``) the first time a compiled
replay runs, about a second, into ``$MEMCGLAB_CACHE/engine`` (default
``~/.cache/memcglab/engine``), then loads the library with ctypes; the text reader's
scanner and the chunk validator are C too. Without a working C
compiler the compiled engine raises :class:`~memcglab.engine.native.BuildError`
naming the problem (``memcglab replay --engine compiled``: one line, exit 2); the
faithful replay needs no compiler.

* :func:`replay_compiled` - a :class:`~memcglab.trace.Trace` in memory;
* :func:`replay_chunks` / :class:`Engine` - an iterator of ``OP_DTYPE`` chunks;
* :func:`replay_text` - a trace file streamed block by block;
* :func:`parse_text_fast` / :func:`read_trace_fast` - ``parse_text`` / ``read_trace``.

``obj_stock=`` runs an obj-stock era of :data:`memcglab.models.OBJ_STOCK_ERAS` beside
the model, as the faithful replay's ``obj_stock=`` does: the models' own eras (``v6.15``,
``v6.16``, ``multi-objcg``, ``pcstock-v4``) beside any model they run with, and the older
ones, ``memcg-caches`` (``memcglab/engine/native/objstock_caches.c``: per-memcg kmalloc
caches charged per slab page), ``v5.9``, ``v5.14-vmstat``, ``v5.14-refill`` and ``v5.14``
(``objstock_v5.c``: the byte stock with per-object ``mod_objcg_state``, v5.9's per-CPU
stat counters and their flush, v5.14's task and irq stocks); whole pages leave the byte
side through the model's own ``refill_stock`` or ``memcg_uncharge``. ``counts=`` fills a
dict as the faithful replay's does: the operations, the calls of
:data:`memcglab.events.CALL_EVENTS` and, with an ``obj_stock``, the era's
:data:`memcglab.events.OBJ_ERA_EVENTS` (totals: they are not in
:class:`~memcglab.events.ChargeEvents`).

The models and victim policies it runs are those of :mod:`memcglab.registry` whose
entry names one of its compiled models (:data:`MODELS`) or victims
(:data:`memcglab.engine.state.VICTIMS`, ``memcglab/engine/native/victims.c``); ``policy=``
runs any of those victims in any ``multi*`` model, and a model or policy without a
compiled implementation is refused by name (docs/extending.md).

Event conventions (``events=True``), where the kernel leaves a choice:

* an event counts on the CPU that executes the code: a drain of CPU ``c``'s stock
  (drain_all_stock's work item, work_on_cpu for pcstock) counts on ``c``; so does
  ``cpu_dead c`` (whose callback really runs on the CPU doing the unplug, which the
  trace does not name); pcstock's css_offline cancel (never non-zero after its
  drain) counts on CPU 0;
* per memcg: the charged or uncharged memcg; the evicted memcg for ``evictions``;
  the drained slot's memcg for ``drains`` and ``css_ref_ops``; the counter's
  owner (each level) for ``usage_transfers``; the walked leaf for ``walks`` and
  ``walk_levels``;
* each consume_stock call (one per retry pass) is one of ``stock_hits``,
  ``miss_absent``, ``miss_short`` or ``miss_bypass``; ``slots_scanned`` counts the
  kernel's scan length (up to the first match, else every slot); pcstock counts
  one per look at a stock under its trylock, and an empty stock as absent;
* ``walk_levels`` counts the counters the walk's loop visits (the failing one
  included; the rollback re-touches the same counters); ``usage_transfers`` counts
  each visited level whose usage another CPU wrote last;
* ``uncharges`` / ``uncharges_direct`` count operations that released pages.

``pcstock-v4`` (``memcglab/engine/native/pcstock_v4.c``) differs where its kernel code
does: each pass of a charge looks at this CPU's stock once (``slots_scanned``; a
hit, ``miss_absent`` for an empty stock or ``miss_short``; never ``miss_bypass``);
its drains are ``atomic_xchg`` calls run by the draining CPU, so ``drains`` and the
drain's walk count on that CPU (the charging CPU in the retry loop, the
``drain_all`` line's CPU, CPU 0 for ``offline``; ``cpu_dead c`` on ``c``), per
memcg on the drained counter's memcg; its uncharges walk on the uncharging CPU
and touch no stock; it has no evictions, css references or LRU writes.
"""

from memcglab.engine.engine import (
    Engine,
    InvariantViolation,
    check_args,
    replay_chunks,
    replay_compiled,
)
from memcglab.engine.native import BuildError
from memcglab.engine.state import MODELS
from memcglab.engine.textread import parse_text_fast, read_trace_fast, replay_text

__all__ = ["BuildError", "Engine", "InvariantViolation", "MODELS", "check_args", "parse_text_fast",
           "read_trace_fast", "replay_chunks", "replay_compiled", "replay_text"]
