// SPDX-License-Identifier: MIT
/*
 * htab-mem: operations per producer on a hashmap whose elements are written
 * and deleted in batches (bpf/htab_mem.bpf.c), and the memory the map uses.
 *
 * Memory: the kernel charges a map's memory to the memory cgroup of the
 * task that created it, for the map's whole life (buckets, elements, the
 * allocator's caches, elements freed but waiting for an RCU grace period).
 * Setup makes a memory cgroup of its own, beside this process's, moves only
 * the creating thread into it while it creates the map, and moves it back;
 * the cgroup's kernel memory then is the map's and nothing else's.  Each
 * interval reads it (cgroup v1: memory.kmem.usage_in_bytes, else
 * memory.usage_in_bytes; v2: memory.current), the end its peak.  The kernel
 * bench moves its whole process into a v2 cgroup and reads memory.current,
 * which does not exist where the memory controller is bound to cgroup v1:
 * it then prints 0 MiB.  Where no memory cgroup can be made, the figure is
 * the map's memlock from /proc/self/fdinfo (the kernel's estimate of the
 * map's size: fixed part plus elements in the map; it leaves out freed
 * elements waiting for a grace period).  metadata["memory_source"] says
 * which.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "htab_mem.h"
#include "htab_mem.skel.h"

enum use_case { UC_OVERWRITE, UC_BATCH_ADD_BATCH_DEL, UC_ADD_DEL_ON_DIFF_CPU };
static const char *const use_case_choices[] = {
	"overwrite", "batch_add_batch_del", "add_del_on_diff_cpu", NULL
};

/* add_del_on_diff_cpu: an adder and a deleter take turns. */
struct pair {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int turn;		/* 0: add, 1: delete */
};

struct htab_mem_state {
	struct htab_mem_bpf *skel;
	struct bpf_link *links[2];
	int map_fd;
	struct pair *pairs;
	int nr_pairs;
	char cgroup[512];	/* our memory cgroup directory, "" if none */
	char usage_file[64], peak_file[64];
	uint64_t peak;
};

static const struct bench_param_def htab_mem_params[] = {
	{ "use_case", "--use-case", BENCH_PARAM_CHOICE, UC_OVERWRITE, 0, 2, use_case_choices,
	  "overwrite, batch_add_batch_del, or add_del_on_diff_cpu (needs an even "
	  "number of producers)" },
	{ "preallocated", "--preallocated", BENCH_PARAM_BOOL, 0, 0, 1, NULL,
	  "use a preallocated hashmap" },
	{ "value_size", "--value-size", BENCH_PARAM_INT, 8, 1, HTAB_MEM_MAX_VALUE_SIZE, NULL,
	  "hashmap value size in bytes" },
	{ 0 },
};

/* memory in the map's cgroup now, and its peak so far. */
static const char *const htab_mem_extra[] = { "memory_bytes", "peak_memory_bytes", NULL };

static int htab_mem_validate(struct bench_ctx *ctx)
{
	if (bench_param(ctx, "use_case") == UC_ADD_DEL_ON_DIFF_CPU && ctx->env.producer_cnt % 2)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "producers=%d: use_case='add_del_on_diff_cpu' pairs an adding "
				  "and a deleting producer, so producers must be even",
				  ctx->env.producer_cnt);
	return 0;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static int read_u64(const char *path, uint64_t *v)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	*v = strtoull(buf, NULL, 10);
	return 0;
}

/*
 * Where this process's memory cgroup lives: "<mount><path>" into dir, and
 * whether it is cgroup v1.  0 or -errno.
 */
