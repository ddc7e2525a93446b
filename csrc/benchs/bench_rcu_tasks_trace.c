// SPDX-License-Identifier: MIT
/*
 * local-storage-tasks-trace: the cost to RCU Tasks Trace of BPF task local
 * storage while many tasks exist.
 *
 * Setup starts nr_procs tasks that loop: sleep 0..3 s, getpgid().  A BPF
 * program (bpf/rcu_tasks_trace.bpf.c) creates and deletes task local
 * storage on every getpgid() of this process and of those tasks, and one
 * producer thread calls getpgid() in a loop, as the kernel bench.  Each
 * interval reports the rcu_tasks_trace kthread's CPU ticks (stime in
 * /proc/PID/stat, the kthread found by name unless kthread_pid is given)
 * per grace period, and the grace-period latency: timed by fentry on
 * rcu_tasks_trace_pregp_step/postgp where the kernel loads it (the kernel
 * bench's way), else from the kthread's context switches (see the BPF
 * side); metadata["gp_latency_source"] says which.
 *
 * The tasks are cloned sharing this process's memory and descriptors (a
 * fork of a large process per task would take minutes for 15000 and hold
 * copies of its descriptors); they run no Python, block every signal and
 * make raw syscalls only.  They die with the thread that started them
 * (PR_SET_PDEATHSIG) and teardown kills and reaps every one, whatever
 * state setup reached, before their stacks are unmapped.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "rcu_tasks_trace.h"
#include "rcu_tasks_trace.skel.h"

#define KTHREAD_NAME "rcu_tasks_trace_kthread"
#define KTHREAD_COMM "rcu_tasks_trace"	/* as a 16-byte comm shows it */

enum gp_source { GP_NONE, GP_FENTRY, GP_SCHED_SWITCH };

struct tasks_trace_state {
	struct bench_producer producer;	/* storage on getpgid() */
	struct rcu_tasks_trace_bpf *gp_skel;	/* grace-period timing */
	struct bpf_link *gp_links[2];
	enum gp_source gp_source;
	char gp_why[256];		/* why the latency is unavailable */
	pid_t *children;
	int nr_children;
	char *stacks;			/* the tasks' stacks, one mapping */
	size_t stacks_len;
	int kthread_pid;
	long prev_stime;
	double *brackets;		/* per kept interval: mean half-width, ns */
	int nr_brackets;
	/* gp_check: the context-switch estimate beside fentry, per kept
	 * interval (grace periods timed, latency sum, half-width sum). */
	struct rcu_tasks_trace_bpf *alt_skel;
	struct bpf_link *alt_links[2];
	double *alt[3];
	int nr_alt;
};

static const struct bench_param_def tasks_trace_params[] = {
	{ "nr_procs", "--nr_procs", BENCH_PARAM_INT, TASKS_TRACE_DEFAULT_PROCS, 1,
	  TASKS_TRACE_MAX_PROCS, NULL, "sleeping tasks to start" },
	{ "kthread_pid", "--kthread_pid", BENCH_PARAM_INT, 0, 0, 4194304, NULL,
	  "pid of the rcu_tasks_trace kthread for ticks; 0: found by name" },
	BENCH_TRIGGER_PARAM("the storage create/delete"),
	{ "gp_check", "--gp-check", BENCH_PARAM_BOOL, 0, 0, 1, NULL,
	  "time grace periods both by fentry (the kernel bench's way) and from the "
	  "kthread's context switches, to check the latter (series substitute_gp_*)" },
	{ 0 },
};

/* per interval: grace periods ended, of which timed, their latency sum
 * (ns), the kthread's ticks. */
static const char *const tasks_trace_extra[] = { "gp_count", "gp_timed", "gp_ns",
						 "kthread_ticks", NULL };

BENCH_SKELETON_CALLBACKS(rcu_tasks_trace)

/* The kthread's stime (field 15 of /proc/PID/stat), or -errno. */
static long kthread_stime(int pid)
{
	char path[64], buf[1024], *p;
	long stime = -1;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	/* Fields after the comm, which may hold spaces: state is field 3. */
	p = strrchr(buf, ')');
	for (i = 3; p && i <= 15; i++) {
		p = strchr(p + 1, ' ');
		if (p && i == 15)
			stime = strtol(p + 1, NULL, 10);
	}
	return stime < 0 ? -EINVAL : stime;
}

