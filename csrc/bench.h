/* SPDX-License-Identifier: MIT */
/*
 * benchbpf harness API: plain C, no CPython.
 *
 * A benchmark is one const `struct bench` ops table, registered with
 * BENCH_REGISTER() beside it and found by name in the registry (registry.c).
 * All run state lives in a per-run `struct bench_ctx`;
 * the harness owns threads, sampling and cleanup, a family owns its BPF
 * objects (in ctx->priv) and its counters.
 */
#ifndef BENCHBPF_BENCH_H
#define BENCHBPF_BENCH_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BENCH_MAX_PARAMS 16
#define BENCH_MAX_EXTRA 4
/* Kernel features one benchmark declares it needs (struct bench.needs). */
#define BENCH_MAX_NEEDS 4
/* .needs in a macro's argument: BENCH_NEEDS("fentry", "fexit"). */
#define BENCH_NEEDS(...) { __VA_ARGS__ }
#define BENCH_MAX_THREADS 256
#define BENCH_MSG_LEN 1024
/* Warm-up plus kept samples of one run: bounds the sample array. */
#define BENCH_MAX_SAMPLES 100000000

enum bench_param_type {
	BENCH_PARAM_INT,	/* integer in [min, max] */
	BENCH_PARAM_BOOL,	/* 0 or 1 */
	BENCH_PARAM_CHOICE,	/* index into choices[] (NULL-terminated) */
	BENCH_PARAM_STRING,	/* text of min..max bytes (max < BENCH_PARAM_STR_LEN),
				 * default def_str; bench_param_str() reads it */
};

#define BENCH_PARAM_STR_LEN 64

struct bench_param_def {
	const char *name;		/* Python keyword, '_' separated: "rb_batch_cnt" */
	const char *cli;		/* the kernel bench's flag: "--rb-batch-cnt" */
	enum bench_param_type type;
	int64_t def;
	int64_t min;
	int64_t max;
	/* BENCH_PARAM_CHOICE only */
	const char *const *choices;
	const char *help;
	const char *def_str;		/* BENCH_PARAM_STRING only */
	const char *const *choice_help;	/* optional: a line per choice, as choices */
	/* BENCH_PARAM_CHOICE: on the command line each choice is its own flag
	 * (--rx-pass), as the kernel bench's mode switches; cli is NULL. */
	bool choice_flags;
	/* INT or CHOICE with no default: every run must give it.  def is then
	 * outside min..max (a choice's -1), so a family can tell it was not
	 * given; bench_validate() refuses a run without it. */
	bool required;
	/* The benchmarks of a shared table that take it (NULL-terminated);
	 * NULL: every benchmark of the table.  The others neither list it nor
	 * accept it, so their help and validation follow this one field. */
	const char *const *only;
	/* BENCH_PARAM_CHOICE, optional: per choice (as choices) the kernel
	 * feature that choice needs besides the benchmark's own, or NULL. */
	const char *const *choice_needs;
};

/* One sampling interval.  Counters are deltas over the interval. */
struct bench_sample {
	uint64_t interval_ns;		/* real length, CLOCK_MONOTONIC */
	uint64_t hits;
	uint64_t drops;
	uint64_t false_hits;
	uint64_t important_hits;
	uint64_t extra[BENCH_MAX_EXTRA];	/* family counters, see bench.extra */
	/* CPU time the producer threads ran in this interval, summed
	 * (CLOCK_THREAD_CPUTIME of each; harness fills it): hits over it
	 * are per CPU-second of producer, whatever else shared the CPUs. */
	uint64_t producer_cpu_ns;
	/* The sampler woke half an interval or more after this sample's
	 * deadline; the sample covers the longer time, and the deadlines
	 * after it start again from it (harness fills it). */
	bool late;
	/* What the host did in this interval (harness fills them, the host
	 * watch all but late_ns): how late the sampler woke after its
	 * deadline, ns; CPU time stolen by the hypervisor from the run's CPUs
	 * (all CPUs when its threads are not pinned), ns summed over them;
	 * involuntary context switches and migrations of the run's worker
	 * threads, summed (migrations stay 0 where the kernel does not expose
	 * them). */
	uint64_t late_ns;
	uint64_t steal_ns;
	uint64_t involuntary;
	uint64_t migrations;
};

