// SPDX-License-Identifier: MIT
/*
 * Local storage benchmarks.
 *
 * local-storage-cache-seq-get, local-storage-cache-int-get: the cost of
 * bpf_task_storage_get() as the number of task storage maps grows past the
 * per-task storage cache (16 slots).  User space creates nr_maps task
 * storage maps and puts them in an array of maps; each getpgid() of this
 * process runs a bpf_loop() of 10000 gets over maps 0, 1, ... nr_maps-1 in
 * turn (int-get: plus a get of the important map 0 after every index
 * divisible by 3, 4 extra in every 10).  local-storage-cache-hashmap-control:
 * the same loop over hash maps of 4194304 (PID_MAX_LIMIT) keys, each get a
 * lookup of a random key below hashmap_nr_keys_used.  Report: the kernel
 * bench's "local_storage" lines (hits and important hits, M ops/s, and
 * ns per get).
 *
 * local-storage-create: creates per second of task storage (one per thread
 * this process creates, from tp_btf/sched_process_fork) or socket storage
 * (one per socket, from the LSM hook socket_post_create), and this
 * process's kmalloc() calls per create.
 *
 * Differences from the kernel bench, all deliberate:
 * - Inner maps' descriptors are closed once the array of maps holds them,
 *   so 1000 maps need no more open files than 1 (the kernel bench keeps
 *   them open and asks its user to raise `ulimit -n`).  After the run the
 *   core waits until the kernel freed them.
 * - hashmap-control creates one hash map and puts it in all nr_maps slots:
 *   the program does the same lookups as the kernel bench's (outer slot i,
 *   then a random key), without nr_maps copies of a 4M-key map (with the
 *   kernel bench's default 1000 that is hundreds of GB and hours of
 *   filling).  The map is filled with batched updates, in seconds.
 * - Only this process's getpgid() calls, threads, sockets and kmalloc()s
 *   count; gets that return NULL are counted apart (failed_gets).
 * - skip_access runs the same loop without the get: the overhead control
 *   the kernel bench's author measured by editing the program.
 * - The gets fire from fentry on getpgid() where the kernel allows it,
 *   else from the syscalls/sys_enter_getpgid tracepoint (param trigger).
 * - The BPF object is built with 32-bit ALU instructions, as the kernel
 *   bench's is (see setup.py).
 * - batch_size is bounded (1..1024): each producer holds that many threads
 *   or sockets at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "local_storage.h"
#include "local_storage.skel.h"

#define HASH_FILL_CHUNK (1u << 16)
/* Inner maps created and put in the array at once (descriptors held; fewer
 * where the open-files limit runs out first). */
#define LS_INNER_CHUNK 128
#define CREATE_MAX_BATCH 1024
/* How long teardown waits for the kernel to free the inner maps. */
#define INNER_RELEASE_WAIT_NS 5000000000ull

enum { STORAGE_SOCKET, STORAGE_TASK };
static const char *const storage_choices[] = { "socket", "task", NULL };
/* Socket storage comes from a BPF LSM program; task storage is its own map. */
static const char *const storage_needs[] = { "bpf_lsm", "task_storage", NULL };

enum ls_variant { LS_SEQ, LS_INT, LS_HASH };

struct ls_state {
	struct bench_producer producer;	/* cache benchmarks: the getpgid program */
	struct local_storage_bpf *skel;	/* producer.skel, typed; or create's own */
	struct bpf_link *links[2];
	uint32_t *inner_ids;	/* maps only the arrays of maps hold */
	int nr_inner;
	long owner_errs;	/* socket()/pthread_create() failures */
};

static const struct bench_param_def cache_params[] = {
	{ "nr_maps", "--nr_maps", BENCH_PARAM_INT, 1000, 1, LS_MAX_NR_MAPS, NULL,
	  "number of maps the loop gets from, in turn" },
	{ "hashmap_nr_keys_used", "--hashmap_nr_keys_used", BENCH_PARAM_INT, 1000, 1,
	  LS_HASHMAP_SZ, NULL,
	  "hashmap-control: keys looked up, at random, of the map's 4194304" },
	{ "skip_access", NULL, BENCH_PARAM_BOOL, 0, 0, 1, NULL,
	  "run the loop without the get itself: the benchmark's own overhead" },
	BENCH_TRIGGER_PARAM("the gets"),
	{ 0 },
};

