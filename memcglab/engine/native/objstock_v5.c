// SPDX-License-Identifier: GPL-2.0-only
/*
 * The obj stock of v5.9 to v5.14: Roman Gushchin's slab controller and Waiman Long's
 * series (the faithful port is memcglab/kernel/obj_stock_v5.py, ObjStockV5, whose
 * functions these are, in its order; docs/trace-extensions.md, "The older obj-stock
 * eras").
 *
 * G(G_OBJERA) is the era:
 *
 * - OE_V59 ("mm: memcg/slab: charge individual slab objects instead of pages",
 *   torvalds/linux mm/memcontrol.c 5458985533ba): refill_obj_stock() drains the whole
 *   stock past a page, a drain's whole pages are uncharged directly (v5.9's
 *   __memcg_kmem_uncharge), and mod_objcg_state() is mm/slab.h's inline: one
 *   __mod_memcg_lruvec_state() per object, whose per-CPU memcg and lruvec counters
 *   (VS(m, cpu) and VS(m, ncpus + cpu)) are added up the hierarchy past
 *   MEMCG_CHARGE_BATCH << PAGE_SHIFT bytes;
 * - OE_V514_VMSTAT (68ac5b3c8db2, "mm/memcg: cache vmstat data in percpu
 *   memcg_stock_pcp"): the stat bytes wait in the stock (OB_PGDAT, OB_SLABB); a drain's
 *   whole pages go to obj_cgroup_uncharge_pages();
 * - OE_V514_REFILL (5387c90490f7, "mm/memcg: improve refill_obj_stock() performance"):
 *   past a page, whole pages are uncharged and the sub-page rest stays;
 * - OE_V514 (559271146efc, "mm/memcg: optimize user context object stock access"): two
 *   stocks per CPU, task_obj (slot 0) and irq_obj (slot 1), chosen by in_task().
 *
 * OB(OB_CACHED, idx) is a stock's cached objcg (-1 for NULL), OB(OB_NR, idx) its
 * nr_bytes, OB(OB_PGDAT, idx) its cached_pgdat (a node, -1 for NULL) and
 * OB(OB_SLABB, idx) its nr_slab_unreclaimable_b; one objcg per memcg (G(G_NODES) is 1),
 * so objcg o is dense memcg o, and OC(OC_MEMCG, o) its memcg (the parent once
 * reparented). The node of a slab page is the CPU's node of the trace (G(G_TNODES)).
 *
 * These eras' locks are local_irq_save() and preempt_disable(), which cannot fail: a
 * nested operation changes nothing here; it reaches the page side (try_charge_memcg,
 * the model's refill_stock) as nested, as the faithful port's held stock locks do.
 * The counts of memcglab.events.OBJ_ERA_EVENTS are totals in g (OBJ_ERA_G of
 * memcglab/engine/state.py), as the faithful replay keeps them (Observer.calls).
 */

/* obj_cgroup_charge_pages(): try_charge_memcg, then MEMCG_KMEM up; true on success. */
static int obj_cgroup_charge_pages(const state *S, int64_t o, int64_t nr_pages, int64_t cpu,
				   int nested, int irq)
{
	int64_t m = OC(OC_MEMCG, o);	/* get_mem_cgroup_from_objcg(objcg) */

	if (!try_charge_memcg(S, m, nr_pages, cpu, nested, irq))
		return 0;
	if (!memcg1_kmem_try_charge(S, m, nr_pages, cpu))	/* v1: memcg->kmem */
		return 0;
	MC(F_KMEM, m) += nr_pages;	/* account_kmem_nmi_safe(memcg, nr_pages) */
	MC(F_OBJPAGES, m) += nr_pages;
	OC(OC_KMEM, o) += nr_pages;
	return 1;
}

/* obj_cgroup_uncharge_pages(): MEMCG_KMEM down, whole pages to the model's refill_stock
 * (the root check of the shared page side, memcglab/kernel/objcg.py). */
