// SPDX-License-Identifier: MIT
/*
 * The run loop: threads, sampling, stop and cleanup.  No globals: all state
 * is in the caller's struct bench_ctx.  Called by module.c (and features.c);
 * calls the families through their ops tables, the loader and util.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

struct bench_thread_arg {
	struct bench_ctx *ctx;
	int idx;
	bool producer;
};

/* Descriptors a BPF run may open besides one per CPU (perf buffers):
 * objects, maps, programs, links, libbpf's probes, tracefs files. */
#define BENCH_FD_HEADROOM 64

/* How long teardown waits for the kernel to free what a run loaded. */
#define BENCH_RELEASE_WAIT_NS 2000000000ull

static atomic_ulong setup_count;

unsigned long bench_setup_count(void)
{
	return atomic_load(&setup_count);
}

int bench_ctx_init(struct bench_ctx *ctx, const struct bench *b)
{
	int i;

	memset(ctx, 0, sizeof(*ctx));
	ctx->bench = b;
	ctx->env.interval_ns = 1000000000ull;
	ctx->env.warmup_samples = 1;
	ctx->env.duration_samples = 5;
	ctx->env.producer_cnt = 1;
	ctx->env.consumer_cnt = b->default_consumers;
	for (i = 0; b->params && b->params[i].name && i < BENCH_MAX_PARAMS; i++) {
		ctx->params[i] = b->params[i].def;
		if (b->params[i].def_str)
			snprintf(ctx->param_str[i], sizeof(ctx->param_str[i]), "%s",
				 b->params[i].def_str);
	}
	ctx->prog_stats.stats_fd = -1;
	ctx->env.ready_fd = -1;
	ctx->env.go_fd = -1;
	atomic_init(&ctx->stop, false);
	atomic_init(&ctx->running_threads, 0);
	pthread_mutex_init(&ctx->lock, NULL);
	{
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&ctx->cond, &attr);
		pthread_cond_init(&ctx->stop_cond, &attr);
		pthread_condattr_destroy(&attr);
	}
	return 0;
}

void bench_ctx_destroy(struct bench_ctx *ctx)
{
	if (!ctx->finished)
		bench_finish(ctx);
	free(ctx->samples);
	ctx->samples = NULL;
	for (int i = 0; i < ctx->nr_series; i++)
		free(ctx->series[i].values);
	free(ctx->series);
	ctx->series = NULL;
	ctx->nr_series = 0;
	free(ctx->log.buf);
	ctx->log.buf = NULL;
	pthread_cond_destroy(&ctx->cond);
	pthread_cond_destroy(&ctx->stop_cond);
	pthread_mutex_destroy(&ctx->lock);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* A CPU list as the kernel bench's bitmap: ascending, each CPU once. */
static void cpuset_normalise(int *cpus, int *len)
{
	int i, n = 0;

	qsort(cpus, *len, sizeof(*cpus), cmp_int);
	for (i = 0; i < *len; i++)
		if (n == 0 || cpus[i] != cpus[n - 1])
			cpus[n++] = cpus[i];
	*len = n;
}

/*
 * The kernel bench's placement (next_cpu() and setup_benchmark()):
 * consumers take their set's CPUs in ascending order, or CPUs 0, 1, ...
 * in turn; producers take theirs, or without a set go on after the last
 * consumer CPU.  Without a set the count wraps around the online CPUs, as
 * since Linux 6.5 (before, more threads than CPUs failed to pin).  A set
 * with fewer CPUs than threads is an error.
 */
static int place_threads(struct bench_ctx *ctx, int nr_cpus)
{
	struct bench_env *env = &ctx->env;
	int *cpu = ctx->thread_cpus, next = 0, i;

	cpuset_normalise(env->cons_cpus, &env->cons_cpus_len);
	cpuset_normalise(env->prod_cpus, &env->prod_cpus_len);
	if (env->cons_cpus_len && env->consumer_cnt > env->cons_cpus_len)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "cons_affinity lists %d CPUs for consumers=%d: list one CPU per consumer",
				  env->cons_cpus_len, env->consumer_cnt);
	if (env->prod_cpus_len && env->producer_cnt > env->prod_cpus_len)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "prod_affinity lists %d CPUs for producers=%d: list one CPU per producer",
				  env->prod_cpus_len, env->producer_cnt);
	for (i = 0; i < env->consumer_cnt; i++) {
		if (env->cons_cpus_len) {
			cpu[i] = env->cons_cpus[i];
			next = cpu[i] + 1;
		} else {
			cpu[i] = next++ % nr_cpus;
		}
	}
	cpu += env->consumer_cnt;
	for (i = 0; i < env->producer_cnt; i++)
		cpu[i] = env->prod_cpus_len ? env->prod_cpus[i] : next++ % nr_cpus;
	return 0;
}

