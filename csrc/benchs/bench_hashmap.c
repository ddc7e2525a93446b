// SPDX-License-Identifier: MIT
/*
 * bpf-hashmap-lookup, bpf-hashmap-full-update: hashmap lookups, and updates
 * of a full hashmap, timed in BPF (bpf/hashmap.bpf.c).
 *
 * Producers call getpgid(); each call of this process runs a batch: for
 * lookup nr_loops lookups (nr_loops / nr_entries passes over keys 1 ..
 * nr_entries), for full-update HASHMAP_FULL_NR_LOOPS updates of a key the
 * full map refuses.  BPF times each batch with bpf_ktime_get_ns() and adds
 * batches up per CPU until they cover min_sample_ms: that sum is one kept
 * sample (a "run").  The report, as the kernel bench's, is per CPU: the mean
 * and 2 x stdev of the runs' rates, events (operations) per second.
 *
 * Why a floor: the kernel bench takes every batch as a sample, whatever its
 * length, and keeps the last 32 per CPU.  A batch ends early when a lookup
 * finds nothing (its inner loop stops, yet the rate still counts nr_loops
 * lookups), and a batch of few lookups is mostly clock reads: either way a
 * sample of a millisecond or less stands for a rate it did not measure.
 * Here a run holds only lookups really done, at least min_sample_ms of
 * them; a lookup that finds nothing fails the run.
 *
 * Runs finished during warm-up are dropped; every run of the measured
 * intervals is kept (Result.series "cpuNN.time_ns", "cpuNN.ops").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "hashmap.h"
#include "hashmap.skel.h"

/* map_flags a lookup benchmark can run with: no prealloc, zero seed,
 * read-only for programs.  Others make the map refuse the fill or the
 * program (or need a NUMA node). */
#define LOOKUP_FLAGS_OK (BPF_F_NO_PREALLOC | BPF_F_ZERO_SEED | BPF_F_RDONLY_PROG)
#define MAX_MAP_ENTRIES (1 << 24)
#define FILL_CHUNK 4096

enum hashmap_mode { MODE_LOOKUP, MODE_FULL_UPDATE };

struct cpu_runs {
	uint64_t seen;		/* runs read so far */
	struct bench_values time_ns;	/* kept runs */
	struct bench_values ops;
};

struct hashmap_state {
	enum hashmap_mode mode;
	struct bench_producer producer;
	int nr_cpus;		/* possible CPUs */
	struct cpu_runs *cpus;
	uint64_t misses, events;
};

#define FLOOR_PARAM							\
	{ "min_sample_ms", NULL, BENCH_PARAM_INT, 10, 1, 1000, NULL,	\
	  "a kept sample adds up one CPU's timed batches until they cover at " \
	  "least this many ms (the kernel bench keeps each batch, however short)" }

static const struct bench_param_def lookup_params[] = {
	{ "key_size", "--key_size", BENCH_PARAM_INT, 4, 4, HASHMAP_MAX_KEY_SIZE, NULL,
	  "hashmap key size in bytes; the first 4 hold the key number" },
	{ "map_flags", "--map_flags", BENCH_PARAM_INT, 0, 0, LOOKUP_FLAGS_OK, NULL,
	  "BPF_MAP_CREATE flags: 0x1 (no prealloc), 0x40 (zero seed), 0x80 "
	  "(read-only for programs), a combination of them, or 0" },
	{ "max_entries", "--max_entries", BENCH_PARAM_INT, 1000, 1, MAX_MAP_ENTRIES, NULL,
	  "hashmap max entries" },
	{ "nr_entries", "--nr_entries", BENCH_PARAM_INT, 500, 1, HASHMAP_MAX_LOOPS, NULL,
	  "entries inserted and looked up, at most max_entries (and 1 << 23: one "
	  "bpf_loop() pass looks up every entry)" },
	{ "nr_loops", "--nr_loops", BENCH_PARAM_INT, 1000000, 1, HASHMAP_MAX_LOOPS, NULL,
	  "lookups per getpgid(), as nr_loops / nr_entries passes over the entries" },
	FLOOR_PARAM,
	BENCH_TRIGGER_PARAM("the lookups"),
	{ 0 },
};

