// SPDX-License-Identifier: MIT
/*
 * rename-*: one producer renames a thread of this process in a loop by
 * writing to a /proc comm file, which runs __set_task_comm and the
 * task_rename tracepoint.  rename-base attaches nothing; the others attach
 * one minimal program of one kind to that path, so the drop from
 * rename-base is the cost of that attach kind.  A hit is one completed
 * write, counted in user space.
 *
 * comm="process" (default) writes /proc/self/comm as the kernel bench
 * does: the producer renames the process's main thread, whose name setup
 * saves and teardown puts back.  comm="thread" writes
 * /proc/thread-self/comm: the producer renames itself, and the caller's
 * main thread is never touched.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bench.h"
#include "rename.skel.h"

enum rename_comm { COMM_PROCESS, COMM_THREAD };
static const char *const comm_choices[] = { "process", "thread", NULL };
#define THREAD_COMM_PATH "/proc/thread-self/comm"

static const struct bench_param_def rename_params[] = {
	{ "comm", NULL, BENCH_PARAM_CHOICE, COMM_PROCESS, 0, 1, comm_choices,
	  "whose name the producer writes: process (the main thread's, as the "
	  "kernel bench's /proc/self/comm writes; put back at the end) or thread "
	  "(/proc/thread-self/comm, its own)" },
	{ 0 },
};

enum rename_kind {
	RENAME_BASE,
	RENAME_KPROBE,
	RENAME_KRETPROBE,
	RENAME_RAWTP,
	RENAME_FENTRY,
	RENAME_FEXIT,
};

struct rename_state {
	_Alignas(128) atomic_ullong hits;
	struct rename_bpf *skel;
	struct bpf_link *link;
	char path[64];			/* the comm file the producer writes */
	char saved_comm[32];		/* main thread's name, comm="process" */
	bool saved;
};

/*
 * The main thread's comm file: /proc/self/task/<id>/comm, with the id as
 * this /proc knows the process.  A write there is the kernel bench's
 * /proc/self/comm write (the same comm_write() renaming the main thread),
 * and any thread of the process may open it, also once the process is not
 * dumpable (e.g. after dropping privileges), where /proc/self/comm is
 * root's.
 */
static int main_comm_path(char *buf, size_t len)
{
	char self[32];
	ssize_t n;

	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n < 0)
		return -errno;
	self[n] = 0;
	snprintf(buf, len, "/proc/self/task/%s/comm", self);
	return 0;
}

/* The main thread's name, newline dropped. */
static int read_main_comm(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		err = -errno;
	else
		buf[n] = 0;
	close(fd);
	if (!err)
		buf[strcspn(buf, "\n")] = 0;
	return err;
}

