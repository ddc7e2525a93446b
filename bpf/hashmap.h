/* SPDX-License-Identifier: MIT */
/* hashmap: layouts and limits shared by bpf/hashmap.bpf.c and csrc/bench_hashmap.c. */
#ifndef BENCHBPF_HASHMAP_H
#define BENCHBPF_HASHMAP_H

/* The largest key bpf-hashmap-lookup takes, as the kernel bench's. */
#define HASHMAP_MAX_KEY_SIZE 1024
/* The most iterations one bpf_loop() call accepts (the kernel's BPF_MAX_LOOPS). */
#define HASHMAP_MAX_LOOPS (1 << 23)

/* bpf-hashmap-full-update: the kernel bench's map and updates per event. */
#define HASHMAP_FULL_MAX_ENTRIES 1000
#define HASHMAP_FULL_NR_LOOPS 10000

/*
 * Timed runs are kept per CPU in a ring of HASHMAP_NR_SLOTS that user space
 * drains every sampling interval.  A run is at least the floor long (1 ms at
 * least), so a ring holds at least HASHMAP_NR_SLOTS ms: user space refuses
 * intervals longer than that.
 */
#define HASHMAP_NR_SLOTS 4096

/* One kept sample: consecutive timed events of one CPU, added up. */
struct hashmap_run {
	__u64 time_ns;		/* BPF-timed, bpf_ktime_get_ns() around the work */
	__u64 ops;		/* lookups (updates) done in that time */
};

/* Per CPU: where the next run goes, and the events not yet a run. */
struct hashmap_cpu {
	__u64 runs;		/* runs finished so far; slot = runs % NR_SLOTS */
	__u64 acc_ns;		/* events timed since the last run */
	__u64 acc_ops;
	__u64 misses;		/* lookups that found nothing (fails the run) */
	__u64 events;		/* timed events, all */
};

#endif /* BENCHBPF_HASHMAP_H */