static const struct bench_param_def full_update_params[] = {
	FLOOR_PARAM,
	BENCH_TRIGGER_PARAM("the updates"),
	{ 0 },
};

/* runs: samples kept this interval; misses: lookups that found nothing. */
static const char *const hashmap_extra[] = { "runs", "misses", "events", NULL };

BENCH_SKELETON_CALLBACKS(hashmap)

static int hashmap_validate(struct bench_ctx *ctx)
{
	int64_t flags = bench_param(ctx, "map_flags");
	int64_t max_entries = bench_param(ctx, "max_entries");
	int64_t nr_entries = bench_param(ctx, "nr_entries");
	int64_t nr_loops = bench_param(ctx, "nr_loops");
	uint64_t ring_ns = (uint64_t)HASHMAP_NR_SLOTS * bench_param(ctx, "min_sample_ms") * 1000000;

	if (ctx->env.interval_ns > ring_ns)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "interval=%.3f s with min_sample_ms=%lld: a CPU keeps %d "
				  "samples between two reads, so the interval may be at most "
				  "%.3f s", ctx->env.interval_ns / 1e9,
				  (long long)bench_param(ctx, "min_sample_ms"), HASHMAP_NR_SLOTS,
				  ring_ns / 1e9);
	if (strcmp(ctx->bench->name, "bpf-hashmap-lookup") != 0)
		return 0;
	/* Within 0..LOOKUP_FLAGS_OK (the table's range) lie bits that are not flags. */
	if (flags & ~(int64_t)LOOKUP_FLAGS_OK)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "map_flags=%#llx: allowed flags are 0x1 (BPF_F_NO_PREALLOC), "
				  "0x40 (BPF_F_ZERO_SEED) and 0x80 (BPF_F_RDONLY_PROG), alone or "
				  "combined; %#llx would make the map refuse the fill or the lookups",
				  (long long)flags, (long long)(flags & ~(int64_t)LOOKUP_FLAGS_OK));
	if (nr_entries > max_entries)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "nr_entries=%lld is more than max_entries=%lld: allowed "
				  "1..%lld", (long long)nr_entries, (long long)max_entries,
				  (long long)max_entries);
	if (nr_loops < nr_entries)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "nr_loops=%lld is less than nr_entries=%lld: a getpgid() makes "
				  "nr_loops / nr_entries passes over the entries, so nr_loops "
				  "must be in %lld..%d", (long long)nr_loops,
				  (long long)nr_entries, (long long)nr_entries, HASHMAP_MAX_LOOPS);
	return 0;
}

static int configure(struct bench_ctx *ctx, void *skel_)
{
	struct hashmap_state *st = ctx->priv;
	struct hashmap_bpf *skel = skel_;
	int err;

	err = bpf_map__set_max_entries(skel->maps.cpu_state, st->nr_cpus);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.runs, st->nr_cpus * HASHMAP_NR_SLOTS);
	skel->rodata->min_run_ns = (uint64_t)bench_param(ctx, "min_sample_ms") * 1000000;
	if (err || st->mode != MODE_LOOKUP)
		return err;
	err = bpf_map__set_max_entries(skel->maps.hash_map_bench, bench_param(ctx, "max_entries"));
	if (!err)
		err = bpf_map__set_key_size(skel->maps.hash_map_bench, bench_param(ctx, "key_size"));
	if (!err)
		err = bpf_map__set_map_flags(skel->maps.hash_map_bench, bench_param(ctx, "map_flags"));
	skel->rodata->nr_entries = bench_param(ctx, "nr_entries");
	skel->rodata->nr_outer = bench_param(ctx, "nr_loops") / bench_param(ctx, "nr_entries");
	return err;
}

