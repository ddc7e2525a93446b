// SPDX-License-Identifier: MIT
/*
 * count-global / count-local: no BPF at all.  Producers bump counters in a
 * tight loop, so the figure is the ceiling of the harness itself.
 */
#include <errno.h>
#include <stdlib.h>

#include "bench.h"

/* One counter per cache line, so count-local producers never share one. */
struct padded_counter {
	_Alignas(128) atomic_ullong value;
};

struct count_state {
	struct padded_counter global;
	struct padded_counter *local;	/* one per producer */
};

static int count_setup(struct bench_ctx *ctx)
{
	struct count_state *st;

	st = aligned_alloc(128, sizeof(*st));
	if (!st)
		return -ENOMEM;
	atomic_init(&st->global.value, 0);
	st->local = aligned_alloc(128, sizeof(*st->local) * ctx->env.producer_cnt);
	ctx->priv = st;
	if (!st->local)
		return -ENOMEM;
	for (int i = 0; i < ctx->env.producer_cnt; i++)
		atomic_init(&st->local[i].value, 0);
	return 0;
}

static void count_teardown(struct bench_ctx *ctx)
{
	struct count_state *st = ctx->priv;

	if (!st)
		return;
	free(st->local);
	free(st);
	ctx->priv = NULL;
}

static int count_global_producer(struct bench_ctx *ctx, int idx)
{
	struct count_state *st = ctx->priv;

	(void)idx;
	while (!bench_stopping(ctx))
		atomic_fetch_add(&st->global.value, 1);
	return 0;
}

static int count_local_producer(struct bench_ctx *ctx, int idx)
{
	atomic_ullong *mine = &((struct count_state *)ctx->priv)->local[idx].value;

	while (!bench_stopping(ctx))
		atomic_fetch_add(mine, 1);
	return 0;
}

static void count_global_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct count_state *st = ctx->priv;

	s->hits = atomic_exchange(&st->global.value, 0);
}

static void count_local_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct count_state *st = ctx->priv;

	for (int i = 0; i < ctx->env.producer_cnt; i++)
		s->hits += atomic_exchange(&st->local[i].value, 0);
}

const struct bench bench_count_global = {
	.name = "count-global",
	.family = "count",
	.report = "hits_drops",
	.help = "producers increment one shared atomic counter (no BPF)",
	.no_bpf = true,
	.setup = count_setup,
	.producer = count_global_producer,
	.measure = count_global_measure,
	.teardown = count_teardown,
};

const struct bench bench_count_local = {
	.name = "count-local",
	.family = "count",
	.report = "hits_drops",
	.help = "each producer increments its own atomic counter (no BPF)",
	.no_bpf = true,
	.setup = count_setup,
	.producer = count_local_producer,
	.measure = count_local_measure,
	.teardown = count_teardown,
};
