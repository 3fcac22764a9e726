/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The compiled engine's C core: the state it works on and the helpers every file uses.
 *
 * The state is the numpy arrays of memcglab/engine/state.py, passed by their data
 * pointers with their column counts (every array is int64, C-contiguous, 2-D but g and
 * rng; rng is uint64). The macros below index them as the Python code does:
 * MC(F_USAGE, m) is mc[F_USAGE, m], PCS(m, cpu) is pcs[m, cpu], and so on.
 *
 * Every constant (G_*, F_*, S_*, E_*, OP_*, ...) comes from memcglab_consts.h, which
 * memcglab/engine/native/__init__.py generates from the Python modules at build time.
 *
 * Integer semantics are Python's (numba's) for int64: the build passes -fwrapv, so
 * signed overflow wraps as in numba; floor_div() and floor_mod() are Python's // and
 * %, used wherever the Python code divides; >> of a negative int64 is arithmetic in
 * GCC and Clang, as in numba.
 */
#ifndef MEMCGLAB_CORE_H
#define MEMCGLAB_CORE_H

#include <stdint.h>
#include <string.h>

#include "memcglab_consts.h"

/* The arrays of memcglab.engine.state.State; n* are their column counts (shape[1]). */
typedef struct {
	int64_t *g;
	uint64_t *rng;
	int64_t *mc;
	int64_t *sl;
	int64_t *pcpu;
	int64_t *pcs;
	int64_t *ev;
	int64_t *ob;
	int64_t *oc;
	int64_t *rn;
	int64_t *vs;
	/*
	 * int32_t, not int64_t: a store through an int64_t pointer cannot alias them, so the
	 * compiler keeps them in registers (memcglab/engine/native/__init__.py checks sizes).
	 */
	int32_t nmc, nsl, npcpu, npcs, nev, nob, noc, nrn, nvs;
} state;

/*
 * The functions numba inlined into their callers (@hot, njit(inline="always")): the
 * per-operation path, inlined here too, whatever the compiler's size heuristics say.
 */
#define HOT static inline __attribute__((always_inline))

#define G(i)		(S->g[(i)])
#define MC(f, m)	(S->mc[(int64_t)(f) * S->nmc + (m)])
#define SL(r, i)	(S->sl[(int64_t)(r) * S->nsl + (i)])
#define PCPU(r, c)	(S->pcpu[(int64_t)(r) * S->npcpu + (c)])
#define PCS(m, c)	(S->pcs[(int64_t)(m) * S->npcs + (c)])
#define EV(e, col)	(S->ev[(int64_t)(e) * S->nev + (col)])
#define OB(r, i)	(S->ob[(int64_t)(r) * S->nob + (i)])
#define OC(r, o)	(S->oc[(int64_t)(r) * S->noc + (o)])
#define RN(r, i)	(S->rn[(int64_t)(r) * S->nrn + (i)])
#define VS(m, col)	(S->vs[(int64_t)(m) * S->nvs + (col)])

/* Python's // and % on int64 (floor, the sign of the divisor); b is never 0 here. */
static inline int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q -= 1;
	return q;
}

static inline int64_t floor_mod(int64_t a, int64_t b)
{
	int64_t r = a % b;

	if (r != 0 && ((r < 0) != (b < 0)))
		r += b;
	return r;
}

static inline int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static inline int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* A run node (rn rows: objcg, bytes, next) from the free list, or a new row. */
static inline int64_t run_node_new(const state *S, int64_t objcg, int64_t nbytes)
{
	int64_t r = G(G_RFREE);

	if (r >= 0) {
		G(G_RFREE) = RN(RN_NEXT, r);
	} else {
		r = G(G_RUSED);
		G(G_RUSED) += 1;
	}
	RN(RN_OBJCG, r) = objcg;
	RN(RN_BYTES, r) = nbytes;
	RN(RN_NEXT, r) = -1;
	return r;
}

/* Run node r back to the free list. */
static inline void run_node_free(const state *S, int64_t r)
{
	RN(RN_NEXT, r) = G(G_RFREE);
	G(G_RFREE) = r;
}

#endif /* MEMCGLAB_CORE_H */
