// SPDX-License-Identifier: MIT
/*
 * lpm-trie-noop, -baseline, -lookup, -insert, -update, -delete, -free:
 * operations on an LPM trie of keys 0 .. nr_entries - 1 (bpf/lpm_trie.bpf.c),
 * the kernel bench's bench_lpm_trie_map.c.
 *
 * Producers run the op's XDP program through BPF_PROG_TEST_RUN in a loop;
 * each run makes LPM_TRIE_NR_LOOPS operations timed in BPF.  A run that
 * returns an error fails the benchmark; one that asks for a reset (insert
 * after the last key, delete after the last key) has the trie emptied or
 * refilled by the producer, outside the BPF-timed time.  Per interval: hits
 * (operations) and duration_ns (their BPF-timed time).  noop, baseline,
 * lookup and update report ops per second of the interval; insert, delete
 * and free per second of duration_ns, which leaves the resets out.
 *
 * lpm-trie-free: the producer creates a trie named trie_free_map, fills it
 * and closes it, over and over; fentry/fexit programs time the kernel's
 * deferred free of each (hits: tries freed).  Those programs are loaded
 * only for lpm-trie-free, first, so that a kernel that refuses fentry says
 * so before anything else is loaded; the kernel bench loads them with
 * every lpm-trie benchmark, so none runs there without fentry.
 *
 * Checked before loading, as the kernel bench does (it exits), with the
 * parameter named: nr_entries given (>= 1), 2^prefix_len >= nr_entries;
 * insert, delete and free take one producer and no --random.  Beyond it:
 * prefix_len is at most 32 (the key's data bits: the trie refuses more),
 * and a trie the machine's free memory could not hold is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "lpm_trie.h"
#include "lpm_trie.skel.h"

/* Kernel memory a trie takes per entry, at most: a leaf and an
 * intermediate node of ~64 bytes each (kmalloc sizes). */
#define LPM_TRIE_BYTES_PER_ENTRY 128
/* ETH_HLEN bytes of packet for each test run, as the kernel bench's. */
#define LPM_TRIE_PKT_LEN 14

/* enum lpm_trie_op (lpm_trie.h), in the order of these names. */

struct lpm_trie_state {
	struct lpm_trie_bpf *skel;
	enum lpm_trie_op op;
	struct bpf_program *prog;
	struct lpm_trie_key *keys;
	__u32 *vals;
	struct bpf_link *free_links[2];
};

static const struct bench_param_def lpm_params[] = {
	{ "nr_entries", "--nr_entries", BENCH_PARAM_INT, 0, 1, LPM_TRIE_MAX_ENTRIES, NULL,
	  "number of unique entries in the LPM trie (at most its capacity)",
	  .required = true },
	{ "prefix_len", "--prefix_len", BENCH_PARAM_INT, 32, 1, 32, NULL,
	  "number of prefix bits of each key (2^prefix_len >= nr_entries)" },
	{ "random", "--random", BENCH_PARAM_BOOL, 0, 0, 1, NULL,
	  "access random keys (not for insert, delete, free)",
	  .only = (const char *const[]){ "lpm-trie-noop", "lpm-trie-baseline",
					  "lpm-trie-lookup", "lpm-trie-update", NULL } },
	{ 0 },
};

static const char *const lpm_extra[] = { "duration_ns", NULL };

static enum lpm_trie_op lpm_op_of(const struct bench *b)
{
	static const char *const names[] = {
		"lpm-trie-noop", "lpm-trie-baseline", "lpm-trie-lookup", "lpm-trie-insert",
		"lpm-trie-update", "lpm-trie-delete", "lpm-trie-free",
	};
	int i;