/* Common options, as the kernel bench's env. */
struct bench_env {
	uint64_t interval_ns;		/* sampling interval, default 1 s */
	int warmup_samples;		/* samples taken before measuring */
	/* The first sample's length, 0: one interval.  A warm-up that is not
	 * a whole number of intervals takes what is left over here, so that
	 * measuring starts when the warm-up time is up (only in warm-up). */
	uint64_t first_sample_ns;
	int duration_samples;		/* samples kept */
	int producer_cnt;
	int consumer_cnt;
	bool affinity;
	/* CPU sets (order and repeats do not matter: taken in ascending
	 * order, as the kernel bench's bitmaps); empty => CPUs in turn */
	int prod_cpus[BENCH_MAX_THREADS];
	int prod_cpus_len;
	int cons_cpus[BENCH_MAX_THREADS];
	int cons_cpus_len;
	bool verbose;
	bool prog_stats;		/* kernel run-time statistics of the programs */
	/* Two runs started together (an A/B duet, one per process): after
	 * setup a byte on ready_fd, then wait for the CLOCK_MONOTONIC time to
	 * start at (8 bytes, native order) on go_fd; -1: start at once. */
	int ready_fd;
	int go_fd;
};

struct bench_ctx;
struct bench_thread_arg;

/*
 * The kernel's own accounting of each program a run loaded (prog_stats):
 * run_cnt and run_time_ns over the measured window, i.e. from the end of
 * warm-up (or from load, without warm-up) to the last sample, each end read
 * in the sampler thread right after that sample's counters.
 */
#define BENCH_MAX_PROGS 32
struct bench_prog_stat {
	uint32_t id;
	char name[128];		/* full name, from the program's BTF */
	char type[32];		/* "raw_tracepoint", "tracepoint", ... */
	uint64_t run_cnt;
	uint64_t run_time_ns;
};

struct bench_prog_stats {
	int stats_fd;		/* bpf_enable_stats(): statistics on while open */
	int nr;
	int fds[BENCH_MAX_PROGS];
	struct bench_prog_stat prog[BENCH_MAX_PROGS];
	bool started;		/* window start read */
	bool complete;		/* window end read: prog[] holds the window */
	/* Longest time, at either end, from reading the benchmark's counters
	 * to having read every program's statistics. */
	uint64_t boundary_ns;
};

/* BPF objects held through this process's descriptors (loader.c). */
#define BENCH_MAX_IDS 256
enum bench_bpf_kind { BENCH_BPF_PROG, BENCH_BPF_MAP, BENCH_BPF_LINK };
struct bench_bpf_ids {
	int nr;
	struct { enum bench_bpf_kind kind; uint32_t id; } obj[BENCH_MAX_IDS];
};

struct bench {
	const char *name;		/* "rb-libbpf" */
	const char *family;		/* "ringbuf" */
	/*
	 * How the kernel bench reports it, read by the Python layer:
	 * "hits_drops", "ops" (M ops/s, ns/op), "local_storage",
	 * "false_hits" (false positive rate), "hashmap_lookup", ...
	 */
	const char *report;
	const char *help;
	const struct bench_param_def *params;	/* terminated by .name == NULL */
	const char *const *extra;	/* names of sample.extra[i], NULL-terminated */
	int default_consumers;
	int max_consumers;		/* 0: takes no consumer */
	int max_producers;		/* 0: no limit beyond BENCH_MAX_THREADS */
	bool no_bpf;			/* loads nothing: no privilege needed */
	/* Threads are always pinned, as -a pins them: the kernel bench refuses
	 * to run it unpinned (sockmap). */
	bool always_pinned;
	/* Its programs count every process's events, as the kernel bench's
	 * (a hooked kernel function, a tracepoint, a uprobe on a shared file):
	 * two runs at once would count each other's, so a duet refuses it. */
	bool sees_other_processes;
	/* The kernel features it cannot run without, by their names in
	 * features.c's probes ("fentry", "lpm_trie"); unused slots NULL.
	 * missing_features() names those a kernel lacks, before a run.  A
	 * benchmark whose trigger falls back (trigger "auto": fentry where it
	 * loads, else a tracepoint) declares neither. */
	const char *needs[BENCH_MAX_NEEDS];

