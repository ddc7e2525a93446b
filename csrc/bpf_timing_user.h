/* SPDX-License-Identifier: MIT */
/*
 * BPF-side timing, user side (csrc/bpf_timing_user.c; BPF side
 * bpf/bpf_timing.bpf.h): the kernel bench's bench_bpf_timing, as one
 * implementation every BPF-timed family uses.
 *
 * A family whose program body is BPF_TIMING_LOOP(...):
 *   setup:    load the skeleton, bench_bpf_timing_init(&st->timing, skel
 *             .bss arrays) (BENCH_BPF_TIMING_INIT(&st->timing, skel)), then
 *             bench_bpf_timing_calibrate(ctx, &st->timing, run_once, arg)
 *             (or bench_bpf_timing_fixed()) before any producer runs, and
 *             last bench_bpf_timing_start(ctx, &st->timing);
 *   producer: run the program until bench_stopping(ctx);
 *   measure:  bench_bpf_timing_measure(ctx, &st->timing, s): turns timing
 *             on at the end of warm-up, reads the new batches, and ends the
 *             run (no error) once every producer has BPF_TIMING_TARGET_SAMPLES;
 *   collect:  bench_bpf_timing_collect(ctx, &st->timing): the batches as
 *             series "bpf_timing.*", which the Python runner turns into
 *             the Result's samples (benchbpf/bpf_timing.py);
 *   teardown: bench_bpf_timing_free(&st->timing).
 * Extra counters of the interval samples: BENCH_BPF_TIMING_EXTRA.
 */
#ifndef BENCHBPF_BPF_TIMING_USER_H
#define BENCHBPF_BPF_TIMING_USER_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "bench.h"
#include "bpf_timing.h"

/* One program run (one BPF_PROG_TEST_RUN of the timed program): 0 or -errno. */
typedef int (*bench_bpf_run_fn)(void *arg);

struct bench_bpf_timing {
	/* The skeleton's .bss: */
	__u64 (*samples)[BPF_TIMING_NR_SAMPLES];
	__u32 *idx;
	__u32 *short_batches;
	volatile __u32 *enabled;
	volatile __u32 *batch_iters_bss;

	/* Calibration (metadata): */
	__u32 batch_iters;
	uint64_t seed_ns;	/* median batch of CALIBRATE_SEED iterations */
	uint64_t n_ns;		/* median batch of batch_iters */
	uint64_t n2_ns;		/* median batch of 2 * batch_iters */
	bool defaulted;		/* no seed batch came back: batch_iters default */
	bool fixed;		/* batch_iters set by the family, not calibrated */

	/* Batches read so far, in the order read: */
	__u32 seen[BPF_TIMING_NR_CPUS];
	struct bench_values batch_ns;
	struct bench_values batch_cpu;
	uint32_t target;	/* producers * BPF_TIMING_TARGET_SAMPLES */
	bool done;		/* reached target: the run was ended */
};

/* Interval counters: batches read, BPF-timed ns in them.  Names for .extra. */
#define BENCH_BPF_TIMING_EXTRA "batches", "timed_ns"

#define BENCH_BPF_TIMING_INIT(t, skel)					\
	bench_bpf_timing_init((t), (skel)->bss->timing_samples,		\
			      (skel)->bss->timing_idx,			\
			      (skel)->bss->timing_short,		\
			      &(skel)->bss->timing_enabled,		\
			      &(skel)->bss->batch_iters)

/* Before loading: the timed loop's may_goto, as features() probes it (an
 * older kernel is then "unsupported", not a verifier failure). */
int bench_bpf_timing_require(struct bench_ctx *ctx);

void bench_bpf_timing_init(struct bench_bpf_timing *t,
			   __u64 (*samples)[BPF_TIMING_NR_SAMPLES], __u32 *idx,
			   __u32 *short_batches, volatile __u32 *enabled,
			   volatile __u32 *batch_iters);
/* Single-threaded, before the producers start.  0 or the error recorded.
 * Timing stays off: runs the family makes afterwards (e.g. to validate
 * what the program does) are not batches. */
int bench_bpf_timing_calibrate(struct bench_ctx *ctx, struct bench_bpf_timing *t,
			       bench_bpf_run_fn run, void *arg);
/* Instead of calibrating: a batch size the benchmark prescribes. */
void bench_bpf_timing_fixed(struct bench_bpf_timing *t, __u32 iters);
/* Last step of setup: batches count from the end of warm-up (now without). */
void bench_bpf_timing_start(struct bench_ctx *ctx, struct bench_bpf_timing *t);
/* From the family's measure(); extra[0..1] as BENCH_BPF_TIMING_EXTRA. */
void bench_bpf_timing_measure(struct bench_ctx *ctx, struct bench_bpf_timing *t,
			      struct bench_sample *s, int extra_at);
int bench_bpf_timing_collect(struct bench_ctx *ctx, struct bench_bpf_timing *t);
void bench_bpf_timing_free(struct bench_bpf_timing *t);

#endif /* BENCHBPF_BPF_TIMING_USER_H */