static const struct bench_param_def create_params[] = {
	{ "storage_type", "--storage-type", BENCH_PARAM_CHOICE, STORAGE_SOCKET, 0, 1,
	  storage_choices,
	  "socket: storage per new socket (needs BPF LSM); task: per new thread",
	  .choice_needs = storage_needs },
	{ "batch_size", "--batch-size", BENCH_PARAM_INT, 32, 1, CREATE_MAX_BATCH, NULL,
	  "threads or sockets each producer creates before it frees them" },
	{ 0 },
};

static const char *const cache_extra[] = { "failed_gets", NULL };
static const char *const create_extra[] = { "kmallocs", "create_errs", "owner_errs", NULL };

static struct ls_state *new_state(struct bench_ctx *ctx)
{
	struct ls_state *st = calloc(1, sizeof(*st));

	ctx->priv = st;
	return st;
}

/* ---- inner maps ---- */

static int remember_inner(struct bench_ctx *ctx, struct ls_state *st, int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return bench_fail(ctx, BENCH_ERR_BENCH, errno, "%s: reading an inner map's id: %s",
				  ctx->bench->name, strerror(errno));
	st->inner_ids[st->nr_inner++] = info.id;
	return 0;
}

/* Fill keys 0 .. LS_HASHMAP_SZ-1 with value == key, as the kernel bench
 * does (every get of task storage creates it, so the control has every
 * key present), in batches. */
static int fill_hashmap(struct bench_ctx *ctx, int fd)
{
	uint64_t t0 = bench_now_ns();
	__u32 *keys = malloc(HASH_FILL_CHUNK * sizeof(*keys));
	__u32 done, i, n;
	int err = 0;

	if (!keys)
		return bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "%s: out of memory", ctx->bench->name);
	for (done = 0; done < LS_HASHMAP_SZ && !err; done += n) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);

		n = LS_HASHMAP_SZ - done < HASH_FILL_CHUNK ? LS_HASHMAP_SZ - done : HASH_FILL_CHUNK;
		for (i = 0; i < n; i++)
			keys[i] = done + i;
		err = bpf_map_update_batch(fd, keys, keys, &n, &opts) ? -errno : 0;
		if (ctx->env.verbose && (err || (done + n) % (1u << 20) == 0))
			fprintf(stderr, "%s: filled %u of %u keys in %.3f s\n", ctx->bench->name,
				done + n, LS_HASHMAP_SZ, (bench_now_ns() - t0) / 1e9);
	}
	free(keys);
	if (err)
		return bench_fail(ctx, err == -ENOMEM ? BENCH_ERR_OS : BENCH_ERR_BENCH, -err,
				  "%s: filling the %u-key hash map, at key %u: %s",
				  ctx->bench->name, LS_HASHMAP_SZ, done, strerror(-err));
	return 0;
}

/*
 * Put fds[0..n) in slots first.. of the array of maps, in one batch: every
 * write to an array of maps waits for an RCU grace period (so that no
 * program still sees the old inner map), ~13 ms here, and a batch waits
 * once where single updates would wait n times (1000 maps: 13 s).  Kernels
 * without batch updates of arrays of maps get single updates.
 */
static int put_inner_maps(int outer_fd, int first, const int *fds, __u32 n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int keys[LS_INNER_CHUNK];
	__u32 i, count = n;

	for (i = 0; i < n; i++)
		keys[i] = first + (int)i;
	if (!bpf_map_update_batch(outer_fd, keys, fds, &count, &opts))
		return 0;
	if (errno != EINVAL && errno != ENOTSUP && errno != 524)
		return -errno;
	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(outer_fd, &keys[i], &fds[i], 0))
			return -errno;
	return 0;
}

/*
 * Create the inner maps and put them in the array of maps, LS_INNER_CHUNK
 * at a time, closing the descriptors once the array holds the maps.  Task
 * storage: nr_maps maps, created in slot order as the kernel bench's are
 * (which spreads them over the cache slots the same way).  Hash: one map,
 * in every slot.
 */