static struct bpf_program *program(struct bench_ctx *ctx, void *skel_, bool fentry)
{
	struct hashmap_state *st = ctx->priv;
	struct hashmap_bpf *skel = skel_;

	if (st->mode == MODE_LOOKUP)
		return fentry ? skel->progs.hashmap_lookup_fentry : skel->progs.hashmap_lookup_tp;
	return fentry ? skel->progs.hashmap_full_update_fentry : skel->progs.hashmap_full_update_tp;
}

static const struct bench_producer_ops lookup_ops = {
	.what = "the hashmap lookup program",
	BENCH_SKELETON_OPS(hashmap),
	.program = program,
	.configure = configure,
};

/* Every CPU's key: bytes 4.. as the kernel bench sets them, the rest 0. */
static int set_keys(struct bench_ctx *ctx, struct hashmap_state *st, struct hashmap_bpf *skel)
{
	size_t size = (size_t)st->nr_cpus * HASHMAP_MAX_KEY_SIZE;
	int words = bench_param(ctx, "key_size") / 4, cpu, i, err = 0;
	__u32 zero = 0, *keys = calloc(1, size);

	if (!keys)
		return -ENOMEM;
	for (cpu = 0; cpu < st->nr_cpus; cpu++)
		for (i = 1; i < words; i++)
			keys[cpu * (HASHMAP_MAX_KEY_SIZE / 4) + i] = 2654435761u * i;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.key_buf), &zero, keys, BPF_ANY))
		err = -errno;
	free(keys);
	return err;
}

/* Keys 1 .. nr_entries (first 4 bytes; the rest as every CPU's key), value
 * its number, in batches where the kernel takes them. */
static int fill_lookup_map(struct bench_ctx *ctx, struct hashmap_bpf *skel)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t key_size = bench_param(ctx, "key_size"), n = bench_param(ctx, "nr_entries");
	int fd = bpf_map__fd(skel->maps.hash_map_bench), err = 0;
	unsigned char *keys = calloc(FILL_CHUNK, key_size);
	__u64 *vals = calloc(FILL_CHUNK, sizeof(*vals));
	uint32_t first, cnt, i, j;
	bool batch = true;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < FILL_CHUNK; i++)
		for (j = 1; j < key_size / 4; j++)
			((__u32 *)(keys + (size_t)i * key_size))[j] = 2654435761u * j;
	for (first = 0; first < n; first += cnt) {
		cnt = n - first < FILL_CHUNK ? n - first : FILL_CHUNK;
		for (i = 0; i < cnt; i++) {
			__u32 k = first + i + 1;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
			k = __builtin_bswap32(k);
#endif
			memcpy(keys + (size_t)i * key_size, &k, 4);
			vals[i] = first + i;
		}
		if (batch) {
			__u32 done = cnt;

			if (!bpf_map_update_batch(fd, keys, vals, &done, &opts))
				continue;
			if (done || (errno != EINVAL && errno != EOPNOTSUPP && errno != 524)) {
				err = -errno;
				goto cleanup;
			}
			batch = false;
		}
		for (i = 0; i < cnt; i++)
			if (bpf_map_update_elem(fd, keys + (size_t)i * key_size, &vals[i], BPF_ANY)) {
				err = -errno;
				goto cleanup;
			}
	}
cleanup:
	free(keys);
	free(vals);
	return err;
}

/* Keys 0 .. HASHMAP_FULL_MAX_ENTRIES - 1: the map is full. */
static int fill_full_map(struct hashmap_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.hash_map_full);
	__u32 i;
	__u64 v;

	for (i = 0; i < HASHMAP_FULL_MAX_ENTRIES; i++) {
		v = i;
		if (bpf_map_update_elem(fd, &i, &v, BPF_ANY))
			return -errno;
	}
	return 0;
}