	/* Cross-parameter checks, before anything is loaded.  -EINVAL + msg. */
	int (*validate)(struct bench_ctx *ctx);
	/* Open, configure, load, attach.  May leave partial state in ctx->priv:
	 * teardown is always called after setup, even after setup failed. */
	int (*setup)(struct bench_ctx *ctx);
	/* Thread bodies: loop until bench_stopping(ctx); return 0 or -errno. */
	int (*producer)(struct bench_ctx *ctx, int idx);
	int (*consumer)(struct bench_ctx *ctx, int idx);
	/* Wake threads blocked in the kernel so they see the stop flag. */
	void (*stop)(struct bench_ctx *ctx);
	/* Read-and-reset counters into *s (harness fills interval_ns). */
	void (*measure)(struct bench_ctx *ctx, struct bench_sample *s);
	/* Optional: after every thread stopped, before teardown, when the run
	 * went well: hand what is not a per-interval counter to the result
	 * with bench_series_add() / bench_note().  0 or the error recorded. */
	int (*collect)(struct bench_ctx *ctx);
	/* NULL-safe: free everything setup made, whatever state it got to. */
	void (*teardown)(struct bench_ctx *ctx);
};

/* Error classes, mapped to Python exceptions by the binding. */
enum bench_err_kind {
	BENCH_ERR_NONE,
	BENCH_ERR_VALUE,	/* ValueError */
	BENCH_ERR_UNSUPPORTED,	/* benchbpf.UnsupportedError */
	BENCH_ERR_PERMISSION,	/* PermissionError */
	BENCH_ERR_OS,		/* OSError with errno */
	BENCH_ERR_BENCH,	/* benchbpf.BenchmarkError */
};

struct bench_error {
	enum bench_err_kind kind;
	int err;		/* positive errno */
	char msg[BENCH_MSG_LEN];
};

/* A named list of values a family measured beside the per-interval
 * samples (Result.series): e.g. BPF-timed runs per CPU. */
struct bench_series {
	char name[48];
	double *values;
	int len;
};

/* A named string for the result's metadata: what was measured and how. */
#define BENCH_MAX_NOTES 12
struct bench_note {
	char key[48];
	char value[512];
};

struct bench_log {
	char *buf;
	size_t len;
	size_t cap;
	bool truncated;
};

struct bench_ctx {
	const struct bench *bench;
	struct bench_env env;
	int64_t params[BENCH_MAX_PARAMS];	/* values, index as bench->params */
	char param_str[BENCH_MAX_PARAMS][BENCH_PARAM_STR_LEN];	/* STRING values */
	void *priv;			/* family state */
	char trigger[128];		/* how producers fire, for metadata */
	bool tracefs_mounted;		/* this run mounted tracefs (metadata) */

	atomic_bool stop;
	atomic_int running_threads;

	pthread_mutex_t lock;		/* guards error, samples, done */
	pthread_cond_t cond;		/* signalled on each sample and when done */
	pthread_cond_t stop_cond;	/* wakes the sampler early on stop */
	struct bench_error error;	/* first error wins */
	struct bench_sample *samples;	/* warmup + duration */
	int nr_samples_total;		/* moves with bench_request_warmup_end() */
	int nr_samples;			/* taken so far */
	int measuring;			/* the sample being measured (1-based), or 0 */
	bool done;

	pthread_t *threads;		/* consumers then producers */
	struct bench_thread_arg *thread_args;
	int nr_threads;
	/* The CPU each thread is pinned to, consumers then producers
	 * (validation fills it when affinity is on; -1: not pinned). */
	int thread_cpus[2 * BENCH_MAX_THREADS];
	/* Each thread's id, as it sets it when it starts (0 before), in the
	 * same order: the host watch reads /proc/self/task by it. */
	atomic_int thread_tids[2 * BENCH_MAX_THREADS];
	/* The producers' CPU-time clocks, read by the sampler (those
	 * still running when started). */
	clockid_t producer_clocks[BENCH_MAX_THREADS];
	int nr_producer_clocks;
	bool sampler_started;
	pthread_t sampler;
	bool setup_called;
	bool finished;

