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
} __attribute__((aligned(128)));

#endif /* BENCHBPF_SELFTEST_H */
