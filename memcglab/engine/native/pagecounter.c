// SPDX-License-Identifier: GPL-2.0-only
/*
 * page_counter walks over the engine's flat arrays (was memcglab/engine/pagecounter.py).
 *
 * Ports of the hierarchical loops of mm/page_counter.c (2026 mm tree,
 * linux-mm/linux-mm 0826bf00f15f) as the replay needs them: the
 * for (c = counter; c; c = c->parent) loops of page_counter_try_charge (with its
 * rollback), page_counter_uncharge and the RFC's page_counter_cancel_hierarchy, plus
 * page_counter_cancel, page_counter_set_max and mem_cgroup_margin. A memcg's dense
 * index stands for its memory counter; MC(F_PARENT, c) == -1 is the NULL parent of
 * the root. The faithful port is memcglab/kernel/page_counter.py.
 *
 * Differences from the kernel, none of which changes a result:
 *
 * - Atomics are plain arithmetic: the replay is sequential, so every
 *   read-modify-write is exact, and page_counter_set_max decides on its first pass.
 * - protection_support propagation is left out: min and low are never set by a
 *   trace, so propagate_protected_usage never changes anything.
 * - local_watermark is not kept: nothing resets watermarks in a replay, so it always
 *   equals watermark.
 * - cgroup v2 counters do not track failcnt.
 *
 * Every walk adds one to G(G_WALKS) (the contract's walks) and, with events on,
 * reports its levels and the levels whose usage cacheline was last written by another
 * CPU (usage_transfers).
 */

/* Count n events of kind e on cpu for dense memcg m (if events are on). */
HOT void count(const state *S, int64_t e, int64_t cpu, int64_t m, int64_t n)
{
	if (G(G_EVON)) {
		EV(e, cpu) += n;
		EV(e, G(G_NCPUS) + m) += n;
	}
}

/* One walk: walks and walk_levels, and the same for its kernel function. */
HOT void _walk_events(const state *S, int64_t e_calls, int64_t e_levels,
				int64_t cpu, int64_t m, int64_t levels)
{
	int64_t col = G(G_NCPUS) + m;

	EV(E_WALKS, cpu) += 1;
	EV(E_WALKS, col) += 1;
	EV(E_WALK_LEVELS, cpu) += levels;
	EV(E_WALK_LEVELS, col) += levels;
	EV(e_calls, cpu) += 1;
	EV(e_calls, col) += 1;
	EV(e_levels, cpu) += levels;
	EV(e_levels, col) += levels;
}

/* A write to c->usage by this CPU: a cacheline transfer if another CPU wrote it last. */
HOT void _usage_written(const state *S, int64_t c, int64_t cpu)
{
	if (G(G_EVON)) {
		int64_t w = MC(F_LASTW, c);

		if (w >= 0 && w != cpu) {
			EV(E_USAGE_TRANSFERS, cpu) += 1;
			EV(E_USAGE_TRANSFERS, G(G_NCPUS) + c) += 1;
		}
		MC(F_LASTW, c) = cpu;
	}
}

/*
 * page_counter_cancel(): take pages out of one counter; clamp and warn on underflow.
 * The kernel warns once (WARN_ONCE); the contract counts every underflow.
 */
HOT void page_counter_cancel(const state *S, int64_t c, int64_t nr_pages)
{
	int64_t new = MC(F_USAGE, c) - nr_pages;

	if (new < 0) {
		G(G_WARN) += 1;
		new = 0;
	}
	MC(F_USAGE, c) = new;
}

/*
 * One run of page_counter_try_charge()'s hierarchical loop; return the failing counter.
 *
 * Returns -1 on success, else the dense index of the counter over its limit (*fail)
 * after cancelling the charge on the counters below it. The speculative
 * add-then-subtract on the failing counter leaves it unchanged. The rollback is part
 * of the same walk (contract, walks).
 */
HOT int64_t try_charge_walk(const state *S, int64_t m, int64_t nr_pages, int64_t cpu)
{
	int64_t levels = 0, fail = -1, c = m;

	G(G_WALKS) += 1;
	while (c >= 0) {
		int64_t new;

		levels += 1;
		_usage_written(S, c, cpu);
		new = MC(F_USAGE, c) + nr_pages;
		if (new > MC(F_MAX, c)) {
			fail = c;
			break;
		}
		MC(F_USAGE, c) = new;
		if (new > MC(F_WATERMARK, c))
			MC(F_WATERMARK, c) = new;
		c = MC(F_PARENT, c);
	}
	if (fail >= 0) {
		c = m;
		while (c != fail) {
			page_counter_cancel(S, c, nr_pages);
			c = MC(F_PARENT, c);
		}
	}
	if (G(G_EVON))	/* count() four times, behind one test on the per-charge path */
		_walk_events(S, E_PC_TRY_CHARGE, E_PC_TRY_CHARGE_LEVELS, cpu, m, levels);
	return fail;
}

/* page_counter_uncharge() without a stock, or page_counter_cancel_hierarchy() (RFC 3/8). */
HOT void uncharge_walk(const state *S, int64_t m, int64_t nr_pages, int64_t cpu)
{
	int64_t levels = 0, c = m;

	G(G_WALKS) += 1;
	while (c >= 0) {
		levels += 1;
		_usage_written(S, c, cpu);
		page_counter_cancel(S, c, nr_pages);
		c = MC(F_PARENT, c);
	}
	if (G(G_EVON))
		_walk_events(S, E_PC_UNCHARGE, E_PC_UNCHARGE_LEVELS, cpu, m, levels);
}

/*
 * mem_cgroup_margin(): pages left below memory.max and, with do_memsw_account() (cgroup
 * v1 with swap, cgroup_v1.c), below memsw.max (PAGE_COUNTER_MAX: never set) too.
 */
HOT int64_t mem_cgroup_margin(const state *S, int64_t m)
{
	int64_t margin = 0;
	int64_t count_ = MC(F_USAGE, m);
	int64_t limit = MC(F_MAX, m);

	if (count_ < limit)
		margin = limit - count_;
	if (G(G_CGV1) && G(G_SWAP)) {
		count_ = MC(F_MEMSW_USAGE, m);
		limit = PAGE_COUNTER_MAX;
		if (count_ < limit)
			margin = min64(margin, limit - count_);
		else
			margin = 0;
	}
	return margin;
}

/* page_counter_set_max(): 0, or -EBUSY when usage is above the new limit. */
HOT int64_t page_counter_set_max(const state *S, int64_t m, int64_t nr_pages)
{
	if (MC(F_USAGE, m) > nr_pages)
		return -EBUSY;
	MC(F_MAX, m) = nr_pages;
	return 0;
}

/* mem_cgroup_is_descendant(): a memcg counts as its own descendant; all descend from root. */
static int mem_cgroup_is_descendant(const state *S, int64_t memcg, int64_t root)
{
	int64_t d;

	if (root == 0)
		return 1;
	d = MC(F_DEPTH, root);
	while (MC(F_DEPTH, memcg) > d)
		memcg = MC(F_PARENT, memcg);
	return memcg == root;
}
