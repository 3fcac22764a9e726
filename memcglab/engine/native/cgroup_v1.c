// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgroup v1's extra counters on the charge path: memcg->kmem and memcg->memsw (the
 * faithful port is memcglab/kernel/memcontrol_v1.py, with try_charge_memcg's and
 * memcg_uncharge's memsw steps in memcglab/kernel/try_charge.py).
 *
 * G(G_CGV1) says the machine is on cgroup v1 (!cgroup_subsys_on_dfl), G(G_SWAP) that it
 * accounts memsw (do_memsw_account()). A counter is a pair of mc rows (usage,
 * watermark); its max is PAGE_COUNTER_MAX, as no trace can set kmem or memsw limits, so
 * the try_charge walks below never fail in a replay (their failure branches are kept,
 * in the kernel's order). Their walks count in G(G_KMEMWALKS) and G(G_MEMSWWALKS),
 * never in the contract's walks; an underflow warns, as on every page_counter.
 *
 * Not here: v1's tcpmem (the trace's uncharge keeps its contract meaning) and the
 * page_counter-stock models' memsw stock (pcstock and pcstock-v4 are refused on v1).
 */

/* do_memsw_account(): cgroup v1 with swap accounting. */
HOT int do_memsw_account(const state *S)
{
	return G(G_CGV1) && G(G_SWAP);
}

/* page_counter_charge() of the v1 counter in rows (fu, fw): one walk, no limit. */
static void v1_counter_charge(const state *S, int64_t fu, int64_t fw, int64_t m,
			      int64_t nr_pages)
{
	for (int64_t c = m; c >= 0; c = MC(F_PARENT, c)) {
		int64_t new = MC(fu, c) + nr_pages;

		MC(fu, c) = new;
		if (new > MC(fw, c))
			MC(fw, c) = new;
	}
}

/*
 * page_counter_try_charge() of the v1 counter in rows (fu, fw): -1, or the dense memcg
 * whose counter refused (the levels below it rolled back, as try_charge_walk does).
 */
static int64_t v1_counter_try_charge(const state *S, int64_t fu, int64_t fw, int64_t m,
				     int64_t nr_pages)
{
	int64_t fail = -1;

	for (int64_t c = m; c >= 0; c = MC(F_PARENT, c)) {
		int64_t new = MC(fu, c) + nr_pages;

		if (new > PAGE_COUNTER_MAX) {	/* kmem.max and memsw.max: never set */
			fail = c;
			break;
		}
		MC(fu, c) = new;
		if (new > MC(fw, c))
			MC(fw, c) = new;
	}
	if (fail >= 0) {
		for (int64_t c = m; c != fail; c = MC(F_PARENT, c)) {
			int64_t new = MC(fu, c) - nr_pages;	/* page_counter_cancel() */

			if (new < 0) {
				G(G_WARN) += 1;
				new = 0;
			}
			MC(fu, c) = new;
		}
	}
	return fail;
}

/* page_counter_uncharge() of the v1 counter in rows fu: page_counter_cancel() up the tree. */
static void v1_counter_uncharge(const state *S, int64_t fu, int64_t m, int64_t nr_pages)
{
	for (int64_t c = m; c >= 0; c = MC(F_PARENT, c)) {
		int64_t new = MC(fu, c) - nr_pages;

		if (new < 0) {
			G(G_WARN) += 1;
			new = 0;
		}
		MC(fu, c) = new;
	}
}

/*
 * The counter charges of try_charge_memcg(): -1, or the dense memcg over its limit
 * (mem_cgroup_from_counter of the counter that refused). With do_memsw_account(),
 * memsw first; memory's refusal uncharges memsw again.
 */
HOT int64_t charge_counters(const state *S, int64_t m, int64_t nr_pages, int64_t cpu)
{
	int64_t fail;

	if (do_memsw_account(S)) {
		G(G_MEMSWWALKS) += 1;
		fail = v1_counter_try_charge(S, F_MEMSW_USAGE, F_MEMSW_WM, m, nr_pages);
		if (fail >= 0)
			return fail;	/* mem_cgroup_from_counter(counter, memsw) */
	}
	fail = try_charge_walk(S, m, nr_pages, cpu);
	if (fail < 0)
		return -1;	/* goto done_restock */
	if (do_memsw_account(S)) {
		G(G_MEMSWWALKS) += 1;
		v1_counter_uncharge(S, F_MEMSW_USAGE, m, nr_pages);
	}
	return fail;	/* mem_cgroup_from_counter(counter, memory) */
}

