// SPDX-License-Identifier: GPL-2.0-only
/*
 * page_counter stock of v4 of the series: the pcstock-v4 model (was
 * memcglab/engine/pcstock_v4.py).
 *
 * Ports Joshua Hahn's "[PATCH v4 0/5] mm/memcontrol, page_counter: move stock from
 * mem_cgroup to page_counter" (23 Jun 2026, lore
 * 20260623180124.868655-1-joshua.hahnjy@gmail.com), cgroup v2, as the faithful
 * memcglab/kernel/page_counter_stock_v4.py and memcg_stock_pcstock_v4.py do:
 * page_counter_try_charge_stock (3/5), page_counter_drain_stock(counter, cpu) by
 * atomic_xchg (1/5), and the memcg conversion's drain_all_stock and
 * memcg_hotplug_cpu_dead (4/5). PCS(m, cpu) is CPU cpu's atomic_t nr_pages of memcg
 * m's memory counter and MC(F_PCBATCH, m) its batch, set at css_online (the
 * allocation never fails here). Uncharges never touch a stock: they are plain
 * uncharge_walk calls, made by the loop.
 *
 * Event conventions (see also memcglab/engine/__init__.py):
 *
 * - each look at this CPU's stock (the atomic_read that starts every
 *   page_counter_try_charge_stock, so one per retry pass) counts one slots_scanned
 *   and is one of stock_hits, miss_absent (the stock is empty) or miss_short;
 *   miss_bypass never happens (no lock, no size cap);
 * - a drain is an atomic_xchg executed by the CPU that runs the drain, not by the
 *   stock's CPU: its drains count, its uncharge walk and the walk's usage_transfers
 *   go to the draining CPU (the charging CPU in the retry loop, the drain_all line's
 *   CPU, CPU 0 for offline, whose caller the trace does not name); cpu_dead c counts
 *   on c, as for every model;
 * - evictions, css_ref_ops and lru_writes are always 0.
 */

/*
 * page_counter_try_charge_stock() (v4 3/5): -2 stock hit, -1 walked, else *fail.
 *
 * The stock, then max(batch, nr_pages) when that exceeds nr_pages (the surplus goes
 * to this CPU's stock), then exactly nr_pages; the failing counter is the one of the
 * last walk.
 */
HOT int64_t v4_try_charge_stock(const state *S, int64_t m, int64_t nr_pages,
					  int64_t cpu, int refill)
{
	int64_t old, charge;

	count(S, E_SLOTS_SCANNED, cpu, m, 1);
	old = PCS(m, cpu);
	if (old >= nr_pages) {	/* the atomic_try_cmpxchg loop succeeds at once: sequential */
		PCS(m, cpu) = old - nr_pages;
		count(S, E_STOCK_HITS, cpu, m, 1);
		return STOCK_HIT;
	}
	count(S, old == 0 ? E_MISS_ABSENT : E_MISS_SHORT, cpu, m, 1);
	charge = refill ? max64(MC(F_PCBATCH, m), nr_pages) : nr_pages;
	if (charge > nr_pages) {
		if (try_charge_walk(S, m, charge, cpu) < 0) {
			PCS(m, cpu) += charge - nr_pages;	/* atomic_add(): at most batch - 1 now */
			return -1;
		}
	}
	/* charge_exact: */
	return try_charge_walk(S, m, nr_pages, cpu);
}

/* page_counter_drain_stock(counter, stock_cpu) (v4 1/5), executed on cpu. */
static void v4_drain_stock(const state *S, int64_t m, int64_t stock_cpu, int64_t cpu)
{
	int64_t nr_pages = PCS(m, stock_cpu);	/* atomic_xchg(&stock->nr_pages, 0) */

	PCS(m, stock_cpu) = 0;
	if (nr_pages) {
		count(S, E_DRAINS, cpu, m, 1);
		uncharge_walk(S, m, nr_pages, cpu);	/* page_counter_uncharge() */
	}
}

/* drain_all_stock() after v4 4/5: the subtree in pre-order, each online CPU inside. */
static void v4_drain_all_stock(const state *S, int64_t root, int64_t cpu)
{
	int64_t c = root;

	while (c >= 0) {	/* for_each_mem_cgroup_tree(memcg, root_memcg) */
		for (int64_t stock_cpu = 0; stock_cpu < G(G_NCPUS); stock_cpu++)
			v4_drain_stock(S, c, stock_cpu, cpu);	/* for_each_online_cpu(cpu) */
		c = _next_preorder(S, c, root);
	}
}

/* memcg_hotplug_cpu_dead() after v4 4/5: cpu's stock of every memcg, root first. */
static void v4_cpu_dead(const state *S, int64_t cpu)
{
	int64_t c = 0;

	while (c >= 0) {	/* for_each_mem_cgroup(memcg) */
		v4_drain_stock(S, c, cpu, cpu);
		c = _next_preorder(S, c, 0);
	}
}
