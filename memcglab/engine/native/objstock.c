// SPDX-License-Identifier: GPL-2.0-only
/*
 * obj stock (objcg bytes): every era of memcglab.models.OBJ_ERAS (was
 * memcglab/engine/objstock.py).
 *
 * The same functions as the faithful ports (memcglab/kernel/obj_stock_v615.py,
 * obj_stock_pcp.py, obj_stock_multi.py, objcg.py), over flat arrays:
 * OB(OB_CACHED, cpu * nobj + i) is slot i's cached objcg (-1 for NULL) and
 * OB(OB_NR, ...) its nr_bytes; objcg o is dense memcg o // nodes on node o % nodes
 * (one objcg per memcg before the 2026 tree) with OC(OC_NRCH, o) its
 * nr_charged_bytes and OC(OC_KMEM, o) its net kmem pages. The era is G(G_OBJERA):
 *
 * - OE_V615 (single): one slot in the memcg stock's struct, blocking lock, drained
 *   pages to __refill_stock of the running CPU;
 * - OE_E2 (multi-fix2): one slot under the memcg stock's blocking lock, direct drain;
 * - OE_E3 (multi, multi-lru), OE_E41 (pcstock): one slot, own trylock, direct drain
 *   (pcstock's page uncharges: the RFC's stock-aware memcg_uncharge);
 * - OE_MULTI (multi-rr), OE_MULTI_V4 (pcstock-v4): five slots, drain_idx, U16 flush;
 *   v4's whole-page releases are direct walks.
 *
 * A nested operation fails the trylock of the eras that have one (a consume miss, the
 * contended refill); the blocking locks of v6.15 and April 2025 never fail.
 *
 * An obj_stock option (memcglab.models.OBJ_STOCK_ERAS) runs an era beside another model
 * than its own: where whole pages go is the model's (machine_refill_stock(),
 * machine_memcg_uncharge()), as the faithful ports call the machine's. The older eras it
 * selects (G(G_OBJERA) from OE_MEMCG_CACHES on) are objstock_v5.c and objstock_caches.c.
 * PAGE_SHIFT, PAGE_SIZE and U16_MAX are the faithful port's (memcglab_consts.h).
 */

/*
 * The model's refill_stock() (the faithful machine.refill_stock): where
 * obj_cgroup_uncharge_pages() sends whole pages. pcstock's is RFC 5/8's stock-aware
 * page_counter_uncharge(), pcstock-v4's v4 4/5's plain memcg_uncharge().
 */
static void machine_refill_stock(const state *S, int64_t m, int64_t nr_pages, int64_t cpu,
				 int nested)
{
	if (G(G_MODEL) == M_PCSTOCK)
		pc_uncharge(S, m, nr_pages, cpu, nested);
	else if (G(G_MODEL) == M_PCSTOCK_V4)
		uncharge_walk(S, m, nr_pages, cpu);
	else
		refill_stock(S, m, nr_pages, cpu, nested);
}

/*
 * The model's memcg_uncharge() (machine.memcg_uncharge): a direct page_counter_uncharge(),
 * stock-aware in pcstock (RFC 3/8).
 */
static void machine_memcg_uncharge(const state *S, int64_t m, int64_t nr_pages, int64_t cpu,
				   int nested)
{
	if (G(G_MODEL) == M_PCSTOCK)
		pc_uncharge(S, m, nr_pages, cpu, nested);
	else
		memcg_uncharge(S, m, nr_pages, cpu);
}

/* The dense objcg of dense memcg m on cpu's node (current_obj_cgroup). */
HOT int64_t objcg_of(const state *S, int64_t m, int64_t cpu)
{
	int64_t nodes = G(G_NODES);

	return m * nodes + floor_div(cpu, floor_div(G(G_NCPUS), nodes));
}

/* The eras whose obj stock has a local_trylock fail it inside a nested operation. */
HOT int _trylock_fails(const state *S, int nested)
{
	int64_t era = G(G_OBJERA);

	return nested && era != OE_V615 && era != OE_E2;
}

/* obj_cgroup_uncharge_pages(): MEMCG_KMEM down, whole pages to the memcg side. */
static void _uncharge_pages(const state *S, int64_t o, int64_t nr_pages, int64_t cpu,
			    int nested)
{
	int64_t m = OC(OC_MEMCG, o);	/* objcg->memcg (the parent once reparented) */
	int64_t era;

	G(G_OFLUSH) += 1;
	count(S, E_OBJ_FLUSHES, cpu, m, 1);
	OC(OC_KMEM, o) -= nr_pages;
	MC(F_KMEM, m) -= nr_pages;
	memcg1_account_kmem(S, m, -nr_pages);
	if (m == 0)	/* if (!mem_cgroup_is_root(memcg)) */
		return;
	MC(F_OBJPAGES, m) -= nr_pages;
	era = G(G_OBJERA);
	if (era == OE_MULTI_V4 || era == OE_E41)
		machine_memcg_uncharge(S, m, nr_pages, cpu, nested);	/* v4 4/5, RFC 5/8 */
	else
		machine_refill_stock(S, m, nr_pages, cpu, nested);
}