static int create_inner_maps(struct bench_ctx *ctx, struct ls_state *st, bool hash)
{
	struct bpf_map *outer = hash ? st->skel->maps.array_of_hash_maps :
				       st->skel->maps.array_of_local_storage_maps;
	int nr_maps = (int)bench_param(ctx, "nr_maps");
	int outer_fd = bpf_map__fd(outer);
	int fds[LS_INNER_CHUNK];
	int hash_fd = -1, err = 0, i, n = 0, j;
	/* Local storage maps need BTF for key and value: both `int`, the
	 * inner map templates' types. */
	int int_id = btf__find_by_name_kind(bpf_object__btf(st->skel->obj), "int", BTF_KIND_INT);
	LIBBPF_OPTS(bpf_map_create_opts, opts,
		    .btf_fd = bpf_object__btf_fd(st->skel->obj),
		    .btf_key_type_id = int_id > 0 ? int_id : 0,
		    .btf_value_type_id = int_id > 0 ? int_id : 0);

	st->inner_ids = calloc(nr_maps, sizeof(*st->inner_ids));
	if (!st->inner_ids)
		return bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "%s: out of memory", ctx->bench->name);
	if (hash) {
		hash_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "ls_hash_ctrl", sizeof(int), sizeof(int),
					 LS_HASHMAP_SZ, &opts);
		if (hash_fd < 0)
			return bench_fail(ctx, errno == ENOMEM ? BENCH_ERR_OS : BENCH_ERR_BENCH, errno,
					  "%s: creating the %u-key hash map: %s",
					  ctx->bench->name, LS_HASHMAP_SZ, strerror(errno));
		err = remember_inner(ctx, st, hash_fd);
		if (!err)
			err = fill_hashmap(ctx, hash_fd);
	}
	opts.map_flags = BPF_F_NO_PREALLOC;
	for (i = 0; i < nr_maps && !err; i += n) {
		for (n = 0; n < LS_INNER_CHUNK && i + n < nr_maps && !err; n++) {
			if (hash) {
				fds[n] = hash_fd;
				continue;
			}
			fds[n] = bpf_map_create(BPF_MAP_TYPE_TASK_STORAGE, "ls_task_inner",
						sizeof(int), sizeof(int), 0, &opts);
			/* Out of descriptors (a low `ulimit -n`): put what this
			 * chunk has in the array, close them, go on. */
			if (fds[n] < 0 && errno == EMFILE && n > 0)
				break;
			if (fds[n] < 0) {
				err = bench_fail_bpf(ctx, errno, "task storage maps",
						     "%s: creating task storage map %d of %d: %s",
						     ctx->bench->name, i + n, nr_maps, bench_errno_name(errno));
				break;
			}
			err = remember_inner(ctx, st, fds[n]);
		}
		if (!err) {
			err = put_inner_maps(outer_fd, i, fds, n);
			if (err)
				err = bench_fail(ctx, BENCH_ERR_BENCH, -err,
						 "%s: putting maps %d..%d in the array of maps: %s",
						 ctx->bench->name, i, i + n - 1, strerror(-err));
		}
		for (j = 0; !hash && j < n; j++)
			close(fds[j]);
	}
	if (hash_fd >= 0)
		close(hash_fd);
	if (ctx->env.verbose && !err)
		fprintf(stderr, "%s: %d %s in the array of maps\n", ctx->bench->name, nr_maps,
			hash ? "slots hold the hash map" : "task storage maps");
	return err;
}

/* Wait until the kernel freed the inner maps (the arrays of maps held the
 * last references), in chunks the id list can hold. */
static void wait_inner_released(struct ls_state *st)
{
	struct bench_bpf_ids *ids = malloc(sizeof(*ids));
	int i;

	if (!ids)
		return;
	for (i = 0; i < st->nr_inner; ) {
		ids->nr = 0;
		while (i < st->nr_inner && ids->nr < BENCH_MAX_IDS) {
			ids->obj[ids->nr].kind = BENCH_BPF_MAP;
			ids->obj[ids->nr++].id = st->inner_ids[i++];
		}
		bench_bpf_ids_wait_released(ids, INNER_RELEASE_WAIT_NS);
	}
	free(ids);
}

