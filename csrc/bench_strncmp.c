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

enum { TRIG_AUTO, TRIG_FENTRY, TRIG_TP };
static const char *const trigger_choices[] = { "auto", "fentry", "tp", NULL };

#define TP_NAME "syscalls/sys_enter_getpgid"
#define FENTRY_TARGET "sys_getpgid"
#define FENTRY_FEATURE "fentry programs (BPF trampolines)"
#define TP_FEATURE "tracepoint programs"

struct strncmp_state {
	struct strncmp_bpf *skel;
	struct bpf_link *link;
};

static const struct bench_param_def strncmp_params[] = {
	{ "cmp_str_len", "--cmp-str-len", BENCH_PARAM_INT, 32, 1, STRNCMP_STR_SZ - 1, NULL,
	  "characters each comparison walks before it finds the difference" },
	{ "trigger", NULL, BENCH_PARAM_CHOICE, TRIG_AUTO, 0, 2, trigger_choices,
	  "what runs the comparison on getpgid(): the " TP_NAME " tracepoint "
	  "(the kernel bench's, and what auto picks) or fentry on the syscall" },
	{ 0 },
};

static bool uses_helper(struct bench_ctx *ctx)
{
	return strcmp(ctx->bench->name, "strncmp-helper") == 0;
}

static const char *errno_name(int err)
{
	const char *s;

	if (err < 0)
		err = -err;
	if (err == 524)
		return "ENOTSUPP";
	s = strerrorname_np(err);
	return s ? s : "unknown errno";
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

static struct bpf_program *variant(struct strncmp_bpf *skel, bool helper, int trig)
{
	if (trig == TRIG_FENTRY)
		return helper ? skel->progs.strncmp_helper_fentry :
				skel->progs.strncmp_no_helper_fentry;
	return helper ? skel->progs.strncmp_helper_tp : skel->progs.strncmp_no_helper_tp;
}

static int strncmp_setup(struct bench_ctx *ctx)
{
	struct strncmp_state *st;
	struct bpf_program *prog;
	bool helper = uses_helper(ctx);
	int trig = bench_param(ctx, "trigger");
	size_t len = bench_param(ctx, "cmp_str_len");
	const char *feature = trig == TRIG_FENTRY ? FENTRY_FEATURE : TP_FEATURE;
	const char *what = helper ? "bpf_strncmp() program" : "byte-loop comparison program";
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	if (trig == TRIG_FENTRY)
		snprintf(ctx->trigger, sizeof(ctx->trigger), "fentry/%s", FENTRY_TARGET);
	else
		snprintf(ctx->trigger, sizeof(ctx->trigger), "tp/%s", TP_NAME);

	if (trig != TRIG_FENTRY) {
		err = bench_ensure_tracefs(ctx);
		if (err)
			return err;
	}
	st->skel = strncmp_bpf__open();
	if (!st->skel)
		return bench_fail(ctx, BENCH_ERR_BENCH, errno,
				  "%s: opening the strncmp BPF object failed: %s",
				  ctx->bench->name, strerror(errno));
	st->skel->rodata->cmp_str_len = len;
	fill_strings((char *)st->skel->rodata->target, st->skel->bss->str, len);
	prog = variant(st->skel, helper, trig);
	err = bpf_program__set_autoload(prog, true);
	if (!err)
		err = bpf_program__set_autoload(st->skel->progs.strncmp_whoami, true);
	if (err)
		return bench_fail(ctx, BENCH_ERR_BENCH, -err, "%s: enabling the %s failed: %s",
				  ctx->bench->name, what, strerror(-err));
	err = strncmp_bpf__load(st->skel);
	if (err)
		return bench_fail_bpf(ctx, err, feature, "loading the %s on %s: %s",
				      what, ctx->trigger, errno_name(err));
	st->skel->bss->filter_tgid = bench_bpf_tgid(st->skel->progs.strncmp_whoami);
	st->link = bpf_program__attach(prog);
	if (!st->link) {
		err = -errno;
		return bench_fail_bpf(ctx, err, feature, "attaching the %s to %s: %s",
				      what, ctx->trigger, errno_name(err));
	}
	return 0;
}

static void strncmp_teardown(struct bench_ctx *ctx)
{
	struct strncmp_state *st = ctx->priv;

	if (!st)
		return;
	bpf_link__destroy(st->link);
	strncmp_bpf__destroy(st->skel);
	free(st);
	ctx->priv = NULL;
}

static void strncmp_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct strncmp_state *st = ctx->priv;

	s->hits = __atomic_exchange_n(&st->skel->bss->hits, 0, __ATOMIC_RELAXED);
}

#define STRNCMP_BENCH(bench_name, text)					\
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
	}

const struct bench bench_strncmp_no_helper = STRNCMP_BENCH("strncmp-no-helper",
	"compare cmp_str_len characters with a BPF byte loop on each getpgid()");
const struct bench bench_strncmp_helper = STRNCMP_BENCH("strncmp-helper",
	"compare cmp_str_len characters with bpf_strncmp() on each getpgid()");
