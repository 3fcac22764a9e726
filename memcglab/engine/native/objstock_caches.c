// SPDX-License-Identifier: GPL-2.0-only
/*
 * The memcg-caches era (v5.8 and before): per-memcg kmem caches, charged per slab page
 * (the faithful port is memcglab/kernel/obj_memcg_caches.py, ObjMemcgCaches, whose
 * functions these are, in its order).
 *
 * A memcg's kmalloc objects come from its own copy of each kmalloc cache, and memcg
 * charges only when such a cache allocates or frees a slab page: memcg_charge_slab()
 * and memcg_uncharge_slab() (mm/slab.h, v5.8 form), through try_charge and v5.8's
 * direct __memcg_kmem_uncharge. There is no byte stock (G(G_NOBJ) is 0). The objcg of
 * a memcg (one per memcg, o is dense memcg o) stands for its set of caches: reparented
 * at offline as objcgs are, so later slab releases go to the parent.
 *
 * Per objcg o: OC(OC_SLABS + k, o) and OC(OC_INUSE + k, o) are the slabs and objects in
 * use of its cache of kmalloc size KMALLOC_SIZES[k]; OC(OC_LARGE, o) the pages of its
 * live kmalloc_large objects; its live objects' sizes are a FIFO, oldest first, of rn
 * entries (RN_BYTES the size, RN_NEXT the next) from OC(OC_KHEAD, o) to OC(OC_KTAIL, o),
 * drawn from the free list of the live-object runs (loop.c), which memcglab/engine/
 * engine.py sizes for both; OC(OC_PENDING, o) the freed bytes short of the next object.
 *
 * The replay's choices are the port's (docs/trace-extensions.md): the smallest slab
 * order that holds one object, objects packed; a new slab when the cache has no free
 * object; a slab uncharged after a free leaves two slabs' worth of objects free.
 */

static const int64_t kmalloc_sizes[NR_KMALLOC_CACHES] = { KMALLOC_SIZES };

/* get_order(): the smallest order whose 2^order pages hold size bytes. */
HOT int64_t get_order(int64_t size)
{
	int64_t order = 0, pages = (size + PAGE_SIZE - 1) >> PAGE_SHIFT;

	while (((int64_t)1 << order) < pages)
		order += 1;
	return order;
}

/* kmalloc_index(): the cache of the smallest kmalloc size that holds size bytes. */
HOT int64_t kmalloc_index(int64_t size)
{
	int64_t k = 0;

	while (kmalloc_sizes[k] < size)
		k += 1;
	return k;
}

/* oo_objects(s->oo): objects per slab of cache k (its order's pages, packed). */
HOT int64_t cache_objects(int64_t k)
{
	return (PAGE_SIZE << get_order(kmalloc_sizes[k])) / kmalloc_sizes[k];
}

/* Append an object of size bytes to objcg o's FIFO (an rn entry off the free list). */
static void kobj_push(const state *S, int64_t o, int64_t size)
{
	int64_t tail = OC(OC_KTAIL, o);
	int64_t r = run_node_new(S, o, size);

	if (tail >= 0)
		RN(RN_NEXT, tail) = r;
	else
		OC(OC_KHEAD, o) = r;
	OC(OC_KTAIL, o) = r;
}

/* Take objcg o's oldest object off its FIFO; its size. */
static int64_t kobj_pop(const state *S, int64_t o)
{
	int64_t r = OC(OC_KHEAD, o);
	int64_t size = RN(RN_BYTES, r);

	OC(OC_KHEAD, o) = RN(RN_NEXT, r);
	if (OC(OC_KHEAD, o) < 0)
		OC(OC_KTAIL, o) = -1;
	run_node_free(S, r);
	return size;
}

/* ------------------------------------------------------------ page side */

/*
 * memcg_charge_slab() (mm/slab.h, v5.8 form): the root is not charged;
 * memcg_kmem_charge() is __memcg_kmem_charge(): try_charge (v2: no kmem counter), then
 * mod_lruvec_state() of the slab's bytes. True on success.
 */
static int memcg_charge_slab(const state *S, int64_t o, int64_t nr_pages, int64_t cpu,
			     int nested, int irq)
{
	int64_t m = OC(OC_MEMCG, o);	/* READ_ONCE(s->memcg_params.memcg), an online ancestor */

	if (m == 0)
		return 1;	/* mod_node_page_state() only */
	if (!try_charge_memcg(S, m, nr_pages, cpu, nested, irq))
		return 0;
	if (!memcg1_kmem_try_charge(S, m, nr_pages, cpu))	/* v1: memcg->kmem */
		return 0;
	G(G_OSLABCH) += 1;
	G(G_OSTATUPD) += 1;
	MC(F_KMEM, m) += nr_pages;
	MC(F_OBJPAGES, m) += nr_pages;
	OC(OC_KMEM, o) += nr_pages;
	return 1;
}

/*
 * memcg_uncharge_slab() (v5.8 form): unless the cache's memcg is the root,
 * mod_lruvec_state() and memcg_kmem_uncharge(): __memcg_kmem_uncharge() of v5.8,
 * page_counter_uncharge(&memcg->memory, nr_pages) with no stock.
 */
