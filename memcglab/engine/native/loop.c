// SPDX-License-Identifier: GPL-2.0-only
/*
 * The replay loop: one trace operation after another, and the --check invariant (was
 * memcglab/engine/loop.py; the faithful port is memcglab/replay.py).
 *
 * Replay-level rules of the contract that are not kernel code live here: the pages
 * each memcg holds (successful charges not yet uncharged), min(NR, held) releases
 * with short_uncharges for the rest, failed_charges, set_max_busy and the
 * conservation invariant. Everything else calls the ported functions.
 */

/* The obj half of the invariant: slots in bounds, every objcg's bytes add up. */
static int obj_conservation(const state *S, int64_t nobjcg)
{
	for (int64_t o = 0; o < nobjcg; o++)
		OC(OC_ACC, o) = OC(OC_LIVE, o) + OC(OC_NRCH, o);
	for (int64_t idx = 0; idx < S->nob; idx++) {
		int64_t o = OB(OB_CACHED, idx);

		if (o < 0) {
			if (OB(OB_NR, idx) != 0)
				return 0;
		} else if (OB(OB_NR, idx) < 0) {
			return 0;
		} else {
			OC(OC_ACC, o) += OB(OB_NR, idx);
		}
	}
	for (int64_t o = 0; o < nobjcg; o++)
		if (OC(OC_ACC, o) != PAGE_SIZE * OC(OC_KMEM, o))
			return 0;
	return 1;
}

/* cgroup creation: mem_cgroup_css_alloc() counters, then mem_cgroup_css_online(). */
static void _css_online(const state *S, int64_t m, int64_t parent, int64_t limit)
{
	int64_t nodes = G(G_NODES);

	for (int64_t node = 0; node < nodes; node++)	/* its objcgs (one per node in the 2026 tree): objcg->memcg */
		OC(OC_MEMCG, m * nodes + node) = m;
	MC(F_PARENT, m) = parent;
	MC(F_DEPTH, m) = MC(F_DEPTH, parent) + 1;
	MC(F_MAX, m) = limit;
	MC(F_ONLINE, m) = 1;
	if (MC(F_LAST, parent) < 0)
		MC(F_FIRST, parent) = m;
	else
		MC(F_NEXT, MC(F_LAST, parent)) = m;
	MC(F_LAST, parent) = m;
	if (m >= G(G_NMEMCG))
		G(G_NMEMCG) = m + 1;
	if (G(G_MODEL) == M_PCSTOCK) {
		MC(F_PCBATCH, m) = G(G_BATCH);	/* page_counter_enable_stock(memory, MEMCG_CHARGE_BATCH) */
		page_counter_drain_stock(S, parent);	/* RFC 7/8: parent is no longer a leaf */
	} else if (G(G_MODEL) == M_PCSTOCK_V4) {
		MC(F_PCBATCH, m) = G(G_BATCH);	/* v4 4/5: page_counter_alloc_stock(); nothing else */
	}
}

/*
 * Whether the contract's invariant holds: for every memcg, usage = held + stocked +
 * kmem (pages charged through its objcgs) + children's usage; every stock between 0
 * and the batch (pcstock-v4: the batch minus one); an empty slot holds nothing; and
 * for every objcg, PAGE_SIZE x kmem = live + stocked bytes + nr_charged_bytes (kernel
 * notes §11.11). Exported: 1 when it holds, else 0.
 */
int conservation(const state *S)
{
	int64_t n = G(G_NMEMCG);
	int64_t batch = G(G_BATCH);
	int64_t nodes = G(G_NODES);

	for (int64_t c = 0; c < n; c++)
		MC(F_ACC, c) = MC(F_HELD, c);
	if (G(G_OBJUSED)) {
		if (G(G_OBJERA) == OE_MEMCG_CACHES ? !caches_conservation(S, n * nodes)
		    : !obj_conservation(S, n * nodes))
			return 0;
		for (int64_t c = 0; c < n; c++)
			MC(F_ACC, c) += MC(F_OBJPAGES, c);
	}
	if (G(G_MODEL) == M_PCSTOCK_V4)
		batch -= 1;
	if (G(G_MODEL) == M_PCSTOCK || G(G_MODEL) == M_PCSTOCK_V4) {
		for (int64_t m = 0; m < n; m++) {
			for (int64_t cpu = 0; cpu < G(G_NCPUS); cpu++) {
				int64_t p = PCS(m, cpu);

				if (p < 0 || p > batch)
					return 0;
				MC(F_ACC, m) += p;
			}
		}
	} else {
		int64_t nslots = G(G_MODEL) == M_SINGLE ? 1 : G(G_NSLOTS);

		for (int64_t cpu = 0; cpu < G(G_NCPUS); cpu++) {
			int64_t used = G(G_MODEL) == M_SINGLE ? 1 : PCPU(P_HI, cpu);

			for (int64_t i = 0; i < used; i++) {
				int64_t idx = cpu * nslots + i;
				int64_t cached = SL(S_CACHED, idx);
				int64_t p = SL(S_NR, idx);

				if (cached < 0) {
					if (p != 0)
						return 0;
				} else if (p < 0 || p > batch) {
					return 0;
				} else {
					MC(F_ACC, cached) += p;
				}
			}
		}
	}
	for (int64_t c = 1; c < n; c++)
		MC(F_ACC, MC(F_PARENT, c)) += MC(F_USAGE, c);
	for (int64_t c = 0; c < n; c++)
		if (MC(F_USAGE, c) != MC(F_ACC, c))
			return 0;
	return v1_conservation(S, n);
}