static void obj_cgroup_uncharge_pages(const state *S, int64_t o, int64_t nr_pages,
				      int64_t cpu, int nested)
{
	int64_t m = OC(OC_MEMCG, o);

	G(G_OFLUSH) += 1;
	count(S, E_OBJ_FLUSHES, cpu, m, 1);
	MC(F_KMEM, m) -= nr_pages;	/* account_kmem_nmi_safe(memcg, -nr_pages) */
	memcg1_account_kmem(S, m, -nr_pages);	/* v5.13: page_counter_uncharge(&memcg->kmem) */
	OC(OC_KMEM, o) -= nr_pages;
	if (m != 0) {
		MC(F_OBJPAGES, m) -= nr_pages;
		machine_refill_stock(S, m, nr_pages, cpu, nested);
	}
}

/* memcg_uncharge_kmem(): MEMCG_KMEM down and a direct uncharge, unless the root (v5.9's
 * __memcg_kmem_uncharge: page_counter_uncharge of the memory counter). */
static void memcg_uncharge_kmem(const state *S, int64_t o, int64_t nr_pages, int64_t cpu,
				int nested)
{
	int64_t m = OC(OC_MEMCG, o);

	MC(F_KMEM, m) -= nr_pages;
	memcg1_account_kmem(S, m, -nr_pages);	/* __memcg_kmem_uncharge: kmem first */
	OC(OC_KMEM, o) -= nr_pages;
	if (m != 0) {
		MC(F_OBJPAGES, m) -= nr_pages;
		machine_memcg_uncharge(S, m, nr_pages, cpu, nested);
	}
}

/* ------------------------------------------------------------ helpers */

/* page_pgdat() of a slab page allocated on cpu: its node. */
HOT int64_t pgdat_of(const state *S, int64_t cpu)
{
	return floor_div(cpu, floor_div(G(G_NCPUS), G(G_TNODES)));
}

/* get_obj_stock() (559271146efc): the task stock in task context, else the irq stock;
 * before v5.14 the one stock of memcg_stock_pcp. The slot's index in ob. */
HOT int64_t get_obj_stock(const state *S, int64_t cpu, int irq)
{
	if (G(G_OBJERA) == OE_V514 && irq)
		return cpu * 2 + 1;
	return cpu * G(G_NOBJ);
}

/* ------------------------------------------------------------ statistics */

/*
 * __mod_memcg_lruvec_state() for NR_SLAB_UNRECLAIMABLE_B (a byte item).
 *
 * v5.9: __mod_memcg_state(), then the lruvec counter, each per-CPU, each added up the
 * hierarchy (one memcg_stat_flushes) once its magnitude passes MEMCG_CHARGE_BATCH <<
 * PAGE_SHIFT bytes. v5.9's only caller passes the CPU's own node, so a CPU's lruvec
 * counter of a memcg is one column. The v5.13 base of the v5.14 eras has rstat: no
 * threshold, nothing per CPU to keep.
 */
static void mod_memcg_lruvec_state(const state *S, int64_t m, int64_t pgdat, int64_t val,
				   int64_t cpu)
{
	int64_t threshold;

	(void)pgdat;	/* the lruvec of pgdat: CPU cpu's node in v5.9 */
	G(G_OSTATUPD) += 1;
	if (G(G_OBJERA) != OE_V59)
		return;
	threshold = G(G_BATCH) << PAGE_SHIFT;	/* memcg_stat_item_in_bytes(): <<= PAGE_SHIFT */
	for (int64_t k = 0; k < 2; k++) {	/* memcg->vmstats_percpu, pn->lruvec_stat_cpu */
		int64_t col = k * G(G_NCPUS) + cpu;
		int64_t x = val + VS(m, col);

		if (x > threshold || -x > threshold) {
			/* for (mi = memcg; mi; mi = parent_mem_cgroup(mi)) atomic_long_add(x, ...) */
			G(G_OSTATFLUSH) += 1;
			x = 0;
		}
		VS(m, col) = x;	/* __this_cpu_write() */
	}
}