	struct bench_log log;		/* libbpf messages during this run */
	struct bench_series *series;	/* collect()'s output, owned */
	int nr_series;
	struct bench_note notes[BENCH_MAX_NOTES];
	int nr_notes;
	struct bench_bpf_ids held_before;	/* BPF objects held before setup */
	struct bench_prog_stats prog_stats;	/* env.prog_stats only */
};

/* ---- registry ----
 * A family registers each ops table where it defines it:
 * BENCH_REGISTER(bench_foo) puts a registration into the bench_registry
 * section, which the linker gathers from every object (registry.c walks
 * __start_/__stop_bench_registry).  The list is ordered by family, then by
 * the source line of each registration: the order a family writes its
 * register lines in is the order `benchbpf -l` lists them. */
struct bench_registration {
	const struct bench *bench;
	const char *file;
	int line;
};

#define BENCH_REGISTER(var)							\
	static const struct bench_registration bench_registration_##var	\
	__attribute__((used, section("bench_registry"),				\
		       aligned(__alignof__(struct bench_registration)))) =	\
		{ &(var), __FILE__, __LINE__ }

const struct bench *bench_find(const char *name);
/* Every registered table, sorted; the caller frees the array (NULL: -ENOMEM). */
const struct bench **bench_all(int *count);
/* Index of parameter `name` in b->params, or -1 (util.c: families use it). */
int bench_param_index(const struct bench *b, const char *name);
/* Whether benchmark b takes parameter p of its table (p->only). */
bool bench_param_applies(const struct bench *b, const struct bench_param_def *p);

/* ---- run lifecycle (harness.c) ----
 * init -> start -> (wait)* -> finish.  finish always joins every thread
 * and tears down; it is safe after any failure of start. */
int bench_ctx_init(struct bench_ctx *ctx, const struct bench *b);
/* Every check start makes before loading anything; loads nothing. */
int bench_validate(struct bench_ctx *ctx);
int bench_start(struct bench_ctx *ctx);
/* go_fd's start time that calls the run off before it starts (the other
 * side of a duet failed). */
#define BENCH_GO_CALL_OFF UINT64_MAX
/* Wait up to timeout_ms for more than `seen` samples or the end.
 * Returns the number of samples taken so far and, read under the same
 * lock, whether sampling is over (then no sample follows that count). */
int bench_wait(struct bench_ctx *ctx, int seen, int timeout_ms, bool *done);
void bench_finish(struct bench_ctx *ctx);
/* From the caller's thread while the run goes on: end the warm-up after
 * `samples` samples, or as soon after as the sampler allows (a sample
 * already in measurement keeps the ends it read).  The measured part keeps
 * its full length after it. */
void bench_request_warmup_end(struct bench_ctx *ctx, int samples);
/* How many samples warm-up is now: it moves only to samples not yet taken. */
int bench_warmup_samples(struct bench_ctx *ctx);
void bench_ctx_destroy(struct bench_ctx *ctx);
/* How many runs got as far as setup since the core was loaded: lets tests
 * prove that a rejected option loaded nothing. */
unsigned long bench_setup_count(void);

/* ---- the host watch (hostwatch.c), the sampler's ----
 * What the host did to a run: start before the first sample (NULL when out
 * of memory: then nothing is read), read into each sample right after its
 * counters (late_ns aside, the sampler's own), end after the last: notes
 * metadata "host_watch" (CPUs counted for steal, whether migrations are
 * known, the watch's cost per sample) and frees it.  NULL-safe. */
struct bench_host_watch;
struct bench_host_watch *bench_host_watch_start(struct bench_ctx *ctx);
void bench_host_watch_read(struct bench_host_watch *hw, struct bench_sample *s);
void bench_host_watch_end(struct bench_host_watch *hw);

/* ---- helpers for families ----
 * The clock, the CPU count, errors, stop, notes and series are util.c's,
 * below everything else of the core; bench_fail_bpf and the tgid and errno
 * helpers are the loader's, bench_getpgid_producer is producer.c's. */
