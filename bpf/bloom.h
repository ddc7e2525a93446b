/* SPDX-License-Identifier: MIT */
/* Layout shared by bpf/bloom.bpf.c and csrc/bench_bloom.c. */
#ifndef BENCHBPF_BLOOM_H
#define BENCHBPF_BLOOM_H

/*
 * Counters: one slot per CPU (cpu & BLOOM_SLOT_MASK), each slot on its own
 * 256-byte stretch of percpu_stats[], BLOOM_SLOT_WORDS 64-bit words apart.
 * BPF adds to its CPU's slot without atomics; user space only reads them
 * and keeps the previous totals to take differences.
 */
#define BLOOM_NR_SLOTS		256
#define BLOOM_SLOT_MASK		(BLOOM_NR_SLOTS - 1)
#define BLOOM_SLOT_WORDS	32		/* 256 bytes */

#define BLOOM_HIT		0
#define BLOOM_DROP		1
#define BLOOM_FALSE_HIT		2
#define BLOOM_NR_COUNTERS	3

/*
 * Random bytes the hashmap lookups read their keys from, filled by user
 * space before attaching.  Offsets are drawn below BLOOM_RAND_SPAN, so a
 * key of up to BLOOM_MAX_VALUE_SIZE bytes always lies inside.
 */
#define BLOOM_RAND_BYTES	2500000
#define BLOOM_RAND_SPAN		(1u << 21)
#define BLOOM_MAX_VALUE_SIZE	256

/* Lookups per hashmap-* program run. */
#define BLOOM_LOOKUPS_PER_RUN	1024

/* Bits of `error`: what failed in BPF (the errno is in error_errno). */
#define BLOOM_ERR_ITER		1	/* a push/peek while walking the array */
#define BLOOM_ERR_PEEK		2	/* a bloom peek before a hashmap lookup */

#endif /* BENCHBPF_BLOOM_H */