/* mod_objcg_mlstate() (68ac5b3c8db2): the memcg's lruvec update. */
static void mod_objcg_mlstate(const state *S, int64_t o, int64_t pgdat, int64_t nr,
			      int64_t cpu)
{
	mod_memcg_lruvec_state(S, OC(OC_MEMCG, o), pgdat, nr, cpu);
}

static void v5_drain_obj_stock(const state *S, int64_t idx, int64_t cpu, int nested);

/*
 * mod_objcg_state(): v5.9's mm/slab.h inline (straight to the memcg's stats), or the
 * stock-cached version of 68ac5b3c8db2 (v5.14: get_obj_stock()).
 */
static void mod_objcg_state(const state *S, int64_t o, int64_t pgdat, int64_t nr,
			    int64_t cpu, int nested, int irq)
{
	int64_t idx;

	G(G_OSTATE) += 1;
	if (G(G_OBJERA) == OE_V59) {
		mod_memcg_lruvec_state(S, OC(OC_MEMCG, o), pgdat, nr, cpu);
		return;
	}
	idx = get_obj_stock(S, cpu, irq);
	if (OB(OB_CACHED, idx) != o) {
		v5_drain_obj_stock(S, idx, cpu, nested);
		/* obj_cgroup_get(objcg); atomic_xchg() only if atomic_read() sees bytes */
		OB(OB_NR, idx) = OC(OC_NRCH, o);
		OC(OC_NRCH, o) = 0;
		OB(OB_CACHED, idx) = o;
		OB(OB_PGDAT, idx) = pgdat;
	} else if (OB(OB_PGDAT, idx) != pgdat) {
		/*
		 * Flush the existing cached vmstat data. At these commits the flush names the
		 * new pgdat (fixed later: "oldpg"); the node only picks a lruvec.
		 */
		if (OB(OB_SLABB, idx)) {
			mod_objcg_mlstate(S, o, pgdat, OB(OB_SLABB, idx), cpu);
			OB(OB_SLABB, idx) = 0;
		}
		OB(OB_PGDAT, idx) = pgdat;
	}
	/*
	 * "Even for large object >= PAGE_SIZE, the vmstat data will still be cached
	 * locally at least once before pushing it out."
	 */
	if (!OB(OB_SLABB, idx)) {
		OB(OB_SLABB, idx) = nr;
		nr = 0;
	} else {
		OB(OB_SLABB, idx) += nr;
		if (OB(OB_SLABB, idx) > PAGE_SIZE || -OB(OB_SLABB, idx) > PAGE_SIZE) {
			nr = OB(OB_SLABB, idx);
			OB(OB_SLABB, idx) = 0;
		} else {
			nr = 0;
		}
	}
	if (nr)
		mod_objcg_mlstate(S, o, pgdat, nr, cpu);
}

/* ------------------------------------------------------------ the byte stock */

/* consume_obj_stock() (5458985533ba; v5.14: get_obj_stock()). */
static int v5_consume_obj_stock(const state *S, int64_t o, int64_t nr_bytes, int64_t cpu,
				int irq)
{
	int64_t idx = get_obj_stock(S, cpu, irq);
	int ret = 0;

	if (o == OB(OB_CACHED, idx) && OB(OB_NR, idx) >= nr_bytes) {
		OB(OB_NR, idx) -= nr_bytes;
		ret = 1;
	}
	if (ret) {
		G(G_OHITS) += 1;
		count(S, E_OBJ_HITS, cpu, OC(OC_MEMCG, o), 1);
	} else {
		G(G_OMISS) += 1;
		count(S, E_OBJ_MISSES, cpu, OC(OC_MEMCG, o), 1);
	}
	return ret;
}

/*
 * drain_obj_stock(): whole pages out (v5.9: __memcg_kmem_uncharge, a direct uncharge;
 * v5.14-*: obj_cgroup_uncharge_pages), the rest to the shared nr_charged_bytes; from
 * 68ac5b3c8db2 on, the cached stat bytes flushed.
 */