/* Append nbytes of live objects of objcg o to memcg m's runs (merged with the last). */
static void _run_push(const state *S, int64_t m, int64_t o, int64_t nbytes)
{
	int64_t tail = MC(F_RTAIL, m);
	int64_t r;

	if (tail >= 0 && RN(RN_OBJCG, tail) == o) {
		RN(RN_BYTES, tail) += nbytes;
		return;
	}
	r = run_node_new(S, o, nbytes);
	if (tail >= 0)
		RN(RN_NEXT, tail) = r;
	else
		MC(F_RHEAD, m) = r;
	MC(F_RTAIL, m) = r;
}

/*
 * obj_charge / obj_uncharge (docs/trace-extensions.md): the faithful Replayer._obj. The
 * older eras of an obj_stock option charge and uncharge through their own
 * obj_cgroup_charge() and obj_cgroup_uncharge() (objstock_v5.c, objstock_caches.c).
 */
static void _obj_op(const state *S, int64_t o, int64_t m, int64_t nbytes, int64_t c,
		    int nested, int irq)
{
	int64_t era = G(G_OBJERA);
	int64_t left;

	G(G_OBJUSED) = 1;
	if (o == OP_OBJ_CHARGE) {
		int64_t objcg;

		count(S, E_OBJ_CHARGES, c, m, 1);
		objcg = objcg_of(S, m, c);
		if (era >= OE_MEMCG_CACHES) {
			int ok = era == OE_MEMCG_CACHES
				 ? caches_obj_cgroup_charge(S, objcg, nbytes, c, nested, irq)
				 : v5_obj_cgroup_charge(S, objcg, nbytes, c, nested, irq);

			if (!ok) {
				G(G_OFAIL) += 1;
				return;
			}
		} else if (!obj_charge(S, objcg, nbytes, c, nested)) {
			/* __obj_cgroup_charge(): obj_cgroup_charge_pages() through try_charge_memcg() */
			if (!try_charge_memcg(S, m, obj_charge_miss_pages(nbytes), c, nested, irq)) {
				G(G_OFAIL) += 1;
				return;
			}
			obj_charge_done(S, objcg, nbytes, c, nested);
		}
		OC(OC_LIVE, objcg) += nbytes;
		_run_push(S, m, objcg, nbytes);
		return;
	}
	left = nbytes;
	while (left && MC(F_RHEAD, m) >= 0) {
		int64_t r = MC(F_RHEAD, m);
		int64_t objcg = RN(RN_OBJCG, r);
		int64_t take = min64(left, RN(RN_BYTES, r));

		RN(RN_BYTES, r) -= take;
		if (RN(RN_BYTES, r) == 0) {	/* the oldest run is gone: back to the free list */
			MC(F_RHEAD, m) = RN(RN_NEXT, r);
			if (MC(F_RHEAD, m) < 0)
				MC(F_RTAIL, m) = -1;
			run_node_free(S, r);
		}
		left -= take;
		OC(OC_LIVE, objcg) -= take;
		count(S, E_OBJ_UNCHARGES, c, m, 1);
		if (era == OE_MEMCG_CACHES)
			caches_obj_cgroup_uncharge(S, objcg, take, c, nested);
		else if (era >= OE_V59)
			v5_obj_cgroup_uncharge(S, objcg, take, c, nested, irq);
		else
			obj_uncharge(S, objcg, take, c, nested);
	}
	G(G_OSHORT) += left;
}

