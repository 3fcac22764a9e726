// SPDX-License-Identifier: GPL-2.0-only
/*
 * Random victims: splitmix64 and the constant-ceil get_random_u32_below (was
 * memcglab/engine/rng.py; the faithful port is memcglab/kernel/random.py).
 *
 * The replay contract fixes the stream ("Random victims"): one splitmix64 stream
 * seeded with --seed, shared by all CPUs and consumed in trace order, whose top 8, 16
 * or 32 bits are get_random_u8/u16/u32. On top of it sits the inline
 * get_random_u32_below of include/linux/random.h (v6.2+, Jason A. Donenfeld, "random:
 * use rejection sampling for uniform bounded random integers") for a compile-time
 * constant ceil, because NR_MEMCG_STOCK is a #define.
 *
 * The state is the one-element uint64 array rng of the engine's state; uint64_t
 * arithmetic wraps mod 2^64 exactly as the contract asks. Both functions are exported
 * (tests/engine/test_rng.py calls them through ctypes).
 */

/* Advance state[0] one splitmix64 step and return the 64-bit output. */
uint64_t splitmix64_next(uint64_t *state)
{
	uint64_t s = state[0] + UINT64_C(0x9E3779B97F4A7C15);
	uint64_t z;

	state[0] = s;
	z = (s ^ (s >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/*
 * Uniform integer in 0..ceil-1: the inline constant-ceil kernel form.
 *
 * ceil <= 1 returns 0 without a draw (the compiler folds it away). Otherwise the
 * width follows ceil: u8 up to 256, u16 up to 65536, u32 beyond; a draw is rejected
 * while the low part of ceil * draw is below 2^width mod ceil (a power-of-two ceil
 * has threshold 0, so it never rejects). ceil is at most 2^24 here (the slot limit),
 * so every product fits int64.
 */
int64_t get_random_u32_below(uint64_t *state, int64_t ceil)
{
	int64_t mult;

	if (ceil <= 1)
		return 0;
	for (;;) {
		if (ceil <= 256) {
			mult = ceil * (int64_t)(splitmix64_next(state) >> 56);
			if ((mult & 0xFF) >= floor_mod(256, ceil))
				return mult >> 8;
		} else if (ceil <= 65536) {
			mult = ceil * (int64_t)(splitmix64_next(state) >> 48);
			if ((mult & 0xFFFF) >= floor_mod(65536, ceil))
				return mult >> 16;
		} else {
			mult = ceil * (int64_t)(splitmix64_next(state) >> 32);
			if ((mult & 0xFFFFFFFF) >= floor_mod(4294967296, ceil))
				return mult >> 32;
		}
	}
}
