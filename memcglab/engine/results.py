"""Turn the engine's arrays into the contract's JSON object and into ChargeEvents.

The JSON object is built with plain Python ``int``/``bool``/``None``/``str`` so that
``json.dumps`` (the contract's ``sort_keys=True, separators=(",", ":")``) writes
exactly what the faithful replay writes: memcg IDs and pcstock stock keys are
strings, as JSON object keys are.
"""

from __future__ import annotations

import numpy as np

from memcglab import registry
from memcglab.engine.state import (
    EV,
    F_HELDKMEM,
    F_KMEM,
    F_KMEMC_USAGE,
    F_KMEMC_WM,
    F_MAXEV,
    F_MEMSW_USAGE,
    F_MEMSW_WM,
    F_ONLINE,
    F_PARENT,
    F_USAGE,
    F_WATERMARK,
    G_BUSY,
    G_EVICT,
    G_EVON,
    G_FAILED,
    G_HITS,
    G_NCPUS,
    G_NMEMCG,
    G_NOBJ,
    G_NODES,
    G_OBJERA,
    G_ODRAIN,
    G_OEVICT,
    G_OFAIL,
    G_OFLUSH,
    G_OHITS,
    G_OMISS,
    G_OPS,
    G_OREFILL,
    G_OSHORT,
    G_SHORT,
    G_WALKS,
    G_WARN,
    OB_CACHED,
    OB_NR,
    OC_INUSE,
    OC_KMEM,
    OC_LARGE,
    OC_LIVE,
    OC_MEMCG,
    OC_NRCH,
    OC_SLABS,
    OE_MEMCG_CACHES,
    S_CACHED,
    S_NR,
    V1_G,
    State,
)
from memcglab.events import ChargeEvents
from memcglab.kernel.memcontrol_h import get_order
from memcglab.kernel.obj_memcg_caches import KMALLOC_SIZES
from memcglab.kernel.page_counter import PAGE_SIZE

__all__ = ["contract_dict", "charge_events", "obj_dict", "obj_violation", "v1_dict",
           "v1_violation"]


def _stocks(s: State, ids: list[int], view: str) -> list:
    # The contract's stocks in the model's view (memcglab.registry.STOCK_VIEWS).
    ncpus = int(s.g[G_NCPUS])
    if view == "counters":
        n = int(s.g[G_NMEMCG])
        out = []
        for cpu in range(ncpus):
            col = s.pcs[:n, cpu]
            nz = np.flatnonzero(col)
            out.append({str(ids[m]): int(col[m]) for m in nz})
        return out
    per = s.sl.shape[1] // ncpus  # slots per CPU: 1 for single
    cached = s.sl[S_CACHED].reshape(ncpus, per)
    nrp = s.sl[S_NR].reshape(ncpus, per)
    out = []
    for cpu in range(ncpus):
        row: list = [None] * per
        for i in np.flatnonzero(cached[cpu] >= 0):
            row[i] = [ids[cached[cpu, i]], int(nrp[cpu, i])]
        out.append(row)
    return out


def contract_dict(s: State, ids: list[int], model: str, slots: int, seed: int,
                  batch: int, view: str | None = None) -> dict:
    """The replay contract's output object for the engine's current state; ``view`` is
    the form of its ``stocks`` (by default the registered model's)."""
    if view is None:
        view = registry.model(model).stock_view
    n = int(s.g[G_NMEMCG])
    usage, wm, maxev, online = (s.mc[f, :n].tolist()
                                for f in (F_USAGE, F_WATERMARK, F_MAXEV, F_ONLINE))
    return {
        "model": model,
        "slots": slots,
        "batch": batch,
        "seed": seed,
        "ops": int(s.g[G_OPS]),
        "failed_charges": int(s.g[G_FAILED]),
        "set_max_busy": int(s.g[G_BUSY]),
        "short_uncharges": int(s.g[G_SHORT]),
        "warnings": int(s.g[G_WARN]),
        "memcgs": {str(ids[m]): {"usage": usage[m], "watermark": wm[m],
                                 "max_events": maxev[m], "online": bool(online[m])}
                   for m in range(n)},
        "stocks": _stocks(s, ids, view),
        "counters": {"walks": int(s.g[G_WALKS]), "stock_hits": int(s.g[G_HITS]),
                     "evictions": int(s.g[G_EVICT])},
    }