static void memcg_uncharge_slab(const state *S, int64_t o, int64_t nr_pages, int64_t cpu,
				int nested)
{
	int64_t m = OC(OC_MEMCG, o);

	if (m == 0)
		return;
	G(G_OSLABUNCH) += 1;
	G(G_OSTATUPD) += 1;
	MC(F_KMEM, m) -= nr_pages;
	memcg1_account_kmem(S, m, -nr_pages);	/* v1: page_counter_uncharge(&memcg->kmem) */
	MC(F_OBJPAGES, m) -= nr_pages;
	OC(OC_KMEM, o) -= nr_pages;
	machine_memcg_uncharge(S, m, nr_pages, cpu, nested);
}

/* ------------------------------------------------------------ objects */

/*
 * The trace's obj_charge: kmalloc(size) from the memcg's cache; a new slab
 * (allocate_slab -> charge_slab_page) only when no object is free. True on success.
 */
static int caches_obj_cgroup_charge(const state *S, int64_t o, int64_t size, int64_t cpu,
				    int nested, int irq)
{
	int64_t k, order;

	count(S, E_OBJ_CGROUP_CHARGE, cpu, OC(OC_MEMCG, o), 1);
	if (size > KMALLOC_MAX_CACHE_SIZE) {	/* kmalloc_large(): __memcg_kmem_charge_page() */
		int64_t nr_pages = (int64_t)1 << get_order(size);

		if (!memcg_charge_slab(S, o, nr_pages, cpu, nested, irq))
			return 0;
		OC(OC_LARGE, o) += nr_pages;
		kobj_push(S, o, size);
		return 1;
	}
	k = kmalloc_index(size);	/* memcg_kmem_get_cache() */
	order = get_order(kmalloc_sizes[k]);
	if (OC(OC_INUSE + k, o) == OC(OC_SLABS + k, o) * cache_objects(k)) {
		if (!memcg_charge_slab(S, o, (int64_t)1 << order, cpu, nested, irq))
			return 0;	/* the slab allocation fails: kmalloc returns NULL */
		OC(OC_SLABS + k, o) += 1;
	}
	OC(OC_INUSE + k, o) += 1;
	kobj_push(S, o, size);
	return 1;
}

/* Free one object of size bytes (its cache, or its kmalloc_large pages). */
static void kfree(const state *S, int64_t o, int64_t size, int64_t cpu, int nested)
{
	int64_t k, objects;

	if (size > KMALLOC_MAX_CACHE_SIZE) {	/* __free_pages -> __memcg_kmem_uncharge_page() */
		int64_t nr_pages = (int64_t)1 << get_order(size);

		OC(OC_LARGE, o) -= nr_pages;
		memcg_uncharge_slab(S, o, nr_pages, cpu, nested);
		return;
	}
	k = kmalloc_index(size);
	objects = cache_objects(k);
	OC(OC_INUSE + k, o) -= 1;
	if (OC(OC_SLABS + k, o) * objects - OC(OC_INUSE + k, o) >= 2 * objects) {
		OC(OC_SLABS + k, o) -= 1;	/* discard_slab(): a second empty slab is not kept */
		memcg_uncharge_slab(S, o, (int64_t)1 << get_order(kmalloc_sizes[k]), cpu, nested);
	}
}

/*
 * The trace's obj_uncharge: kfree() of the memcg's oldest whole objects within the
 * freed bytes; an empty slab beyond the one kept is freed (uncharge_slab_page).
 */
static void caches_obj_cgroup_uncharge(const state *S, int64_t o, int64_t size,
				       int64_t cpu, int nested)
{
	int64_t freed;

	count(S, E_OBJ_CGROUP_UNCHARGE, cpu, OC(OC_MEMCG, o), 1);
	freed = OC(OC_PENDING, o) + size;
	while (OC(OC_KHEAD, o) >= 0 && freed >= RN(RN_BYTES, OC(OC_KHEAD, o))) {
		int64_t obj = kobj_pop(S, o);

		freed -= obj;
		kfree(S, o, obj, cpu, nested);
	}
	OC(OC_PENDING, o) = freed;
}

/*
 * The invariant of this era (ObjMemcgCaches.violation()): every cache holds its objects,
 * and every objcg's kmem pages are its slabs and kmalloc_large pages; no bytes are shared.
 * 1 when it holds.
 */
static int caches_conservation(const state *S, int64_t nobjcg)
{
	for (int64_t o = 0; o < nobjcg; o++) {
		int64_t pages = OC(OC_LARGE, o);

		for (int64_t k = 0; k < NR_KMALLOC_CACHES; k++) {
			int64_t inuse = OC(OC_INUSE + k, o), slabs = OC(OC_SLABS + k, o);

			if (inuse < 0 || inuse > slabs * cache_objects(k))
				return 0;
			pages += slabs << get_order(kmalloc_sizes[k]);
		}
		if (OC(OC_MEMCG, o) == 0)
			continue;	/* slabs of a cache reparented to the root were never charged */
		if (OC(OC_KMEM, o) != pages || OC(OC_NRCH, o))
			return 0;
	}
	return 1;
}