static int own_memcg(char *dir, size_t len, bool *v1)
{
	char line[1024], path[512] = "", mnt_v1[256] = "", mnt_v2[256] = "", v2path[512] = "";
	char probe[1024];
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *ctrl = strchr(line, ':'), *p = ctrl ? strchr(ctrl + 1, ':') : NULL;

		if (!p)
			continue;
		p[strcspn(p, "\n")] = 0;
		if (!strncmp(ctrl, ":memory:", 8) || strstr(ctrl, ",memory:"))
			snprintf(path, sizeof(path), "%s", p + 1);
		else if (!strncmp(line, "0::", 3))
			snprintf(v2path, sizeof(v2path), "%s", p + 1);
	}
	fclose(f);
	f = fopen("/proc/self/mounts", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char dev[128], mnt[256], type[32], opts[512];

		if (sscanf(line, "%127s %255s %31s %511s", dev, mnt, type, opts) != 4)
			continue;
		if (!strcmp(type, "cgroup") && strstr(opts, "memory"))
			snprintf(mnt_v1, sizeof(mnt_v1), "%s", mnt);
		else if (!strcmp(type, "cgroup2"))
			snprintf(mnt_v2, sizeof(mnt_v2), "%s", mnt);
	}
	fclose(f);
	if (mnt_v1[0] && path[0]) {
		*v1 = true;
		snprintf(dir, len, "%s%s", mnt_v1, strcmp(path, "/") ? path : "");
		return 0;
	}
	if (mnt_v2[0]) {
		snprintf(probe, sizeof(probe), "%s%s/memory.current", mnt_v2, v2path);
		if (!access(probe, R_OK)) {
			*v1 = false;
			snprintf(dir, len, "%s%s", mnt_v2, strcmp(v2path, "/") ? v2path : "");
			return 0;
		}
	}
	return -ENOENT;
}

/* Create the map with the calling thread in a memory cgroup of its own.
 * Returns the map fd, or -errno; st->cgroup is "" if none was used. */
static int create_map(struct bench_ctx *ctx, struct htab_mem_state *st, __u32 value_size,
		      __u32 max_entries, __u32 flags, char *why, size_t why_len)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = flags);
	char own[512], file[600], id[32];
	bool v1 = false;
	int fd, err;
	static int seq;

	err = own_memcg(own, sizeof(own), &v1);
	if (err) {
		snprintf(why, why_len, "no memory cgroup to make (%s)", strerror(-err));
		goto plain;
	}
	snprintf(st->cgroup, sizeof(st->cgroup), "%s/benchbpf-htab-mem-%d-%d", own, getpid(),
		 __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	if (mkdir(st->cgroup, 0755)) {
		snprintf(why, why_len, "mkdir %s: %s", st->cgroup, strerror(errno));
		st->cgroup[0] = 0;
		goto plain;
	}
	/* A v2 child has memory files only if its parent hands the controller down. */
	snprintf(file, sizeof(file), "%s/%s", st->cgroup,
		 v1 ? "memory.usage_in_bytes" : "memory.current");
	if (access(file, R_OK)) {
		snprintf(why, why_len, "%s has no memory accounting", st->cgroup);
		rmdir(st->cgroup);
		st->cgroup[0] = 0;
		goto plain;
	}
	/* v1 moves one thread; v2 moves the process, for the moment of the create. */
	snprintf(id, sizeof(id), "%ld", v1 ? (long)syscall(SYS_gettid) : (long)getpid());
	snprintf(file, sizeof(file), "%s/%s", st->cgroup, v1 ? "tasks" : "cgroup.procs");
	err = write_file(file, id);
	if (err) {
		snprintf(why, why_len, "joining %s: %s", st->cgroup, strerror(-err));
		rmdir(st->cgroup);
		st->cgroup[0] = 0;
		goto plain;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "htab", 4, value_size, max_entries, &opts);
	err = fd < 0 ? -errno : 0;
	snprintf(file, sizeof(file), "%s/%s", own, v1 ? "tasks" : "cgroup.procs");
	if (write_file(file, id)) {
		if (fd >= 0)
			close(fd);
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: moving back to %s: %s",
				  ctx->bench->name, own, strerror(errno));
	}
	if (v1) {
		snprintf(file, sizeof(file), "%s/memory.kmem.usage_in_bytes", st->cgroup);
		bool kmem = !access(file, R_OK);

		snprintf(st->usage_file, sizeof(st->usage_file), "%s",
			 kmem ? "memory.kmem.usage_in_bytes" : "memory.usage_in_bytes");
		snprintf(st->peak_file, sizeof(st->peak_file), "%s",
			 kmem ? "memory.kmem.max_usage_in_bytes" : "memory.max_usage_in_bytes");
	} else {
		snprintf(st->usage_file, sizeof(st->usage_file), "memory.current");
		snprintf(st->peak_file, sizeof(st->peak_file), "memory.peak");
	}
	bench_note(ctx, "memory_source", "%s/%s: a memory cgroup (v%d) holding only the "
		   "map, created by a thread moved there for that moment; peak from %s",
		   st->cgroup, st->usage_file, v1 ? 1 : 2, st->peak_file);
	return fd < 0 ? err : fd;
