// SPDX-License-Identifier: MIT
/*
 * bpf-nop: the empty BPF-timed loop (bpf/bpf_nop.bpf.c), the baseline of
 * BPF-side timing.  Producers run the syscall program through
 * BPF_PROG_TEST_RUN, one calibrated batch (~10 ms) per run; the batches
 * are the result's samples (csrc/bpf_timing_user.c).  No consumer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bpf_timing_user.h"
#include "bpf_nop.skel.h"

struct bpf_nop_state {
	struct bpf_nop_bpf *skel;
	struct bench_bpf_timing timing;
	int prog_fd;
};

static const char *const bpf_nop_extra[] = { BENCH_BPF_TIMING_EXTRA, NULL };

static int run_once(void *arg)
{
	struct bpf_nop_state *st = arg;
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	return bpf_prog_test_run_opts(st->prog_fd, &opts) ? -errno : 0;
}

static int bpf_nop_setup(struct bench_ctx *ctx)
{
	struct bpf_nop_state *st;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	err = bench_bpf_timing_require(ctx);
	if (err)
		return err;
	st->skel = bpf_nop_bpf__open();
	if (!st->skel)
		return bench_fail_bpf(ctx, -errno, "the bpf-nop program", "opening the BPF object");
	err = bpf_nop_bpf__load(st->skel);
	if (err)
		return bench_fail_bpf(ctx, err, "a syscall program looping with may_goto",
				      "loading the bpf-nop program");
	st->prog_fd = bpf_program__fd(st->skel->progs.bpf_nop);
	BENCH_BPF_TIMING_INIT(&st->timing, st->skel);
	err = bench_bpf_timing_calibrate(ctx, &st->timing, run_once, st);
	if (!err)
		bench_bpf_timing_start(ctx, &st->timing);
	return err;
}

static int bpf_nop_producer(struct bench_ctx *ctx, int idx)
{
	struct bpf_nop_state *st = ctx->priv;
	int err = 0;

	(void)idx;
	while (!err && !bench_stopping(ctx))
		err = run_once(st);
	return err;
}

static void bpf_nop_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct bpf_nop_state *st = ctx->priv;

	bench_bpf_timing_measure(ctx, &st->timing, s, 0);
}

static int bpf_nop_collect(struct bench_ctx *ctx)
{
	struct bpf_nop_state *st = ctx->priv;

	return bench_bpf_timing_collect(ctx, &st->timing);
}

static void bpf_nop_teardown(struct bench_ctx *ctx)
{
	struct bpf_nop_state *st = ctx->priv;

	if (!st)
		return;
	bpf_nop_bpf__destroy(st->skel);
	bench_bpf_timing_free(&st->timing);
	free(st);
	ctx->priv = NULL;
}

const struct bench bench_bpf_nop = {
	.name = "bpf-nop",
	.needs = { "may_goto" },
	.family = "bpf_nop",
	.report = "bpf_timing",
	.help = "the empty BPF-timed loop, run by BPF_PROG_TEST_RUN: the floor of "
		"BPF-side timing (ns/op of calibrated ~10 ms batches)",
	.extra = bpf_nop_extra,
	.max_consumers = 0,
	.setup = bpf_nop_setup,
	.producer = bpf_nop_producer,
	.measure = bpf_nop_measure,
	.collect = bpf_nop_collect,
	.teardown = bpf_nop_teardown,
};

BENCH_REGISTER(bench_bpf_nop);
