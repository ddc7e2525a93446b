// SPDX-License-Identifier: MIT
/*
 * BPF-side timing, user side: calibration, reading the batches each
 * interval, the stop once every producer has its batches, and handing them
 * to the result (csrc/bpf_timing_user.h says how a family uses it).
 *
 * As the kernel bench's bench_bpf_timing.c: batches are calibrated to
 * about 10 ms (a seed batch of 100 iterations, then batch_iters = 10 ms /
 * ns per iteration, clamped to 100 .. 10^7; 10000 when no seed batch came
 * back), with a proportionality check (the median of 5 batches of 2N
 * iterations against 5 of N, a warning past 5 %); timing starts at the end
 * of warm-up and the run ends once producers * 200 batches are in.
 * Statistics (IQR filter, median, p99, ...) are computed from the batches
 * in Python (benchbpf/bpf_timing.py), beside the unfiltered ones.
 *
 * Differences, on purpose: ns per iteration of the seed batch is computed
 * without rounding down (the kernel bench's integer division makes it 0 for
 * anything under 1 ns, which gives 100-iteration batches of a few hundred
 * ns); a batch cut short by may_goto fails the run instead of being divided
 * by iterations that never ran; the calibration figures are kept.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_timing_user.h"

#define CALIBRATE_SEED_BATCH 100
#define CALIBRATE_MIN_BATCH 100
#define CALIBRATE_MAX_BATCH 10000000
#define CALIBRATE_TARGET_NS 10000000ull
#define CALIBRATE_RUNS 5
#define CALIBRATE_DEFAULT_BATCH 10000

int bench_bpf_timing_require(struct bench_ctx *ctx)
{
	return bench_require_feature(ctx, "may_goto", "BPF programs looping with may_goto",
				     "BPF-timed batches loop with may_goto, which this kernel "
				     "does not have");
}

void bench_bpf_timing_init(struct bench_bpf_timing *t,
			   __u64 (*samples)[BPF_TIMING_NR_SAMPLES], __u32 *idx,
			   __u32 *short_batches, volatile __u32 *enabled,
			   volatile __u32 *batch_iters)
{
	memset(t, 0, sizeof(*t));
	t->samples = samples;
	t->idx = idx;
	t->short_batches = short_batches;
	t->enabled = enabled;
	t->batch_iters_bss = batch_iters;
}

static void timing_reset(struct bench_bpf_timing *t)
{
	*t->enabled = 0;
	memset(t->samples, 0, sizeof(__u64) * BPF_TIMING_NR_CPUS * BPF_TIMING_NR_SAMPLES);
	memset(t->idx, 0, sizeof(__u32) * BPF_TIMING_NR_CPUS);
	memset(t->short_batches, 0, sizeof(__u32) * BPF_TIMING_NR_CPUS);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The median of CALIBRATE_RUNS batches of `iters` (0: none came back). */
static int median_batch(struct bench_bpf_timing *t, bench_bpf_run_fn run, void *arg,
			__u32 iters, uint64_t *median)
{
	uint64_t buf[CALIBRATE_RUNS];
	int n = 0, i, err = 0;
	__u32 j, cnt;

	timing_reset(t);
	*t->batch_iters_bss = iters;
	*t->enabled = 1;
	for (i = 0; i < CALIBRATE_RUNS && !err; i++)
		err = run(arg);
	*t->enabled = 0;
	for (i = 0; i < BPF_TIMING_NR_CPUS && n < CALIBRATE_RUNS; i++) {
		cnt = t->idx[i];
		for (j = 0; j < cnt && n < CALIBRATE_RUNS; j++)
			buf[n++] = t->samples[i][j];
	}
	qsort(buf, n, sizeof(buf[0]), cmp_u64);
	*median = n ? buf[n / 2] : 0;
	return err;
}

int bench_bpf_timing_calibrate(struct bench_ctx *ctx, struct bench_bpf_timing *t,
			       bench_bpf_run_fn run, void *arg)
{
	uint64_t iters;
	int err;

	err = median_batch(t, run, arg, CALIBRATE_SEED_BATCH, &t->seed_ns);
	if (err)
		goto fail;
	if (!t->seed_ns) {
		t->defaulted = true;
		t->batch_iters = CALIBRATE_DEFAULT_BATCH;
	} else {
		iters = CALIBRATE_TARGET_NS * CALIBRATE_SEED_BATCH / t->seed_ns;
		if (iters < CALIBRATE_MIN_BATCH)
			iters = CALIBRATE_MIN_BATCH;
		if (iters > CALIBRATE_MAX_BATCH)
			iters = CALIBRATE_MAX_BATCH;
		t->batch_iters = (__u32)iters;
		err = median_batch(t, run, arg, t->batch_iters, &t->n_ns);
		if (!err)
			err = median_batch(t, run, arg, t->batch_iters * 2, &t->n2_ns);
		if (err)
			goto fail;
	}
	timing_reset(t);
	*t->batch_iters_bss = t->batch_iters;
	return 0;
fail:
	return bench_fail(ctx, BENCH_ERR_BENCH, -err,
			  "%s: calibrating the BPF-timed batches: running the program failed: %s",
			  ctx->bench->name, strerror(-err));
}