	for (i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (strcmp(b->name, names[i]) == 0)
			return (enum lpm_trie_op)i;
	return LPM_OP_NOOP;
}

static bool op_fills(enum lpm_trie_op op)
{
	return op != LPM_OP_NOOP && op != LPM_OP_BASELINE;
}

/* MemAvailable in bytes, 0 if unknown. */
static uint64_t mem_available(void)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

static int lpm_validate(struct bench_ctx *ctx)
{
	enum lpm_trie_op op = lpm_op_of(ctx->bench);
	int64_t n = bench_param(ctx, "nr_entries"), plen = bench_param(ctx, "prefix_len");
	uint64_t need, avail;

	/* nr_entries is required: bench_validate() saw it given, in range. */
	if ((1ull << plen) < (uint64_t)n) {
		int least = 1;

		while ((1ull << least) < (uint64_t)n)
			least++;
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "prefix_len=%lld too small for nr_entries=%lld: %lld bits make "
				  "%llu keys (allowed prefix_len %d..32 for this nr_entries)",
				  (long long)plen, (long long)n, (long long)plen, 1ull << plen, least);
	}
	if (!op_fills(op))
		return 0;
	need = (uint64_t)n * LPM_TRIE_BYTES_PER_ENTRY;
	avail = mem_available();
	if (avail && need > avail / 2)
		return bench_fail(ctx, BENCH_ERR_VALUE, ENOMEM,
				  "nr_entries=%lld: a trie of that many entries takes about %llu "
				  "MiB of kernel memory, more than half of what this machine has "
				  "free (%llu MiB): allowed 1..%llu here", (long long)n,
				  (unsigned long long)(need >> 20), (unsigned long long)(avail >> 20),
				  (unsigned long long)(avail / 2 / LPM_TRIE_BYTES_PER_ENTRY));
	return 0;
}

/* Keys 0 .. nr_entries - 1 at prefix_len, values 1, as the kernel bench's. */
static int make_keys(struct bench_ctx *ctx, struct lpm_trie_state *st)
{
	__u32 n = (__u32)bench_param(ctx, "nr_entries"), i;

	st->keys = calloc(n, sizeof(*st->keys));
	st->vals = calloc(n, sizeof(*st->vals));
	if (!st->keys || !st->vals)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		st->keys[i].prefixlen = (__u32)bench_param(ctx, "prefix_len");
		st->keys[i].data = i;
		st->vals[i] = 1;
	}
	return 0;
}

static int fill(struct bench_ctx *ctx, struct lpm_trie_state *st, int fd)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = (__u32)bench_param(ctx, "nr_entries");

	return bpf_map_update_batch(fd, st->keys, st->vals, &count, &opts) ? -errno : 0;
}

static int empty(struct bench_ctx *ctx, struct lpm_trie_state *st, int fd)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = (__u32)bench_param(ctx, "nr_entries");

	return bpf_map_delete_batch(fd, st->keys, &count, &opts) ? -errno : 0;
}

/* lpm-trie-free: its fentry/fexit programs alone, loaded first. */
static int load_free(struct bench_ctx *ctx, struct lpm_trie_state *st)
{
	int err;

	bpf_program__set_autoload(st->skel->progs.lpm_free_entry, true);
	bpf_program__set_autoload(st->skel->progs.lpm_free_exit, true);
	err = lpm_trie_bpf__load(st->skel);
	if (err)
		return bench_fail_bpf(ctx, err, "fentry/fexit programs (on bpf_map_free_deferred)",
				      "loading the programs that time a trie's free");
	st->free_links[0] = bpf_program__attach(st->skel->progs.lpm_free_entry);
	if (!st->free_links[0])
		return bench_fail_bpf(ctx, -errno, "fentry programs", "attaching lpm_free_entry");
	st->free_links[1] = bpf_program__attach(st->skel->progs.lpm_free_exit);
	if (!st->free_links[1])
		return bench_fail_bpf(ctx, -errno, "fexit programs", "attaching lpm_free_exit");
	return 0;
}