/* Common options the kernel bench would only discover after loading. */
static int validate_env(struct bench_ctx *ctx)
{
	const struct bench *b = ctx->bench;
	struct bench_env *env = &ctx->env;
	int nr_cpus = bench_nr_cpus(), i;

	if (env->producer_cnt < 1 || env->producer_cnt > BENCH_MAX_THREADS ||
	    (b->max_producers && env->producer_cnt > b->max_producers))
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "producers=%d out of range: %s takes 1..%d producers",
				  env->producer_cnt, b->name,
				  b->max_producers ? b->max_producers : BENCH_MAX_THREADS);
	if (env->consumer_cnt < 0 || env->consumer_cnt > b->max_consumers)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  b->max_consumers ?
				  "consumers=%d out of range: %s takes 0..%d consumers" :
				  "consumers=%d not allowed: %s takes no consumer (0..%d)",
				  env->consumer_cnt, b->name, b->max_consumers);
	if (env->warmup_samples < 0 || env->duration_samples < 1)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "warmup=%d/duration=%d intervals: need warmup >= 0 and duration >= 1",
				  env->warmup_samples, env->duration_samples);
	if (env->interval_ns < 1000000ull)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "interval=%llu ns too short: at least 1 ms",
				  (unsigned long long)env->interval_ns);
	if (env->first_sample_ns > env->interval_ns ||
	    (env->first_sample_ns && env->warmup_samples < 1))
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "first_sample_ns=%llu with warmup=%d intervals of %llu ns: "
				  "a shortened first sample is warm-up, at most one interval",
				  (unsigned long long)env->first_sample_ns, env->warmup_samples,
				  (unsigned long long)env->interval_ns);
	if ((long long)env->warmup_samples + env->duration_samples > BENCH_MAX_SAMPLES)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "warmup=%d + duration=%d intervals = %lld samples: at most %d",
				  env->warmup_samples, env->duration_samples,
				  (long long)env->warmup_samples + env->duration_samples,
				  BENCH_MAX_SAMPLES);
	if (b->always_pinned)
		env->affinity = true;
	if (!env->affinity)
		return 0;
	for (i = 0; i < env->cons_cpus_len; i++)
		if (env->cons_cpus[i] < 0 || env->cons_cpus[i] >= nr_cpus)
			return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
					  "cons_affinity names CPU %d: this machine has CPUs 0..%d",
					  env->cons_cpus[i], nr_cpus - 1);
	for (i = 0; i < env->prod_cpus_len; i++)
		if (env->prod_cpus[i] < 0 || env->prod_cpus[i] >= nr_cpus)
			return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
					  "prod_affinity names CPU %d: this machine has CPUs 0..%d",
					  env->prod_cpus[i], nr_cpus - 1);
	return place_threads(ctx, nr_cpus);
}

static void *thread_main(void *p)
{
	struct bench_thread_arg *arg = p;
	struct bench_ctx *ctx = arg->ctx;
	int (*body)(struct bench_ctx *, int);
	char name[16];
	int err;

	/* Named, so that top -H, and tests, can tell the threads apart. */
	snprintf(name, sizeof(name), "benchbpf-%c%d", arg->producer ? 'p' : 'c', arg->idx);
	pthread_setname_np(pthread_self(), name);
	atomic_store(&ctx->thread_tids[arg->producer ? ctx->env.consumer_cnt + arg->idx : arg->idx],
		     (int)syscall(SYS_gettid));
	body = arg->producer ? ctx->bench->producer : ctx->bench->consumer;
	err = body ? body(ctx, arg->idx) : 0;
	if (err < 0)
		bench_fail(ctx, BENCH_ERR_BENCH, -err, "%s #%d failed: %s",
			   arg->producer ? "producer" : "consumer", arg->idx,
			   strerror(-err));
	atomic_fetch_sub(&ctx->running_threads, 1);
	return NULL;
}

