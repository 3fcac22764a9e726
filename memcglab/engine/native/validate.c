// SPDX-License-Identifier: GPL-2.0-only
/*
 * Chunked trace validation: the contract's rules, memcg IDs to dense indices (was the
 * numba code of memcglab/engine/validate.py, which keeps ChunkValidator, the Python
 * side that owns the arrays below and raises the faithful TraceError).
 *
 * The rules are those of memcglab.trace.validate. One pass over a chunk checks every
 * row and maps memcg IDs (up to 2^63-1) to dense indices in creation order (the root,
 * ID 0, is 0) through an open-addressing hash table (keys/vals, nkeys a power of two,
 * never more than half full, EMPTY_KEY for a free slot). It writes one int32 column
 * for the replay: the dense memcg of each operation, or, for a cgroup row, the dense
 * parent (the new memcg's own index is implicit: the number of memcgs created before
 * it).
 */

/*
 * Open addressing with linear probing; returns the slot of key or of the empty slot
 * where it would go. The table is never more than half full.
 */
static int64_t _find(const int64_t *keys, int64_t nkeys, int64_t key)
{
	int64_t mask = nkeys - 1;
	int64_t h = key * INT64_C(-7046029254386353131);	/* 0x9E3779B97F4A7C15 as int64: wraps, which is fine */
	int64_t i = (h ^ (h >> 29)) & mask;

	while (keys[i] != EMPTY_KEY && keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

/* Exported: ChunkValidator puts the root memcg in a new table with it. */
void insert_key(int64_t *keys, int64_t *vals, int64_t nkeys, int64_t key, int64_t val)
{
	int64_t i = _find(keys, nkeys, key);

	keys[i] = key;
	vals[i] = val;
}

static int64_t _lookup(const int64_t *keys, const int64_t *vals, int64_t nkeys, int64_t key)
{
	int64_t i;

	if (key == EMPTY_KEY)
		return -1;
	i = _find(keys, nkeys, key);
	return keys[i] == key ? vals[i] : -1;
}

/* Exported: every entry of the old table into a new (larger, empty) one. */
void rehash(const int64_t *old_keys, const int64_t *old_vals, int64_t old_n, int64_t *keys,
	    int64_t *vals, int64_t nkeys)
{
	for (int64_t i = 0; i < old_n; i++)
		if (old_keys[i] != EMPTY_KEY)
			insert_key(keys, vals, nkeys, old_keys[i], old_vals[i]);
}

/*
 * Validate rows in order; return the first row validate() would refuse, or -1.
 * st[0] is the number of memcgs created so far. State advances up to the bad row.
 * Exported (ChunkValidator.check); ops are n OP_DTYPE rows, stride bytes apart.
 */
int64_t check_rows(const unsigned char *ops, int64_t stride, int64_t n, int64_t cpus,
		   int single, int64_t max_memcgs, int64_t *keys, int64_t *vals, int64_t nkeys,
		   int64_t *st, uint8_t *online, int64_t *nchild, int64_t *parent,
		   int64_t *by_dense, int32_t *dense)
{
	for (int64_t i = 0; i < n; i++) {
		const unsigned char *row = ops + i * stride;
		int64_t o = row[OPF_OP];
		int nested = row[OPF_NESTED] != 0;
		int irq = row[OPF_IRQ] != 0;
		int64_t cpu = _row_i32(row + OPF_CPU);
		int64_t id = _row_i64(row + OPF_MEMCG);
		uint64_t arg = _row_u64(row + OPF_ARG);
		int64_t d;

		if (o > OP_OBJ_UNCHARGE || (nested && single))
			return i;
		if (irq && !(o == OP_CHARGE || o == OP_UNCHARGE || o == OP_UNCHARGE_DIRECT
			     || o == OP_OBJ_CHARGE || o == OP_OBJ_UNCHARGE))
			return i;
		if (_row_u64(row + OPF_KMEM)
		    && !(o == OP_CHARGE || o == OP_UNCHARGE || o == OP_UNCHARGE_DIRECT))
			return i;
		if (o == OP_CGROUP) {
			int64_t p = _lookup(keys, vals, nkeys, _row_i64(row + OPF_PARENT));

			if (id < 1 || _lookup(keys, vals, nkeys, id) >= 0 || p < 0 || !online[p]
			    || arg < 1)
				return i;
			d = st[0];
			if (max_memcgs >= 0 && d + 1 > max_memcgs)	/* trace.check_per_memcg() */
				return i;
			st[0] = d + 1;
			insert_key(keys, vals, nkeys, id, d);
			by_dense[d] = id;
			online[d] = 1;
			parent[d] = p;
			nchild[p] += 1;
			dense[i] = (int32_t)p;
			continue;
		}
		if (o != OP_SET_MAX && o != OP_OFFLINE && !(0 <= cpu && cpu < cpus))
			return i;
		if (o == OP_CPU_DEAD) {
			dense[i] = 0;
			continue;
		}
		d = _lookup(keys, vals, nkeys, id);
		if (d < 0 || !online[d])
			return i;
		if (o == OP_CHARGE || o == OP_UNCHARGE || o == OP_UNCHARGE_DIRECT) {
			uint64_t kmem = _row_u64(row + OPF_KMEM);

			if ((d == 0 && o == OP_CHARGE) || arg < 1 || arg > NR_MAX)
				return i;
			/* kmem: 0 or NR (the bare word), or 0..NR for uncharge_direct's kmem=K */
			if (o == OP_UNCHARGE_DIRECT ? kmem > arg : (kmem != 0 && kmem != arg))
				return i;
		} else if (o == OP_OBJ_CHARGE || o == OP_OBJ_UNCHARGE) {
			if ((d == 0 && o == OP_OBJ_CHARGE) || arg < 1 || arg > OBJ_BYTES_MAX)
				return i;
		} else if (o == OP_SET_MAX) {
			if (d == 0 || arg < 1)
				return i;
		} else if (o == OP_OFFLINE) {
			if (d == 0 || nchild[d])
				return i;
			online[d] = 0;
			nchild[parent[d]] -= 1;
		} else if (o != OP_DRAIN_ALL) {
			return i;
		}
		dense[i] = (int32_t)d;
	}
	return -1;
}
