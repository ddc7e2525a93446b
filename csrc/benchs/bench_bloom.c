// SPDX-License-Identifier: MIT
/*
 * bloom-lookup, bloom-update, bloom-false-positive, hashmap-without-bloom,
 * hashmap-with-bloom: the BPF bloom filter map, as the kernel bench
 * measures it.
 *
 * Producers call getpgid() in a loop; each call runs one BPF program
 * (bpf/bloom.bpf.c) that does many map operations and counts them per CPU:
 * - bloom-lookup / bloom-update: peek / push every element of an array of
 *   nr_entries random values in the bloom filter: a hit per element.
 * - hashmap-*: 1024 lookups of random keys in a hashmap of nr_entries
 *   random keys, with or without asking the bloom filter first.  A key the
 *   filter rules out is a hit, a key found in the hashmap is a hit, a key
 *   not found is a drop.  Random keys are practically never in the
 *   hashmap, so without the filter (hashmap-without-bloom) every lookup is
 *   a drop, and with it (hashmap-with-bloom) the drops are the filter's
 *   false positives.
 * - bloom-false-positive: hashmap-with-bloom that also counts each false
 *   positive as a false hit; reported as the kernel bench's false hit
 *   percentage.
 *
 * Setup fills the maps from user space with random values (getrandom) as
 * the kernel bench does: the bloom filter and the array with the same
 * values (bloom-*), the hashmap with distinct keys and the bloom filter
 * with the same keys (hashmap-with-bloom, bloom-false-positive) or the
 * hashmap alone (hashmap-without-bloom); then 2.5 MB of random bytes the
 * hashmap lookups read their keys from.
 *
 * Differences from the kernel bench, all deliberate:
 * - Producers fire from fentry on the syscall when the kernel allows it,
 *   else from the syscalls/sys_enter_getpgid tracepoint (param trigger).
 * - The BPF side runs only for this process's getpgid() calls.
 * - nr_entries is capped at BLOOM_MAX_ENTRIES, the most the kernel's own
 *   run_bench_bloom_filter_map.sh asks, so that setup stays to seconds; the
 *   kernel bench takes up to 2^32 - 1.
 * - value_size=256 works (the kernel bench stores it in a byte and fails).
 * - Counters are 64-bit (the kernel bench's wrap at 2^32 per CPU).
 * - Setup waits for every filling thread (the kernel bench starts once the
 *   first one is done), sets array elements many per call (batch update),
 *   and creates the maps a benchmark does not use with one element
 *   instead of nr_entries.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bloom.h"
#include "bloom.skel.h"

/* Largest nr_entries: the kernel's run_bench_bloom_filter_map.sh goes up to
 * 5000000.  Setup fills every entry with a syscall or two: 1.5-3 s per 2^20
 * entries on an idle 2-CPU machine. */
#define BLOOM_MAX_ENTRIES	5000000

/* Filling threads at most, and entries a thread claims and fills at once. */
#define FILL_MAX_THREADS	16
#define FILL_CHUNK		1024

enum bloom_mode {
	MODE_LOOKUP,		/* bloom-lookup */
	MODE_UPDATE,		/* bloom-update */
	MODE_FALSE_POSITIVE,	/* bloom-false-positive */
	MODE_HASH_NO_BLOOM,	/* hashmap-without-bloom */
	MODE_HASH_BLOOM,	/* hashmap-with-bloom */
};

struct bloom_state {
	enum bloom_mode mode;
	struct bench_producer producer;
	struct bloom_bpf *skel;		/* producer.skel, typed */
	uint64_t last[BLOOM_NR_COUNTERS];	/* totals at the previous sample */
};

static const struct bench_param_def bloom_params[] = {
	{ "nr_entries", "--nr_entries", BENCH_PARAM_INT, 1000, 1, BLOOM_MAX_ENTRIES, NULL,
	  "expected unique entries in the bloom filter: the size of every map and "
	  "the number of values filled in" },
	{ "nr_hash_funcs", "--nr_hash_funcs", BENCH_PARAM_INT, 3, 1, 15, NULL,
	  "hash functions of the bloom filter" },
	{ "value_size", "--value_size", BENCH_PARAM_INT, 8, 2, BLOOM_MAX_VALUE_SIZE, NULL,
	  "bytes per bloom filter value (and hashmap key and value)" },
	BENCH_TRIGGER_PARAM("the BPF program"),
	{ 0 },
};

static enum bloom_mode bench_mode(struct bench_ctx *ctx)
{
	const char *n = ctx->bench->name;

	if (!strcmp(n, "bloom-lookup"))
		return MODE_LOOKUP;
	if (!strcmp(n, "bloom-update"))
		return MODE_UPDATE;
	if (!strcmp(n, "bloom-false-positive"))
		return MODE_FALSE_POSITIVE;
	if (!strcmp(n, "hashmap-without-bloom"))
		return MODE_HASH_NO_BLOOM;
	return MODE_HASH_BLOOM;
}

