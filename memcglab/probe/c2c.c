// SPDX-License-Identifier: GPL-2.0-only
/*
 * memcglab probe: microbenchmarks of the hardware costs the memcg cost model prices.
 *
 * Compiled at run time by `memcglab probe` (gcc -O2 -pthread) and driven through its
 * command line; every result is one line on stdout, flushed at once so the caller can
 * show progress:
 *
 *   c2c_probe clock CPU REPS              -> "clock REP ADD_GHZ IMUL_GHZ IMM_GHZ TSC_GHZ"
 *   c2c_probe local CPU ITERS REPS        -> "l1|rmw|atomic REP NS_PER_OP"
 *   c2c_probe pingpong ITERS REPS CPU...  -> "c2c A B REP NS_ONE_WAY" for each pair A < B
 *                                            (median batch of 16 round trips, halved)
 *   c2c_probe contend US REPS CPU...      -> "contend N REP NS_PER_OP" for N = #CPUs given
 *
 * Times come from CLOCK_MONOTONIC. The core clock is measured on CPU with dependent
 * chains no renamer can fold, so cycles per link are known whatever the turbo state:
 *
 *   ADD_GHZ   register-register adds, each one reading the one before
 *             (add %b,%a; add %a,%b; ...): one cycle on every x86-64 core. This is the
 *             clock the probe uses.
 *   IMUL_GHZ  32-bit imul by an odd constant, each reading the one before: three
 *             cycles on Intel's Sandy Bridge family and later (Sapphire Rapids
 *             included) and on AMD Zen; four on AMD's Bulldozer family, whose 64-bit
 *             form takes six, hence 32 bits. The cross-check: the two chains must
 *             agree, so a core where either assumption fails is refused, not priced.
 *   IMM_GHZ   add $1 to one register: the chain this probe used to time, kept as a
 *             diagnostic. Golden Cove (Sapphire Rapids) and later cores fold immediate
 *             adds in the renamer, several per cycle, so there it reads far above
 *             the clock (issue 21: 12-15 "GHz" on a 2.3 GHz Xeon).
 *
 * The three chains run lap by lap in turn, so they see the same clock and the same
 * load; each figure is the chain's median lap. The TSC rate is reported beside them
 * because the TSC ticks at a fixed rate, not the core's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#define LINE 128 /* two lines: keeps the adjacent-line prefetcher out of the way */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "c2c_probe: %s: %s\n", what, strerror(err));
	exit(3);
}

static void pin_self(int cpu)
{
	cpu_set_t set;
	int err;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		die("pthread_setaffinity_np", EINVAL);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		die("pthread_setaffinity_np", err);
}

#define ADD4 "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
#define ADD32 ADD4 ADD4 ADD4 ADD4 ADD4 ADD4 ADD4 ADD4
/* a += b; b += a; ...: every add reads the previous one's result, and neither operand
 * is a constant, so there is nothing for a renamer to fold; (a, b) never becomes 0 */
#define RADD4 "add %1, %0\n\tadd %0, %1\n\tadd %1, %0\n\tadd %0, %1\n\t"
#define RADD32 RADD4 RADD4 RADD4 RADD4 RADD4 RADD4 RADD4 RADD4
/* v *= m (32 bits; m odd, so an odd v stays odd and never becomes 0) */
#define IMUL4 "imull %k1, %k0\n\timull %k1, %k0\n\timull %k1, %k0\n\timull %k1, %k0\n\t"
#define IMUL8 IMUL4 IMUL4