static void ls_teardown(struct bench_ctx *ctx)
{
	struct ls_state *st = ctx->priv;
	int i;

	if (!st)
		return;
	for (i = 0; i < 2; i++)
		bpf_link__destroy(st->links[i]);
	if (st->producer.ops)
		bench_producer_destroy(&st->producer);
	else
		local_storage_bpf__destroy(st->skel);
	wait_inner_released(st);
	free(st->inner_ids);
	free(st);
	ctx->priv = NULL;
}

/* ---- cache benchmarks ---- */

BENCH_SKELETON_CALLBACKS(local_storage)

/* The gets, or the same loop without them (skip_access): two programs, so
 * that the gets' program tests nothing per get that the kernel bench's
 * does not. */
static struct bpf_program *local_storage_skel_program(struct bench_ctx *ctx, void *skel,
							bool fentry)
{
	struct local_storage_bpf *s = skel;

	if (bench_param(ctx, "skip_access"))
		return fentry ? s->progs.local_storage_skip_fentry : s->progs.local_storage_skip_tp;
	return fentry ? s->progs.local_storage_get_fentry : s->progs.local_storage_get_tp;
}

static int configure_gets(struct bench_ctx *ctx, void *skel, enum ls_variant variant)
{
	struct local_storage_bpf *s = skel;

	s->rodata->use_hashmap = variant == LS_HASH;
	s->rodata->interleave = variant == LS_INT;
	s->rodata->num_maps = (__u32)bench_param(ctx, "nr_maps");
	s->rodata->hashmap_num_keys = (__u32)bench_param(ctx, "hashmap_nr_keys_used");
	/* Only the create benchmarks use these.  A task storage map takes one
	 * of the 16 slots of each task's storage cache (the least used, when
	 * it is created): left in, it is a 17th map beside 16 inner ones, as
	 * the kernel bench's object has none. */
	return bpf_map__set_autocreate(s->maps.task_storage_map, false) ?:
	       bpf_map__set_autocreate(s->maps.sk_storage_map, false);
}

static int configure_seq(struct bench_ctx *ctx, void *skel)
{
	return configure_gets(ctx, skel, LS_SEQ);
}

static int configure_int(struct bench_ctx *ctx, void *skel)
{
	return configure_gets(ctx, skel, LS_INT);
}

static int configure_hash(struct bench_ctx *ctx, void *skel)
{
	return configure_gets(ctx, skel, LS_HASH);
}

#define GETS_PRODUCER(variant_configure)					\
	{ BENCH_SKELETON_OPS(local_storage), .what = "the local storage program",	\
	  .configure = variant_configure, .program = local_storage_skel_program }
static const struct bench_producer_ops gets_producer[] = {
	[LS_SEQ] = GETS_PRODUCER(configure_seq),
	[LS_INT] = GETS_PRODUCER(configure_int),
	[LS_HASH] = GETS_PRODUCER(configure_hash),
};

/*
 * Load and attach the program, then fill the array of maps.  Until the
 * array holds its maps the attached program finds no map and counts
 * nothing, and no producer runs before setup returns.
 */
static int cache_setup(struct bench_ctx *ctx, enum ls_variant variant)
{
	struct ls_state *st = new_state(ctx);
	int err;

	if (!st)
		return -ENOMEM;
	err = bench_producer_start(ctx, &gets_producer[variant], &st->producer);
	st->skel = st->producer.skel;
	if (err)
		return err;
	return create_inner_maps(ctx, st, variant == LS_HASH);
}

static int seq_get_setup(struct bench_ctx *ctx)
{
	return cache_setup(ctx, LS_SEQ);
}

static int int_get_setup(struct bench_ctx *ctx)
{
	return cache_setup(ctx, LS_INT);
}

static int hashmap_setup(struct bench_ctx *ctx)
{
	return cache_setup(ctx, LS_HASH);
}

