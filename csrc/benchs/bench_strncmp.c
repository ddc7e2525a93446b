// SPDX-License-Identifier: MIT
/*
 * strncmp-no-helper / strncmp-helper: comparing strings in BPF, with an
 * open-coded byte loop or with the bpf_strncmp() helper.
 *
 * Producers call getpgid() in a loop; on each call a BPF program compares
 * cmp_str_len + 1 bytes of a writable string with a read-only one
 * (bpf/strncmp.bpf.c).  The read-only target is random digits '1'..'9'
 * filling the whole buffer; the writable string is its first cmp_str_len
 * characters, NUL-terminated, with the last one lowered by one, so each
 * comparison walks all cmp_str_len characters and finds the string
 * smaller.  A hit is one such comparison.
 *
 * Differences from the kernel bench, all deliberate:
 * - The kernel bench attaches to the syscalls/sys_enter_getpgid
 *   tracepoint, as trigger="auto" (and "tp") does here; trigger="fentry"
 *   runs the same comparison from fentry on the syscall instead.
 * - Only this process's getpgid() calls compare, so that other processes
 *   calling getpgid() add no hits.
 * - No consumer thread: the kernel bench's does nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "strncmp.h"
#include "strncmp.skel.h"

struct strncmp_state {
	struct bench_producer producer;
};

static const struct bench_param_def strncmp_params[] = {
	{ "cmp_str_len", "--cmp-str-len", BENCH_PARAM_INT, 32, 1, STRNCMP_STR_SZ - 1, NULL,
	  "characters each comparison walks before it finds the difference" },
	BENCH_TRIGGER_PARAM_TP_FIRST("the comparison"),
	{ 0 },
};

static bool uses_helper(struct bench_ctx *ctx)
{
	return strcmp(ctx->bench->name, "strncmp-helper") == 0;
}

/* target: random digits '1'..'9', NUL-terminated at the buffer's end;
 * str: target's first len characters, the last one lowered by one. */
static void fill_strings(char *target, char *str, size_t len)
{
	unsigned int seed;
	size_t i;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	for (i = 0; i < STRNCMP_STR_SZ - 1; i++)
		target[i] = '1' + rand_r(&seed) % 9;
	target[STRNCMP_STR_SZ - 1] = '\0';
	memcpy(str, target, len);
	str[len] = '\0';
	str[len - 1] -= 1;
}

BENCH_SKELETON_CALLBACKS(strncmp)

static struct bpf_program *strncmp_program(struct bench_ctx *ctx, void *skel, bool fentry)
{
	struct strncmp_bpf *s = skel;
	bool helper = uses_helper(ctx);

	if (fentry)
		return helper ? s->progs.strncmp_helper_fentry :
				s->progs.strncmp_no_helper_fentry;
	return helper ? s->progs.strncmp_helper_tp : s->progs.strncmp_no_helper_tp;
}

static int strncmp_configure(struct bench_ctx *ctx, void *skel)
{
	struct strncmp_bpf *s = skel;
	size_t len = bench_param(ctx, "cmp_str_len");

	s->rodata->cmp_str_len = len;
	fill_strings((char *)s->rodata->target, s->bss->str, len);
	return 0;
}

static const struct bench_producer_ops strncmp_producer = {
	BENCH_SKELETON_OPS(strncmp),
	.what = "the strncmp program",
	.tp_first = true,	/* the kernel bench's trigger */
	.configure = strncmp_configure,
	.program = strncmp_program,
};

static int strncmp_setup(struct bench_ctx *ctx)
{
	struct strncmp_state *st;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	return bench_producer_start(ctx, &strncmp_producer, &st->producer);
}

static void strncmp_teardown(struct bench_ctx *ctx)
{
	struct strncmp_state *st = ctx->priv;

	if (!st)
		return;
	bench_producer_destroy(&st->producer);
	free(st);
	ctx->priv = NULL;
}

static void strncmp_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct strncmp_state *st = ctx->priv;
	struct strncmp_bpf *skel = st->producer.skel;

	s->hits = __atomic_exchange_n(&skel->bss->hits, 0, __ATOMIC_RELAXED);
}

#define STRNCMP_BENCH(bench_name, text, ...)				\
	{								\
		.name = bench_name,					\
		.family = "strncmp",					\
		.report = "hits_drops",					\
		.help = text,						\
		.params = strncmp_params,				\
		.max_consumers = 0,					\
		.setup = strncmp_setup,					\
		.producer = bench_getpgid_producer,				\
		.measure = strncmp_measure,				\
		.teardown = strncmp_teardown,				\
		.needs = { __VA_ARGS__ },				\
	}

const struct bench bench_strncmp_no_helper = STRNCMP_BENCH("strncmp-no-helper",
	"compare cmp_str_len characters with a BPF byte loop on each getpgid()",
	"tracepoint");
const struct bench bench_strncmp_helper = STRNCMP_BENCH("strncmp-helper",
	"compare cmp_str_len characters with bpf_strncmp() on each getpgid()",
	"bpf_strncmp", "tracepoint");

BENCH_REGISTER(bench_strncmp_no_helper);
BENCH_REGISTER(bench_strncmp_helper);