static void restore_main_comm(struct rename_state *st)
{
	ssize_t n;
	int fd;

	if (!st->saved)
		return;
	st->saved = false;
	fd = open(st->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return;
	/* Best effort: a name is all that is lost if it fails. */
	n = write(fd, st->saved_comm, strlen(st->saved_comm));
	(void)n;
	close(fd);
}

/* What each variant attaches, named as the kernel feature it needs. */
static const struct {
	const char *feature;
	const char *what;
} variants[] = {
	[RENAME_BASE] = { NULL, NULL },
	[RENAME_KPROBE] = { "kprobes", "a kprobe on __set_task_comm" },
	[RENAME_KRETPROBE] = { "kretprobes", "a kretprobe on __set_task_comm" },
	[RENAME_RAWTP] = { "raw tracepoint programs", "a raw_tp program on task_rename" },
	[RENAME_FENTRY] = { "fentry programs (BPF trampolines)", "an fentry program on __set_task_comm" },
	[RENAME_FEXIT] = { "fexit programs (BPF trampolines)", "an fexit program on __set_task_comm" },
};

static struct bpf_program *variant_prog(struct rename_bpf *skel, enum rename_kind kind)
{
	switch (kind) {
	case RENAME_KPROBE: return skel->progs.rename_kprobe;
	case RENAME_KRETPROBE: return skel->progs.rename_kretprobe;
	case RENAME_RAWTP: return skel->progs.rename_rawtp;
	case RENAME_FENTRY: return skel->progs.rename_fentry;
	case RENAME_FEXIT: return skel->progs.rename_fexit;
	default: return NULL;
	}
}

static int rename_setup(struct bench_ctx *ctx, enum rename_kind kind)
{
	struct rename_state *st;
	struct bpf_program *prog;
	const char *what = variants[kind].what;
	int err;

	st = aligned_alloc(128, sizeof(*st));
	if (!st)
		return -ENOMEM;
	memset(st, 0, sizeof(*st));
	atomic_init(&st->hits, 0);
	ctx->priv = st;
	if (bench_param(ctx, "comm") == COMM_THREAD) {
		snprintf(st->path, sizeof(st->path), "%s", THREAD_COMM_PATH);
	} else {
		err = main_comm_path(st->path, sizeof(st->path));
		if (!err)
			err = read_main_comm(st->path, st->saved_comm, sizeof(st->saved_comm));
		if (err)
			return bench_fail(ctx, BENCH_ERR_OS, -err,
					  "%s: cannot read the main thread's name (%s): %s",
					  ctx->bench->name, st->path, strerror(-err));
		st->saved = true;
	}
	snprintf(ctx->trigger, sizeof(ctx->trigger), "write(%s)", st->path);
	if (kind == RENAME_BASE)
		return 0;

	st->skel = rename_bpf__open();
	if (!st->skel)
		return bench_fail(ctx, BENCH_ERR_BENCH, errno,
				  "%s: opening the rename BPF object failed: %s",
				  ctx->bench->name, strerror(errno));
	prog = variant_prog(st->skel, kind);
	err = bpf_program__set_autoload(prog, true);
	if (err)
		return bench_fail(ctx, BENCH_ERR_BENCH, -err, "%s: enabling %s failed: %s",
				  ctx->bench->name, what, strerror(-err));
	err = rename_bpf__load(st->skel);
	if (err)
		return bench_fail_bpf(ctx, err, variants[kind].feature,
				      "loading %s: %s", what, bench_errno_name(err));
	st->link = bpf_program__attach(prog);
	if (!st->link) {
		err = -errno;
		return bench_fail_bpf(ctx, err, variants[kind].feature,
				      "attaching %s: %s", what, bench_errno_name(err));
	}
	return 0;
}

static int rename_setup_base(struct bench_ctx *ctx) { return rename_setup(ctx, RENAME_BASE); }
static int rename_setup_kprobe(struct bench_ctx *ctx) { return rename_setup(ctx, RENAME_KPROBE); }
static int rename_setup_kretprobe(struct bench_ctx *ctx) { return rename_setup(ctx, RENAME_KRETPROBE); }
static int rename_setup_rawtp(struct bench_ctx *ctx) { return rename_setup(ctx, RENAME_RAWTP); }
static int rename_setup_fentry(struct bench_ctx *ctx) { return rename_setup(ctx, RENAME_FENTRY); }
static int rename_setup_fexit(struct bench_ctx *ctx) { return rename_setup(ctx, RENAME_FEXIT); }

static void rename_teardown(struct bench_ctx *ctx)
{
	struct rename_state *st = ctx->priv;

	if (!st)
		return;
	bpf_link__destroy(st->link);
	rename_bpf__destroy(st->skel);
	restore_main_comm(st);
	free(st);
	ctx->priv = NULL;
}

/* Runs on a harness thread: with comm="thread" the name it sets dies with
 * the thread; the main thread's is put back by teardown. */
static int rename_producer(struct bench_ctx *ctx, int idx)
{
	struct rename_state *st = ctx->priv;
	static const char name[] = "test_overhead";
	int fd, ret = 0;

	(void)idx;
	fd = open(st->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: cannot open %s: %s",
				  ctx->bench->name, st->path, strerror(errno));
	while (!bench_stopping(ctx)) {
		/* The whole array, NUL included, as the kernel bench writes. */
		if (write(fd, name, sizeof(name)) < 0) {
			ret = bench_fail(ctx, BENCH_ERR_OS, errno, "%s: writing %s failed: %s",
					 ctx->bench->name, st->path, strerror(errno));
			break;
		}
		atomic_fetch_add_explicit(&st->hits, 1, memory_order_relaxed);
	}
	close(fd);
	return ret;
}

static void rename_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct rename_state *st = ctx->priv;

	s->hits = atomic_exchange(&st->hits, 0);
}

#define RENAME_BENCH(suffix, kind_setup, text, nobpf, ...)		\
	{								\
		.name = "rename-" suffix,				\
		.family = "rename",					\
		.report = "hits_drops",					\
		.help = text,						\
		.no_bpf = nobpf,					\
		.sees_other_processes = !(nobpf),			\
		.params = rename_params,				\
		.max_consumers = 0,					\
		.max_producers = 1,					\
		.setup = kind_setup,					\
		.producer = rename_producer,				\
		.measure = rename_measure,				\
		.teardown = rename_teardown,				\
		.needs = { __VA_ARGS__ },				\
	}

const struct bench bench_rename_base = RENAME_BENCH("base", rename_setup_base,
	"renames through /proc comm writes, nothing attached", true);
const struct bench bench_rename_kprobe = RENAME_BENCH("kprobe", rename_setup_kprobe,
	"renames with a kprobe on __set_task_comm", false, "kprobe");
const struct bench bench_rename_kretprobe = RENAME_BENCH("kretprobe", rename_setup_kretprobe,
	"renames with a kretprobe on __set_task_comm", false, "kretprobe");
const struct bench bench_rename_rawtp = RENAME_BENCH("rawtp", rename_setup_rawtp,
	"renames with a raw_tp program on task_rename", false, "raw_tp");
const struct bench bench_rename_fentry = RENAME_BENCH("fentry", rename_setup_fentry,
	"renames with an fentry program on __set_task_comm", false, "fentry");
const struct bench bench_rename_fexit = RENAME_BENCH("fexit", rename_setup_fexit,
	"renames with an fexit program on __set_task_comm", false, "fexit");

BENCH_REGISTER(bench_rename_base);
BENCH_REGISTER(bench_rename_kprobe);
BENCH_REGISTER(bench_rename_kretprobe);
BENCH_REGISTER(bench_rename_rawtp);
BENCH_REGISTER(bench_rename_fentry);
BENCH_REGISTER(bench_rename_fexit);