/* Whether pid's comm is the kthread's; comm is "" if pid is not there. */
static bool is_kthread(int pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	comm[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, len, f))
		comm[0] = 0;
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	return !strcmp(comm, KTHREAD_NAME) || !strcmp(comm, KTHREAD_COMM);
}

static int tasks_trace_validate(struct bench_ctx *ctx)
{
	int pid = bench_param(ctx, "kthread_pid");
	char comm[64];

	if (!pid || is_kthread(pid, comm, sizeof(comm)))
		return 0;
	return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
			  "kthread_pid=%d is %s%s%s, not the %s kthread: pass its pid, or 0 "
			  "to find it by name", pid, comm[0] ? "'" : "no process in /proc",
			  comm, comm[0] ? "'" : "", KTHREAD_NAME);
}

/* The pid of the kthread named KTHREAD_NAME (a child of kthreadd), or 0. */
static int find_kthread(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[64], comm[64];
	int pid = 0;
	FILE *f;

	while (d && !pid && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = 0;
			if (!strcmp(comm, KTHREAD_NAME) || !strcmp(comm, KTHREAD_COMM))
				pid = atoi(e->d_name);
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return pid;
}

/* What each sleeping task gets, at the bottom of its own stack. */
struct sleeper_arg {
	pid_t parent;
	unsigned int seed;
};

/*
 * A sleeping task: sleep 0..3 s, getpgid(), forever.  It shares this
 * process's memory and descriptor table (so it copies nothing and holds
 * no descriptor of its own), runs with every signal blocked (none of this
 * process's handlers may run in it) and makes raw syscalls only, none of
 * which can fail here.  Not instrumented by AddressSanitizer: it is killed,
 * never returning, on a stack the sanitizer does not know as one, and the
 * redzones of its frame would stay poisoned over memory later mapped there.
 */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize_address)
__attribute__((no_sanitize_address))
#endif
#endif
static int sleeper(void *p)
{
	struct sleeper_arg *arg = p;
	unsigned int seed = arg->seed;
	struct timespec ts = { 0, 0 };

	if (syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
	    syscall(SYS_getppid) != arg->parent)
		syscall(SYS_exit, 1);
	for (;;) {
		seed = seed * 1103515245u + 12345u;
		ts.tv_sec = (seed >> 16) % 4;
		syscall(SYS_nanosleep, &ts, NULL);
		syscall(SYS_getpgid, 0);
	}
	return 0;
}

#define SLEEPER_STACK (16 * 1024)

static int spawn_children(struct bench_ctx *ctx, struct tasks_trace_state *st, int n)
{
	pid_t self = getpid(), pid;
	sigset_t all, old;
	int i, err = 0;

	st->children = calloc(n, sizeof(pid_t));
	if (!st->children)
		return -ENOMEM;
	st->stacks_len = (size_t)n * SLEEPER_STACK;
	st->stacks = mmap(NULL, st->stacks_len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (st->stacks == MAP_FAILED) {
		st->stacks = NULL;
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: stacks for %d tasks: %s",
				  ctx->bench->name, n, strerror(errno));
	}
	/* Tasks start with every signal blocked, and keep it so. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < n; i++) {
		char *stack = st->stacks + (size_t)i * SLEEPER_STACK;
		struct sleeper_arg *arg = (struct sleeper_arg *)stack;

		arg->parent = self;
		arg->seed = 2654435761u * (i + 1);
		pid = clone(sleeper, stack + SLEEPER_STACK, CLONE_VM | CLONE_FILES | CLONE_FS |
			    SIGCHLD, arg);
		if (pid < 0) {
			err = -errno;
			break;
		}
		st->children[st->nr_children++] = pid;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return bench_fail(ctx, BENCH_ERR_OS, -err,
				  "%s: starting sleeping task %d of %d: %s (raise the process "
				  "limit, ulimit -u, or pass fewer nr_procs)",
				  ctx->bench->name, i + 1, n, strerror(-err));
	return 0;
}

static void reap_children(struct tasks_trace_state *st)
{
	int i;

	for (i = 0; i < st->nr_children; i++)
		kill(st->children[i], SIGKILL);
	for (i = 0; i < st->nr_children; i++)
		while (waitpid(st->children[i], NULL, 0) < 0 && errno == EINTR)
			;
	free(st->children);
	st->children = NULL;
	st->nr_children = 0;
	/* Only once every task that ran on them is gone. */
	if (st->stacks)
		munmap(st->stacks, st->stacks_len);
	st->stacks = NULL;
}