/* drain_obj_stock() / drain_obj_stock_slot() of slot idx, run on cpu. */
static void _drain_slot(const state *S, int64_t idx, int64_t cpu, int nested)
{
	int64_t o = OB(OB_CACHED, idx);
	int64_t m, nb;

	if (o < 0)
		return;
	m = OC(OC_MEMCG, o);
	G(G_ODRAIN) += 1;
	count(S, E_OBJ_DRAINS, cpu, m, 1);
	nb = OB(OB_NR, idx);
	if (nb) {
		int64_t nr_pages = nb >> PAGE_SHIFT;

		if (nr_pages) {
			int64_t era = G(G_OBJERA);

			OC(OC_KMEM, o) -= nr_pages;
			MC(F_KMEM, m) -= nr_pages;
			memcg1_account_kmem(S, m, -nr_pages);
			if (era == OE_V615) {
				MC(F_OBJPAGES, m) -= nr_pages;	/* no root check in v6.15 */
				refill_single_locked(S, m, nr_pages, cpu);	/* __refill_stock() */
			} else if (m != 0) {	/* memcg_uncharge_kmem(): direct, unless the root */
				MC(F_OBJPAGES, m) -= nr_pages;
				machine_memcg_uncharge(S, m, nr_pages, cpu, nested);
			}
		}
		OC(OC_NRCH, o) += nb & (PAGE_SIZE - 1);	/* atomic_add() of the leftover */
		OB(OB_NR, idx) = 0;
	}
	OB(OB_CACHED, idx) = -1;	/* obj_cgroup_put(old) */
}

/* drain_obj_stock() of stock_cpu's slots in ascending order, run on cpu. */
static void obj_drain_cpu(const state *S, int64_t stock_cpu, int64_t cpu, int nested)
{
	int64_t nobj = G(G_NOBJ);

	for (int64_t i = 0; i < nobj; i++)
		_drain_slot(S, stock_cpu * nobj + i, cpu, nested);
}

/* obj_stock_flush_required(): any slot's memcg is in root's subtree. */
static int obj_flush_required(const state *S, int64_t cpu, int64_t root)
{
	int64_t nobj = G(G_NOBJ);

	for (int64_t i = 0; i < nobj; i++) {
		int64_t o = OB(OB_CACHED, cpu * nobj + i);

		if (o >= 0 && mem_cgroup_is_descendant(S, OC(OC_MEMCG, o), root))
			return 1;
	}
	return 0;
}

/* The older eras' part of drain_all_stock() for cpu (objstock_v5.c). */
static void v5_drain_cpu_if_needed(const state *S, int64_t cpu, int64_t root, int nested);

/*
 * drain_all_stock()'s obj part for cpu (v6.16 on): drain_local_obj_stock() if needed,
 * run on cpu (its flag is always clear: drains are synchronous). The older eras of an
 * obj_stock option (memcg-caches, v5.9 to v5.14) have their own.
 */
static void obj_drain_all_cpu(const state *S, int64_t cpu, int64_t root, int nested)
{
	if (G(G_OBJERA) >= OE_MEMCG_CACHES) {
		v5_drain_cpu_if_needed(S, cpu, root, nested);
		return;
	}
	if (obj_flush_required(S, cpu, root))
		obj_drain_cpu(S, cpu, cpu, nested);
}

/* consume_obj_stock(): the first slot caching o, if it holds enough bytes. */
HOT int _consume(const state *S, int64_t o, int64_t m, int64_t nbytes, int64_t cpu,
			   int nested)
{
	if (!_trylock_fails(S, nested)) {
		int64_t nobj = G(G_NOBJ);
		int64_t base = cpu * nobj;

		for (int64_t i = 0; i < nobj; i++) {
			if (OB(OB_CACHED, base + i) != o)
				continue;
			if (OB(OB_NR, base + i) >= nbytes) {
				OB(OB_NR, base + i) -= nbytes;
				G(G_OHITS) += 1;
				count(S, E_OBJ_HITS, cpu, m, 1);
				return 1;
			}
			break;
		}
	}
	G(G_OMISS) += 1;
	count(S, E_OBJ_MISSES, cpu, m, 1);
	return 0;
}