static void v5_drain_obj_stock(const state *S, int64_t idx, int64_t cpu, int nested)
{
	int64_t old = OB(OB_CACHED, idx);

	if (old < 0)
		return;
	G(G_ODRAIN) += 1;
	count(S, E_OBJ_DRAINS, cpu, OC(OC_MEMCG, old), 1);
	if (OB(OB_NR, idx)) {
		int64_t nr_pages = OB(OB_NR, idx) >> PAGE_SHIFT;
		int64_t nr_bytes = OB(OB_NR, idx) & (PAGE_SIZE - 1);

		if (nr_pages) {
			if (G(G_OBJERA) == OE_V59)
				memcg_uncharge_kmem(S, old, nr_pages, cpu, nested);	/* page_counter_uncharge() */
			else
				obj_cgroup_uncharge_pages(S, old, nr_pages, cpu, nested);
		}
		/* The leftover is flushed to the centralized per-memcg value. */
		OC(OC_NRCH, old) += nr_bytes;	/* atomic_add() */
		OB(OB_NR, idx) = 0;
	}
	if (OB(OB_SLABB, idx)) {	/* Flush the vmstat data in current stock */
		mod_objcg_mlstate(S, old, OB(OB_PGDAT, idx), OB(OB_SLABB, idx), cpu);
		OB(OB_SLABB, idx) = 0;
		OB(OB_PGDAT, idx) = -1;
	}
	OB(OB_CACHED, idx) = -1;	/* obj_cgroup_put(old) */
}

/*
 * refill_obj_stock(): v5.9 and 68ac5b3c8db2 drain the whole stock past a page; from
 * 5387c90490f7 on, whole pages are uncharged after the irq-off section and the sub-page
 * rest stays (allow_uncharge false for a charge's remainder).
 */
static void v5_refill_obj_stock(const state *S, int64_t o, int64_t nr_bytes,
				int allow_uncharge, int64_t cpu, int nested, int irq)
{
	int64_t era = G(G_OBJERA);
	int refill = era == OE_V514_REFILL || era == OE_V514;
	int64_t idx, nr_pages = 0;

	G(G_OREFILL) += 1;
	count(S, E_OBJ_REFILLS, cpu, OC(OC_MEMCG, o), 1);
	idx = get_obj_stock(S, cpu, irq);
	if (OB(OB_CACHED, idx) != o) {	/* reset if necessary */
		v5_drain_obj_stock(S, idx, cpu, nested);
		/*
		 * obj_cgroup_get(objcg); v5.9 and v5.14-vmstat atomic_xchg() always, then
		 * atomic_read() first: the same value either way
		 */
		OB(OB_CACHED, idx) = o;
		OB(OB_NR, idx) = OC(OC_NRCH, o);
		OC(OC_NRCH, o) = 0;
		allow_uncharge = 1;	/* Allow uncharge when objcg changes */
	}
	OB(OB_NR, idx) += nr_bytes;
	if (!refill) {
		if (OB(OB_NR, idx) > PAGE_SIZE)
			v5_drain_obj_stock(S, idx, cpu, nested);
		return;
	}
	if (allow_uncharge && OB(OB_NR, idx) > PAGE_SIZE) {
		nr_pages = OB(OB_NR, idx) >> PAGE_SHIFT;
		OB(OB_NR, idx) &= PAGE_SIZE - 1;
	}
	if (nr_pages)	/* after local_irq_restore() / put_obj_stock() */
		obj_cgroup_uncharge_pages(S, o, nr_pages, cpu, nested);
}

/*
 * obj_cgroup_charge() (5458985533ba; 5387c90490f7 passes allow_uncharge false): consume,
 * else whole pages (one more for a sub-page part) and a refill of PAGE_SIZE - nr_bytes;
 * the stock's bytes are ignored. True on success.
 */