def charge_events(s: State, ids: list[int]) -> ChargeEvents:
    """The per-CPU and per-memcg event counts (the engine must run with events on)."""
    if not s.g[G_EVON]:
        raise ValueError("events=False: this replay did not count events; "
                         "run it with events=True")
    n, ncpus = int(s.g[G_NMEMCG]), int(s.g[G_NCPUS])
    return ChargeEvents(
        per_cpu={name: s.ev[i, :ncpus].copy() for i, name in enumerate(EV)},
        per_memcg={name: s.ev[i, ncpus:ncpus + n].copy() for i, name in enumerate(EV)},
        memcg_ids=np.array(ids[:n], dtype=np.int64),
    )


def obj_dict(s: State, ids: list[int]) -> dict:
    """The keys docs/trace-extensions.md adds for a trace with object operations."""
    n, ncpus = int(s.g[G_NMEMCG]), int(s.g[G_NCPUS])
    nodes, nobj = int(s.g[G_NODES]), int(s.g[G_NOBJ])
    cached = s.ob[OB_CACHED].reshape(ncpus, nobj).tolist()
    nbytes = s.ob[OB_NR].reshape(ncpus, nobj).tolist()
    stocks = [[[ids[o // nodes], o % nodes, b] if o >= 0 else None
               for o, b in zip(cached[c], nbytes[c], strict=True)] for c in range(ncpus)]
    kmem = s.mc[F_KMEM, :n]
    live = s.oc[OC_LIVE, :n * nodes].reshape(n, nodes).tolist()
    nrch = s.oc[OC_NRCH, :n * nodes].reshape(n, nodes).tolist()
    g = s.g
    return {
        "obj_stocks": stocks,
        "objcgs": {str(ids[m]): {"kmem": int(kmem[m]), "live_bytes": live[m],
                                 "nr_charged_bytes": nrch[m]} for m in range(1, n)},
        "obj_counters": {"failed_obj_charges": int(g[G_OFAIL]), "obj_drains": int(g[G_ODRAIN]),
                         "obj_evictions": int(g[G_OEVICT]), "obj_flushes": int(g[G_OFLUSH]),
                         "obj_hits": int(g[G_OHITS]), "obj_misses": int(g[G_OMISS]),
                         "obj_refills": int(g[G_OREFILL])},
        "short_obj_uncharges": int(g[G_OSHORT]),
    }


def _caches_violation(s: State, ids: list[int]) -> str | None:
    # The faithful ObjMemcgCaches.violation() (memcg-caches). It reads its caches in
    # creation order, this in memcg then size order: the same message whenever one
    # cache at most is wrong, as after any one operation of a correct port.
    n = int(s.g[G_NMEMCG])
    pages = s.oc[OC_LARGE, :n].copy()
    for m in range(n):
        for k, size in enumerate(KMALLOC_SIZES):
            order = get_order(size)
            objects = (PAGE_SIZE << order) // size
            inuse, slabs = int(s.oc[OC_INUSE + k, m]), int(s.oc[OC_SLABS + k, m])
            if not 0 <= inuse <= slabs * objects:
                return (f"kmalloc-{size} of memcg {ids[m]}: {inuse} objects in {slabs} "
                        f"slabs of {objects}")
            pages[m] += slabs << order
    for m in range(n):
        if int(s.oc[OC_MEMCG, m]) == 0:
            continue  # slabs of a cache reparented to the root were never charged
        if int(s.oc[OC_KMEM, m]) != pages[m] or s.oc[OC_NRCH, m]:
            return (f"caches of memcg {ids[m]}: {int(s.oc[OC_KMEM, m])} kmem pages "
                    f"!= {int(pages[m])} slab pages")
    return None


def obj_violation(s: State, ids: list[int]) -> str | None:
    """The faithful ObjCgroupPath.violation() wording for the engine's obj state (that of
    ObjMemcgCaches for the memcg-caches era)."""
    if int(s.g[G_OBJERA]) == OE_MEMCG_CACHES:
        return _caches_violation(s, ids)
    n, ncpus = int(s.g[G_NMEMCG]), int(s.g[G_NCPUS])
    nodes, nobj = int(s.g[G_NODES]), int(s.g[G_NOBJ])
    stocked = np.zeros(n * nodes, dtype=np.int64)
    for cpu in range(ncpus):
        for i in range(nobj):
            o, b = int(s.ob[OB_CACHED, cpu * nobj + i]), int(s.ob[OB_NR, cpu * nobj + i])
            if o < 0 and b:
                return f"cpu {cpu} obj slot {i} is empty but holds {b} bytes"
            if b < 0:
                return f"cpu {cpu} obj slot {i} holds {b} bytes"
            if o >= 0:
                stocked[o] += b
    for o in range(n * nodes):
        kmem, live, nrch = (int(s.oc[r, o]) for r in (OC_KMEM, OC_LIVE, OC_NRCH))
        if 4096 * kmem != live + int(stocked[o]) + nrch:
            return (f"objcg of memcg {ids[o // nodes]} node {o % nodes}: 4096 x {kmem} kmem "
                    f"pages != live {live} + stocked {int(stocked[o])} + nr_charged_bytes "
                    f"{nrch}")
    return None


def v1_dict(s: State, ids: list[int], swap: bool) -> dict:
    """The keys docs/trace-extensions.md adds on cgroup v1 (the faithful replay's
    ``cgroup_version``, ``swap``, ``v1_counters`` and ``v1_memcgs``)."""
    n = int(s.g[G_NMEMCG])
    ku, kw, mu, mw = (s.mc[f, :n].tolist()
                      for f in (F_KMEMC_USAGE, F_KMEMC_WM, F_MEMSW_USAGE, F_MEMSW_WM))
    memcgs = {}
    for m in range(n):
        entry = {"kmem_usage": ku[m], "kmem_watermark": kw[m]}
        if swap:
            entry["memsw_usage"] = mu[m]
            entry["memsw_watermark"] = mw[m]
        memcgs[str(ids[m])] = entry
    return {"cgroup_version": 1, "swap": swap,
            "v1_counters": {name: int(s.g[g]) for name, g in V1_G.items()},
            "v1_memcgs": memcgs}


def v1_violation(s: State, ids: list[int], swap: bool) -> str | None:
    """The faithful memcglab.kernel.memcontrol_v1.v1_violation() wording."""
    n = int(s.g[G_NMEMCG])
    kmem, stat, usage = s.mc[F_KMEMC_USAGE, :n], s.mc[F_KMEM, :n], s.mc[F_USAGE, :n]
    memsw, parent = s.mc[F_MEMSW_USAGE, :n], s.mc[F_PARENT, :n]
    pages = s.mc[F_HELDKMEM, :n]  # the trace's held page-level kmem pages
    children = np.bincount(parent[1:], weights=kmem[1:], minlength=n).astype(np.int64)
    for m in range(n):
        if kmem[m] != stat[m] + pages[m] + children[m]:
            return (f"memcg {ids[m]}: kmem counter {kmem[m]} != MEMCG_KMEM {stat[m]} + "
                    + (f"held kmem pages {pages[m]} + " if pages[m] else "")
                    + f"children {children[m]}")
        if swap and memsw[m] != usage[m]:
            return f"memcg {ids[m]}: memsw {memsw[m]} != memory {usage[m]}"
    return None
