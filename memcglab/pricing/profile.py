"""Where an operation's charge-path cycles go, by kernel function, as ``perf --children`` shows.

The compiled engine counts each function's calls and the counters its walks visit
(:data:`memcglab.events.CALL_EVENTS`); :func:`function_cycles` prices them with the
cost model's hardware costs (:class:`memcglab.cost.CostParams`) and adds the time
spent at page_counter usage lines (the queueing network's residence: a CPU spinning
on a contended ``atomic_long_add_return`` burns cycles inside the walk). Every
function's figure is *inclusive*: its own work plus that of what it calls on the
benchmark's steady-state paths, which is what ``perf report --children`` prints:

* ``page_counter_try_charge``: its walks (a call, an atomic RMW and a read per level)
  and the charge walks' share of the line time;
* ``page_counter_uncharge`` (``page_counter_cancel`` included): the same for uncharge
  walks;
* ``drain_stock``: a call and a slot write per drain, and the uncharge walk each drain
  makes (its share of ``page_counter_uncharge``);
* ``refill_stock``: a call, the stock lock and lines, evictions, LRU writes, and every
  ``drain_stock`` (on these traces every drain comes from a refill; no ``drain_all``);
* ``try_charge_memcg``: the stock lookup of each charge (lock, lines, slots compared,
  the hit's write), ``page_counter_try_charge``, and the refills made on the charge
  path (a miss refills the batch surplus; an uncharge's refill is not under it);
* ``obj_cgroup_charge``: its byte-stock lookup and refill, and the share of
  ``try_charge_memcg`` that ``obj_cgroup_charge_pages`` calls make.

With the page_counter stock models (``pcstock``, ``pcstock-v4``) the stock lookup is
inside ``page_counter_try_charge``, and there is no ``refill_stock`` or ``drain_stock``.

>>> import numpy as np
>>> from memcglab.cost import CostParams
>>> per_op = {"charges": 1.0, "try_charge_memcg": 1.0, "stock_hits": 0.9, "slots_scanned": 1.0,
...           "page_counter_try_charge": 0.1, "page_counter_try_charge_levels": 0.3}
>>> cost = {n: np.array([v]) for n, v in vars(CostParams()).items()}
>>> f = function_cycles(per_op, cost, lines_per_scan=1.0, line_cycles=np.array([0.0]),
...                     model="multi")
>>> float(f["page_counter_try_charge"][0]), float(f["try_charge_memcg"][0]) > 50
(8.7, True)
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["FUNCTIONS", "function_cycles"]

#: the functions of the scenario contract's profile
FUNCTIONS: tuple[str, ...] = ("try_charge_memcg", "page_counter_try_charge",
                              "page_counter_uncharge", "refill_stock", "drain_stock",
                              "obj_cgroup_charge")


def _g(per_op: Mapping[str, float], name: str) -> float:
    return float(per_op.get(name, 0.0))


def _stock_kind(model: str) -> str:
    """The registry's kind of ``model``'s stock (``"none"``: no stock, priced as memcg)."""
    from memcglab import registry

    return registry.model(model).stock_kind if model != "none" else "memcg"


def _uncharge_refill_share(per_op: Mapping[str, float]) -> float:
    """The share of refill_stock calls made on uncharge paths (not under try_charge_memcg)."""
    refills = _g(per_op, "refill_stock")
    if refills <= 0:
        return 0.0
    from_uncharges = _g(per_op, "uncharges") + _g(per_op, "obj_flushes")
    return min(1.0, from_uncharges / refills)


def function_cycles(per_op: Mapping[str, float], cost: Mapping[str, np.ndarray],
                    lines_per_scan: float, line_cycles: np.ndarray, model: str
                    ) -> dict[str, np.ndarray]:
    """Inclusive cycles per operation of each of :data:`FUNCTIONS` (module doc), and
    ``total``: every charge-path cycle of the operation, each counted once.

    ``line_cycles`` is the time at usage lines per operation (waiting and transfer, in
    cycles), split between charge and uncharge walks by the levels each visits; it is
    part of ``total``. Each value has the shape of the cost arrays (one per point).
    """
    g = lambda name: _g(per_op, name)  # noqa: E731
    c = cost
    lc, lu = g("page_counter_try_charge_levels"), g("page_counter_uncharge_levels")
    share_c = lc / (lc + lu) if lc + lu > 0 else 0.0
    pct = (g("page_counter_try_charge") * c["call"]
           + lc * (c["atomic_rmw"] + c["l1_hit"]) + share_c * line_cycles)
    pcu = (g("page_counter_uncharge") * c["call"] + lu * c["atomic_rmw"]
           + (1.0 - share_c) * line_cycles)
    walks_u = g("page_counter_uncharge")
    drains = g("drain_stock")
    drain_walks = pcu * (min(1.0, drains / walks_u) if walks_u > 0 else 0.0)
    ds = drains * (c["call"] + c["percpu_rmw"]) + g("css_ref_ops") * c["percpu_rmw"] \
        + drain_walks
    lookup = c["stock_lock"] + c["l1_hit"] * lines_per_scan
    rs = (g("refill_stock") * (c["call"] + lookup)
          + g("evictions") * (c["random_u32"] + 2 * c["percpu_rmw"])
          + g("lru_writes") * c["percpu_rmw"] + ds)
    per_counter = _stock_kind(model) == "page_counter"
    if per_counter:
        rs = ds = drain_walks = np.zeros_like(pct)
    consume = (g("charges") * lookup + g("slots_scanned") * c["slot_compare"]
               + g("stock_hits") * c["percpu_rmw"]
               + (g("miss_absent") + g("miss_short")) * c["call"])
    if per_counter:
        pct = pct + consume
        consume = np.zeros_like(pct)
    from_charges = 1.0 - _uncharge_refill_share(per_op)
    tcm = g("try_charge_memcg") * c["call"] + consume + pct + from_charges * rs
    calls = g("try_charge_memcg")
    obj_pages = max(0.0, calls - g("charges")) / calls if calls > 0 else 0.0
    obj_own = g("obj_cgroup_charge") * (c["call"] + c["stock_lock"] + c["percpu_rmw"]) \
        + g("obj_refills") * c["percpu_rmw"] + g("obj_misses") * c["call"]
    occ = obj_own + obj_pages * tcm
    # everything once: the charge tree, the obj side's own work, the refills and walks
    # of the uncharge paths, and the entry points and frees outside the six functions
    rest = ((g("uncharges") + g("uncharges_direct")) * c["call"]
            + g("obj_cgroup_uncharge") * (c["call"] + c["stock_lock"] + c["percpu_rmw"])
            + g("obj_drains") * (c["call"] + c["atomic_rmw"] + c["percpu_rmw"])
            + g("obj_flushes") * c["call"])
    total = tcm + obj_own + (1.0 - from_charges) * rs + (pcu - drain_walks) + rest \
        + _obj_era_cycles(per_op, c)
    return {"try_charge_memcg": tcm, "page_counter_try_charge": pct,
            "page_counter_uncharge": pcu, "refill_stock": rs, "drain_stock": ds,
            "obj_cgroup_charge": occ, "total": total}


def _obj_era_cycles(per_op: Mapping[str, float], c: Mapping[str, np.ndarray]) -> np.ndarray:
    """The older obj-stock eras' own work per operation (:data:`memcglab.events.OBJ_ERA_EVENTS`,
    0 in the eras that do not count them), outside the six functions: the slab hooks call
    it after ``obj_cgroup_charge`` and before ``obj_cgroup_uncharge``.

    * ``mod_objcg_state``: a call, interrupts off and on around the per-CPU work
      (``stock_lock``'s price) and one per-CPU write (v5.9: the objcg-to-memcg and lruvec
      lookups; v5.14-vmstat on: the stock's cached stat bytes);
    * ``memcg_stat_updates`` (``__mod_memcg_lruvec_state``): a call and three per-CPU
      writes (the memcg's, the lruvec's and the node's counters);
    * ``memcg_stat_flushes``: an atomic add into each ancestor's counter (the walk's
      levels). These counters are shared lines, but a flush comes once per
      ``MEMCG_CHARGE_BATCH`` pages' worth of bytes per CPU, so their transfers are not
      queued as stations (a modelling choice: they would be at most one in 64 charges);
    * ``slab_page_charges`` / ``_uncharges`` (memcg-caches): a call each; their page
      counter work is in the charges and uncharges the engine counts.
    """
    g = lambda name: _g(per_op, name)  # noqa: E731
    walks = g("walks")
    levels = g("walk_levels") / walks if walks > 0 else 1.0
    return (g("mod_objcg_state") * (c["call"] + c["stock_lock"] + c["percpu_rmw"])
            + g("memcg_stat_updates") * (c["call"] + 3.0 * c["percpu_rmw"])
            + g("memcg_stat_flushes") * levels * c["atomic_rmw"]
            + (g("slab_page_charges") + g("slab_page_uncharges")) * c["call"])