/* Fields of an OP_DTYPE row, which is packed: memcpy reads the unaligned ones. */
HOT int32_t _row_i32(const unsigned char *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

HOT int64_t _row_i64(const unsigned char *p)
{
	int64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

HOT uint64_t _row_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Replay one validated chunk; return -1, or the row after which --check failed.
 *
 * ops points at n rows of OP_DTYPE, stride bytes apart; dense is the validator's
 * column (the dense memcg; for cgroup, the dense parent, the new memcg being the next
 * index). arg is clamped to LONG_MAX (see state.LIMIT_CLAMP). On a failure the state
 * is that right after the row.
 */
int64_t run_ops(const state *S, const unsigned char *ops, int64_t stride, const int32_t *dense,
		int64_t n)
{
	int64_t check = G(G_CHECK);
	int pcstock = G(G_MODEL) == M_PCSTOCK;
	int v4 = G(G_MODEL) == M_PCSTOCK_V4;

	for (int64_t k = 0; k < n; k++) {
		const unsigned char *row = ops + k * stride;
		int64_t o = row[OPF_OP];
		int nested = row[OPF_NESTED] != 0;
		int irq = row[OPF_IRQ] != 0;
		int64_t c = _row_i32(row + OPF_CPU);
		int64_t m = dense[k];
		uint64_t raw = _row_u64(row + OPF_ARG);
		int64_t a = raw <= (uint64_t)LIMIT_CLAMP ? (int64_t)raw : LIMIT_CLAMP;
		/*
		 * the kmem field (docs/trace-extensions.md): read on cgroup v1 only, and never
		 * for the root (no kmem page is charged to it); validated to be at most NR
		 */
		int64_t kmem = (G(G_CGV1) && m != 0 && o <= OP_UNCHARGE_DIRECT)
			       ? (int64_t)_row_u64(row + OPF_KMEM) : 0;

		G(G_OPS) += 1;
		if (o == OP_CHARGE) {
			count(S, E_CHARGES, c, m, 1);
			if (kmem ? memcg_kmem_charge_page(S, m, a, c, nested, irq)
			    : try_charge_memcg(S, m, a, c, nested, irq)) {
				MC(F_HELD, m) += a;
				MC(F_HELDKMEM, m) += kmem;
			} else {
				G(G_FAILED) += 1;
				count(S, E_FAILED_CHARGES, c, m, 1);
			}
		} else if (o == OP_UNCHARGE || o == OP_UNCHARGE_DIRECT) {
			/* kmem pages out of the held kmem pages, the rest out of the others */
			int64_t held_kmem = MC(F_HELDKMEM, m);
			int64_t release_kmem = min64(kmem, held_kmem);
			int64_t release = release_kmem + min64(a - kmem, MC(F_HELD, m) - held_kmem);

			G(G_SHORT) += a - release;
			if (release) {
				MC(F_HELD, m) -= release;
				MC(F_HELDKMEM, m) -= release_kmem;
				if (kmem && o == OP_UNCHARGE) {
					/* __memcg_kmem_uncharge_page: kmem first, then refill_stock */
					memcg1_account_kmem(S, m, -release);
					refill_stock(S, m, release, c, nested);
				} else if (kmem) {
					/* uncharge_batch(): memory (and memsw), then ug->nr_kmem */
					memcg_uncharge(S, m, release, c);
					if (release_kmem)
						memcg1_account_kmem(S, m, -release_kmem);
				} else if (pcstock)
					pc_uncharge(S, m, release, c, nested);
				else if (v4)
					/*
					 * mem_cgroup_sk_uncharge() and memcg_uncharge() after v4 4/5:
					 * the plain page_counter_uncharge(), no stock touched
					 */
					uncharge_walk(S, m, release, c);
				else if (o == OP_UNCHARGE)
					refill_stock(S, m, release, c, nested);
				else
					memcg_uncharge(S, m, release, c);
				count(S, o == OP_UNCHARGE ? E_UNCHARGES : E_UNCHARGES_DIRECT, c, m, 1);
			}
		} else if (o == OP_OBJ_CHARGE || o == OP_OBJ_UNCHARGE) {
			_obj_op(S, o, m, a, c, nested, irq);
		} else if (o == OP_CGROUP) {
			_css_online(S, G(G_NMEMCG), m, a);
		} else if (o == OP_DRAIN_ALL) {
			drain_all_stock(S, m, c, nested);
		} else if (o == OP_CPU_DEAD) {
			/*
			 * memcg_hotplug_cpu_dead(): the obj stock first (v6.15: on the CPU
			 * running the callback, whose memcg stock takes the pages), then the
			 * page stocks
			 */
			if (G(G_OBJERA) == OE_V615) {
				int64_t here = (c != 0 || G(G_NCPUS) == 1) ? 0 : 1;

				obj_drain_cpu(S, c, here, nested);
			} else if (G(G_OBJERA) >= OE_MEMCG_CACHES) {
				v5_drain_dead_cpu(S, c);	/* these trees drain no obj stock here */
			} else {
				obj_drain_cpu(S, c, c, nested);
			}
			if (pcstock)
				pc_cpu_dead(S, c);
			else if (v4)
				v4_cpu_dead(S, c);
			else
				drain_stock_fully(S, c);	/* memcg_hotplug_cpu_dead(): no lock */
		} else if (o == OP_SET_MAX) {
			if (page_counter_set_max(S, m, a))
				G(G_BUSY) += 1;
		} else if (o == OP_OFFLINE) {
			/*
			 * mem_cgroup_css_offline(): memcg_reparent_objcgs(), drain_all_stock(),
			 * then (RFC 5/8) disable the stock (the trace names no CPU: CPU 0, as
			 * the faithful port)
			 */
			int64_t parent = MC(F_PARENT, m);

			for (int64_t objcg = 0; objcg < G(G_NMEMCG) * G(G_NODES); objcg++)
				if (OC(OC_MEMCG, objcg) == m)
					OC(OC_MEMCG, objcg) = parent;
			drain_all_stock(S, m, 0, nested);
			if (pcstock)
				page_counter_disable_stock(S, m);
			MC(F_ONLINE, m) = 0;
		}
		if (check && !conservation(S))
			return k;
	}
	return -1;
}