BENCH_SKELETON_PROGRAM(rcu_tasks_trace, tasks_trace_get_local)

static const struct bench_producer_ops get_local_ops = {
	.what = "the task local storage program",
	BENCH_SKELETON_OPS(rcu_tasks_trace),
	.program = rcu_tasks_trace_skel_program,
};

static void destroy_timer(struct rcu_tasks_trace_bpf **skel, struct bpf_link **links)
{
	bpf_link__destroy(links[0]);
	bpf_link__destroy(links[1]);
	links[0] = links[1] = NULL;
	rcu_tasks_trace_bpf__destroy(*skel);
	*skel = NULL;
}

static void destroy_gp(struct tasks_trace_state *st)
{
	destroy_timer(&st->gp_skel, st->gp_links);
}

/* Load and attach the grace-period timing of `src` into *out and links;
 * 0 or -errno. */
static int load_timer(struct tasks_trace_state *st, struct rcu_tasks_trace_bpf **out,
		      struct bpf_link **links, enum gp_source src, const char **stage)
{
	struct rcu_tasks_trace_bpf *s;
	int err;

	*stage = "opening";
	s = *out = rcu_tasks_trace_bpf__open();
	if (!s)
		return -errno;
	s->rodata->kthread_pid = st->kthread_pid;
	if (src == GP_FENTRY) {
		bpf_program__set_autoload(s->progs.tasks_trace_pregp, true);
		bpf_program__set_autoload(s->progs.tasks_trace_postgp, true);
	} else {
		bpf_program__set_autoload(s->progs.tasks_trace_switch, true);
	}
	*stage = "loading";
	err = rcu_tasks_trace_bpf__load(s);
	if (err)
		return err;
	*stage = "attaching";
	if (src == GP_FENTRY) {
		links[0] = bpf_program__attach(s->progs.tasks_trace_pregp);
		if (links[0])
			links[1] = bpf_program__attach(s->progs.tasks_trace_postgp);
		return links[1] ? 0 : -errno;
	}
	links[0] = bpf_program__attach(s->progs.tasks_trace_switch);
	return links[0] ? 0 : -errno;
}

static int try_gp(struct tasks_trace_state *st, enum gp_source src, const char **stage)
{
	return load_timer(st, &st->gp_skel, st->gp_links, src, stage);
}

/* gp_check: the substitute beside fentry, which must have loaded. */
static int setup_gp_check(struct bench_ctx *ctx, struct tasks_trace_state *st)
{
	const char *stage;
	int err;

	if (st->gp_source != GP_FENTRY)
		return bench_fail(ctx, BENCH_ERR_UNSUPPORTED, EOPNOTSUPP,
				  "%s: gp_check compares the context-switch estimate with fentry "
				  "timing, which this kernel refuses (%s)", ctx->bench->name, st->gp_why);
	err = load_timer(st, &st->alt_skel, st->alt_links, GP_SCHED_SWITCH, &stage);
	if (err)
		return bench_fail_bpf(ctx, err, "tp_btf programs (tp_btf/sched_switch)",
				      "%s: gp_check: %s the context-switch timing: %s",
				      ctx->bench->name, stage, bench_errno_name(err));
	bench_note(ctx, "substitute_gp_source", "tp_btf/sched_switch of the kthread (pid %d), "
		   "beside fentry: series substitute_gp_timed, substitute_gp_ns, "
		   "substitute_gp_bracket_ns per kept interval", st->kthread_pid);
	return 0;
}

