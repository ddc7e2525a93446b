// SPDX-License-Identifier: MIT
/*
 * bpf-loop: the cost of one iteration of the bpf_loop() helper.
 *
 * Producers call getpgid() in a loop; on each call a BPF program makes
 * BPF_LOOP_CALLS_PER_EVENT bpf_loop() calls of nr_loops iterations of an
 * empty callback, from the callback of an outer bpf_loop() as the kernel
 * bench does (bpf/bpf_loop.bpf.c).  A hit is one callback iteration,
 * so the figure is M iterations/s and the report is the kernel bench's
 * "ops" summary (throughput and ns/op).
 *
 * Differences from the kernel bench, all deliberate:
 * - nr_loops is limited to what bpf_loop() accepts (1 .. 1 << 23) and
 *   checked before anything is loaded.  The kernel bench takes any value
 *   and, above the limit, counts loops the helper refused to run.
 * - Each bpf_loop() call adds nr_loops to hits, as the kernel bench's, and
 *   every sample checks that the program's nr_loops (writable memory) is
 *   still one the helper accepts: else its calls fail and the run does.
 *   count_returned=True adds the iterations the helper reports done
 *   instead and counts a failed call apart (extra counter loop_errors),
 *   which fails the run: a test of what each call returns, which the
 *   kernel bench's loop does not make.  The return value is read as 32
 *   bits, because where the verifier inlines bpf_loop() (recent kernels)
 *   it returns -E2BIG zero-extended, a large positive number.
 * - Each getpgid() makes the kernel bench's 1000 bpf_loop() calls while
 *   that is at most BPF_LOOP_EVENT_BUDGET (2^27) iterations, i.e. for
 *   nr_loops up to 134217; above, fewer (at least one), so that one event
 *   never holds its CPU for many seconds with preemption off.  The
 *   per-iteration figure is the same.
 * - Producers fire from fentry on the syscall when the kernel allows it,
 *   else from the syscalls/sys_enter_getpgid tracepoint (param trigger).
 * - Only this process's getpgid() calls run the loops, so that other
 *   processes calling getpgid() add nothing.
 * - No consumer thread: the kernel bench's does nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bpf_loop.h"
#include "bpf_loop.skel.h"

struct bpf_loop_state {
	struct bench_producer producer;
	struct bpf_loop_bpf *skel;	/* producer.skel, typed */
};

static const struct bench_param_def bpf_loop_params[] = {
	{ "nr_loops", "--nr_loops", BENCH_PARAM_INT, 10, 1, BPF_LOOP_MAX_LOOPS, NULL,
	  "iterations of each bpf_loop() call (the helper accepts at most 1 << 23)" },
	{ "count_returned", NULL, BENCH_PARAM_BOOL, 0, 0, 1, NULL,
	  "hits add the iterations each bpf_loop() call reports done, and a failed "
	  "call is counted (loop_errors) and fails the run; default: nr_loops per "
	  "call, as the kernel bench counts" },
	BENCH_TRIGGER_PARAM("the loops"),
	{ 0 },
};

/* loop_errors: bpf_loop() calls the helper refused (count_returned only);
 * any fails the run. */
static const char *const bpf_loop_extra[] = { "loop_errors", NULL };

BENCH_SKELETON_CALLBACKS(bpf_loop)

static struct bpf_program *bpf_loop_skel_program(struct bench_ctx *ctx, void *skel, bool fentry)
{
	struct bpf_loop_bpf *s = skel;

	if (bench_param(ctx, "count_returned"))
		return fentry ? s->progs.bpf_loop_returned_fentry : s->progs.bpf_loop_returned_tp;
	return fentry ? s->progs.bpf_loop_fentry : s->progs.bpf_loop_tp;
}

static int bpf_loop_configure(struct bench_ctx *ctx, void *skel)
{
	struct bpf_loop_bpf *s = skel;

	s->bss->nr_loops = (__u32)bench_param(ctx, "nr_loops");
	s->rodata->calls_per_event = bpf_loop_calls_per_event(bench_param(ctx, "nr_loops"),
							      BPF_LOOP_EVENT_BUDGET);
	return 0;
}

static const struct bench_producer_ops bpf_loop_producer = {
	BENCH_SKELETON_OPS(bpf_loop),
	.what = "the bpf_loop program",
	.configure = bpf_loop_configure,
	.program = bpf_loop_skel_program,
};

static int bpf_loop_setup(struct bench_ctx *ctx)
{
	struct bpf_loop_state *st;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	err = bench_producer_start(ctx, &bpf_loop_producer, &st->producer);
	st->skel = st->producer.skel;
	return err;
}

static void bpf_loop_teardown(struct bench_ctx *ctx)
{
	struct bpf_loop_state *st = ctx->priv;

	if (!st)
		return;
	bench_producer_destroy(&st->producer);
	free(st);
	ctx->priv = NULL;
}

static void bpf_loop_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct bpf_loop_state *st = ctx->priv;
	long *hits = &st->skel->bss->hits;
	long *errors = &st->skel->bss->loop_errors;
	__u32 nr = __atomic_load_n(&st->skel->bss->nr_loops, __ATOMIC_RELAXED);
	long last;

	s->hits = __atomic_exchange_n(hits, 0, __ATOMIC_RELAXED);
	s->extra[0] = __atomic_exchange_n(errors, 0, __ATOMIC_RELAXED);
	/* Counting nr_loops per call: the one way a call fails is an nr_loops
	 * past the helper's limit, written over the program's memory. */
	if (!bench_param(ctx, "count_returned") && nr > BPF_LOOP_MAX_LOOPS) {
		bench_fail(ctx, BENCH_ERR_BENCH, E2BIG,
			   "%s: bpf_loop() failed: the program's nr_loops=%u is more than the "
			   "helper accepts (%d), every call fails with E2BIG; the run is void, "
			   "its throughput would count loops that never ran",
			   ctx->bench->name, nr, BPF_LOOP_MAX_LOOPS);
		return;
	}
	if (!s->extra[0])
		return;
	last = __atomic_load_n(&st->skel->bss->last_error, __ATOMIC_RELAXED);
	bench_fail(ctx, BENCH_ERR_BENCH, last < 0 ? (int)-last : EINVAL,
		   "%s: bpf_loop() failed %llu times with nr_loops=%u: %s (%s); "
		   "the run is void, its throughput would count loops that never ran",
		   ctx->bench->name, (unsigned long long)s->extra[0],
		   __atomic_load_n(&st->skel->bss->nr_loops, __ATOMIC_RELAXED),
		   bench_errno_name((int)last), strerror(last < 0 ? (int)-last : EINVAL));
}

const struct bench bench_bpf_loop = {
	.name = "bpf-loop",
	.needs = { "bpf_loop", "tracepoint" },
	.family = "bpf_loop",
	.report = "ops",
	.help = "bpf_loop() iterations of an empty callback, 1000 calls of nr_loops "
		"per getpgid() (M ops/s, ns/op)",
	.params = bpf_loop_params,
	.extra = bpf_loop_extra,
	.max_consumers = 0,
	.setup = bpf_loop_setup,
	.producer = bench_getpgid_producer,
	.measure = bpf_loop_measure,
	.teardown = bpf_loop_teardown,
};

BENCH_REGISTER(bench_bpf_loop);