/* Spin ~ms milliseconds so that the core leaves its idle clock before anything is timed. */
static void warm(double ms)
{
	double end = now_ns() + ms * 1e6;

	while (now_ns() < end)
		;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

/*
 * Times a loop in laps (batches of operations) with the TSC. The median lap is kept,
 * so a lap in which the thread was preempted (a busy or virtual machine) does not
 * count; ticks become ns at the TSC rate measured over the same run.
 */
struct timer {
	uint64_t *ticks, c0, prev;
	long k;
	double t0;
};

static void timer_start(struct timer *t, long laps)
{
	t->ticks = malloc((laps > 0 ? laps : 1) * sizeof(*t->ticks));
	if (!t->ticks)
		die("malloc", ENOMEM);
	t->k = 0;
	t->t0 = now_ns();
	t->c0 = t->prev = __rdtsc();
}

static inline void timer_lap(struct timer *t)
{
	uint64_t now = __rdtsc();

	t->ticks[t->k++] = now - t->prev;
	t->prev = now;
}

/* ns of the median lap, and the TSC rate in GHz through *tsc_ghz when not NULL */
static double timer_median_ns(struct timer *t, double *tsc_ghz)
{
	double ticks_per_ns = (__rdtsc() - t->c0) / (now_ns() - t->t0);
	double med;

	qsort(t->ticks, t->k, sizeof(*t->ticks), cmp_u64);
	med = t->ticks[t->k / 2] / ticks_per_ns;
	free(t->ticks);
	if (tsc_ghz)
		*tsc_ghz = ticks_per_ns;
	return med;
}

#define LAP 1024 /* operations per lap: the TSC read costs under 0.1 cycle per operation */

/* cycles per link of each clock chain, and the links in one lap of it */
#define ADD_CYCLES 1.0
#define IMUL_CYCLES 3.0
#define ADD_LINKS (LAP * 32.0)
#define IMUL_LINKS (LAP * 8.0)

static uint64_t median_ticks(uint64_t *ticks, long n)
{
	qsort(ticks, n, sizeof(*ticks), cmp_u64);
	return ticks[n / 2];
}

static void clock_probe(int cpu, int reps)
{
	enum { LAPS = 128 }; /* per chain: 4 Mi adds, 1 Mi imuls, 4 Mi immediate adds */
	static uint64_t add_t[LAPS], imul_t[LAPS], imm_t[LAPS];

	pin_self(cpu);
	warm(50);
	for (int r = 0; r < reps; r++) {
		uint64_t a = 1, b = 2, v = 1, w = 0, m = 0x9e3779b9, c0, t;
		double t0 = now_ns();

		c0 = __rdtsc();
		for (long k = 0; k < LAPS; k++) {
			t = __rdtsc();
			for (int i = 0; i < LAP; i++)
				asm volatile(RADD32 : "+r"(a), "+r"(b));
			add_t[k] = __rdtsc() - t;
			t = __rdtsc();
			for (int i = 0; i < LAP; i++)
				asm volatile(IMUL8 : "+r"(v) : "r"(m));
			imul_t[k] = __rdtsc() - t;
			t = __rdtsc();
			for (int i = 0; i < LAP; i++)
				asm volatile(ADD32 : "+r"(w));
			imm_t[k] = __rdtsc() - t;
		}
		double ticks_per_ns = (__rdtsc() - c0) / (now_ns() - t0);
		double add_ns = median_ticks(add_t, LAPS) / ticks_per_ns;
		double imul_ns = median_ticks(imul_t, LAPS) / ticks_per_ns;
		double imm_ns = median_ticks(imm_t, LAPS) / ticks_per_ns;

		printf("clock %d %.6f %.6f %.6f %.6f\n", r, ADD_LINKS * ADD_CYCLES / add_ns,
		       IMUL_LINKS * IMUL_CYCLES / imul_ns, ADD_LINKS / imm_ns, ticks_per_ns);
		fflush(stdout);
	}
}

/* A random cyclic chain of 64 pointers, one per line, inside 4 KiB: an L1d-resident chase. */
static double l1_chase(long iters)
{
	enum { N = 64 };
	static void *ring[N * 8] __attribute__((aligned(4096)));
	int order[N];
	void **p;
	struct timer t;

	for (int i = 0; i < N; i++)
		order[i] = i;
	for (int i = N - 1; i > 0; i--) {
		int j = rand() % (i + 1), x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	for (int i = 0; i < N; i++)
		ring[order[i] * 8] = &ring[order[(i + 1) % N] * 8];
	p = ring[order[0] * 8];
	for (long i = 0; i < iters; i++) /* warm */
		p = *p;
	timer_start(&t, iters / LAP);
	for (long k = 0; k < iters / LAP; k++) {
		for (int i = 0; i < LAP; i += 8) {
			p = *p; p = *p; p = *p; p = *p;
			p = *p; p = *p; p = *p; p = *p;
		}
		timer_lap(&t);
	}
	asm volatile("" : : "r"(p));
	return timer_median_ns(&t, NULL) / LAP;
}

static uint64_t local_line[LINE / 8] __attribute__((aligned(LINE)));

#define RMW "addq $1, %0\n\t"
#define RMW8 RMW RMW RMW RMW RMW RMW RMW RMW
#define XADD "lock xaddq %0, %1\n\t"
#define XADD8 XADD XADD XADD XADD XADD XADD XADD XADD

/* A non-atomic add to a line in L1: each one reads what the previous one stored. */
static double local_rmw(long iters)
{
	struct timer t;

	timer_start(&t, iters / LAP);
	for (long k = 0; k < iters / LAP; k++) {
		for (int i = 0; i < LAP; i += 8)
			asm volatile(RMW8 : "+m"(local_line[0]));
		timer_lap(&t);
	}
	return timer_median_ns(&t, NULL) / LAP;
}

/* LOCK XADD on a line in L1, each one adding the value the previous one returned. */
static double local_atomic(long iters)
{
	struct timer t;
	uint64_t v = 1;

	timer_start(&t, iters / LAP);
	for (long k = 0; k < iters / LAP; k++) {
		for (int i = 0; i < LAP; i += 8)
			asm volatile(XADD8 : "+r"(v), "+m"(local_line[0]) : : "memory");
		timer_lap(&t);
	}
	return timer_median_ns(&t, NULL) / LAP;
}

static void local_probe(int cpu, long iters, int reps)
{
	pin_self(cpu);
	warm(50);
	local_rmw(iters); /* page the line in */
	for (int r = 0; r < reps; r++) {
		printf("l1 %d %.4f\n", r, l1_chase(iters));
		printf("rmw %d %.4f\n", r, local_rmw(iters));
		printf("atomic %d %.4f\n", r, local_atomic(iters));
		fflush(stdout);
	}
}

static struct {
	uint64_t seq __attribute__((aligned(LINE)));
	char pad[LINE - 8];
} shared;

struct pong_arg {
	int cpu;
	long iters;
};

/* The other side of the ping-pong: answer every odd value with the next even one. */
static void *pong(void *arg)
{
	struct pong_arg *a = arg;

	pin_self(a->cpu);
	for (uint64_t i = 0; i < (uint64_t)a->iters; i++) {
		while (__atomic_load_n(&shared.seq, __ATOMIC_ACQUIRE) != 2 * i + 1)
			;
		__atomic_store_n(&shared.seq, 2 * i + 2, __ATOMIC_RELEASE);
	}
	return NULL;
}

#define BATCH 16 /* round trips per timed batch */

/*
 * One-way latency between CPUs a and b: a round trip of the shared line, halved.
 * Round trips are timed in batches of BATCH with the TSC and the median batch is
 * kept, so a batch in which either thread was preempted (a busy or virtual machine)
 * does not count; the TSC rate comes from the same run against CLOCK_MONOTONIC.
 */
static double pingpong(int a, int b, long iters)
{
	long batches = iters / BATCH > 0 ? iters / BATCH : 1;
	uint64_t *ticks = malloc(batches * sizeof(*ticks));
	struct pong_arg arg = { b, batches * BATCH };
	pthread_t t;
	int err;

	if (!ticks)
		die("malloc", ENOMEM);
	pin_self(a);
	__atomic_store_n(&shared.seq, 0, __ATOMIC_RELEASE);
	err = pthread_create(&t, NULL, pong, &arg);
	if (err)
		die("pthread_create", err);
	double t0 = now_ns();
	uint64_t c0 = __rdtsc(), prev = c0;

	for (long k = 0; k < batches; k++) {
		for (uint64_t i = k * BATCH; i < (uint64_t)(k + 1) * BATCH; i++) {
			while (__atomic_load_n(&shared.seq, __ATOMIC_ACQUIRE) != 2 * i)
				;
			__atomic_store_n(&shared.seq, 2 * i + 1, __ATOMIC_RELEASE);
		}
		uint64_t now = __rdtsc();

		ticks[k] = now - prev;
		prev = now;
	}
	while (__atomic_load_n(&shared.seq, __ATOMIC_ACQUIRE) != 2 * (uint64_t)arg.iters)
		;
	double t1 = now_ns();
	uint64_t c1 = __rdtsc();

	pthread_join(t, NULL);
	qsort(ticks, batches, sizeof(*ticks), cmp_u64);
	double ticks_per_ns = (c1 - c0) / (t1 - t0);
	double one_way = ticks[batches / 2] / ticks_per_ns / (2.0 * BATCH);

	free(ticks);
	return one_way;
}

static void pingpong_probe(long iters, int reps, int n, const int *cpus)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			pingpong(cpus[i], cpus[j], iters / 10 + 1); /* warm */
			for (int r = 0; r < reps; r++)
				printf("c2c %d %d %d %.3f\n", cpus[i], cpus[j], r,
				       pingpong(cpus[i], cpus[j], iters));
			fflush(stdout);
		}
}

