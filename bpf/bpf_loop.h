/* SPDX-License-Identifier: MIT */
/* bpf-loop: constants shared by bpf/bpf_loop.bpf.c and csrc/bench_bpf_loop.c. */
#ifndef BENCHBPF_BPF_LOOP_H
#define BENCHBPF_BPF_LOOP_H

/* The most iterations one bpf_loop() call accepts: the kernel's
 * BPF_MAX_LOOPS (1 << 23 since the helper exists); above it the helper
 * returns -E2BIG without running the callback. */
#define BPF_LOOP_MAX_LOOPS (1 << 23)

/* bpf_loop() calls per getpgid() event, as the kernel bench makes. */
#define BPF_LOOP_CALLS_PER_EVENT 1000

/*
 * Most iterations one event runs while it still makes all its calls.
 * An event runs with preemption off: 1000 calls of 1 << 23 iterations
 * would hold a CPU for tens of seconds (soft lockups, RCU stalls), so
 * above this budget an event makes fewer calls, at least one.  The
 * per-iteration figure does not change; nr_loops up to 134217 keeps the
 * kernel bench's 1000 calls.
 */
#define BPF_LOOP_EVENT_BUDGET (1ull << 27)

/*
 * bpf-for's budget: a bpf_for() iteration (a kfunc call) costs ~10x a
 * bpf_loop() one, so events stay as short with 1 << 24 (nr_loops up to
 * 16777 keeps the 1000 calls).
 */
#define BPF_FOR_EVENT_BUDGET (1ull << 24)

/* bpf_loop() calls an event makes: all BPF_LOOP_CALLS_PER_EVENT unless
 * that would exceed `budget` iterations, at least 1 (bpf-loop and bpf-for). */
static inline unsigned int bpf_loop_calls_per_event(unsigned long long nr_loops,
						    unsigned long long budget)
{
	unsigned long long calls = budget / nr_loops;

	if (calls < 1)
		return 1;
	return calls > BPF_LOOP_CALLS_PER_EVENT ? BPF_LOOP_CALLS_PER_EVENT : (unsigned int)calls;
}

#endif /* BENCHBPF_BPF_LOOP_H */