static inline bool bench_stopping(struct bench_ctx *ctx)
{
	return atomic_load_explicit(&ctx->stop, memory_order_relaxed);
}

static inline int64_t bench_param(struct bench_ctx *ctx, const char *name)
{
	int i = bench_param_index(ctx->bench, name);

	return i < 0 ? 0 : ctx->params[i];
}

/* A BENCH_PARAM_STRING parameter's value ("" if there is none). */
static inline const char *bench_param_str(struct bench_ctx *ctx, const char *name)
{
	int i = bench_param_index(ctx->bench, name);

	return i < 0 ? "" : ctx->param_str[i];
}

/* Record the first error and ask every thread to stop.  Returns -err. */
int bench_fail(struct bench_ctx *ctx, enum bench_err_kind kind, int err,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Ask every thread to stop (bench_stopping() turns true) and wake the sampler. */
void bench_request_stop(struct bench_ctx *ctx);

/* Classify a libbpf load/attach failure: EPERM/EINVAL/ENOENT/EOPNOTSUPP of a
 * program kind the kernel refuses => UNSUPPORTED naming `what`. */
int bench_fail_bpf(struct bench_ctx *ctx, int err, const char *what,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

uint64_t bench_now_ns(void);

/*
 * One getpgid() call as the kernel bench's producers make it.  Its loops
 * call syscall(__NR_getpgid) with no argument, and in its compiled loop the
 * register that becomes the pid holds a leftover code address: a pid no
 * task has, so every call fails its task lookup (ESRCH).  Pass such a pid,
 * rather than 0 (which takes the calling task's shortcut).
 */
#define BENCH_GETPGID_NO_SUCH_PID (-1)
static inline void bench_getpgid_call(void)
{
	(void)syscall(__NR_getpgid, BENCH_GETPGID_NO_SUCH_PID);
}

/* A growable array of doubles: what a family keeps of a run as it goes. */
struct bench_values {
	double *v;
	int len, cap;
};
/* Append x.  0, or -ENOMEM with the array as it was. */
int bench_values_push(struct bench_values *a, double x);
void bench_values_free(struct bench_values *a);

/* Copy len values into a new series of the result.  0 or -ENOMEM. */
int bench_series_add(struct bench_ctx *ctx, const char *name, const double *values, int len);
/* Set (or replace) metadata[key] of the result. */
void bench_note(struct bench_ctx *ctx, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Producer body for families whose BPF side fires on getpgid(). */
int bench_getpgid_producer(struct bench_ctx *ctx, int idx);

/* Our tgid for BPF-side filters: through a whoami test run (right in any
 * pid namespace), else from /proc (0 inside a nested pid namespace). */
struct bpf_program;
struct bpf_link;
uint32_t bench_bpf_tgid(struct bpf_program *whoami);
uint32_t bench_own_tgid(void);
int bench_nr_cpus(void);
/* "EPERM", "ENOTSUPP", ... for messages. */
const char *bench_errno_name(int err);
/* ctx->trigger, for every family whose BPF programs fire on an attach point: the
 * section names of the attached programs (what libbpf attached to), joined with
 * " + ", so that no family spells a tracepoint by hand.  NULL entries end the list. */
void bench_set_trigger(struct bench_ctx *ctx, struct bpf_program *const *progs, int n);
/* A program's attach point as bench_set_trigger names it ("tp/syscalls/..."). */
const char *bench_attach_point(const struct bpf_program *prog);

/* ---- one BPF producer on getpgid() (producer.c, bpf/producer.bpf.h) ----
 *
 * A new family that fires on getpgid():
 *  - bpf/<f>.bpf.c includes "producer.bpf.h", guards its body with
 *    producer_is_ours() and writes GETPGID_PROGRAMS(<prog>, <body>(ctx));
 *  - csrc/bench_<f>.c writes BENCH_SKELETON_CALLBACKS(<f>) once, a const
 *    struct bench_producer_ops { BENCH_SKELETON_OPS(<f>), .program, .configure }
 *    (.program = <f>_skel_program after BENCH_SKELETON_PROGRAM(<f>, <prog>)),
 *    BENCH_TRIGGER_PARAM(...) in its params, and in setup
 *    bench_producer_start(ctx, &ops, &st->producer); in teardown
 *    bench_producer_destroy(&st->producer).
 */
enum bench_trigger { BENCH_TRIGGER_AUTO, BENCH_TRIGGER_FENTRY, BENCH_TRIGGER_TP };
extern const char *const bench_trigger_choices[];

#define BENCH_TRIGGER_TP_NAME "syscalls/sys_enter_getpgid"
#define BENCH_TRIGGER_FENTRY_TARGET "sys_getpgid"

/* The `trigger` parameter: `what` runs on getpgid().  auto: fentry if
 * the kernel loads it, else the tracepoint. */
#define BENCH_TRIGGER_PARAM(what)					\
	{ "trigger", NULL, BENCH_PARAM_CHOICE, BENCH_TRIGGER_AUTO, 0, 2,	\
	  bench_trigger_choices,					\
	  "what runs " what " on getpgid(): fentry (the kernel bench's), the " \
	  BENCH_TRIGGER_TP_NAME " tracepoint, or auto: fentry if the kernel " \
	  "loads it, else the tracepoint" }
/* For families whose kernel bench attaches to the tracepoint: auto takes it. */
#define BENCH_TRIGGER_PARAM_TP_FIRST(what)				\
	{ "trigger", NULL, BENCH_PARAM_CHOICE, BENCH_TRIGGER_AUTO, 0, 2,	\
	  bench_trigger_choices,					\
	  "what runs " what " on getpgid(): the " BENCH_TRIGGER_TP_NAME	\
	  " tracepoint (the kernel bench's, and what auto picks) or fentry " \
	  "on the syscall" }

struct bench_producer_ops {
	const char *what;		/* "the ring buffer producer", in messages */
	const char *tp_feature;		/* NULL: "tracepoint programs" */
	bool tp_first;			/* auto takes the tracepoint */
	/* The skeleton, typed away: BENCH_SKELETON_OPS(<f>) fills these. */
	void *(*open)(void);
	int (*load)(void *skel);
	void (*destroy)(void *skel);
	struct bpf_program *(*whoami)(void *skel);
	uint32_t *(*filter_tgid)(void *skel);	/* in .bss: set after load */
	/* The entry point of this benchmark for the trigger. */
	struct bpf_program *(*program)(struct bench_ctx *ctx, void *skel, bool fentry);
	/* Between open and load: rodata, map sizes.  0 or -errno (optional). */
	int (*configure)(struct bench_ctx *ctx, void *skel);
};

struct bench_producer {
	const struct bench_producer_ops *ops;
	void *skel;
	struct bpf_program *prog;
	struct bpf_link *link;
	uint32_t tgid;			/* what the filter compares with */
};

/* Choose the trigger (param "trigger"), open, configure, load, filter on
 * this process as BPF sees it, attach; set ctx->trigger.  0, or the error
 * recorded with bench_fail* (UNSUPPORTED names the refused feature). */
int bench_producer_start(struct bench_ctx *ctx, const struct bench_producer_ops *ops,
			 struct bench_producer *p);
/* Stop firing (NULL-safe); destroy also frees the skeleton. */
void bench_producer_detach(struct bench_producer *p);
void bench_producer_destroy(struct bench_producer *p);

#define BENCH_SKELETON_CALLBACKS(f)					\
	static void *f##_skel_open(void) { return f##_bpf__open(); }	\
	static int f##_skel_load(void *s) { return f##_bpf__load(s); }	\
	static void f##_skel_destroy(void *s) { f##_bpf__destroy(s); }	\
	static struct bpf_program *f##_skel_whoami(void *s)		\
	{ return ((struct f##_bpf *)s)->progs.producer_whoami; }	\
	static uint32_t *f##_skel_filter_tgid(void *s)			\
	{ return &((struct f##_bpf *)s)->bss->filter_tgid; }
/* .program = f##_skel_program, for a family with one GETPGID_PROGRAMS(name). */
#define BENCH_SKELETON_PROGRAM(f, name)					\
	static struct bpf_program *f##_skel_program(struct bench_ctx *ctx,	\
						    void *s, bool fentry)	\
	{								\
		(void)ctx;						\
		return fentry ? ((struct f##_bpf *)s)->progs.name##_fentry :	\
				((struct f##_bpf *)s)->progs.name##_tp;	\
	}
#define BENCH_SKELETON_OPS(f)						\
	.open = f##_skel_open, .load = f##_skel_load,			\
	.destroy = f##_skel_destroy, .whoami = f##_skel_whoami,		\
	.filter_tgid = f##_skel_filter_tgid

/* ---- libbpf glue (loader.c) ---- */
/* Route libbpf's messages into this run's log (serialised by the caller). */
void bench_log_begin(struct bench_ctx *ctx);
void bench_log_end(struct bench_ctx *ctx);
void bench_log_append(struct bench_log *log, const char *fmt, va_list ap);
/* What a run loaded: snapshot before setup, subtract it after, and once
 * teardown closed everything wait until the kernel freed those objects. */
void bench_bpf_ids_snapshot(struct bench_bpf_ids *ids);
void bench_bpf_ids_subtract(struct bench_bpf_ids *ids, const struct bench_bpf_ids *before);
void bench_bpf_ids_wait_released(const struct bench_bpf_ids *ids, uint64_t timeout_ns);
/* prog_stats: turn the kernel's run-time statistics on for this run (an fd
 * held until close), find the programs setup loaded, read their counters at
 * the window's ends, and close everything (NULL-safe, idempotent). */
int bench_prog_stats_enable(struct bench_ctx *ctx);
int bench_prog_stats_open(struct bench_ctx *ctx);
int bench_prog_stats_read(struct bench_prog_stats *ps, bool window_end);
void bench_prog_stats_close(struct bench_prog_stats *ps);
/* Mount tracefs if events/ is missing; returns 0 or -errno. */
int bench_ensure_tracefs(struct bench_ctx *ctx);
/* UNSUPPORTED unless the kernel exposes its BTF; returns 0 or -errno. */
int bench_check_btf(struct bench_ctx *ctx);
/* OS error (EMFILE) unless `need` more descriptors can be opened. */
int bench_check_fds(struct bench_ctx *ctx, int need);
/* 1 if the kernel's BTF has function `name` (a kfunc a program may call),
 * 0 if not, -errno if its BTF cannot be read. */
int bench_kernel_has_func(const char *name);
/* Whether this process may load and attach tracing BPF programs. */
bool bench_bpf_privileged(void);
/* Raise RLIMIT_MEMLOCK for kernels that still charge it. */
int bench_bump_memlock(void);

/* ---- kernel feature probes (features.c) ---- */
struct bench_feature {
	char name[48];		/* "fentry", "raw_tp", "ringbuf", ... */
	bool supported;
	int err;		/* positive errno the kernel answered, 0 if supported */
	char detail[256];	/* what was tried and what the kernel said */
};

/* Probe each attach kind and map type by loading (and where it matters
 * attaching) a minimal program; everything is freed before returning.
 * Fills up to max entries, returns how many.  ctx: initialised for
 * bench_features_probe by the caller. */
int bench_probe_features(struct bench_ctx *ctx, struct bench_feature *out, int max);
/* What the caller initialises that context for (bench_ctx_init): the probes
 * sit below the harness, which benchmarks asking one probe also call. */
extern const struct bench bench_features_probe;
/* The one probe called `name` (as features() names it), with the caller's
 * context: a benchmark decides what the kernel lacks before loading its own
 * programs.  Returns -ENOENT for an unknown name, else 0 and fills *out. */
int bench_probe_feature(struct bench_ctx *ctx, const char *name, struct bench_feature *out);
/* Fails the run unless probe `name` passes: "unsupported" with the printf-style
 * account of what is missing and the probe's detail, or a permission error where
 * the probe was refused for want of privileges (what: the program kind, for it). */
int bench_require_feature(struct bench_ctx *ctx, const char *name, const char *what,
			  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif /* BENCHBPF_BENCH_H */
