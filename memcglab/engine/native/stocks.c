// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-CPU memcg charge stocks: the single and multi* models (was
 * memcglab/engine/stocks.py; the faithful ports are memcglab/kernel/memcg_stock_*.py).
 *
 * single ports the v6.15 (E1) single-memcg stock: one cached memcg and an unsigned
 * int nr_pages per CPU (slot cpu of the flat arrays). multi* port the multi-memcg
 * stock of "[PATCH] memcg: multi-memcg percpu charge cache" (Shakeel Butt, 16 Apr
 * 2025, f735eebe55f8f) with fixes 1-4 and the memcg/obj stock split, as in
 * 6952350/linux-6.18.y mm/memcontrol.c: slots entries per CPU at
 * SL(., cpu * slots + i), cached (dense memcg or -1 for NULL) and nr_pages (uint8_t
 * in the kernel; never above 254 here, see refill_stock). The victim policies
 * (G(G_VICTIM), victims.c: random for multi and multi-fix2, round robin for multi-rr,
 * LRU for multi-lru, or any compiled policy given) differ only in the victim and in
 * LRU's stamps, written here: a slot is used whenever a lookup finds the memcg in it
 * or the memcg is inserted into it (the contract's rule). multi-fix2: the new slot
 * gets the never-assigned stock_pages of fix 2 (Dan Carpenter's Smatch report),
 * modelled as 0.
 *
 * Simulation-only bookkeeping: PCPU(P_HI, cpu) is one past the highest slot index
 * ever filled since the last full drain. Slots at or above it are empty, so scans
 * stop there; the first empty slot is hi when none below it is empty. This makes a
 * scan cost what the occupied prefix costs without changing any result, and the
 * slots_scanned event still counts the kernel's full-length scans.
 */

/* the LRU victim only: make slot idx the most recently used (a global clock orders them). */
HOT void _lru_touch(const state *S, int64_t idx, int64_t cpu, int64_t m)
{
	G(G_CLOCK) += 1;
	SL(S_STAMP, idx) = G(G_CLOCK);
	count(S, E_LRU_WRITES, cpu, m, 1);
}

/*
 * drain_stock(stock, i): uncharge a slot's pages, css_put and clear it.
 *
 * cpu is the CPU whose stock it is; the drain runs there (the work item of
 * drain_all_stock, the slot owner in refill_stock; for memcg_hotplug_cpu_dead, which
 * runs elsewhere in the kernel, the dead CPU is charged the events).
 */
HOT void drain_stock(const state *S, int64_t cpu, int64_t idx)
{
	int64_t old = SL(S_CACHED, idx);
	int64_t stock_pages;

	if (old < 0)
		return;
	count(S, E_DRAIN_STOCK, cpu, old, 1);
	stock_pages = SL(S_NR, idx);
	if (stock_pages) {
		memcg_uncharge(S, old, stock_pages, cpu);
		SL(S_NR, idx) = 0;
		count(S, E_DRAINS, cpu, old, 1);
	}
	count(S, E_CSS_REF_OPS, cpu, old, 1);	/* css_put(&old->css) */
	SL(S_CACHED, idx) = -1;
}

/* drain_stock_fully(): every slot of cpu in slot order (single: its one slot). */
static void drain_stock_fully(const state *S, int64_t cpu)
{
	int64_t base, hi;

	if (G(G_MODEL) == M_SINGLE) {
		drain_stock(S, cpu, cpu);
		return;
	}
	base = cpu * G(G_NSLOTS);
	hi = PCPU(P_HI, cpu);
	for (int64_t i = 0; i < hi; i++)
		drain_stock(S, cpu, base + i);
	PCPU(P_HI, cpu) = 0;
}

/*
 * consume_stock(): serve a charge from this CPU's stock; true on a hit.
 *
 * single (v6.15): the batch guard, then the blocking local_lock_irqsave (GFP_KERNEL
 * allows spinning). multi (6.18.y): the batch guard or a failed local_trylock return
 * false; only the first slot caching the memcg is looked at.
 */
HOT int consume_stock(const state *S, int64_t m, int64_t nr_pages, int64_t cpu,
				int nested)
{
	int64_t batch = G(G_BATCH);
	int64_t nslots, base, hi;

	if (G(G_MODEL) == M_SINGLE) {
		if (nr_pages > batch) {
			count(S, E_MISS_BYPASS, cpu, m, 1);
			return 0;
		}
		count(S, E_SLOTS_SCANNED, cpu, m, 1);
		if (SL(S_CACHED, cpu) == m) {
			int64_t stock_pages = SL(S_NR, cpu);

			if (stock_pages >= nr_pages) {
				SL(S_NR, cpu) = stock_pages - nr_pages;
				count(S, E_STOCK_HITS, cpu, m, 1);
				return 1;
			}
			count(S, E_MISS_SHORT, cpu, m, 1);
			return 0;
		}
		count(S, E_MISS_ABSENT, cpu, m, 1);
		return 0;
	}
	if (nr_pages > batch || nested) {
		count(S, E_MISS_BYPASS, cpu, m, 1);
		return 0;
	}
	nslots = G(G_NSLOTS);
	base = cpu * nslots;
	hi = PCPU(P_HI, cpu);
	for (int64_t i = 0; i < hi; i++) {
		int64_t stock_pages;

		if (SL(S_CACHED, base + i) != m)
			continue;
		count(S, E_SLOTS_SCANNED, cpu, m, i + 1);
		if (G(G_VICTIM) == V_LRU)
			_lru_touch(S, base + i, cpu, m);
		stock_pages = SL(S_NR, base + i);
		if (stock_pages >= nr_pages) {
			SL(S_NR, base + i) = stock_pages - nr_pages;
			count(S, E_STOCK_HITS, cpu, m, 1);
			return 1;
		}
		count(S, E_MISS_SHORT, cpu, m, 1);
		return 0;
	}
	count(S, E_SLOTS_SCANNED, cpu, m, nslots);
	count(S, E_MISS_ABSENT, cpu, m, 1);
	return 0;
}

static void refill_single_locked(const state *S, int64_t m, int64_t nr_pages, int64_t cpu);

/* v6.15 refill_stock(): the trylock, then __refill_stock(). */
static void _refill_single(const state *S, int64_t m, int64_t nr_pages, int64_t cpu,
			   int nested)
{
	if (nested) {	/* local_trylock_irqsave() failed: uncharge directly */
		memcg_uncharge(S, m, nr_pages, cpu);
		return;
	}
	refill_single_locked(S, m, nr_pages, cpu);
}

/* v6.15 __refill_stock() on cpu's stock: replace the cached memcg if it differs. */
static void refill_single_locked(const state *S, int64_t m, int64_t nr_pages, int64_t cpu)
{
	int64_t old, stock_pages;

	count(S, E_SLOTS_SCANNED, cpu, m, 1);
	old = SL(S_CACHED, cpu);
	if (old != m) {
		if (old >= 0) {
			G(G_EVICT) += 1;
			count(S, E_EVICTIONS, cpu, old, 1);
		}
		drain_stock(S, cpu, cpu);
		count(S, E_CSS_REF_OPS, cpu, m, 1);	/* css_get(&memcg->css) */
		SL(S_CACHED, cpu) = m;
	}
	/* unsigned int stock_pages: wraps mod 2^32 as in the kernel */
	stock_pages = (SL(S_NR, cpu) + nr_pages) & 0xFFFFFFFF;
	SL(S_NR, cpu) = stock_pages;
	if (stock_pages > G(G_BATCH))
		drain_stock(S, cpu, cpu);
}

/*
 * refill_stock(): put uncharged or surplus pages into this CPU's stock.
 *
 * multi (final E3 semantics, fixes 2 and 3): more than the batch, or a failed
 * trylock, uncharges directly; a slot caching the memcg takes the pages and is
 * drained whole if it then exceeds the batch (uint8 sum, at most 127 + 127);
 * otherwise the first empty slot, or a victim, gets the memcg.
 */
HOT void refill_stock(const state *S, int64_t m, int64_t nr_pages, int64_t cpu,
				int nested)
{
	int64_t batch, nslots, base, empty_slot, hi, i;
	int lru;

	count(S, E_REFILL_STOCK, cpu, m, 1);
	if (G(G_MODEL) == M_SINGLE) {
		_refill_single(S, m, nr_pages, cpu, nested);
		return;
	}
	batch = G(G_BATCH);
	if (nr_pages > batch || nested) {
		memcg_uncharge(S, m, nr_pages, cpu);
		return;
	}
	nslots = G(G_NSLOTS);
	base = cpu * nslots;
	lru = G(G_VICTIM) == V_LRU;
	empty_slot = -1;
	hi = PCPU(P_HI, cpu);
	for (i = 0; i < hi; i++) {
		int64_t cached = SL(S_CACHED, base + i);

		if (cached < 0) {
			if (empty_slot == -1)
				empty_slot = i;
		} else if (cached == m) {
			int64_t stock_pages;

			count(S, E_SLOTS_SCANNED, cpu, m, i + 1);
			if (lru)
				_lru_touch(S, base + i, cpu, m);
			stock_pages = SL(S_NR, base + i) + nr_pages;
			SL(S_NR, base + i) = stock_pages;
			if (stock_pages > batch)
				drain_stock(S, cpu, base + i);
			return;
		}
	}
	count(S, E_SLOTS_SCANNED, cpu, m, nslots);
	i = empty_slot;
	if (i == -1) {
		if (hi < nslots) {
			i = hi;	/* slots from hi up were never filled: hi is the first empty one */
		} else {
			i = victim(S, cpu, base, nslots);
			G(G_EVICT) += 1;
			count(S, E_EVICTIONS, cpu, SL(S_CACHED, base + i), 1);
			drain_stock(S, cpu, base + i);
		}
	}
	count(S, E_CSS_REF_OPS, cpu, m, 1);	/* css_get(&memcg->css) */
	SL(S_CACHED, base + i) = m;
	/* multi-fix2 stores fix 2's stock_pages, never assigned on this path: modelled as 0. */
	SL(S_NR, base + i) = G(G_MODEL) == M_FIX2 ? 0 : nr_pages;
	if (lru)
		_lru_touch(S, base + i, cpu, m);
	if (i >= hi)
		PCPU(P_HI, cpu) = i + 1;
}

/* is_memcg_drain_needed(): a slot with pages whose memcg is under root. */
static int is_memcg_drain_needed(const state *S, int64_t cpu, int64_t root)
{
	int64_t base, hi;

	if (G(G_MODEL) == M_SINGLE) {
		int64_t cached = SL(S_CACHED, cpu);

		return cached >= 0 && SL(S_NR, cpu) != 0
			&& mem_cgroup_is_descendant(S, cached, root);
	}
	base = cpu * G(G_NSLOTS);
	hi = PCPU(P_HI, cpu);
	for (int64_t i = 0; i < hi; i++) {
		int64_t cached = SL(S_CACHED, base + i);

		if (cached >= 0 && SL(S_NR, base + i) != 0
		    && mem_cgroup_is_descendant(S, cached, root))
			return 1;
	}
	return 0;
}