static void setup_gp(struct bench_ctx *ctx, struct tasks_trace_state *st)
{
	const char *stage;
	int err;

	err = try_gp(st, GP_FENTRY, &stage);
	if (!err) {
		st->gp_source = GP_FENTRY;
		bench_note(ctx, "gp_latency_source", "fentry on rcu_tasks_trace_pregp_step and "
			   "rcu_tasks_trace_postgp, as the kernel bench");
		return;
	}
	destroy_gp(st);
	snprintf(st->gp_why, sizeof(st->gp_why), "fentry on rcu_tasks_trace_pregp_step: "
		 "%s failed with %s", stage, bench_errno_name(err));
	err = try_gp(st, GP_SCHED_SWITCH, &stage);
	if (!err) {
		st->gp_source = GP_SCHED_SWITCH;
		bench_note(ctx, "gp_latency_source",
			   "tp_btf/sched_switch of the kthread (pid %d): the grace-period "
			   "sequence number of its struct rcu_tasks read at each switch; a "
			   "grace period runs from the middle of the kthread's run in which "
			   "it started to the middle of the run in which it ended "
			   "(rcu_seq_start/rcu_seq_end, just around the kernel bench's "
			   "pregp_step/postgp); series gp_bracket_ns: the estimate's "
			   "half-width. (%s)", st->kthread_pid, st->gp_why);
		return;
	}
	destroy_gp(st);
	st->gp_source = GP_NONE;
	snprintf(st->gp_why + strlen(st->gp_why), sizeof(st->gp_why) - strlen(st->gp_why),
		 "; tp_btf/sched_switch: %s failed with %s", stage, bench_errno_name(err));
	bench_note(ctx, "gp_latency_source", "unavailable: %s", st->gp_why);
}

static int tasks_trace_setup(struct bench_ctx *ctx)
{
	struct tasks_trace_state *st;
	long stime;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	st->kthread_pid = bench_param(ctx, "kthread_pid");
	if (!st->kthread_pid)
		st->kthread_pid = find_kthread();
	if (!st->kthread_pid)
		return bench_fail(ctx, BENCH_ERR_UNSUPPORTED, ENOENT,
				  "%s: no %s kthread in /proc: this kernel has no RCU Tasks "
				  "Trace kthread (CONFIG_TASKS_TRACE_RCU), or this /proc belongs "
				  "to a pid namespace that shows no kernel threads (its ticks "
				  "cannot be read from there)", ctx->bench->name, KTHREAD_NAME);
	stime = kthread_stime(st->kthread_pid);
	if (stime < 0)
		return bench_fail(ctx, BENCH_ERR_OS, (int)-stime, "%s: reading /proc/%d/stat: %s",
				  ctx->bench->name, st->kthread_pid, strerror((int)-stime));
	bench_note(ctx, "kthread_pid", "%d", st->kthread_pid);
	err = spawn_children(ctx, st, bench_param(ctx, "nr_procs"));
	if (err)
		return err;
	err = bench_producer_start(ctx, &get_local_ops, &st->producer);
	if (err)
		return err;
	setup_gp(ctx, st);
	if (bench_param(ctx, "gp_check")) {
		err = setup_gp_check(ctx, st);
		if (err)
			return err;
	}
	st->prev_stime = kthread_stime(st->kthread_pid);
	return 0;
}

static void tasks_trace_teardown(struct bench_ctx *ctx)
{
	struct tasks_trace_state *st = ctx->priv;

	if (!st)
		return;
	bench_producer_destroy(&st->producer);
	destroy_gp(st);
	destroy_timer(&st->alt_skel, st->alt_links);
	reap_children(st);
	free(st->brackets);
	free(st->alt[0]);
	free(st->alt[1]);
	free(st->alt[2]);
	free(st);
	ctx->priv = NULL;
}

