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

/* The calls run as BPF_LOOP_OUTER passes of BPF_LOOP_INNER unrolled calls
 * (see bpf/bpf_loop.bpf.c for why). */
#define BPF_LOOP_OUTER 40
#define BPF_LOOP_INNER (BPF_LOOP_CALLS_PER_EVENT / BPF_LOOP_OUTER)

/*
 * Most iterations one event runs while it still makes all its passes.
 * An event runs with preemption off: 1000 calls of 1 << 23 iterations
 * would hold a CPU for tens of seconds (soft lockups, RCU stalls), so
 * above this budget an event makes fewer passes, at least one.  The
 * per-iteration figure does not change; nr_loops up to 134217 keeps the
 * kernel bench's 1000 calls.
 */
#define BPF_LOOP_EVENT_BUDGET (1ull << 27)

#endif /* BENCHBPF_BPF_LOOP_H */
