// SPDX-License-Identifier: MIT
/*
 * bpf-for: the cost of one iteration of bpf_for(), the open-coded numeric
 * iterator (bpf/bpf_for.bpf.c), the kernel bench's bench_bpf_for.c.
 *
 * Producers call getpgid() in a loop; on each call a BPF program makes
 * bpf_loop(1000, ...) calls of a callback that loops nr_loops times with
 * bpf_for() over an empty body and adds nr_loops to hits.  The report is
 * the kernel bench's "ops" summary (M iterations/s, ns per iteration).
 *
 * As bpf-loop (csrc/bench_bpf_loop.c), and for the same reasons: nr_loops
 * is what the iterator accepts (1 .. 1 << 23: bpf_iter_num_new() refuses a
 * longer range, and the loop would count iterations that never ran); an
 * event makes fewer than 1000 outer calls when 1000 x nr_loops would pass
 * BPF_LOOP_EVENT_BUDGET (nr_loops above 134217), so that one event does not
 * hold its CPU with preemption off for seconds; the producers fire from
 * fentry on getpgid() where the kernel allows it (the kernel bench's), else
 * from the syscalls/sys_enter_getpgid tracepoint; only this process's calls
 * count.  No consumer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bpf_loop.h"
#include "bpf_for.skel.h"

struct bpf_for_state {
	struct bench_producer producer;
};

static const struct bench_param_def bpf_for_params[] = {
	{ "nr_loops", "--nr_loops", BENCH_PARAM_INT, 1000, 1, BPF_LOOP_MAX_LOOPS, NULL,
	  "iterations of each bpf_for() loop (the iterator accepts at most 1 << 23)" },
	BENCH_TRIGGER_PARAM("the loops"),
	{ 0 },
};

BENCH_SKELETON_CALLBACKS(bpf_for)
BENCH_SKELETON_PROGRAM(bpf_for, bpf_for)

static int bpf_for_configure(struct bench_ctx *ctx, void *skel)
{
	struct bpf_for_bpf *s = skel;

	s->bss->nr_loops = (int)bench_param(ctx, "nr_loops");
	s->rodata->calls_per_event = bpf_loop_calls_per_event(bench_param(ctx, "nr_loops"),
							      BPF_FOR_EVENT_BUDGET);
	return 0;
}

static const struct bench_producer_ops bpf_for_producer = {
	BENCH_SKELETON_OPS(bpf_for),
	.what = "the bpf_for program",
	.configure = bpf_for_configure,
	.program = bpf_for_skel_program,
};

static int bpf_for_setup(struct bench_ctx *ctx)
{
	struct bpf_for_state *st;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	/* bpf_for() needs the bpf_iter_num kfuncs: without them the verifier
	 * refuses the program, which is the kernel's lack, not a failure. */
	err = bench_require_feature(ctx, "bpf_iter_num", "programs looping with bpf_for()",
				    "bpf_for() needs the bpf_iter_num kfuncs, which this kernel "
				    "does not have");
	if (err)
		return err;
	return bench_producer_start(ctx, &bpf_for_producer, &st->producer);
}

static void bpf_for_teardown(struct bench_ctx *ctx)
{
	struct bpf_for_state *st = ctx->priv;

	if (!st)
		return;
	bench_producer_destroy(&st->producer);
	free(st);
	ctx->priv = NULL;
}

static void bpf_for_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct bpf_for_state *st = ctx->priv;
	struct bpf_for_bpf *skel = st->producer.skel;

	s->hits = __atomic_exchange_n(&skel->bss->hits, 0, __ATOMIC_RELAXED);
}

const struct bench bench_bpf_for = {
	.name = "bpf-for",
	.needs = { "bpf_iter_num", "bpf_loop", "tracepoint" },
	.family = "bpf_for",
	.report = "ops",
	.help = "bpf_for() iterations (open-coded numeric iterator) of an empty body, "
		"1000 loops of nr_loops per getpgid() (M ops/s, ns/op)",
	.params = bpf_for_params,
	.max_consumers = 0,
	.setup = bpf_for_setup,
	.producer = bench_getpgid_producer,
	.measure = bpf_for_measure,
	.teardown = bpf_for_teardown,
};

BENCH_REGISTER(bench_bpf_for);