static bool uses_array(enum bloom_mode m)
{
	return m == MODE_LOOKUP || m == MODE_UPDATE;
}

static bool uses_hashmap(enum bloom_mode m)
{
	return !uses_array(m);
}

static bool fills_bloom(enum bloom_mode m)
{
	return m != MODE_HASH_NO_BLOOM;
}

static int bloom_validate(struct bench_ctx *ctx)
{
	int64_t n = bench_param(ctx, "nr_entries");
	int64_t vs = bench_param(ctx, "value_size");

	/* As the kernel bench: no more entries than distinct values. */
	if (vs < 8 && n > (1ll << (vs * 8)))
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "%s: nr_entries=%lld needs more distinct values than "
				  "value_size=%lld bytes can hold (at most %lld)",
				  ctx->bench->name, (long long)n, (long long)vs,
				  1ll << (vs * 8));
	return 0;
}

/* ---- loading ---- */

BENCH_SKELETON_CALLBACKS(bloom)

static struct bpf_program *bloom_program(struct bench_ctx *ctx, void *skel, bool fentry)
{
	struct bloom_bpf *s = skel;

	switch (bench_mode(ctx)) {
	case MODE_LOOKUP:
		return fentry ? s->progs.bloom_lookup_fentry : s->progs.bloom_lookup_tp;
	case MODE_UPDATE:
		return fentry ? s->progs.bloom_update_fentry : s->progs.bloom_update_tp;
	default:
		return fentry ? s->progs.bloom_hashmap_fentry : s->progs.bloom_hashmap_tp;
	}
}

/* Size the maps and set the mode, before load. */
static int bloom_configure(struct bench_ctx *ctx, void *skel)
{
	enum bloom_mode mode = bench_mode(ctx);
	__u32 n = bench_param(ctx, "nr_entries");
	__u32 vs = bench_param(ctx, "value_size");
	struct bloom_bpf *s = skel;
	int err;

	/* Maps this benchmark does not use keep a single element. */
	err = bpf_map__set_max_entries(s->maps.array_map, uses_array(mode) ? n : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.hashmap, uses_hashmap(mode) ? n : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.bloom_map, n);
	if (!err)
		err = bpf_map__set_value_size(s->maps.array_map, vs);
	if (!err)
		err = bpf_map__set_value_size(s->maps.bloom_map, vs);
	if (!err)
		err = bpf_map__set_key_size(s->maps.hashmap, vs);
	if (!err)
		err = bpf_map__set_value_size(s->maps.hashmap, vs);
	if (!err)
		err = bpf_map__set_map_extra(s->maps.bloom_map,
					     bench_param(ctx, "nr_hash_funcs"));
	if (err)
		return err;
	s->rodata->value_size = vs;
	s->rodata->use_bloom = mode == MODE_FALSE_POSITIVE || mode == MODE_HASH_BLOOM;
	s->rodata->count_false_hits = mode == MODE_FALSE_POSITIVE;
	return 0;
}

static const struct bench_producer_ops bloom_producer = {
	BENCH_SKELETON_OPS(bloom),
	.what = "the bloom filter program",
	.tp_feature = "tracepoint programs with bloom filter maps",
	.configure = bloom_configure,
	.program = bloom_program,
};

/* ---- filling the maps ---- */

struct fill {
	enum bloom_mode mode;
	uint32_t nr_entries;
	uint32_t value_size;
	int array_fd, hash_fd, bloom_fd;
	atomic_uint next;		/* first array index not claimed yet */
	atomic_bool no_batch;		/* the kernel has no array batch updates */
	atomic_int err;			/* first failure, positive errno */
	const char *_Atomic what;	/* what failed */
};

static void fill_failed(struct fill *f, int err, const char *what)
{
	int none = 0;

	if (atomic_compare_exchange_strong(&f->err, &none, err))
		atomic_store(&f->what, what);
}

/* getrandom() until len bytes are filled; 0 or a positive errno. */
static int random_bytes(void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

static bool batch_unsupported(int err)
{
	return err == EINVAL || err == EOPNOTSUPP || err == 524 /* ENOTSUPP */;
}

/* Set array elements first .. first + n - 1, several per call where the
 * kernel can.  Returns 0 or a positive errno. */
static int fill_array(struct fill *f, __u32 *keys, const unsigned char *vals,
		      uint32_t first, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	size_t vs = f->value_size;
	uint32_t cnt = n, i;

	for (i = 0; i < n; i++)
		keys[i] = first + i;
	if (!atomic_load_explicit(&f->no_batch, memory_order_relaxed)) {
		if (!bpf_map_update_batch(f->array_fd, keys, vals, &cnt, &opts))
			return 0;
		if (!batch_unsupported(errno) || cnt)
			return errno;
		atomic_store(&f->no_batch, true);
	}
	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(f->array_fd, &keys[i], vals + i * vs, BPF_ANY))
			return errno;
	return 0;
}

