"""Compiled page_counter walks over the engine's flat arrays.

Ports of the hierarchical loops of mm/page_counter.c (2026 mm tree,
linux-mm/linux-mm 0826bf00f15f) as the replay needs them: the
``for (c = counter; c; c = c->parent)`` loops of ``page_counter_try_charge`` (with
its rollback), ``page_counter_uncharge`` and the RFC's
``page_counter_cancel_hierarchy``, plus ``page_counter_cancel``,
``page_counter_set_max`` and ``mem_cgroup_margin``. A memcg's dense index stands
for its ``memory`` counter; ``parent[c] == -1`` is the NULL parent of the root.

Differences from the kernel, none of which changes a result:

* Atomics are plain arithmetic: the replay is sequential, so every
  read-modify-write is exact, and ``page_counter_set_max`` decides on its first pass.
* ``protection_support`` propagation is left out: ``min`` and ``low`` are never
  set by a trace, so ``propagate_protected_usage`` never changes anything.
* ``local_watermark`` is not kept: nothing resets watermarks in a replay, so it
  always equals ``watermark``.
* cgroup v2 counters do not track ``failcnt``.

Every walk adds one to ``g[G_WALKS]`` (the contract's ``walks``) and, with events
on, reports its levels and the levels whose ``usage`` cacheline was last written
by another CPU (``usage_transfers``). Arrays are those of
:mod:`memcglab.engine.state`: ``g`` scalars, ``mc`` memcg fields, ``ev`` events.
"""

from __future__ import annotations

from memcglab.engine.jit import hot, kernel
from memcglab.engine.state import (
    E_PC_TRY_CHARGE,
    E_PC_TRY_CHARGE_LEVELS,
    E_PC_UNCHARGE,
    E_PC_UNCHARGE_LEVELS,
    E_USAGE_TRANSFERS,
    E_WALK_LEVELS,
    E_WALKS,
    F_DEPTH,
    F_LASTW,
    F_MAX,
    F_PARENT,
    F_USAGE,
    F_WATERMARK,
    G_EVON,
    G_NCPUS,
    G_WALKS,
    G_WARN,
)

__all__ = ["count", "page_counter_cancel", "try_charge_walk", "uncharge_walk",
           "mem_cgroup_margin", "page_counter_set_max", "mem_cgroup_is_descendant"]


@hot
def count(g, ev, e, cpu, m, n):
    """Count ``n`` events of kind ``e`` on ``cpu`` for dense memcg ``m`` (if events are on)."""
    if g[G_EVON]:
        ev[e, cpu] += n
        ev[e, g[G_NCPUS] + m] += n


@hot
def _walk_events(g, ev, e_calls, e_levels, cpu, m, levels):
    # One walk: walks and walk_levels, and the same for its kernel function.
    col = g[G_NCPUS] + m
    ev[E_WALKS, cpu] += 1
    ev[E_WALKS, col] += 1
    ev[E_WALK_LEVELS, cpu] += levels
    ev[E_WALK_LEVELS, col] += levels
    ev[e_calls, cpu] += 1
    ev[e_calls, col] += 1
    ev[e_levels, cpu] += levels
    ev[e_levels, col] += levels


@hot
def _usage_written(g, mc, ev, c, cpu):
    # A write to c->usage by this CPU: a cacheline transfer if another CPU wrote it last.
    if g[G_EVON]:
        w = mc[F_LASTW, c]
        if w >= 0 and w != cpu:
            ev[E_USAGE_TRANSFERS, cpu] += 1
            ev[E_USAGE_TRANSFERS, g[G_NCPUS] + c] += 1
        mc[F_LASTW, c] = cpu


@hot
def page_counter_cancel(g, mc, c, nr_pages):
    """page_counter_cancel(): take pages out of one counter; clamp and warn on underflow.

    The kernel warns once (WARN_ONCE); the contract counts every underflow.
    """
    new = mc[F_USAGE, c] - nr_pages
    if new < 0:
        g[G_WARN] += 1
        new = 0
    mc[F_USAGE, c] = new


@hot
def try_charge_walk(g, mc, ev, m, nr_pages, cpu):
    """One run of page_counter_try_charge()'s hierarchical loop; return the failing counter.

    Returns -1 on success, else the dense index of the counter over its limit
    (``*fail``) after cancelling the charge on the counters below it. The
    speculative add-then-subtract on the failing counter leaves it unchanged. The
    rollback is part of the same walk (contract, ``walks``).
    """
    g[G_WALKS] += 1
    levels = 0
    fail = -1
    c = m
    while c >= 0:
        levels += 1
        _usage_written(g, mc, ev, c, cpu)
        new = mc[F_USAGE, c] + nr_pages
        if new > mc[F_MAX, c]:
            fail = c
            break
        mc[F_USAGE, c] = new
        if new > mc[F_WATERMARK, c]:
            mc[F_WATERMARK, c] = new
        c = mc[F_PARENT, c]
    if fail >= 0:
        c = m
        while c != fail:
            page_counter_cancel(g, mc, c, nr_pages)
            c = mc[F_PARENT, c]
    if g[G_EVON]:  # count() four times, behind one test on the per-charge path
        _walk_events(g, ev, E_PC_TRY_CHARGE, E_PC_TRY_CHARGE_LEVELS, cpu, m, levels)
    return fail


@hot
def uncharge_walk(g, mc, ev, m, nr_pages, cpu):
    """page_counter_uncharge() without a stock, or page_counter_cancel_hierarchy() (RFC 3/8)."""
    g[G_WALKS] += 1
    levels = 0
    c = m
    while c >= 0:
        levels += 1
        _usage_written(g, mc, ev, c, cpu)
        page_counter_cancel(g, mc, c, nr_pages)
        c = mc[F_PARENT, c]
    if g[G_EVON]:
        _walk_events(g, ev, E_PC_UNCHARGE, E_PC_UNCHARGE_LEVELS, cpu, m, levels)


@hot
def mem_cgroup_margin(mc, m):
    """mem_cgroup_margin() on cgroup v2 (no memsw): pages left below memory.max."""
    count_ = mc[F_USAGE, m]
    limit = mc[F_MAX, m]
    if count_ < limit:
        return limit - count_
    return 0


@hot
def page_counter_set_max(mc, m, nr_pages):
    """page_counter_set_max(): 0, or -16 (-EBUSY) when usage is above the new limit."""
    if mc[F_USAGE, m] > nr_pages:
        return -16
    mc[F_MAX, m] = nr_pages
    return 0


@kernel
def mem_cgroup_is_descendant(mc, memcg, root):
    """mem_cgroup_is_descendant(): a memcg counts as its own descendant; all descend from root."""
    if root == 0:
        return True
    d = mc[F_DEPTH, root]
    while mc[F_DEPTH, memcg] > d:
        memcg = mc[F_PARENT, memcg]
    return memcg == root
