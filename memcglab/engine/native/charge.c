// SPDX-License-Identifier: GPL-2.0-only
/*
 * try_charge_memcg(): the charge path with the kernel's retry loop (was
 * memcglab/engine/charge.py; the faithful port is memcglab/kernel/memcontrol.py).
 *
 * Port of try_charge_memcg of mm/memcontrol.c (6952350/linux-6.18.y 312d9602fe3e; the
 * v6.15 function has the same shape for single), and of its RFC 5/8 form for pcstock,
 * under the replay contract's machine: GFP_KERNEL, reclaim frees nothing, the memcg
 * OOM killer makes no progress, no memory.high (memsw on cgroup v1 with swap:
 * charge_counters() of cgroup_v1.c). So of the kernel's exits
 * only these remain, in the kernel's order:
 *
 * 1. consume_stock (not pcstock: its counter checks its own stock);
 * 2. page_counter_try_charge(&memcg->memory, batch); success goes to done_restock,
 *    which refills the surplus batch - nr_pages;
 * 3. batch > nr_pages: retry once at the exact size, no event;
 * 4. MEMCG_MAX on the memcg over its limit; mem_cgroup_margin() >= nr_pages retries
 *    (never true sequentially, kept for fidelity);
 * 5. the first time, drain_all_stock(mem_over_limit) and retry;
 * 6. nr_reclaimed is 0, so only nr_retries-- (MAX_RECLAIM_RETRIES, 16) retries, then
 *    mem_cgroup_oom() fails and the charge returns -ENOMEM.
 *
 * pcstock-v4 (v4 2/5 and 4/5) replaces steps 1-3 of each pass by one
 * page_counter_try_charge_stock (stock, batch, then nr_pages; no refill in
 * try_charge_memcg) and keeps steps 4-6.
 */

/*
 * drain_all_stock(root_memcg) of the model in use, called on cpu.
 *
 * Only pcstock-v4 drains on the calling CPU (remote atomic_xchg); the other models'
 * drains run on each stock's own CPU (work items, work_on_cpu). The obj stock of each
 * CPU follows its memcg stock (v6.16 on: its own flag and work); in v6.15 and
 * mm-unstable April 2025 one decision drains both halves, obj half first; the
 * page_counter-stock models drain every counter first, then the obj stocks.
 */
static void drain_all_stock(const state *S, int64_t root, int64_t cpu, int nested)
{
	int64_t model = G(G_MODEL);
	int64_t era = G(G_OBJERA);

	if (model == M_PCSTOCK || model == M_PCSTOCK_V4) {
		if (model == M_PCSTOCK)
			pc_drain_all_stock(S, root);
		else
			v4_drain_all_stock(S, root, cpu);
		for (int64_t c = 0; c < G(G_NCPUS); c++)	/* "Drain obj_stock on all online CPUs" */
			/* a nested operation holds only its own CPU's locks; the work on c takes c's */
			obj_drain_all_cpu(S, c, root, nested && c == cpu);
		return;
	}
	for (int64_t c = 0; c < G(G_NCPUS); c++) {
		if (era == OE_V615 || era == OE_E2) {
			/* one FLUSHING_CACHED_CHARGE and one work (drain_local_stock) for both halves */
			if (is_memcg_drain_needed(S, c, root) || obj_flush_required(S, c, root)) {
				obj_drain_cpu(S, c, c, nested && c == cpu);
				drain_stock_fully(S, c);
			}
			continue;
		}
		if (is_memcg_drain_needed(S, c, root))
			drain_stock_fully(S, c);
		obj_drain_all_cpu(S, c, root, nested && c == cpu);
	}
}

/*
 * try_charge_memcg(memcg, GFP_KERNEL, nr_pages): true on success, false for -ENOMEM.
 *
 * irq: the charge runs outside task context (!in_task()), which only the not-in-irq
 * refill variant tests. With refill other than always the batch is nr_pages
 * (not-in-irq: for irq charges; never: for every charge); the page_counter-stock
 * models apply it to their counter's greedy batch.
 */
HOT int try_charge_memcg(const state *S, int64_t m, int64_t nr_pages, int64_t cpu,
				   int nested, int irq)
{
	int pcstock, v4, no_refill, drained;
	int64_t batch, nr_retries;

	count(S, E_TRY_CHARGE_MEMCG, cpu, m, 1);
	pcstock = G(G_MODEL) == M_PCSTOCK;
	v4 = G(G_MODEL) == M_PCSTOCK_V4;
	batch = max64(G(G_BATCH), nr_pages);
	/* if (!in_task()) batch = nr_pages; (not-in-irq) / the flipped spinning test (never) */
	no_refill = G(G_REFILL) == R_NEVER || (G(G_REFILL) == R_NOT_IN_IRQ && irq);
	if (no_refill)
		batch = nr_pages;
	nr_retries = MAX_RECLAIM_RETRIES;
	drained = 0;
	for (;;) {	/* retry: */
		int64_t fail, mem_over_limit;

		if (v4) {
			fail = v4_try_charge_stock(S, m, nr_pages, cpu, !no_refill);
			if (fail == STOCK_HIT) {	/* nr_charged == 0: return 0 */
				G(G_HITS) += 1;
				return 1;
			}
			if (fail < 0)
				return 1;	/* handle_high: nothing is over memory.high */
		} else if (pcstock) {
			fail = pc_try_charge(S, m, nr_pages, cpu, nested, !no_refill);
			if (fail == STOCK_HIT) {
				G(G_HITS) += 1;
				return 1;
			}
			if (fail < 0)
				return 1;	/* done_restock: the RFC removed the refill */
		} else {
			if (consume_stock(S, m, nr_pages, cpu, nested)) {
				G(G_HITS) += 1;
				return 1;
			}
			fail = charge_counters(S, m, batch, cpu);	/* memsw first on v1 with swap */
			if (fail < 0) {
				if (batch > nr_pages)	/* done_restock */
					refill_stock(S, m, batch - nr_pages, cpu, nested);
				return 1;
			}
			if (batch > nr_pages) {
				batch = nr_pages;
				continue;
			}
		}
		mem_over_limit = fail;
		MC(F_MAXEV, mem_over_limit) += 1;	/* __memcg_memory_event(mem_over_limit, MEMCG_MAX) */
		/* try_to_free_mem_cgroup_pages() reclaims nothing on the contract's machine. */
		if (mem_cgroup_margin(S, mem_over_limit) >= nr_pages)
			continue;
		if (!drained) {
			drain_all_stock(S, mem_over_limit, cpu, nested);
			drained = 1;
			continue;
		}
		if (nr_retries) {
			nr_retries -= 1;
			continue;
		}
		return 0;	/* mem_cgroup_oom() makes no progress: nomem, -ENOMEM */
	}
}