plain:
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "htab", 4, value_size, max_entries, &opts);
	if (fd >= 0)
		bench_note(ctx, "memory_source", "memlock of the map in /proc/self/fdinfo (the "
			   "kernel's estimate: fixed part plus elements in the map, without "
			   "freed elements awaiting a grace period): %s", why);
	return fd < 0 ? -errno : fd;
}

/* The map's memlock from fdinfo, bytes. */
static int read_memlock(int fd, uint64_t *v)
{
	char path[64], line[256];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lu", (unsigned long *)v) == 1) {
			err = 0;
			break;
		}
	fclose(f);
	return err;
}

static int read_memory(struct htab_mem_state *st, const char *file, uint64_t *v)
{
	char path[700];

	if (!st->cgroup[0])
		return read_memlock(st->map_fd, v);
	snprintf(path, sizeof(path), "%s/%s", st->cgroup, file);
	return read_u64(path, v);
}

static int htab_mem_setup(struct bench_ctx *ctx)
{
	struct htab_mem_state *st;
	struct htab_mem_bpf *skel;
	int uc = bench_param(ctx, "use_case"), nr_cpus = libbpf_num_possible_cpus();
	__u32 value_size = bench_param(ctx, "value_size");
	__u32 max_entries = 64 * nr_cpus > 8192 ? 64 * nr_cpus : 8192;
	__u32 flags = bench_param(ctx, "preallocated") ? 0 : BPF_F_NO_PREALLOC;
	struct bpf_program *progs[2] = { NULL, NULL };
	char why[256] = "";
	int err, i;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	st->map_fd = -1;
	if (uc == UC_ADD_DEL_ON_DIFF_CPU) {
		st->nr_pairs = ctx->env.producer_cnt / 2;
		st->pairs = calloc(st->nr_pairs, sizeof(*st->pairs));
		if (!st->pairs)
			return -ENOMEM;
		for (i = 0; i < st->nr_pairs; i++) {
			pthread_mutex_init(&st->pairs[i].lock, NULL);
			pthread_cond_init(&st->pairs[i].cond, NULL);
		}
	}
	err = bench_ensure_tracefs(ctx);
	if (err)
		return err;
	skel = st->skel = htab_mem_bpf__open();
	if (!skel)
		return bench_fail_bpf(ctx, -errno, "BPF", "%s: opening: %s", ctx->bench->name,
				      strerror(errno));
	st->map_fd = create_map(ctx, st, value_size, max_entries, flags, why, sizeof(why));
	if (st->map_fd < 0)
		return ctx->error.kind ? st->map_fd :
			bench_fail_bpf(ctx, st->map_fd, "hash maps", "%s: creating the hashmap: %s",
				       ctx->bench->name, bench_errno_name(st->map_fd));
	err = bpf_map__reuse_fd(skel->maps.htab, st->map_fd);
	if (err)
		return bench_fail(ctx, BENCH_ERR_OS, -err, "%s: reusing the map: %s",
				  ctx->bench->name, strerror(-err));
	if (uc == UC_OVERWRITE)
		progs[0] = skel->progs.overwrite;
	else if (uc == UC_BATCH_ADD_BATCH_DEL)
		progs[0] = skel->progs.batch_add_batch_del;
	else {
		progs[0] = skel->progs.add_only;
		progs[1] = skel->progs.del_only;
	}
	for (i = 0; i < 2 && progs[i]; i++)
		bpf_program__set_autoload(progs[i], true);
	bpf_program__set_autoload(skel->progs.producer_whoami, true);
	skel->bss->nr_thread = ctx->env.producer_cnt;
	err = htab_mem_bpf__load(skel);
	if (err)
		return bench_fail_bpf(ctx, err, "tracepoint programs", "%s: loading: %s",
				      ctx->bench->name, bench_errno_name(err));
	skel->bss->filter_tgid = bench_bpf_tgid(skel->progs.producer_whoami);
	if (!skel->bss->filter_tgid)
		skel->bss->filter_tgid = bench_own_tgid();
	for (i = 0; i < 2 && progs[i]; i++) {
		st->links[i] = bpf_program__attach(progs[i]);
		if (!st->links[i])
			return bench_fail_bpf(ctx, -errno, "tracepoint programs",
					      "%s: attaching %s: %s", ctx->bench->name,
					      bpf_program__name(progs[i]), bench_errno_name(errno));
	}
	bench_set_trigger(ctx, progs, 2);
	return 0;
}