static uint64_t hot_line[LINE / 8] __attribute__((aligned(LINE)));
static int go, ready;

static int stop;

struct hammer_arg {
	int cpu;
	long ops;
	double t0, t1, cpu_ns; /* wall start and end, time on CPU */
};

static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *hammer(void *arg)
{
	struct hammer_arg *a = arg;
	uint64_t v = 1;
	double c0;

	pin_self(a->cpu);
	__atomic_add_fetch(&ready, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	c0 = thread_cpu_ns();
	a->t0 = now_ns();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		asm volatile(XADD8 XADD8 : "+r"(v), "+m"(hot_line[0]) : : "memory");
		a->ops += 16;
	}
	a->t1 = now_ns();
	a->cpu_ns = thread_cpu_ns() - c0;
	return NULL;
}

/*
 * n threads add to one line for us microseconds, all at once: the line's throughput
 * as ns per op of all threads together (wall time of the common window over every
 * thread's adds), and the smallest share of that time a thread spent on its CPU.
 * A share well below 1 means the machine was busy and the figure is not the
 * hardware's: the caller reports it.
 */
static void contend_probe(long us, int reps, int n, const int *cpus)
{
	pthread_t t[n];
	struct hammer_arg a[n];
	struct timespec dur = { us / 1000000, (us % 1000000) * 1000 };

	for (int r = 0; r < reps; r++) {
		go = 0;
		ready = 0;
		stop = 0;
		for (int i = 0; i < n; i++) {
			a[i] = (struct hammer_arg){ cpus[i], 0, 0, 0, 0 };
			int err = pthread_create(&t[i], NULL, hammer, &a[i]);

			if (err)
				die("pthread_create", err);
		}
		/* start only when every thread is running on its CPU, so that all overlap */
		while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) != n)
			sched_yield();
		__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		nanosleep(&dur, NULL);
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
		double wall = 0, ops = 0, oncpu = 1;

		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		for (int i = 0; i < n; i++) {
			double span = a[i].t1 - a[i].t0, share = a[i].cpu_ns / span;

			wall += span / n; /* every thread ran the whole window, give or take a batch */
			ops += a[i].ops;
			oncpu = share < oncpu ? share : oncpu;
		}
		printf("contend %d %d %.4f %.3f\n", n, r, wall / ops, oncpu);
		fflush(stdout);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: c2c_probe clock CPU REPS | local CPU ITERS REPS | "
			"pingpong ITERS REPS CPU... | contend ITERS REPS CPU...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		usage();
	if (!strcmp(argv[1], "clock") && argc == 4) {
		clock_probe(atoi(argv[2]), atoi(argv[3]));
		return 0;
	}
	if (!strcmp(argv[1], "local") && argc == 5) {
		local_probe(atoi(argv[2]), atol(argv[3]), atoi(argv[4]));
		return 0;
	}
	if (argc < 5)
		usage();
	long iters = atol(argv[2]);
	int reps = atoi(argv[3]), n = argc - 4;
	int *cpus = calloc(n, sizeof(int));

	for (int i = 0; i < n; i++)
		cpus[i] = atoi(argv[4 + i]);
	if (!strcmp(argv[1], "pingpong"))
		pingpong_probe(iters, reps, n, cpus);
	else if (!strcmp(argv[1], "contend"))
		contend_probe(iters, reps, n, cpus);
	else
		usage();
	free(cpus);
	return 0;
}