static void cache_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct ls_state *st = ctx->priv;
	struct local_storage_bpf__bss *bss = st->skel->bss;

	s->hits = __atomic_exchange_n(&bss->hits, 0, __ATOMIC_RELAXED);
	s->important_hits = __atomic_exchange_n(&bss->important_hits, 0, __ATOMIC_RELAXED);
	s->extra[0] = __atomic_exchange_n(&bss->failed_gets, 0, __ATOMIC_RELAXED);
}

#define CACHE_BENCH(var, bench_name, setup_fn, text)				\
	const struct bench var = {						\
		.name = bench_name,						\
		.family = "local_storage",					\
		.report = "local_storage",					\
		.help = text,							\
		.params = cache_params,						\
		.extra = cache_extra,						\
		.max_consumers = 0,						\
		.max_producers = 1,						\
		.setup = setup_fn,						\
		.producer = bench_getpgid_producer,				\
		.measure = cache_measure,					\
		.teardown = ls_teardown,					\
	}

CACHE_BENCH(bench_local_storage_cache_seq_get, "local-storage-cache-seq-get", seq_get_setup,
	    "bpf_task_storage_get() on nr_maps task storage maps in turn, 10000 per getpgid()");
CACHE_BENCH(bench_local_storage_cache_int_get, "local-storage-cache-int-get", int_get_setup,
	    "as local-storage-cache-seq-get, plus 4 gets of the important map in every 10");
CACHE_BENCH(bench_local_storage_cache_hashmap_control, "local-storage-cache-hashmap-control",
	    hashmap_setup,
	    "hash map lookups of random keys below hashmap_nr_keys_used in a 4194304-key map");

/* ---- local-storage-create ---- */

static void *idle_thread(void *arg)
{
	return arg;
}

/* One round: create batch owners (a failure to create one is counted, as
 * the kernel bench does), then free them. */
static void create_round(struct ls_state *st, int storage_type, int batch, int *fds,
			pthread_t *threads, int *started)
{
	int i;

	for (i = 0; i < batch; i++) {
		if (storage_type == STORAGE_SOCKET) {
			fds[i] = socket(AF_INET6, SOCK_DGRAM, 0);
			started[i] = fds[i] >= 0;
		} else {
			started[i] = !pthread_create(&threads[i], NULL, idle_thread, NULL);
		}
		if (!started[i])
			__atomic_add_fetch(&st->owner_errs, 1, __ATOMIC_RELAXED);
	}
	for (i = 0; i < batch; i++) {
		if (!started[i])
			continue;
		if (storage_type == STORAGE_SOCKET)
			close(fds[i]);
		else
			pthread_join(threads[i], NULL);
	}
}

static int create_producer(struct bench_ctx *ctx, int idx)
{
	struct ls_state *st = ctx->priv;
	int storage_type = (int)bench_param(ctx, "storage_type");
	int batch = (int)bench_param(ctx, "batch_size");
	int *fds = calloc(batch, sizeof(*fds));
	int *started = calloc(batch, sizeof(*started));
	pthread_t *threads = calloc(batch, sizeof(*threads));
	int err = 0;

	(void)idx;
	if (!fds || !started || !threads)
		err = -ENOMEM;
	while (!err && !bench_stopping(ctx))
		create_round(st, storage_type, batch, fds, threads, started);
	free(fds);
	free(started);
	free(threads);
	return err;
}