static void htab_mem_teardown(struct bench_ctx *ctx)
{
	struct htab_mem_state *st = ctx->priv;
	int i;

	if (!st)
		return;
	bpf_link__destroy(st->links[0]);
	bpf_link__destroy(st->links[1]);
	htab_mem_bpf__destroy(st->skel);
	if (st->map_fd >= 0)
		close(st->map_fd);
	/* Charges stay with the map until the kernel frees it; the directory
	 * goes now (an emptied memory cgroup may be removed while charged). */
	if (st->cgroup[0])
		rmdir(st->cgroup);
	for (i = 0; i < st->nr_pairs; i++) {
		pthread_mutex_destroy(&st->pairs[i].lock);
		pthread_cond_destroy(&st->pairs[i].cond);
	}
	free(st->pairs);
	free(st);
	ctx->priv = NULL;
}

/* Wait for our turn in a pair; false once the run stops. */
static bool wait_turn(struct bench_ctx *ctx, struct pair *p, int turn)
{
	struct timespec ts;

	pthread_mutex_lock(&p->lock);
	while (p->turn != turn && !bench_stopping(ctx)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
	}
	pthread_mutex_unlock(&p->lock);
	return !bench_stopping(ctx);
}

static void pass_turn(struct pair *p, int turn)
{
	pthread_mutex_lock(&p->lock);
	p->turn = turn;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static int htab_mem_producer(struct bench_ctx *ctx, int idx)
{
	struct htab_mem_state *st = ctx->priv;
	struct pair *p;
	int me;

	if (!st->pairs)
		return bench_getpgid_producer(ctx, idx);
	p = &st->pairs[idx / 2];
	me = idx & 1;
	while (wait_turn(ctx, p, me)) {
		(void)syscall(me ? __NR_getppid : __NR_getpgid, 0);
		pass_turn(p, !me);
	}
	return 0;
}

static void htab_mem_stop(struct bench_ctx *ctx)
{
	struct htab_mem_state *st = ctx->priv;
	int i;

	for (i = 0; st && i < st->nr_pairs; i++) {
		pthread_mutex_lock(&st->pairs[i].lock);
		pthread_cond_broadcast(&st->pairs[i].cond);
		pthread_mutex_unlock(&st->pairs[i].lock);
	}
}

static void htab_mem_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct htab_mem_state *st = ctx->priv;
	uint64_t v = 0, peak = 0;
	int err;

	s->hits = __atomic_exchange_n(&st->skel->bss->op_cnt, 0, __ATOMIC_RELAXED);
	err = read_memory(st, st->usage_file, &v);
	if (err) {
		bench_fail(ctx, BENCH_ERR_OS, -err, "%s: reading the map's memory: %s",
			   ctx->bench->name, strerror(-err));
		return;
	}
	s->extra[0] = v;
	if (v > st->peak)
		st->peak = v;
	/* The cgroup's own peak also counts what came and went in between. */
	if (st->cgroup[0] && !read_memory(st, st->peak_file, &peak) && peak > st->peak)
		st->peak = peak;
	s->extra[1] = st->peak;
}

const struct bench bench_htab_mem = {
	.name = "htab-mem",
	.family = "htab_mem",
	.report = "htab_mem",
	.help = "hashmap elements written and deleted in batches of 64 per syscall: "
		"ops per producer and the memory the map uses",
	.params = htab_mem_params,
	.extra = htab_mem_extra,
	.max_consumers = 0,
	.validate = htab_mem_validate,
	.setup = htab_mem_setup,
	.producer = htab_mem_producer,
	.stop = htab_mem_stop,
	.measure = htab_mem_measure,
	.teardown = htab_mem_teardown,
};

BENCH_REGISTER(bench_htab_mem);