/*
 * prog_stats window: read every program's counters right after the
 * sampler read the benchmark's, at the end of warm-up (without warm-up the
 * window starts at load) and at the last sample, so that run counts compare
 * with hits summed over the kept samples.  `since` is when that sample's
 * reading began: boundary_ns bounds how far apart the two readings are.
 */
static void prog_stats_boundary(struct bench_ctx *ctx, int k, uint64_t since)
{
	struct bench_prog_stats *ps = &ctx->prog_stats;
	uint64_t took;
	int err;

	if (k == ctx->env.warmup_samples && k > 0)
		err = bench_prog_stats_read(ps, false);
	else if (k == ctx->nr_samples_total)
		err = bench_prog_stats_read(ps, true);
	else
		return;
	if (err) {
		bench_fail(ctx, BENCH_ERR_OS, -err,
			   "%s: prog_stats=True: reading the programs' statistics failed: %s",
			   ctx->bench->name, strerror(-err));
		return;
	}
	took = bench_now_ns() - since;
	if (took > ps->boundary_ns)
		ps->boundary_ns = took;
}

static void timespec_at(struct timespec *ts, uint64_t ns)
{
	ts->tv_sec = ns / 1000000000ull;
	ts->tv_nsec = ns % 1000000000ull;
}

/* Adds up the CPU time each producer thread has run, into cpu_ns[] (one
 * reading per producer, kept as it was when a thread's clock can no longer
 * be read: that thread has returned).  Returns the sum. */
static uint64_t producers_cpu_ns(struct bench_ctx *ctx, uint64_t *cpu_ns)
{
	struct timespec ts;
	uint64_t sum = 0;

	for (int i = 0; i < ctx->nr_producer_clocks; i++) {
		if (clock_gettime(ctx->producer_clocks[i], &ts) == 0)
			cpu_ns[i] = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
		sum += cpu_ns[i];
	}
	return sum;
}

/* Takes one sample per interval at absolute deadlines, so that ordinary
 * wake-up delays do not add up.  A wake-up half an interval or more late
 * makes one longer sample, marked late, and the deadlines start again from
 * it: catching up with missed deadlines would give a run of samples far
 * shorter than the interval. */
static void *sampler_main(void *p)
{
	struct bench_ctx *ctx = p;
	uint64_t interval = ctx->env.interval_ns;
	uint64_t prev = bench_now_ns(), deadline = prev, now;
	uint64_t cpu_ns[BENCH_MAX_THREADS] = { 0 };
	uint64_t prev_cpu = producers_cpu_ns(ctx, cpu_ns), cpu;
	struct bench_sample s;
	struct bench_host_watch *hw;
	struct timespec ts;
	int k;

	pthread_setname_np(pthread_self(), "benchbpf-sample");
	hw = bench_host_watch_start(ctx);
	for (k = 1;; k++) {
		/* A warm-up's left-over part goes first: the deadlines after
		 * it are whole intervals from the warm-up's end. */
		deadline += k == 1 && ctx->env.first_sample_ns ?
			    ctx->env.first_sample_ns : interval;
		timespec_at(&ts, deadline);
		pthread_mutex_lock(&ctx->lock);
		/* The end moves with an early end of warm-up
		 * (bench_request_warmup_end) until this sample's measurement
		 * starts, never during it: measure() and the prog_stats window
		 * see settled ends. */
		if (k > ctx->nr_samples_total) {
			pthread_mutex_unlock(&ctx->lock);
			break;
		}
		while (!bench_stopping(ctx) && bench_now_ns() < deadline)
			pthread_cond_timedwait(&ctx->stop_cond, &ctx->lock, &ts);
		if (!bench_stopping(ctx))
			ctx->measuring = k;
		pthread_mutex_unlock(&ctx->lock);
		if (bench_stopping(ctx))
			break;

		memset(&s, 0, sizeof(s));
		now = bench_now_ns();
		ctx->bench->measure(ctx, &s);
		/* Right after the counters, so that both cover the same time. */
		cpu = producers_cpu_ns(ctx, cpu_ns);
		s.producer_cpu_ns = cpu > prev_cpu ? cpu - prev_cpu : 0;
		prev_cpu = cpu;
		if (ctx->env.prog_stats)
			prog_stats_boundary(ctx, k, now);
		s.interval_ns = now - prev;
		prev = now;
		s.late_ns = now > deadline ? now - deadline : 0;
		bench_host_watch_read(hw, &s);
		if (now - deadline >= interval / 2) {
			s.late = true;
			deadline = now;
		}

		pthread_mutex_lock(&ctx->lock);
		ctx->samples[ctx->nr_samples++] = s;
		ctx->measuring = 0;
		pthread_cond_broadcast(&ctx->cond);
		pthread_mutex_unlock(&ctx->lock);
	}
	bench_host_watch_end(hw);
	pthread_mutex_lock(&ctx->lock);
	ctx->done = true;
	pthread_cond_broadcast(&ctx->cond);
	pthread_mutex_unlock(&ctx->lock);
	return NULL;
}