static int hashmap_setup_mode(struct bench_ctx *ctx, enum hashmap_mode mode)
{
	struct hashmap_state *st;
	struct hashmap_bpf *skel;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	st->mode = mode;
	st->nr_cpus = libbpf_num_possible_cpus();
	if (st->nr_cpus <= 0)
		return bench_fail(ctx, BENCH_ERR_OS, -st->nr_cpus, "counting possible CPUs");
	st->cpus = calloc(st->nr_cpus, sizeof(*st->cpus));
	if (!st->cpus)
		return -ENOMEM;
	/* Attached before the fill: only this process's getpgid() runs the
	 * program, and the producers start once setup returned. */
	err = bench_producer_start(ctx, &lookup_ops, &st->producer);
	if (err)
		return err;
	skel = st->producer.skel;
	if (mode == MODE_LOOKUP) {
		err = set_keys(ctx, st, skel);
		if (!err)
			err = fill_lookup_map(ctx, skel);
	} else {
		err = fill_full_map(skel);
	}
	if (err)
		return bench_fail(ctx, BENCH_ERR_OS, -err, "%s: filling the map: %s",
				  ctx->bench->name, strerror(-err));
	return 0;
}

static int lookup_setup(struct bench_ctx *ctx)
{
	return hashmap_setup_mode(ctx, MODE_LOOKUP);
}

static int full_update_setup(struct bench_ctx *ctx)
{
	return hashmap_setup_mode(ctx, MODE_FULL_UPDATE);
}

static void hashmap_teardown(struct bench_ctx *ctx)
{
	struct hashmap_state *st = ctx->priv;
	int i;

	if (!st)
		return;
	bench_producer_destroy(&st->producer);
	for (i = 0; st->cpus && i < st->nr_cpus; i++) {
		bench_values_free(&st->cpus[i].time_ns);
		bench_values_free(&st->cpus[i].ops);
	}
	free(st->cpus);
	free(st);
	ctx->priv = NULL;
}

static int keep_run(struct cpu_runs *c, const struct hashmap_run *run)
{
	return bench_values_push(&c->time_ns, run->time_ns) ?:
	       bench_values_push(&c->ops, run->ops);
}

/*
 * full-update: whether the full map took an update of a CPU's key.  The
 * program does not look at what its updates return (the kernel bench's
 * does not either); nothing deletes keys, so one that succeeded leaves its
 * key in the map.  Then the run timed successful updates, not a full map's.
 */
static bool full_map_took_an_update(struct hashmap_state *st, __u32 *cpu_out)
{
	int fd = bpf_map__fd(((struct hashmap_bpf *)st->producer.skel)->maps.hash_map_full);
	__u32 cpu, key;
	__u64 v;

	for (cpu = 0; cpu < (__u32)st->nr_cpus; cpu++) {
		key = cpu + HASHMAP_FULL_MAX_ENTRIES;
		if (!bpf_map_lookup_elem(fd, &key, &v)) {
			*cpu_out = cpu;
			return true;
		}
	}
	return false;
}

