// SPDX-License-Identifier: GPL-2.0
/*
 * How long one cache line takes to travel between two CPUs: two threads,
 * pinned to the CPUs given, hand a counter back and forth; the figure is
 * the median round trip over short rounds, halved.  A ring buffer whose
 * producer and reader run on those CPUs pays about this per line of
 * records and per position update, so the figure tells whether the host
 * currently gives this guest two CPUs that share a cache or two that do
 * not (the host can move vCPUs; a guest cannot see where).
 *
 *   cc -O2 -pthread -o /tmp/cache_line_latency scripts/cache_line_latency.c
 *   /tmp/cache_line_latency [CPU_A CPU_B [SECONDS]]     (default 0 1 2)
 *
 * Not part of the test suite or the package.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUND_TRIPS 10000
#define MAX_ROUNDS 100000

struct shared {
	_Alignas(64) atomic_long turn;
	_Alignas(64) atomic_int stop;
};

struct side {
	struct shared *shared;
	int cpu;
	int parity;
	int error;
};

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *answer(void *arg)
{
	struct side *side = arg;
	long seen;

	side->error = pin(side->cpu);
	if (side->error)
		return NULL;
	while (!atomic_load_explicit(&side->shared->stop, memory_order_relaxed)) {
		seen = atomic_load_explicit(&side->shared->turn, memory_order_acquire);
		if ((seen & 1) == side->parity)
			atomic_store_explicit(&side->shared->turn, seen + 1,
					      memory_order_release);
	}
	return NULL;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static struct shared shared;
	struct side other = { .shared = &shared, .parity = 1 };
	int cpu = argc > 2 ? atoi(argv[1]) : 0;
	double seconds = argc > 3 ? atof(argv[3]) : 2.0;
	double *rounds = NULL, start, end;
	pthread_t thread;
	int n = 0, ret = 1;
	long i, seen;

	other.cpu = argc > 2 ? atoi(argv[2]) : 1;
	rounds = calloc(MAX_ROUNDS, sizeof(*rounds));
	if (!rounds || pin(cpu)) {
		fprintf(stderr, "cannot pin to CPU %d\n", cpu);
		goto cleanup;
	}
	if (pthread_create(&thread, NULL, answer, &other)) {
		fprintf(stderr, "cannot start the second thread\n");
		goto cleanup;
	}
	end = now_ns() + seconds * 1e9;
	while (n < MAX_ROUNDS && now_ns() < end) {
		start = now_ns();
		for (i = 0; i < ROUND_TRIPS; i++) {
			/* even values are ours to advance, odd ones the other's */
			do
				seen = atomic_load_explicit(&shared.turn, memory_order_acquire);
			while (seen & 1);
			atomic_store_explicit(&shared.turn, seen + 1, memory_order_release);
		}
		rounds[n++] = (now_ns() - start) / ROUND_TRIPS / 2;
	}
	atomic_store(&shared.stop, 1);
	pthread_join(thread, NULL);
	if (other.error) {
		fprintf(stderr, "cannot pin to CPU %d\n", other.cpu);
		goto cleanup;
	}
	qsort(rounds, n, sizeof(*rounds), compare_doubles);
	printf("CPU %d <-> CPU %d: one-way %.1f ns median, %.1f ns p10, %.1f ns p90 "
	       "(%d rounds of %d round trips)\n", cpu, other.cpu, rounds[n / 2],
	       rounds[n / 10], rounds[n * 9 / 10], n, ROUND_TRIPS);
	ret = 0;
cleanup:
	free(rounds);
	return ret;
}