/* refill_obj_stock() / __refill_obj_stock(), the page flush at its out: label. */
static void _refill(const state *S, int64_t o, int64_t nbytes, int allow_uncharge,
		    int64_t cpu, int nested)
{
	int64_t m = OC(OC_MEMCG, o);
	int64_t nr_pages = 0;

	G(G_OREFILL) += 1;
	count(S, E_OBJ_REFILLS, cpu, m, 1);
	if (_trylock_fails(S, nested)) {
		nr_pages = nbytes >> PAGE_SHIFT;	/* contended: no switch, whole pages out now */
		OC(OC_NRCH, o) += nbytes & (PAGE_SIZE - 1);
	} else {
		int64_t nobj = G(G_NOBJ);
		int64_t base = cpu * nobj;
		int64_t slot = -1, empty = -1, total;

		for (int64_t i = 0; i < nobj; i++) {
			int64_t cached = OB(OB_CACHED, base + i);

			if (cached < 0) {
				if (empty == -1)
					empty = i;
				continue;
			}
			if (cached == o) {
				slot = i;
				break;
			}
		}
		if (slot == -1) {
			if (nobj == 1) {
				slot = 0;
				_drain_slot(S, base, cpu, nested);	/* reset */
			} else {
				slot = empty;
				if (slot == -1) {
					int64_t nxt;

					slot = PCPU(P_OBJ_DRAIN_IDX, cpu);	/* drain_idx++, wrapped at 5 */
					nxt = (slot + 1) & 0xFF;
					PCPU(P_OBJ_DRAIN_IDX, cpu) = nxt == nobj ? 0 : nxt;
					G(G_OEVICT) += 1;
					count(S, E_OBJ_EVICTIONS, cpu,
					      OC(OC_MEMCG, OB(OB_CACHED, base + slot)), 1);
					_drain_slot(S, base + slot, cpu, nested);
				}
			}
			total = OC(OC_NRCH, o);	/* atomic_xchg(&objcg->nr_charged_bytes, 0) */
			OC(OC_NRCH, o) = 0;
			OB(OB_CACHED, base + slot) = o;
			allow_uncharge = 1;	/* Allow uncharge when objcg changes */
		} else {
			total = OB(OB_NR, base + slot);
		}
		total += nbytes;
		if ((allow_uncharge && total > PAGE_SIZE) || (nobj > 1 && total > U16_MAX)) {
			nr_pages = total >> PAGE_SHIFT;
			total &= PAGE_SIZE - 1;
		}
		OB(OB_NR, base + slot) = total;
	}
	if (nr_pages)
		_uncharge_pages(S, o, nr_pages, cpu, nested);
}

/* obj_cgroup_uncharge(objcg, size): refill_obj_stock(objcg, size, true). */
static void obj_uncharge(const state *S, int64_t o, int64_t nbytes, int64_t cpu, int nested)
{
	count(S, E_OBJ_CGROUP_UNCHARGE, cpu, OC(OC_MEMCG, o), 1);
	_refill(S, o, nbytes, 1, cpu, nested);
}

/* __obj_cgroup_charge(): the pages a byte charge takes, PAGE_ALIGN(size) >> PAGE_SHIFT. */
HOT int64_t obj_charge_miss_pages(int64_t nbytes)
{
	return (nbytes + PAGE_SIZE - 1) >> PAGE_SHIFT;
}

/*
 * obj_cgroup_charge()'s first step, consume_obj_stock(): true on a hit.
 *
 * On a miss the caller charges obj_charge_miss_pages() through try_charge_memcg and,
 * on success, calls obj_charge_done() (the page charge lives in charge.c, which comes
 * after this file).
 */
HOT int obj_charge(const state *S, int64_t o, int64_t nbytes, int64_t cpu,
			     int nested)
{
	count(S, E_OBJ_CGROUP_CHARGE, cpu, floor_div(o, G(G_NODES)), 1);
	return _consume(S, o, floor_div(o, G(G_NODES)), nbytes, cpu, nested);
}

/*
 * The rest of obj_cgroup_charge() after its pages were charged: MEMCG_KMEM up and a
 * refill of a non-zero remainder with allow_uncharge false.
 */
static void obj_charge_done(const state *S, int64_t o, int64_t nbytes, int64_t cpu,
			    int nested)
{
	int64_t nr_pages = obj_charge_miss_pages(nbytes);
	int64_t m, remainder;

	OC(OC_KMEM, o) += nr_pages;
	m = OC(OC_MEMCG, o);
	MC(F_KMEM, m) += nr_pages;
	memcg1_account_kmem(S, m, nr_pages);
	MC(F_OBJPAGES, m) += nr_pages;
	remainder = (nr_pages << PAGE_SHIFT) - nbytes;
	if (remainder)
		_refill(S, o, remainder, 0, cpu, nested);
}
