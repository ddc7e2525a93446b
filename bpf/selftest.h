/* SPDX-License-Identifier: MIT */
/* Layout shared by bpf/selftest.bpf.c and csrc/bench_selftest.c. */
#ifndef BENCHBPF_SELFTEST_H
#define BENCHBPF_SELFTEST_H

/* One counter slot per CPU (cpu & SELFTEST_SLOT_MASK), each on its own
 * 128-byte line; user space swaps every slot to zero once per sample. */
#define SELFTEST_NR_SLOTS 256
#define SELFTEST_SLOT_MASK (SELFTEST_NR_SLOTS - 1)

struct selftest_slot {
	unsigned long long value;
	/* Where the bpf_work steps leave their result, so that they are not
	 * optimised away; never read. */
	unsigned long long sink;
	/* bpf_work_every: counted hits since the last one that worked, and
	 * the hits that ran the steps (read, never reset, by user space). */
	unsigned long long tick;
	unsigned long long worked;
} __attribute__((aligned(128)));

/* bpf_work's upper bound: the verifier walks every step of the loop once,
 * and this many steps stay well inside its instruction budget. */
#define SELFTEST_MAX_WORK 20000
/* bpf_work_every's upper bound. */
#define SELFTEST_MAX_WORK_EVERY 1000

#endif /* BENCHBPF_SELFTEST_H */
