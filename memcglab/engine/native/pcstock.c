// SPDX-License-Identifier: GPL-2.0-only
/*
 * page_counter stock: the pcstock model (was memcglab/engine/pcstock.py; the faithful
 * ports are memcglab/kernel/page_counter_stock.py and memcg_stock_pcstock.py).
 *
 * Ports the per-page_counter stock of Joshua Hahn's RFC "[PATCH 0/8 RFC]
 * mm/memcontrol, page_counter: move stock from mem_cgroup to page_counter" (10 Apr
 * 2026, lore 20260410210742.550489-1-joshua.hahnjy@gmail.com; seed 003), cgroup v2 (no
 * memsw stock): the stock-aware page_counter_try_charge (2/8) and
 * page_counter_uncharge (3/8), the drain APIs (4/8), the memcg conversion (5/8) and
 * the parent drain at css_online (7/8). PCS(m, cpu) is nr_pages of CPU cpu's stock of
 * memcg m's memory counter and MC(F_PCBATCH, m) its batch. Every memcg's stock is
 * enabled at css_online (the allocation never fails here), so counter->stock is never
 * NULL.
 *
 * Event conventions (the RFC has no slots): each look at this CPU's stock under the
 * trylock counts one slots_scanned; a charge that finds the stock empty is a
 * miss_absent, one that finds too few pages a miss_short, and a failed trylock a
 * miss_bypass.
 */

/* pc_try_charge() result for a charge served by the stock (no walk). */
#define STOCK_HIT (-2)

HOT void pc_uncharge(const state *S, int64_t m, int64_t nr_pages, int64_t cpu,
			       int nested);

/*
 * page_counter_try_charge() with the RFC 2/8 stock; -2 stock hit, -1 walked, else *fail.
 *
 * A nested operation fails every local_trylock: the stock is skipped and the surplus
 * of a batch charge goes back through page_counter_uncharge().
 */
HOT int64_t pc_try_charge(const state *S, int64_t m, int64_t nr_pages, int64_t cpu,
				    int nested, int refill)
{
	int64_t charge;

	if (!nested) {
		int64_t stock_pages;

		count(S, E_SLOTS_SCANNED, cpu, m, 1);
		stock_pages = PCS(m, cpu);
		if (stock_pages >= nr_pages) {
			PCS(m, cpu) = stock_pages - nr_pages;
			count(S, E_STOCK_HITS, cpu, m, 1);
			return STOCK_HIT;
		}
		count(S, stock_pages == 0 ? E_MISS_ABSENT : E_MISS_SHORT, cpu, m, 1);
	} else {
		count(S, E_MISS_BYPASS, cpu, m, 1);
	}
	/* refill false: the refill variants make the greedy batch nr_pages */
	charge = refill ? max64(MC(F_PCBATCH, m), nr_pages) : nr_pages;
	for (;;) {	/* retry: */
		int64_t fail = try_charge_walk(S, m, charge, cpu);

		if (fail < 0) {
			/* charge > nr_pages implies this page_counter has stock enabled */
			if (charge > nr_pages) {
				if (!nested)
					PCS(m, cpu) += charge - nr_pages;
				else
					pc_uncharge(S, m, charge - nr_pages, cpu, nested);
			}
			return -1;
		}
		if (charge > nr_pages) {
			charge = nr_pages;	/* retry without trying to grab extra pages for the stock */
			continue;
		}
		return fail;
	}
}

/* page_counter_uncharge() with the RFC 3/8 stock: deposit, cancel only the excess. */
HOT void pc_uncharge(const state *S, int64_t m, int64_t nr_pages, int64_t cpu,
			       int nested)
{
	int64_t charge = nr_pages;

	if (!nested) {
		int64_t stock_pages, batch;

		count(S, E_SLOTS_SCANNED, cpu, m, 1);
		stock_pages = PCS(m, cpu) + nr_pages;
		batch = MC(F_PCBATCH, m);
		if (stock_pages > batch) {
			charge = stock_pages - batch;
			PCS(m, cpu) = batch;
		} else {
			PCS(m, cpu) = stock_pages;
			return;
		}
	}
	uncharge_walk(S, m, charge, cpu);	/* page_counter_cancel_hierarchy() */
}

/* page_counter_drain_stock_cpu() / page_counter_drain_cpu(): grab, zero, cancel. */
static void _drain_stock_cpu(const state *S, int64_t m, int64_t cpu)
{
	int64_t nr_pages = PCS(m, cpu);

	PCS(m, cpu) = 0;
	if (nr_pages) {
		uncharge_walk(S, m, nr_pages, cpu);
		count(S, E_DRAINS, cpu, m, 1);
	}
}

/* page_counter_drain_stock() (RFC 4/8): work_on_cpu() on every online CPU, in order. */
static void page_counter_drain_stock(const state *S, int64_t m)
{
	for (int64_t cpu = 0; cpu < G(G_NCPUS); cpu++)
		_drain_stock_cpu(S, m, cpu);
}

/* page_counter_drain_cpu() (RFC 4/8): a dead CPU's stock, without the lock. */
static void page_counter_drain_cpu(const state *S, int64_t m, int64_t cpu)
{
	_drain_stock_cpu(S, m, cpu);
}

/* css_next_descendant_pre() within root's subtree (children in creation order); -1 at end. */
static int64_t _next_preorder(const state *S, int64_t c, int64_t root)
{
	if (MC(F_FIRST, c) >= 0)
		return MC(F_FIRST, c);
	while (c != root && MC(F_NEXT, c) < 0)
		c = MC(F_PARENT, c);
	if (c == root)
		return -1;
	return MC(F_NEXT, c);
}

/* drain_all_stock() after RFC 5/8: for_each_mem_cgroup_tree(), drain each memory stock. */
static void pc_drain_all_stock(const state *S, int64_t root)
{
	int64_t c = root;

	while (c >= 0) {
		page_counter_drain_stock(S, c);
		c = _next_preorder(S, c, root);
	}
}

/* memcg_hotplug_cpu_dead() after RFC 5/8: page_counter_drain_cpu() for every memcg. */
static void pc_cpu_dead(const state *S, int64_t cpu)
{
	int64_t c = 0;

	while (c >= 0) {
		page_counter_drain_cpu(S, c, cpu);
		c = _next_preorder(S, c, 0);
	}
}

/*
 * page_counter_disable_stock() (RFC 1/8 + 3/8): cancel the summed stock, batch = 0.
 *
 * The sum is an unsigned int in the RFC; the per-CPU values are not zeroed. At
 * css_offline the preceding drain_all_stock() has emptied them, so nothing is
 * cancelled in practice. The kernel names no CPU for this cancel; CPU 0 gets it.
 */
static void page_counter_disable_stock(const state *S, int64_t m)
{
	int64_t stock_to_drain = 0;

	for (int64_t cpu = 0; cpu < G(G_NCPUS); cpu++)
		stock_to_drain = (stock_to_drain + PCS(m, cpu)) & 0xFFFFFFFF;
	if (stock_to_drain)
		uncharge_walk(S, m, stock_to_drain, 0);
	MC(F_PCBATCH, m) = 0;
}