/* Workers inherit the creator's signal mask: block everything so signals
 * (Ctrl-C) are delivered to the caller's thread only. */
static int spawn(struct bench_ctx *ctx, pthread_t *t, void *(*fn)(void *),
		 void *arg, int cpu)
{
	sigset_t all, old;
	pthread_attr_t attr;
	cpu_set_t *set = NULL;
	size_t set_size = CPU_ALLOC_SIZE(cpu + 1);
	int err = 0;

	pthread_attr_init(&attr);
	if (cpu >= 0) {
		/* Sized for the CPU: a fixed cpu_set_t ends at CPU 1023. */
		set = CPU_ALLOC(cpu + 1);
		if (!set) {
			err = ENOMEM;
		} else {
			CPU_ZERO_S(set_size, set);
			CPU_SET_S(cpu, set_size, set);
			err = pthread_attr_setaffinity_np(&attr, set_size, set);
		}
	}
	if (!err) {
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		err = pthread_create(t, &attr, fn, arg);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	pthread_attr_destroy(&attr);
	if (set)
		CPU_FREE(set);
	if (err && cpu >= 0)
		return bench_fail(ctx, BENCH_ERR_OS, err,
				  "cannot start a thread pinned to CPU %d: %s "
				  "(is the CPU outside this process's allowed CPUs?)",
				  cpu, strerror(err));
	if (err)
		return bench_fail(ctx, BENCH_ERR_OS, err, "cannot start thread: %s",
				  strerror(err));
	return 0;
}

/* prog_stats reads the programs a run loads: a run that loads none has
 * nothing to show, which is a mistake worth saying before anything runs. */
static int validate_prog_stats(struct bench_ctx *ctx)
{
	if (ctx->env.prog_stats && ctx->bench->no_bpf)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "prog_stats=True: %s loads no BPF program, there is nothing "
				  "to account (allowed only on benchmarks that load BPF)",
				  ctx->bench->name);
	return 0;
}

/* A required parameter keeps its default, outside min..max, until the
 * caller gives it (read values are range-checked): still outside, not given. */
static int validate_required(struct bench_ctx *ctx)
{
	const struct bench_param_def *p = ctx->bench->params;
	int i, err = 0;

	for (i = 0; !err && p && p[i].name && i < BENCH_MAX_PARAMS; i++) {
		if (!p[i].required || (ctx->params[i] >= p[i].min && ctx->params[i] <= p[i].max))
			continue;
		if (p[i].type == BENCH_PARAM_CHOICE)
			err = bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
					 "%s needs %s: one of its %lld choices", ctx->bench->name,
					 p[i].name, (long long)(p[i].max - p[i].min + 1));
		else
			err = bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
					 "%s needs %s: an int in %lld..%lld", ctx->bench->name,
					 p[i].name, (long long)p[i].min, (long long)p[i].max);
	}
	return err;
}

int bench_validate(struct bench_ctx *ctx)
{
	const struct bench *b = ctx->bench;
	int err;

	err = validate_env(ctx);
	if (!err)
		err = validate_prog_stats(ctx);
	if (!err)
		err = validate_required(ctx);
	if (err)
		return err;
	if (b->validate) {
		err = b->validate(ctx);
		if (err)
			return bench_fail(ctx, BENCH_ERR_VALUE, -err,
					  "%s: invalid options", b->name);
	}
	return 0;
}