/*
 * Add n keys to the hashmap, one call each: a batch update cannot refuse
 * existing keys, and hashmap keys are distinct: a key already in is drawn
 * again.  Returns 0 or a positive errno.
 */
static int fill_hashmap(struct fill *f, unsigned char *vals, uint32_t n)
{
	uint32_t vs = f->value_size, i;
	unsigned char *v;
	int err;

	for (i = 0; i < n; i++) {
		v = vals + (size_t)i * vs;
		while (bpf_map_update_elem(f->hash_fd, v, v, BPF_NOEXIST)) {
			if (errno != EEXIST) {
				fill_failed(f, errno, "adding keys to the hashmap");
				return errno;
			}
			err = random_bytes(v, vs);
			if (err) {
				fill_failed(f, err, "getrandom");
				return err;
			}
		}
	}
	return 0;
}

static void *fill_thread(void *arg)
{
	struct fill *f = arg;
	uint32_t vs = f->value_size, first, n, i;
	unsigned char *vals;
	__u32 *keys;
	int err;

	vals = malloc((size_t)FILL_CHUNK * vs);
	keys = malloc(FILL_CHUNK * sizeof(*keys));
	if (!vals || !keys) {
		fill_failed(f, ENOMEM, "allocating random values");
		goto out;
	}
	while (!atomic_load_explicit(&f->err, memory_order_relaxed)) {
		first = atomic_fetch_add_explicit(&f->next, FILL_CHUNK, memory_order_relaxed);
		if (first >= f->nr_entries)
			break;
		n = f->nr_entries - first < FILL_CHUNK ? f->nr_entries - first : FILL_CHUNK;
		err = random_bytes(vals, (size_t)n * vs);
		if (err) {
			fill_failed(f, err, "getrandom");
			break;
		}
		if (uses_hashmap(f->mode) && fill_hashmap(f, vals, n))
			break;
		if (uses_array(f->mode)) {
			err = fill_array(f, keys, vals, first, n);
			if (err) {
				fill_failed(f, err, "setting array elements");
				break;
			}
		}
		/* A bloom filter takes one value per call. */
		for (i = 0; fills_bloom(f->mode) && i < n; i++)
			if (bpf_map_update_elem(f->bloom_fd, NULL, vals + (size_t)i * vs, BPF_ANY)) {
				fill_failed(f, errno, "adding values to the bloom filter");
				goto out;
			}
	}
out:
	free(keys);
	free(vals);
	return NULL;
}

static int bloom_fill(struct bench_ctx *ctx, struct bloom_state *st)
{
	struct bloom_bpf *skel = st->skel;
	pthread_t threads[FILL_MAX_THREADS];
	int nthreads = bench_nr_cpus(), started = 0, i, err;
	uint64_t t0 = bench_now_ns();
	sigset_t all, old;
	struct fill f = {
		.mode = st->mode,
		.nr_entries = bench_param(ctx, "nr_entries"),
		.value_size = bench_param(ctx, "value_size"),
		.array_fd = bpf_map__fd(skel->maps.array_map),
		.hash_fd = bpf_map__fd(skel->maps.hashmap),
		.bloom_fd = bpf_map__fd(skel->maps.bloom_map),
	};

	atomic_init(&f.next, 0);
	atomic_init(&f.no_batch, false);
	atomic_init(&f.err, 0);
	atomic_init(&f.what, NULL);
	if (nthreads > FILL_MAX_THREADS)
		nthreads = FILL_MAX_THREADS;
	if ((uint32_t)nthreads > f.nr_entries / FILL_CHUNK + 1)
		nthreads = f.nr_entries / FILL_CHUNK + 1;
	/* Helpers take no signals: they stay with the caller's thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 1; i < nthreads; i++)
		if (!pthread_create(&threads[started], NULL, fill_thread, &f))
			started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	fill_thread(&f);	/* this thread fills too */
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);

	err = atomic_load(&f.err);
	if (err)
		return bench_fail(ctx, err == ENOMEM ? BENCH_ERR_OS : BENCH_ERR_BENCH, err,
				  "%s: filling the maps: %s failed: %s", ctx->bench->name,
				  atomic_load(&f.what), strerror(err));
	err = random_bytes(skel->bss->rand_vals, sizeof(skel->bss->rand_vals));
	if (err)
		return bench_fail(ctx, BENCH_ERR_OS, err, "%s: getrandom for the lookup keys: %s",
				  ctx->bench->name, strerror(err));
	if (ctx->env.verbose)
		fprintf(stderr, "%s: filled %u entries with %d threads in %.3f s\n",
			ctx->bench->name, f.nr_entries, started + 1,
			(bench_now_ns() - t0) / 1e9);
	return 0;
}