static void tasks_trace_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct tasks_trace_state *st = ctx->priv;
	struct rcu_tasks_trace_bpf *ps = st->producer.skel;
	bool warmup = ctx->nr_samples < ctx->env.warmup_samples;
	long stime = kthread_stime(st->kthread_pid);
	uint64_t bracket = 0;

	s->hits = __atomic_exchange_n(&ps->bss->hits, 0, __ATOMIC_RELAXED);
	if (stime < 0) {
		bench_fail(ctx, BENCH_ERR_OS, (int)-stime, "%s: reading /proc/%d/stat: %s",
			   ctx->bench->name, st->kthread_pid, strerror((int)-stime));
		return;
	}
	s->extra[3] = stime - st->prev_stime;
	st->prev_stime = stime;
	if (st->gp_skel) {
		struct tasks_trace_gp *gp = &st->gp_skel->bss->gp;

		s->extra[0] = __atomic_exchange_n(&gp->completed, 0, __ATOMIC_RELAXED);
		s->extra[1] = __atomic_exchange_n(&gp->timed, 0, __ATOMIC_RELAXED);
		s->extra[2] = __atomic_exchange_n(&gp->ns, 0, __ATOMIC_RELAXED);
		bracket = __atomic_exchange_n(&gp->bracket_ns, 0, __ATOMIC_RELAXED);
		if (__atomic_load_n(&st->gp_skel->bss->unexpected, __ATOMIC_RELAXED)) {
			bench_fail(ctx, BENCH_ERR_BENCH, EPROTO,
				   "%s: grace periods seen out of order (%s): their latency "
				   "cannot be trusted", ctx->bench->name,
				   st->gp_source == GP_FENTRY ? "postgp without pregp" :
				   "the kthread's struct rcu_tasks could not be read");
			return;
		}
	}
	if (st->alt_skel) {
		struct tasks_trace_gp *gp = &st->alt_skel->bss->gp;
		uint64_t got[3];
		int i;

		(void)__atomic_exchange_n(&gp->completed, 0, __ATOMIC_RELAXED);
		got[0] = __atomic_exchange_n(&gp->timed, 0, __ATOMIC_RELAXED);
		got[1] = __atomic_exchange_n(&gp->ns, 0, __ATOMIC_RELAXED);
		got[2] = __atomic_exchange_n(&gp->bracket_ns, 0, __ATOMIC_RELAXED);
		for (i = 0; !warmup && i < 3; i++) {
			double *b = realloc(st->alt[i], (st->nr_alt + 1) * sizeof(double));

			if (!b) {
				bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "keeping samples");
				return;
			}
			st->alt[i] = b;
			b[st->nr_alt] = (double)got[i];
		}
		if (!warmup)
			st->nr_alt++;
	}
	if (!warmup && st->gp_source == GP_SCHED_SWITCH) {
		double *b = realloc(st->brackets, (st->nr_brackets + 1) * sizeof(double));

		if (!b) {
			bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "keeping samples");
			return;
		}
		st->brackets = b;
		b[st->nr_brackets++] = s->extra[1] ? (double)bracket / s->extra[1] : 0.0;
	}
}

static int tasks_trace_collect(struct bench_ctx *ctx)
{
	struct tasks_trace_state *st = ctx->priv;

	bench_note(ctx, "nr_children", "%d", st->nr_children);
	if (st->gp_source == GP_SCHED_SWITCH &&
	    bench_series_add(ctx, "gp_bracket_ns", st->brackets, st->nr_brackets))
		return bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "keeping samples");
	if (st->gp_source == GP_NONE)
		bench_note(ctx, "gp_latency_unavailable", "%s", st->gp_why);
	if (st->alt_skel &&
	    (bench_series_add(ctx, "substitute_gp_timed", st->alt[0], st->nr_alt) ||
	     bench_series_add(ctx, "substitute_gp_ns", st->alt[1], st->nr_alt) ||
	     bench_series_add(ctx, "substitute_gp_bracket_ns", st->alt[2], st->nr_alt)))
		return bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "keeping samples");
	return 0;
}

const struct bench bench_local_storage_tasks_trace = {
	.name = "local-storage-tasks-trace",
	.family = "rcu_tasks_trace",
	.report = "tasks_trace",
	.help = "RCU Tasks Trace under task local storage churn with nr_procs sleeping "
		"tasks: the kthread's ticks per grace period and grace-period latency",
	.params = tasks_trace_params,
	.extra = tasks_trace_extra,
	.max_consumers = 0,
	.max_producers = 1,
	/* The grace periods are the machine's, and so is the kthread. */
	.sees_other_processes = true,
	.validate = tasks_trace_validate,
	.setup = tasks_trace_setup,
	.producer = bench_getpgid_producer,
	.measure = tasks_trace_measure,
	.collect = tasks_trace_collect,
	.teardown = tasks_trace_teardown,
};

BENCH_REGISTER(bench_local_storage_tasks_trace);
