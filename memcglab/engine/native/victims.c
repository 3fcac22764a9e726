// SPDX-License-Identifier: GPL-2.0-only
/*
 * Victim policies of the multi-memcg stock: which full slot refill_stock drains (was
 * memcglab/engine/victims.py).
 *
 * Each is the compiled twin of a faithful class of memcglab/kernel/victim.py (or of a
 * plugin's), selected by G(G_VICTIM) (memcglab.engine.state.VICTIMS), so any multi*
 * model runs any of them (replay_compiled(..., policy="lru")). A registry entry names
 * its twin: register_policy("lru", LruVictim, compiled="lru").
 *
 * - random: get_random_u32_below(NR_MEMCG_STOCK) on the contract's stream
 *   (v6.16-v6.18, RandomVictim);
 * - rr: drain_idx of "memcg: use round-robin victim selection in refill_stock"
 *   (Shakeel Butt, 21 May 2026, c0cafe24d3f6), a uint8_t (RoundRobinVictim);
 * - lru: the least recently used slot; the stamps are written by consume_stock and
 *   refill_stock (stocks.c), where the contract makes a slot most recently used
 *   (LruVictim);
 * - fewest: the slot holding the fewest pages, the lowest such slot on a tie: the
 *   worked example of docs/extending.md, whose faithful class the guide writes (no
 *   kernel tree has this policy; it is not registered unless the guide's plugin is).
 *
 * Adding a compiled policy is a function here, a name in VICTIMS (state.py, whose
 * V_* codes reach this file through memcglab_consts.h) and a branch in victim(); the
 * differential test of docs/extending.md holds it to its faithful class.
 */

HOT int64_t _round_robin(const state *S, int64_t cpu, int64_t nslots)
{
	int64_t i = PCPU(P_DRAIN_IDX, cpu);
	int64_t nxt = (i + 1) & 0xFF;	/* i = stock->drain_idx++ on a uint8_t */

	if (nxt == nslots)
		nxt = 0;
	PCPU(P_DRAIN_IDX, cpu) = nxt;
	return i;
}

/* The first slot of this CPU whose SL(row, .) is smallest. */
HOT int64_t _lowest(const state *S, int64_t row, int64_t base, int64_t nslots)
{
	int64_t best = 0;

	for (int64_t i = 1; i < nslots; i++)
		if (SL(row, base + i) < SL(row, base + best))
			best = i;
	return best;
}

/* The slot of cpu (its slots start at base) to evict; every slot is occupied. */
static int64_t victim(const state *S, int64_t cpu, int64_t base, int64_t nslots)
{
	int64_t policy = G(G_VICTIM);

	if (policy == V_RR)
		return _round_robin(S, cpu, nslots);
	if (policy == V_LRU)
		return _lowest(S, S_STAMP, base, nslots);
	if (policy == V_FEWEST)
		return _lowest(S, S_NR, base, nslots);
	return get_random_u32_below(S->rng, nslots);
}