static void hashmap_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct hashmap_state *st = ctx->priv;
	struct hashmap_bpf *skel = st->producer.skel;
	int state_fd = bpf_map__fd(skel->maps.cpu_state), runs_fd = bpf_map__fd(skel->maps.runs);
	bool warmup = ctx->nr_samples < ctx->env.warmup_samples;
	struct hashmap_cpu cs;
	struct hashmap_run run;
	uint64_t misses, events;
	__u32 cpu, slot;

	for (cpu = 0; cpu < (__u32)st->nr_cpus; cpu++) {
		struct cpu_runs *c = &st->cpus[cpu];

		if (bpf_map_lookup_elem(state_fd, &cpu, &cs))
			continue;
		s->extra[1] += cs.misses;
		s->extra[2] += cs.events;
		if (cs.runs - c->seen > HASHMAP_NR_SLOTS) {
			bench_fail(ctx, BENCH_ERR_BENCH, EOVERFLOW,
				   "%s: CPU %u finished %llu samples in one interval, more "
				   "than the %d it keeps: raise min_sample_ms or shorten the "
				   "interval", ctx->bench->name, cpu,
				   (unsigned long long)(cs.runs - c->seen), HASHMAP_NR_SLOTS);
			return;
		}
		for (; c->seen < cs.runs; c->seen++) {
			slot = cpu * HASHMAP_NR_SLOTS + c->seen % HASHMAP_NR_SLOTS;
			if (bpf_map_lookup_elem(runs_fd, &slot, &run))
				continue;
			s->extra[0]++;
			s->hits += run.ops;
			if (!warmup && keep_run(c, &run)) {
				bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "keeping samples");
				return;
			}
		}
	}
	/* misses and events are totals: keep this interval's. */
	misses = s->extra[1];
	events = s->extra[2];
	s->extra[1] = misses - st->misses;
	s->extra[2] = events - st->events;
	st->misses = misses;
	st->events = events;
	if (s->extra[1])
		bench_fail(ctx, BENCH_ERR_BENCH, ENOENT,
			   "%s: %llu lookups found nothing, though every key 1..nr_entries "
			   "was inserted; the run is void (its rate would count lookups "
			   "that never ran)", ctx->bench->name, (unsigned long long)s->extra[1]);
	if (st->mode == MODE_FULL_UPDATE && full_map_took_an_update(st, &cpu))
		bench_fail(ctx, BENCH_ERR_BENCH, EEXIST,
			   "%s: the full map took an update of CPU %u's key %u, which it "
			   "should refuse: the run would time successful updates, not a "
			   "full map's", ctx->bench->name, cpu, cpu + HASHMAP_FULL_MAX_ENTRIES);
}

static int hashmap_collect(struct bench_ctx *ctx)
{
	struct hashmap_state *st = ctx->priv;
	char name[48];
	int cpu, err;

	for (cpu = 0; cpu < st->nr_cpus; cpu++) {
		struct cpu_runs *c = &st->cpus[cpu];

		if (!c->time_ns.len)
			continue;
		snprintf(name, sizeof(name), "cpu%02d.time_ns", cpu);
		err = bench_series_add(ctx, name, c->time_ns.v, c->time_ns.len);
		snprintf(name, sizeof(name), "cpu%02d.ops", cpu);
		if (!err)
			err = bench_series_add(ctx, name, c->ops.v, c->ops.len);
		if (err)
			return bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "keeping samples");
	}
	bench_note(ctx, "sample_rule", "a sample is one CPU's consecutive BPF-timed "
		   "batches added up until they cover at least %lld ms; samples "
		   "finished during warm-up are dropped",
		   (long long)bench_param(ctx, "min_sample_ms"));
	return 0;
}

const struct bench bench_bpf_hashmap_lookup = {
	.name = "bpf-hashmap-lookup",
	.family = "hashmap",
	.report = "hashmap_lookup",
	.help = "hashmap lookups timed in BPF, nr_loops per getpgid(); per-CPU "
		"events/sec over samples of at least min_sample_ms",
	.params = lookup_params,
	.extra = hashmap_extra,
	.max_consumers = 0,
	.validate = hashmap_validate,
	.setup = lookup_setup,
	.producer = bench_getpgid_producer,
	.measure = hashmap_measure,
	.collect = hashmap_collect,
	.teardown = hashmap_teardown,
};

const struct bench bench_bpf_hashmap_full_update = {
	.name = "bpf-hashmap-full-update",
	.family = "hashmap",
	.report = "hashmap_full_update",
	.help = "updates of a key a full 1000-entry hashmap refuses, 10000 per "
		"getpgid(), timed in BPF; per-CPU events/sec",
	.params = full_update_params,
	.extra = hashmap_extra,
	.max_consumers = 0,
	.validate = hashmap_validate,
	.setup = full_update_setup,
	.producer = bench_getpgid_producer,
	.measure = hashmap_measure,
	.collect = hashmap_collect,
	.teardown = hashmap_teardown,
};

BENCH_REGISTER(bench_bpf_hashmap_full_update);
BENCH_REGISTER(bench_bpf_hashmap_lookup);