/* How long a run loaded for a duet waits for its start time. */
#define BENCH_GO_TIMEOUT_MS 120000

/*
 * A duet's gate, between setup and the threads: say "loaded" on ready_fd,
 * then wait for the start time on go_fd and sleep until it, so that both
 * sides' threads and samplers start at one instant.  Stops waiting on a
 * signal (Ctrl-C), a closed pipe or a call-off, each an error of the run.
 */
static int wait_for_start(struct bench_ctx *ctx)
{
	struct pollfd pfd = { .fd = ctx->env.go_fd, .events = POLLIN };
	uint64_t start_ns = 0;
	struct timespec ts;
	const char loaded = 'r';
	ssize_t n;
	int r;

	if (ctx->env.ready_fd >= 0 && write(ctx->env.ready_fd, &loaded, 1) != 1)
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: saying it is loaded: %s",
				  ctx->bench->name, strerror(errno));
	if (ctx->env.go_fd < 0)
		return 0;
	r = poll(&pfd, 1, BENCH_GO_TIMEOUT_MS);
	if (r < 0)
		return bench_fail(ctx, BENCH_ERR_OS, errno,
				  "%s: interrupted while waiting for its start time: %s",
				  ctx->bench->name, strerror(errno));
	if (r == 0)
		return bench_fail(ctx, BENCH_ERR_BENCH, ETIMEDOUT,
				  "%s: no start time within %d s of loading",
				  ctx->bench->name, BENCH_GO_TIMEOUT_MS / 1000);
	n = read(ctx->env.go_fd, &start_ns, sizeof(start_ns));
	if (n != (ssize_t)sizeof(start_ns))
		return bench_fail(ctx, BENCH_ERR_BENCH, n < 0 ? errno : EPIPE,
				  "%s: the start time's pipe closed before a start time came",
				  ctx->bench->name);
	if (start_ns == BENCH_GO_CALL_OFF)
		return bench_fail(ctx, BENCH_ERR_BENCH, ECANCELED,
				  "%s: called off before it started (the other side failed)",
				  ctx->bench->name);
	timespec_at(&ts, start_ns);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	/* Both sides note the one time: a test can see that they started together. */
	bench_note(ctx, "duet_start_ns", "%llu", (unsigned long long)start_ns);
	return 0;
}

int bench_start(struct bench_ctx *ctx)
{
	const struct bench *b = ctx->bench;
	struct bench_env *env = &ctx->env;
	int n, i, err;

	err = bench_validate(ctx);
	if (err)
		return err;

	ctx->nr_samples_total = env->warmup_samples + env->duration_samples;
	ctx->samples = calloc(ctx->nr_samples_total, sizeof(*ctx->samples));
	n = env->consumer_cnt + env->producer_cnt;
	ctx->threads = calloc(n, sizeof(*ctx->threads));
	ctx->thread_args = calloc(n, sizeof(*ctx->thread_args));
	if (!ctx->samples || !ctx->threads || !ctx->thread_args)
		return bench_fail(ctx, BENCH_ERR_OS, ENOMEM, "out of memory");

	/* Checked here, before setup, so that nothing is loaded where no
	 * BPF benchmark could run: too few descriptors, no kernel BTF. */
	if (!b->no_bpf) {
		err = bench_check_fds(ctx, BENCH_FD_HEADROOM + bench_nr_cpus());
		if (!err)
			err = bench_check_btf(ctx);
		if (err)
			return err;
	}

	if (!b->no_bpf)
		bench_bpf_ids_snapshot(&ctx->held_before);
	atomic_fetch_add(&setup_count, 1);
	ctx->setup_called = true;
	/* On before load, so that without warm-up every run since load counts. */
	if (env->prog_stats) {
		err = bench_prog_stats_enable(ctx);
		if (err)
			return err;
	}
	if (b->setup) {
		err = b->setup(ctx);
		if (err)
			return bench_fail(ctx, BENCH_ERR_BENCH, -err,
					  "%s: setup failed: %s", b->name, strerror(-err));
	}
	if (env->prog_stats) {
		err = bench_prog_stats_open(ctx);
		if (err)
			return err;
		ctx->prog_stats.started = env->warmup_samples == 0;
	}
	err = wait_for_start(ctx);
	if (err)
		return err;

	for (i = 0; i < n; i++) {
		struct bench_thread_arg *arg = &ctx->thread_args[i];

		arg->ctx = ctx;
		arg->producer = i >= env->consumer_cnt;
		arg->idx = arg->producer ? i - env->consumer_cnt : i;
		atomic_fetch_add(&ctx->running_threads, 1);
		err = spawn(ctx, &ctx->threads[i], thread_main, arg,
			    env->affinity ? ctx->thread_cpus[i] : -1);
		if (err) {
			atomic_fetch_sub(&ctx->running_threads, 1);
			return err;
		}
		ctx->nr_threads++;
		/* A producer that has already returned has no clock left
		 * (ESRCH): it runs no more, so it adds nothing to count. */
		if (arg->producer &&
		    pthread_getcpuclockid(ctx->threads[i],
					  &ctx->producer_clocks[ctx->nr_producer_clocks]) == 0)
			ctx->nr_producer_clocks++;
	}

	err = spawn(ctx, &ctx->sampler, sampler_main, ctx, -1);
	if (err)
		return err;
	ctx->sampler_started = true;
	return 0;
}

