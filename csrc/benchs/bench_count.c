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
	uint64_t work_per_hit;
};

/*
 * A known cost per hit: work_per_hit dependent multiply-add steps, which
 * the compiler can neither drop nor vectorise.  0 (the default) is the
 * kernel bench's loop; a larger value is a real, adjustable slowdown for
 * checking that a regression gate notices one.
 */
static const struct bench_param_def count_params[] = {
	{ "work_per_hit", "--work-per-hit", BENCH_PARAM_INT, 0, 0, 1000000, NULL,
	  "extra dependent multiply-add steps per hit (0: none, as the kernel bench)" },
	{ 0 },
};

static inline void spend(uint64_t steps)
{
	uint64_t x = steps;

	for (uint64_t i = 0; i < steps; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
}

static int count_setup(struct bench_ctx *ctx)
{
	struct count_state *st;

	st = aligned_alloc(128, sizeof(*st));
	if (!st)
		return -ENOMEM;
	atomic_init(&st->global.value, 0);
	st->work_per_hit = bench_param(ctx, "work_per_hit");
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
	uint64_t work = st->work_per_hit;

	(void)idx;
	while (!bench_stopping(ctx)) {
		atomic_fetch_add(&st->global.value, 1);
		spend(work);
	}
	return 0;
}

static int count_local_producer(struct bench_ctx *ctx, int idx)
{
	struct count_state *st = ctx->priv;
	atomic_ullong *mine = &st->local[idx].value;
	uint64_t work = st->work_per_hit;

	while (!bench_stopping(ctx)) {
		atomic_fetch_add(mine, 1);
		spend(work);
	}
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
	.params = count_params,
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
	.params = count_params,
	.setup = count_setup,
	.producer = count_local_producer,
	.measure = count_local_measure,
	.teardown = count_teardown,
};

BENCH_REGISTER(bench_count_global);
BENCH_REGISTER(bench_count_local);