static int lpm_setup(struct bench_ctx *ctx)
{
	struct lpm_trie_state *st;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	st->op = lpm_op_of(ctx->bench);
	st->skel = lpm_trie_bpf__open();
	if (!st->skel)
		return bench_fail_bpf(ctx, -errno, "the lpm-trie programs", "opening the BPF object");
	if (st->op == LPM_OP_FREE) {
		err = load_free(ctx, st);
	} else {
		st->prog = st->skel->progs.lpm_run;
		bpf_program__set_autoload(st->prog, true);
		err = lpm_trie_bpf__load(st->skel);
		if (err)
			err = bench_fail_bpf(ctx, err, "XDP programs and LPM trie maps",
					     "loading %s", bpf_program__name(st->prog));
	}
	if (err)
		return err;
	st->skel->bss->nr_entries = (__u32)bench_param(ctx, "nr_entries");
	st->skel->bss->prefixlen = (__u32)bench_param(ctx, "prefix_len");
	st->skel->bss->random = bench_param(ctx, "random");
	st->skel->bss->op = st->op;
	if (st->op != LPM_OP_NOOP && st->op != LPM_OP_BASELINE) {
		err = make_keys(ctx, st);
		if (err)
			return bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "%s: keys: out of memory",
					  ctx->bench->name);
	}
	if (st->op == LPM_OP_LOOKUP || st->op == LPM_OP_UPDATE || st->op == LPM_OP_DELETE) {
		err = fill(ctx, st, bpf_map__fd(st->skel->maps.trie_map));
		if (err)
			return bench_fail(ctx, BENCH_ERR_OS, -err, "%s: filling the trie: %s",
					  ctx->bench->name, strerror(-err));
	}
	return 0;
}

static int run_op(struct bench_ctx *ctx, struct lpm_trie_state *st, int prog_fd, char *pkt)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = LPM_TRIE_PKT_LEN,
		    .repeat = 1);
	int fd = bpf_map__fd(st->skel->maps.trie_map), ret, err;

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return bench_fail(ctx, BENCH_ERR_BENCH, errno, "%s: running the program: %s",
				  ctx->bench->name, strerror(errno));
	ret = (int)opts.retval;
	if (ret == LPM_TRIE_SUCCESS)
		return 0;
	if (ret < 0)
		return bench_fail(ctx, BENCH_ERR_BENCH, -ret,
				  "%s: an operation on the trie failed: %s (%s)", ctx->bench->name,
				  bench_errno_name(-ret), strerror(-ret));
	if (ret != LPM_TRIE_REINIT_MAP || (st->op != LPM_OP_INSERT && st->op != LPM_OP_DELETE))
		return bench_fail(ctx, BENCH_ERR_BENCH, EINVAL,
				  "%s: the program returned %d, which it never should",
				  ctx->bench->name, ret);
	/* Untimed: the BPF-timed duration leaves it out. */
	err = st->op == LPM_OP_INSERT ? empty(ctx, st, fd) : fill(ctx, st, fd);
	if (err)
		return bench_fail(ctx, BENCH_ERR_OS, -err, "%s: %s the trie: %s", ctx->bench->name,
				  st->op == LPM_OP_INSERT ? "emptying" : "refilling", strerror(-err));
	return 0;
}

/* One trie of nr_entries, filled and closed: its free is deferred to a
 * workqueue, where the fentry/fexit programs time it. */
static int make_and_free(struct bench_ctx *ctx, struct lpm_trie_state *st)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, LPM_TRIE_FREE_MAP_NAME,
			    sizeof(struct lpm_trie_key), sizeof(__u32), LPM_TRIE_MAX_ENTRIES, &opts);
	if (fd < 0)
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: creating a trie: %s",
				  ctx->bench->name, strerror(errno));
	err = fill(ctx, st, fd);
	close(fd);
	if (err)
		return bench_fail(ctx, BENCH_ERR_OS, -err, "%s: filling a trie: %s",
				  ctx->bench->name, strerror(-err));
	return 0;
}