/* memcg_uncharge(): memory, then memsw with do_memsw_account(); direct, no stock. */
HOT void memcg_uncharge(const state *S, int64_t m, int64_t nr_pages, int64_t cpu)
{
	uncharge_walk(S, m, nr_pages, cpu);
	if (do_memsw_account(S)) {
		G(G_MEMSWWALKS) += 1;
		v1_counter_uncharge(S, F_MEMSW_USAGE, m, nr_pages);
	}
}

/* memcg1_account_kmem(): on v1, charge (nr_pages > 0) or uncharge memcg->kmem. */
HOT void memcg1_account_kmem(const state *S, int64_t m, int64_t nr_pages)
{
	if (G(G_CGV1)) {
		G(G_KMEMWALKS) += 1;
		if (nr_pages > 0)
			v1_counter_charge(S, F_KMEMC_USAGE, F_KMEMC_WM, m, nr_pages);
		else
			v1_counter_uncharge(S, F_KMEMC_USAGE, m, -nr_pages);
	}
}

/*
 * The v5.x kmem step after try_charge succeeded (__memcg_kmem_charge, v5.13's
 * obj_cgroup_charge_pages): true, or false after cancel_charge() (root check, then
 * memcg_uncharge) when memcg->kmem refuses. GFP_KERNEL: no __GFP_NOFAIL forced charge.
 */
static int memcg1_kmem_try_charge(const state *S, int64_t m, int64_t nr_pages, int64_t cpu)
{
	if (G(G_CGV1)) {
		G(G_KMEMWALKS) += 1;
		if (v1_counter_try_charge(S, F_KMEMC_USAGE, F_KMEMC_WM, m, nr_pages) >= 0) {
			if (m != 0)
				memcg_uncharge(S, m, nr_pages, cpu);	/* cancel_charge() */
			return 0;
		}
	}
	return 1;
}

HOT int try_charge_memcg(const state *S, int64_t m, int64_t nr_pages, int64_t cpu,
			 int nested, int irq);

/*
 * The trace's charge ... kmem on v1 (a non-root memcg): __memcg_kmem_charge_page(). 6.x
 * eras: obj_cgroup_charge_pages() = try_charge_memcg, then memcg1_account_kmem(+nr).
 * The v5.x obj-stock eras (memcg-caches, v5.9, the v5.14 eras: OE_MEMCG_CACHES on):
 * __memcg_kmem_charge() of 5458985533ba = try_charge, then page_counter_try_charge of
 * memcg->kmem, cancel_charge() if it refuses. 1 when charged.
 */
static int memcg_kmem_charge_page(const state *S, int64_t m, int64_t nr_pages, int64_t cpu,
				  int nested, int irq)
{
	if (!try_charge_memcg(S, m, nr_pages, cpu, nested, irq))
		return 0;
	if (G(G_OBJERA) >= OE_MEMCG_CACHES)
		return memcg1_kmem_try_charge(S, m, nr_pages, cpu);
	memcg1_account_kmem(S, m, nr_pages);
	return 1;
}

/*
 * The v1 half of the --check invariant: for every memcg, kmem = MEMCG_KMEM + its held
 * kmem pages (the trace's charge ... kmem) + the children's kmem, and with
 * do_memsw_account() memsw = memory. 1 when it holds.
 */
static int v1_conservation(const state *S, int64_t n)
{
	if (!G(G_CGV1))
		return 1;
	for (int64_t c = 0; c < n; c++)
		MC(F_ACC, c) = MC(F_KMEM, c) + MC(F_HELDKMEM, c);
	for (int64_t c = 1; c < n; c++)
		MC(F_ACC, MC(F_PARENT, c)) += MC(F_KMEMC_USAGE, c);
	for (int64_t c = 0; c < n; c++) {
		if (MC(F_KMEMC_USAGE, c) != MC(F_ACC, c))
			return 0;
		if (do_memsw_account(S) && MC(F_MEMSW_USAGE, c) != MC(F_USAGE, c))
			return 0;
	}
	return 1;
}