static int kernel_obj_cgroup_charge(const state *S, int64_t o, int64_t size, int64_t cpu,
				    int nested, int irq)
{
	int64_t nr_pages, nr_bytes;
	int ok;

	count(S, E_OBJ_CGROUP_CHARGE, cpu, OC(OC_MEMCG, o), 1);
	if (v5_consume_obj_stock(S, o, size, cpu, irq))
		return 1;
	nr_pages = size >> PAGE_SHIFT;
	nr_bytes = size & (PAGE_SIZE - 1);
	if (nr_bytes)
		nr_pages += 1;
	ok = obj_cgroup_charge_pages(S, o, nr_pages, cpu, nested, irq);	/* __memcg_kmem_charge */
	if (ok && nr_bytes)
		v5_refill_obj_stock(S, o, PAGE_SIZE - nr_bytes, 0, cpu, nested, irq);
	return ok;
}

/*
 * The trace's obj_charge: memcg_slab_pre_alloc_hook's obj_cgroup_charge(), then
 * memcg_slab_post_alloc_hook's mod_objcg_state(+size) on the CPU's node.
 */
static int v5_obj_cgroup_charge(const state *S, int64_t o, int64_t size, int64_t cpu,
				int nested, int irq)
{
	int ok = kernel_obj_cgroup_charge(S, o, size, cpu, nested, irq);

	if (ok)
		mod_objcg_state(S, o, pgdat_of(S, cpu), size, cpu, nested, irq);
	return ok;
}

/*
 * The trace's obj_uncharge: memcg_slab_free_hook's obj_cgroup_uncharge()
 * (refill_obj_stock(objcg, size[, true])), then mod_objcg_state(-size).
 */
static void v5_obj_cgroup_uncharge(const state *S, int64_t o, int64_t size, int64_t cpu,
				   int nested, int irq)
{
	count(S, E_OBJ_CGROUP_UNCHARGE, cpu, OC(OC_MEMCG, o), 1);
	v5_refill_obj_stock(S, o, size, 1, cpu, nested, irq);
	mod_objcg_state(S, o, pgdat_of(S, cpu), -size, cpu, nested, irq);
}

/* ------------------------------------------------------------ drains */

/*
 * The obj half of drain_local_stock() (irqs off): v5.14 drains the irq stock, then the
 * task stock ("if (in_task())": the work runs in task context).
 */
static void v5_drain_local_obj_stock(const state *S, int64_t cpu, int nested)
{
	if (G(G_OBJERA) == OE_V514)
		v5_drain_obj_stock(S, cpu * 2 + 1, cpu, nested);
	v5_drain_obj_stock(S, cpu * G(G_NOBJ), cpu, nested);
}

/*
 * drain_all_stock()'s obj part for cpu: obj_stock_flush_required(), then the work's
 * drain, run right away (the contract's synchronous drains). objstock.c's
 * obj_drain_all_cpu() hands the older eras here.
 */
static void v5_drain_cpu_if_needed(const state *S, int64_t cpu, int64_t root, int nested)
{
	if (G(G_OBJERA) == OE_MEMCG_CACHES)
		return;	/* no obj stock in this era: drain_all_stock drains the memcg stock only */
	/* obj_stock_flush_required(): the cached objcg's memcg in the subtree (v5.14: the
	 * task stock, as the work runs in task context, then the irq stock), the same
	 * test as the later eras' (objstock.c) */
	if (obj_flush_required(S, cpu, root))
		v5_drain_local_obj_stock(S, cpu, nested);
}

/*
 * memcg_hotplug_cpu_dead() of these trees drains only the memcg stock: the obj stock
 * keeps its bytes. v5.9's folds the dead CPU's stat counters (this_cpu_xchg(..., 0) of
 * every memcg's vmstats_percpu and lruvec_stat_cpu into the atomic totals), so they
 * start again from 0; rstat (v5.13 on) keeps nothing per CPU here.
 */
static void v5_drain_dead_cpu(const state *S, int64_t cpu)
{
	if (G(G_OBJERA) != OE_V59)
		return;
	for (int64_t m = 0; m < G(G_NMEMCG); m++) {	/* for_each_mem_cgroup(memcg) */
		VS(m, cpu) = 0;
		VS(m, G(G_NCPUS) + cpu) = 0;
	}
}