static int lpm_producer(struct bench_ctx *ctx, int idx)
{
	struct lpm_trie_state *st = ctx->priv;
	char pkt[LPM_TRIE_PKT_LEN] = { 0 };
	int err = 0, fd = st->prog ? bpf_program__fd(st->prog) : -1;

	(void)idx;
	while (!err && !bench_stopping(ctx))
		err = st->op == LPM_OP_FREE ? make_and_free(ctx, st) : run_op(ctx, st, fd, pkt);
	return 0;	/* a failure is recorded by bench_fail */
}

static void lpm_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct lpm_trie_state *st = ctx->priv;

	s->hits = __atomic_exchange_n(&st->skel->bss->hits, 0, __ATOMIC_RELAXED);
	s->extra[0] = __atomic_exchange_n(&st->skel->bss->duration_ns, 0, __ATOMIC_RELAXED);
}

static void lpm_teardown(struct bench_ctx *ctx)
{
	struct lpm_trie_state *st = ctx->priv;

	if (!st)
		return;
	bpf_link__destroy(st->free_links[0]);
	bpf_link__destroy(st->free_links[1]);
	lpm_trie_bpf__destroy(st->skel);
	free(st->keys);
	free(st->vals);
	free(st);
	ctx->priv = NULL;
}

#define LPM_BENCH(var, op_name, rep, max_prod, what, ...)		\
	const struct bench var = {					\
		.name = "lpm-trie-" op_name,				\
		.family = "lpm_trie",					\
		.report = rep,						\
		.help = what,						\
		.params = lpm_params,					\
		.extra = lpm_extra,					\
		.max_consumers = 0,					\
		.max_producers = max_prod,				\
		.validate = lpm_validate,				\
		.setup = lpm_setup,					\
		.producer = lpm_producer,				\
		.measure = lpm_measure,					\
		.teardown = lpm_teardown,				\
		.needs = { __VA_ARGS__ },				\
	}

LPM_BENCH(bench_lpm_trie_noop, "noop", "ops", 0,
	  "LPM trie harness overhead: bpf_loop() of empty callbacks (M ops/s, ns/op)",
	  "lpm_trie", "bpf_loop");
LPM_BENCH(bench_lpm_trie_baseline, "baseline", "ops", 0,
	  "LPM trie key generation alone, the baseline of lookup and update (M ops/s, ns/op)",
	  "lpm_trie", "bpf_loop");
LPM_BENCH(bench_lpm_trie_lookup, "lookup", "ops", 0,
	  "lookups of existing keys in a full LPM trie (M ops/s, ns/op)", "lpm_trie", "bpf_loop");
LPM_BENCH(bench_lpm_trie_insert, "insert", "lpm_trie_frac", 1,
	  "inserts of new keys into an empty LPM trie, per BPF-timed second (M ops/s, ns/op)",
	  "lpm_trie", "bpf_loop");
LPM_BENCH(bench_lpm_trie_update, "update", "ops", 0,
	  "updates of existing keys in a full LPM trie (M ops/s, ns/op)", "lpm_trie", "bpf_loop");
LPM_BENCH(bench_lpm_trie_delete, "delete", "lpm_trie_frac", 1,
	  "deletes of existing keys from a full LPM trie, per BPF-timed second (M ops/s, ns/op)",
	  "lpm_trie", "bpf_loop");
LPM_BENCH(bench_lpm_trie_free, "free", "lpm_trie_free", 1,
	  "frees of a full LPM trie, timed with fentry/fexit (K ops/s, ms/op)",
	  "fentry", "fexit", "lpm_trie");

BENCH_REGISTER(bench_lpm_trie_noop);
BENCH_REGISTER(bench_lpm_trie_baseline);
BENCH_REGISTER(bench_lpm_trie_lookup);
BENCH_REGISTER(bench_lpm_trie_insert);
BENCH_REGISTER(bench_lpm_trie_update);
BENCH_REGISTER(bench_lpm_trie_delete);
BENCH_REGISTER(bench_lpm_trie_free);