/* The fewest samples a request may still end warm-up at: a sample in
 * measurement has already read the ends as they were. */
static int settled_samples(const struct bench_ctx *ctx)
{
	return (ctx->measuring ? ctx->measuring : ctx->nr_samples) + 1;
}

void bench_request_warmup_end(struct bench_ctx *ctx, int samples)
{
	int at;

	pthread_mutex_lock(&ctx->lock);
	at = samples > settled_samples(ctx) ? samples : settled_samples(ctx);
	if (at < ctx->env.warmup_samples) {
		/* The measured part keeps its full length after warm-up. */
		ctx->nr_samples_total = at + ctx->env.duration_samples;
		__atomic_store_n(&ctx->env.warmup_samples, at, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&ctx->lock);
}

int bench_warmup_samples(struct bench_ctx *ctx)
{
	int n;

	pthread_mutex_lock(&ctx->lock);
	n = ctx->env.warmup_samples;
	pthread_mutex_unlock(&ctx->lock);
	return n;
}

int bench_wait(struct bench_ctx *ctx, int seen, int timeout_ms, bool *done)
{
	struct timespec ts;
	int n;

	timespec_at(&ts, bench_now_ns() + (uint64_t)timeout_ms * 1000000ull);
	pthread_mutex_lock(&ctx->lock);
	while (!ctx->done && ctx->nr_samples <= seen) {
		if (pthread_cond_timedwait(&ctx->cond, &ctx->lock, &ts) == ETIMEDOUT)
			break;
	}
	n = ctx->nr_samples;
	*done = ctx->done;
	pthread_mutex_unlock(&ctx->lock);
	return n;
}

void bench_finish(struct bench_ctx *ctx)
{
	int i;

	if (ctx->finished)
		return;
	bench_request_stop(ctx);
	if (ctx->setup_called && ctx->bench->stop)
		ctx->bench->stop(ctx);
	for (i = 0; i < ctx->nr_threads; i++)
		pthread_join(ctx->threads[i], NULL);
	if (ctx->sampler_started)
		pthread_join(ctx->sampler, NULL);
	if (ctx->setup_called && ctx->bench->collect && ctx->sampler_started &&
	    ctx->error.kind == BENCH_ERR_NONE)
		ctx->bench->collect(ctx);
	/* Before the wait below: our descriptors keep the programs alive. */
	bench_prog_stats_close(&ctx->prog_stats);
	if (ctx->setup_called && !ctx->bench->no_bpf) {
		struct bench_bpf_ids *loaded = malloc(sizeof(*loaded));

		if (loaded) {
			bench_bpf_ids_snapshot(loaded);
			bench_bpf_ids_subtract(loaded, &ctx->held_before);
		}
		if (ctx->bench->teardown)
			ctx->bench->teardown(ctx);
		if (loaded)
			bench_bpf_ids_wait_released(loaded, BENCH_RELEASE_WAIT_NS);
		free(loaded);
	} else if (ctx->setup_called && ctx->bench->teardown) {
		ctx->bench->teardown(ctx);
	}
	free(ctx->threads);
	ctx->threads = NULL;
	free(ctx->thread_args);
	ctx->thread_args = NULL;
	ctx->nr_threads = 0;
	ctx->finished = true;
}