/* ---- lifecycle ---- */

static int bloom_setup(struct bench_ctx *ctx)
{
	struct bloom_state *st;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	st->mode = bench_mode(ctx);

	/* Attached before the maps are filled, but only this process's
	 * getpgid() calls run it, and none is made before the threads start. */
	err = bench_producer_start(ctx, &bloom_producer, &st->producer);
	if (err)
		return err;
	st->skel = st->producer.skel;
	return bloom_fill(ctx, st);
}

static void bloom_teardown(struct bench_ctx *ctx)
{
	struct bloom_state *st = ctx->priv;

	if (!st)
		return;
	bench_producer_destroy(&st->producer);
	free(st);
	ctx->priv = NULL;
}

static const char *bpf_failure(int bits)
{
	if (bits & BLOOM_ERR_ITER)
		return "a bloom filter push/peek of an array element";
	return "a bloom filter peek before a hashmap lookup";
}

static void bloom_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct bloom_state *st = ctx->priv;
	struct bloom_bpf__bss *bss = st->skel->bss;
	uint64_t tot[BLOOM_NR_COUNTERS] = { 0 };
	int slot, k, bits;

	for (slot = 0; slot < BLOOM_NR_SLOTS; slot++)
		for (k = 0; k < BLOOM_NR_COUNTERS; k++)
			tot[k] += __atomic_load_n(&bss->percpu_stats[slot * BLOOM_SLOT_WORDS + k],
						  __ATOMIC_RELAXED);
	s->hits = tot[BLOOM_HIT] - st->last[BLOOM_HIT];
	s->drops = tot[BLOOM_DROP] - st->last[BLOOM_DROP];
	s->false_hits = tot[BLOOM_FALSE_HIT] - st->last[BLOOM_FALSE_HIT];
	memcpy(st->last, tot, sizeof(tot));

	bits = __atomic_load_n(&bss->error, __ATOMIC_RELAXED);
	if (bits) {
		int err = __atomic_load_n(&bss->error_errno, __ATOMIC_RELAXED);

		bench_fail(ctx, BENCH_ERR_BENCH, err > 0 ? err : EIO,
			   "%s: the BPF program failed: %s returned %s (error bits %d)",
			   ctx->bench->name, bpf_failure(bits),
			   err > 0 ? strerror(err) : "an error", bits);
	}
}

#define BLOOM_BENCH(bname, rep, text, ...)				\
	{								\
		.name = bname,						\
		.family = "bloom",					\
		.report = rep,						\
		.help = text,						\
		.params = bloom_params,					\
		.default_consumers = 0,					\
		.max_consumers = 0,					\
		.validate = bloom_validate,				\
		.setup = bloom_setup,					\
		.producer = bench_getpgid_producer,				\
		.measure = bloom_measure,				\
		.teardown = bloom_teardown,				\
		.needs = { __VA_ARGS__ },				\
	}

const struct bench bench_bloom_lookup = BLOOM_BENCH("bloom-lookup", "hits_drops",
	"bloom filter peeks: every element of an array of nr_entries random values "
	"per getpgid()", "bloom_filter", "tracepoint");
const struct bench bench_bloom_update = BLOOM_BENCH("bloom-update", "hits_drops",
	"bloom filter pushes: every element of an array of nr_entries random values "
	"per getpgid()", "bloom_filter", "tracepoint");
const struct bench bench_bloom_false_positive = BLOOM_BENCH("bloom-false-positive",
	"false_hits",
	"bloom filter false positive rate: 1024 random keys per getpgid() checked in "
	"the filter, then in a hashmap of nr_entries keys", "bloom_filter", "tracepoint");
const struct bench bench_hashmap_without_bloom = BLOOM_BENCH("hashmap-without-bloom",
	"hits_drops",
	"hashmap lookups of 1024 random (absent) keys per getpgid(), no bloom filter",
	"hash", "tracepoint");
const struct bench bench_hashmap_with_bloom = BLOOM_BENCH("hashmap-with-bloom",
	"hits_drops",
	"hashmap lookups of 1024 random keys per getpgid(), each asked to a bloom "
	"filter first", "bloom_filter", "hash", "tracepoint");

BENCH_REGISTER(bench_bloom_lookup);
BENCH_REGISTER(bench_bloom_update);
BENCH_REGISTER(bench_bloom_false_positive);
BENCH_REGISTER(bench_hashmap_without_bloom);
BENCH_REGISTER(bench_hashmap_with_bloom);