static int create_setup(struct bench_ctx *ctx)
{
	struct ls_state *st = new_state(ctx);
	int storage_type = (int)bench_param(ctx, "storage_type");
	struct local_storage_bpf *skel;
	struct bpf_program *owner;
	const char *what;
	pthread_t probe_thread;
	int fds[1], started[1];
	int err;

	if (!st)
		return -ENOMEM;
	if (storage_type == STORAGE_SOCKET) {
		err = bench_check_fds(ctx, 64 + (int)bench_param(ctx, "batch_size") *
				      ctx->env.producer_cnt);
		if (err)
			return err;
		/* Whether the kernel runs BPF LSM programs is the probe's to say,
		 * before ours loads: a refusal of our own program is then a
		 * benchmark failure with the verifier's log, never "unsupported". */
		err = bench_require_feature(ctx, "bpf_lsm", "BPF LSM programs",
					    "socket storage needs BPF LSM programs, which this "
					    "kernel refuses");
		if (err)
			return err;
	}
	skel = st->skel = local_storage_bpf__open();
	if (!skel)
		return bench_fail(ctx, BENCH_ERR_BENCH, errno, "%s: opening the BPF object: %s",
				  ctx->bench->name, strerror(errno));
	owner = storage_type == STORAGE_SOCKET ? skel->progs.local_storage_create_socket :
						 skel->progs.local_storage_create_task;
	what = storage_type == STORAGE_SOCKET ?
		"BPF LSM programs (lsm.s/socket_post_create, for socket storage)" :
		"tp_btf programs (tp_btf/sched_process_fork)";
	err = bpf_program__set_autoload(owner, true);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.local_storage_kmalloc, true);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.producer_whoami, true);
	if (!err)
		err = local_storage_bpf__load(skel);
	if (err)
		return bench_fail_bpf(ctx, err, what, "%s: loading: %s", ctx->bench->name,
				      bench_errno_name(err));
	skel->bss->filter_tgid = bench_bpf_tgid(skel->progs.producer_whoami);
	st->links[0] = bpf_program__attach(owner);
	if (!st->links[0]) {
		err = -errno;
		return bench_fail_bpf(ctx, err, what, "%s: attaching: %s", ctx->bench->name,
				      bench_errno_name(err));
	}
	/* An LSM program attaches even where the BPF LSM is not active, and
	 * then never runs: create one owner and check the program saw it. */
	create_round(st, storage_type, 1, fds, &probe_thread, started);
	if (!started[0])
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: creating a %s: %s",
				  ctx->bench->name, storage_choices[storage_type], strerror(errno));
	if (!__atomic_load_n(&skel->bss->create_cnts, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&skel->bss->create_errs, __ATOMIC_RELAXED))
		return bench_fail(ctx, BENCH_ERR_UNSUPPORTED, EOPNOTSUPP,
				  "%s: %s attached but never ran when this process created a %s%s",
				  ctx->bench->name, what, storage_choices[storage_type],
				  storage_type == STORAGE_SOCKET ?
				  " (the BPF LSM is not active: \"bpf\" is not in the kernel's lsm= list)" : "");
	st->links[1] = bpf_program__attach(skel->progs.local_storage_kmalloc);
	if (!st->links[1])
		return bench_fail_bpf(ctx, -errno, "raw_tp programs (raw_tp/kmalloc)",
				      "%s: attaching the kmalloc counter: %s", ctx->bench->name,
				      bench_errno_name(errno));
	skel->bss->create_cnts = 0;
	skel->bss->create_errs = 0;
	st->owner_errs = 0;
	bench_set_trigger(ctx, &owner, 1);
	return 0;
}

static void create_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct ls_state *st = ctx->priv;
	struct local_storage_bpf__bss *bss = st->skel->bss;

	s->hits = __atomic_exchange_n(&bss->create_cnts, 0, __ATOMIC_RELAXED);
	s->extra[0] = __atomic_exchange_n(&bss->kmalloc_cnts, 0, __ATOMIC_RELAXED);
	s->extra[1] = __atomic_exchange_n(&bss->create_errs, 0, __ATOMIC_RELAXED);
	s->extra[2] = __atomic_exchange_n(&st->owner_errs, 0, __ATOMIC_RELAXED);
}

const struct bench bench_local_storage_create = {
	.name = "local-storage-create",
	.needs = { "tp_btf" },
	.family = "local_storage",
	.report = "creates",
	.help = "task or socket local storage created per second, one per new thread or socket",
	.params = create_params,
	.extra = create_extra,
	.max_consumers = 0,
	.setup = create_setup,
	.producer = create_producer,
	.measure = create_measure,
	.teardown = ls_teardown,
};

BENCH_REGISTER(bench_local_storage_cache_seq_get);
BENCH_REGISTER(bench_local_storage_cache_int_get);
BENCH_REGISTER(bench_local_storage_cache_hashmap_control);
BENCH_REGISTER(bench_local_storage_create);
