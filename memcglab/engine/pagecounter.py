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
by another CPU (``usage_transfers``).
"""

from __future__ import annotations

from numba import njit

from memcglab.engine.state import (
    E_USAGE_TRANSFERS,
    E_WALK_LEVELS,
    E_WALKS,
    G_EVON,
    G_WALKS,
    G_WARN,
)

__all__ = ["ev", "page_counter_cancel", "try_charge_walk", "uncharge_walk",
           "mem_cgroup_margin", "page_counter_set_max", "mem_cgroup_is_descendant"]


@njit(cache=True)
def ev(s, e, cpu, m, n):
    """Count ``n`` events of kind ``e`` on ``cpu`` for dense memcg ``m`` (if events are on)."""
    if s.g[G_EVON]:
        s.evc[e, cpu] += n
        s.evm[e, m] += n


@njit(cache=True)
def _usage_written(s, c, cpu):
    # A write to c->usage by this CPU: a cacheline transfer if another CPU wrote it last.
    if s.g[G_EVON]:
        w = s.lastw[c]
        if w >= 0 and w != cpu:
            s.evc[E_USAGE_TRANSFERS, cpu] += 1
            s.evm[E_USAGE_TRANSFERS, c] += 1
        s.lastw[c] = cpu


@njit(cache=True)
def page_counter_cancel(s, c, nr_pages):
    """page_counter_cancel(): take pages out of one counter; clamp and warn on underflow.

    The kernel warns once (WARN_ONCE); the contract counts every underflow.
    """
    new = s.usage[c] - nr_pages
    if new < 0:
        s.g[G_WARN] += 1
        new = 0
    s.usage[c] = new


@njit(cache=True)
def try_charge_walk(s, m, nr_pages, cpu):
    """One run of page_counter_try_charge()'s hierarchical loop; return the failing counter.

    Returns -1 on success, else the dense index of the counter over its limit
    (``*fail``) after cancelling the charge on the counters below it. The
    speculative add-then-subtract on the failing counter leaves it unchanged. The
    rollback is part of the same walk (contract, ``walks``).
    """
    s.g[G_WALKS] += 1
    levels = 0
    fail = -1
    c = m
    while c >= 0:
        levels += 1
        _usage_written(s, c, cpu)
        new = s.usage[c] + nr_pages
        if new > s.maxv[c]:
            fail = c
            break
        s.usage[c] = new
        if new > s.watermark[c]:
            s.watermark[c] = new
        c = s.parent[c]
    if fail >= 0:
        c = m
        while c != fail:
            page_counter_cancel(s, c, nr_pages)
            c = s.parent[c]
    ev(s, E_WALKS, cpu, m, 1)
    ev(s, E_WALK_LEVELS, cpu, m, levels)
    return fail


@njit(cache=True)
def uncharge_walk(s, m, nr_pages, cpu):
    """page_counter_uncharge() without a stock, or page_counter_cancel_hierarchy() (RFC 3/8)."""
    s.g[G_WALKS] += 1
    levels = 0
    c = m
    while c >= 0:
        levels += 1
        _usage_written(s, c, cpu)
        page_counter_cancel(s, c, nr_pages)
        c = s.parent[c]
    ev(s, E_WALKS, cpu, m, 1)
    ev(s, E_WALK_LEVELS, cpu, m, levels)


@njit(cache=True)
def mem_cgroup_margin(s, m):
    """mem_cgroup_margin() on cgroup v2 (no memsw): pages left below memory.max."""
    count = s.usage[m]
    limit = s.maxv[m]
    if count < limit:
        return limit - count
    return 0


@njit(cache=True)
def page_counter_set_max(s, m, nr_pages):
    """page_counter_set_max(): 0, or -16 (-EBUSY) when usage is above the new limit."""
    if s.usage[m] > nr_pages:
        return -16
    s.maxv[m] = nr_pages
    return 0


@njit(cache=True)
def mem_cgroup_is_descendant(s, memcg, root):
    """mem_cgroup_is_descendant(): a memcg counts as its own descendant; all descend from root."""
    if root == 0:
        return True
    d = s.depth[root]
    while s.depth[memcg] > d:
        memcg = s.parent[memcg]
    return memcg == root