void bench_bpf_timing_fixed(struct bench_bpf_timing *t, __u32 iters)
{
	timing_reset(t);
	t->fixed = true;
	t->batch_iters = iters;
	*t->batch_iters_bss = iters;
}

void bench_bpf_timing_start(struct bench_ctx *ctx, struct bench_bpf_timing *t)
{
	timing_reset(t);
	t->target = (uint32_t)ctx->env.producer_cnt * BPF_TIMING_TARGET_SAMPLES;
	/* Without warm-up, batches count from the first one. */
	*t->enabled = ctx->env.warmup_samples == 0;
}

static int keep(struct bench_bpf_timing *t, double ns, double cpu)
{
	return bench_values_push(&t->batch_ns, ns) ?: bench_values_push(&t->batch_cpu, cpu);
}

void bench_bpf_timing_measure(struct bench_ctx *ctx, struct bench_bpf_timing *t,
			      struct bench_sample *s, int extra_at)
{
	int warmup = ctx->env.warmup_samples, k = ctx->nr_samples, cpu;
	uint64_t short_batches = 0;
	__u32 cnt, j;

	if (t->done || k + 1 < warmup)
		return;
	if (k + 1 == warmup) {
		/* Warm-up is over: batches from now on count. */
		*t->enabled = 1;
		return;
	}
	for (cpu = 0; cpu < BPF_TIMING_NR_CPUS; cpu++) {
		cnt = __atomic_load_n(&t->idx[cpu], __ATOMIC_ACQUIRE);
		if (cnt > BPF_TIMING_NR_SAMPLES)
			cnt = BPF_TIMING_NR_SAMPLES;
		for (j = t->seen[cpu]; j < cnt; j++) {
			__u64 ns = t->samples[cpu][j];

			if (!ns)	/* as the kernel bench: a zero is no sample */
				continue;
			if (keep(t, (double)ns, cpu)) {
				bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "keeping timed batches");
				return;
			}
			s->hits += t->batch_iters;
			s->extra[extra_at]++;
			s->extra[extra_at + 1] += ns;
		}
		t->seen[cpu] = cnt;
		short_batches += t->short_batches[cpu];
	}
	if (short_batches) {
		bench_fail(ctx, BENCH_ERR_BENCH, E2BIG,
			   "%s: %llu timed batches stopped before their %u iterations (the "
			   "kernel's may_goto limit ended the loop); their time would be "
			   "divided by iterations that never ran",
			   ctx->bench->name, (unsigned long long)short_batches, t->batch_iters);
		return;
	}
	if ((uint32_t)t->batch_ns.len >= t->target) {
		*t->enabled = 0;
		t->done = true;
		bench_request_stop(ctx);	/* ends the run, not an error */
	}
}

int bench_bpf_timing_collect(struct bench_ctx *ctx, struct bench_bpf_timing *t)
{
	double calibration[] = {
		CALIBRATE_SEED_BATCH, (double)t->seed_ns, t->batch_iters, (double)t->n_ns,
		(double)t->n2_ns, t->defaulted, t->target, t->fixed,
	};
	int err;

	err = bench_series_add(ctx, "bpf_timing.batch_ns", t->batch_ns.v, t->batch_ns.len);
	if (!err)
		err = bench_series_add(ctx, "bpf_timing.batch_cpu", t->batch_cpu.v, t->batch_cpu.len);
	if (!err)
		err = bench_series_add(ctx, "bpf_timing.calibration", calibration,
				       sizeof(calibration) / sizeof(calibration[0]));
	if (err)
		return bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "keeping timed batches");
	bench_note(ctx, "bpf_timing_stopped_by", "%s", t->done ? "samples" : "duration");
	return 0;
}

void bench_bpf_timing_free(struct bench_bpf_timing *t)
{
	bench_values_free(&t->batch_ns);
	bench_values_free(&t->batch_cpu);
}
