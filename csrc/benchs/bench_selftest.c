// SPDX-License-Identifier: MIT
/*
 * selftest: a benchmark that exists to test the harness itself.
 *
 * Producers call getpgid() in a loop.  Two copies of bpf/selftest.bpf.c
 * count those calls: the first copy on the syscall's entry tracepoint
 * (hits), the second on its exit (extra "exits"); producers also count
 * their calls in user space (extra "calls").  Consumers, when asked for,
 * block in the kernel until .stop wakes them.
 *
 * `bpf_work` adds a known cost to each hit on the BPF side (the entry
 * program's steps), as count-local's work_per_hit does in user space;
 * `bpf_work_every` runs those steps on one hit in k only, a finer setting
 * (extra "worked" counts the hits that ran them).
 *
 * The `fault` parameter makes one stage fail for real: the second program
 * is rejected by the verifier after the first one is loaded and attached,
 * the second attach targets a tracepoint that does not exist, or a
 * producer, a consumer or the sampler fails mid-run.  Tests then check that
 * the harness stops, detaches and frees everything, and joins every thread.
 * `measure-stall` is not a failure: one measurement blocks the sampler for
 * two and a half intervals, as a preempted sampler would be.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bench.h"
#include "selftest.h"
#include "selftest.skel.h"

enum selftest_fault {
	FAULT_NONE,
	FAULT_SETUP_SECOND_LOAD,
	FAULT_SETUP_ATTACH,
	FAULT_PRODUCER,
	FAULT_CONSUMER,
	FAULT_MEASURE,
	FAULT_MEASURE_STALL,
};

static const char *const fault_names[] = {
	[FAULT_NONE] = "none",
	[FAULT_SETUP_SECOND_LOAD] = "setup-second-load",
	[FAULT_SETUP_ATTACH] = "setup-attach",
	[FAULT_PRODUCER] = "producer",
	[FAULT_CONSUMER] = "consumer",
	[FAULT_MEASURE] = "measure",
	[FAULT_MEASURE_STALL] = "measure-stall",
	NULL,
};

/* A tracepoint name no kernel has: the attach fault asks for it. */
#define MISSING_TP "sys_exit_benchbpf_missing"

struct selftest_calls {
	_Alignas(128) atomic_ullong value;
};

struct selftest_state {
	struct selftest_bpf *first, *second;
	struct bpf_link *first_link, *second_link;
	struct selftest_calls *calls;	/* one per producer */
	int wake_fd;			/* eventfd: .stop makes it readable */
	uint64_t started_ns;		/* end of setup: fault_after_ms counts from here */
	atomic_bool measure_failed;	/* also: the stall happened */
	unsigned long long worked;	/* the slots' worked counts at the last sample */
};

static const struct bench_param_def selftest_params[] = {
	{ .name = "fault", .cli = "--fault", .type = BENCH_PARAM_CHOICE,
	  .def = FAULT_NONE, .min = 0, .max = FAULT_MEASURE_STALL, .choices = fault_names,
	  .help = "stage that fails on purpose" },
	{ .name = "fault_after_ms", .cli = "--fault-after-ms", .type = BENCH_PARAM_INT,
	  .def = 0, .min = 0, .max = 60000,
	  .help = "run time before a producer, consumer, measure or measure-stall fault, ms" },
	{ .name = "setup_delay_ms", .cli = "--setup-delay-ms", .type = BENCH_PARAM_INT,
	  .def = 0, .min = 0, .max = 10000,
	  .help = "pause in setup between the first and the second program, ms" },
	{ .name = "teardown_delay_ms", .cli = "--teardown-delay-ms", .type = BENCH_PARAM_INT,
	  .def = 0, .min = 0, .max = 10000,
	  .help = "pause in teardown between the two detaches, ms" },
	{ .name = "bpf_work", .cli = "--bpf-work", .type = BENCH_PARAM_INT,
	  .def = 0, .min = 0, .max = SELFTEST_MAX_WORK,
	  .help = "dependent multiply-add steps the entry program adds to each hit: "
		  "a known slowdown on the BPF path (0: none)" },
	{ .name = "bpf_work_every", .cli = "--bpf-work-every", .type = BENCH_PARAM_INT,
	  .def = 1, .min = 1, .max = SELFTEST_MAX_WORK_EVERY,
	  .help = "run the bpf_work steps on one hit in this many (per CPU), none on the "
		  "others: a slowdown of about bpf_work's over this, finer than a step "
		  "(1: every hit; needs bpf_work)" },
	{ 0 },
};

/* worked: hits on which the entry program ran the bpf_work steps. */
static const char *const selftest_extra[] = { "exits", "calls", "worked", NULL };

/* Sleeps the whole time even when signals interrupt it: a delay that a
 * Ctrl-C could cut short would not test what happens during it. */
static void sleep_ms(int64_t ms)
{
	struct timespec ts;
	uint64_t until = bench_now_ns() + (uint64_t)ms * 1000000ull;

	ts.tv_sec = until / 1000000000ull;
	ts.tv_nsec = until % 1000000000ull;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static bool fault_due(struct bench_ctx *ctx, struct selftest_state *st)
{
	return bench_now_ns() - st->started_ns >=
	       (uint64_t)bench_param(ctx, "fault_after_ms") * 1000000ull;
}

static int selftest_validate(struct bench_ctx *ctx)
{
	enum selftest_fault fault = bench_param(ctx, "fault");
	int64_t after = bench_param(ctx, "fault_after_ms");

	if (after && fault != FAULT_PRODUCER && fault != FAULT_CONSUMER &&
	    fault != FAULT_MEASURE && fault != FAULT_MEASURE_STALL)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "fault_after_ms=%lld given with fault='%s': it only delays "
				  "the 'producer', 'consumer', 'measure' and 'measure-stall' faults",
				  (long long)after, fault_names[fault]);
	if (bench_param(ctx, "bpf_work_every") > 1 && !bench_param(ctx, "bpf_work"))
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "bpf_work_every=%lld with bpf_work=0: it spreads the bpf_work "
				  "steps over hits; give bpf_work in 1..%d, or bpf_work_every=1",
				  (long long)bench_param(ctx, "bpf_work_every"), SELFTEST_MAX_WORK);
	if (fault == FAULT_CONSUMER && ctx->env.consumer_cnt < 1)
		return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL,
				  "fault='consumer' with consumers=%d: a consumer fault needs "
				  "consumers >= 1", ctx->env.consumer_cnt);
	return 0;
}

/* Open one copy of the object with one program enabled, load it, attach it. */
static int load_copy(struct bench_ctx *ctx, struct selftest_bpf **out,
		     struct bpf_link **link, bool exit_prog, bool reject,
		     bool missing_tp)
{
	const char *pname = exit_prog ? "selftest_exit" : "selftest_enter";
	const char *tp = exit_prog ? (missing_tp ? MISSING_TP : "sys_exit_getpgid") :
		"sys_enter_getpgid";
	struct bpf_program *prog;
	struct selftest_bpf *skel;
	int err;

	skel = selftest_bpf__open();
	*out = skel;
	if (!skel)
		return bench_fail(ctx, BENCH_ERR_BENCH, errno,
				  "%s: opening the selftest BPF object failed: %s",
				  ctx->bench->name, strerror(errno));
	skel->rodata->reject = reject;
	skel->rodata->bpf_work = (__u32)bench_param(ctx, "bpf_work");
	skel->rodata->bpf_work_every = (__u32)bench_param(ctx, "bpf_work_every");
	prog = exit_prog ? skel->progs.selftest_exit : skel->progs.selftest_enter;
	err = bpf_program__set_autoload(prog, true);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.producer_whoami, true);
	if (err)
		return bench_fail(ctx, BENCH_ERR_BENCH, -err, "%s: enabling %s failed: %s",
				  ctx->bench->name, pname, strerror(-err));
	err = selftest_bpf__load(skel);
	if (err)
		return bench_fail_bpf(ctx, err, "tracepoint programs", "loading %s%s",
				      pname, reject ? " (made invalid on purpose: fault='setup-second-load')" : "");
	/* Our producers as BPF sees them: getpid() is the id in our own pid
	 * namespace, not the one BPF compares. */
	skel->bss->filter_tgid = bench_bpf_tgid(skel->progs.producer_whoami);
	*link = bpf_program__attach_tracepoint(prog, "syscalls", tp);
	if (!*link) {
		err = -errno;
		if (missing_tp)
			return bench_fail(ctx, BENCH_ERR_BENCH, -err,
					  "%s: attaching %s to syscalls:%s failed on purpose "
					  "(fault='setup-attach'): %s",
					  ctx->bench->name, pname, tp, strerror(-err));
		return bench_fail_bpf(ctx, err, "tracepoint programs",
				      "attaching %s to syscalls:%s", pname, tp);
	}
	return 0;
}

static int selftest_setup(struct bench_ctx *ctx)
{
	enum selftest_fault fault = bench_param(ctx, "fault");
	struct selftest_state *st;
	int err, i;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->wake_fd = -1;
	atomic_init(&st->measure_failed, false);
	ctx->priv = st;
	snprintf(ctx->trigger, sizeof(ctx->trigger), "getpgid() syscall");

	st->calls = aligned_alloc(128, sizeof(*st->calls) * ctx->env.producer_cnt);
	if (!st->calls)
		return -ENOMEM;
	for (i = 0; i < ctx->env.producer_cnt; i++)
		atomic_init(&st->calls[i].value, 0);
	st->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (st->wake_fd < 0)
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: eventfd: %s",
				  ctx->bench->name, strerror(errno));

	err = bench_ensure_tracefs(ctx);
	if (err)
		return err;
	err = load_copy(ctx, &st->first, &st->first_link, false, false, false);
	if (err)
		return err;
	sleep_ms(bench_param(ctx, "setup_delay_ms"));
	err = load_copy(ctx, &st->second, &st->second_link, true,
			fault == FAULT_SETUP_SECOND_LOAD, fault == FAULT_SETUP_ATTACH);
	if (err)
		return err;
	st->started_ns = bench_now_ns();
	return 0;
}

static void selftest_stop(struct bench_ctx *ctx)
{
	struct selftest_state *st = ctx->priv;
	uint64_t one = 1;

	/* Level-triggered and never read: every consumer's poll() sees it. */
	if (st && st->wake_fd >= 0 && write(st->wake_fd, &one, sizeof(one)) < 0)
		perror("benchbpf selftest: waking consumers");
}

static void selftest_teardown(struct bench_ctx *ctx)
{
	struct selftest_state *st = ctx->priv;

	if (!st)
		return;
	bpf_link__destroy(st->first_link);
	/* Between the detaches, so that a test can interrupt a teardown
	 * that is half done. */
	sleep_ms(bench_param(ctx, "teardown_delay_ms"));
	bpf_link__destroy(st->second_link);
	selftest_bpf__destroy(st->second);
	selftest_bpf__destroy(st->first);
	if (st->wake_fd >= 0)
		close(st->wake_fd);
	free(st->calls);
	free(st);
	ctx->priv = NULL;
}

static int selftest_producer(struct bench_ctx *ctx, int idx)
{
	struct selftest_state *st = ctx->priv;
	bool faulty = bench_param(ctx, "fault") == FAULT_PRODUCER && idx == 0;
	atomic_ullong *calls = &st->calls[idx].value;
	unsigned int n = 0;

	while (!bench_stopping(ctx)) {
		syscall(SYS_getpgid, 0);
		atomic_fetch_add_explicit(calls, 1, memory_order_relaxed);
		if (faulty && (++n & 255) == 0 && fault_due(ctx, st))
			return bench_fail(ctx, BENCH_ERR_BENCH, EIO,
					  "%s: producer #%d failed on purpose (fault='producer')",
					  ctx->bench->name, idx);
	}
	return 0;
}

static int selftest_consumer(struct bench_ctx *ctx, int idx)
{
	struct selftest_state *st = ctx->priv;
	struct pollfd pfd = { .fd = st->wake_fd, .events = POLLIN };
	bool faulty = bench_param(ctx, "fault") == FAULT_CONSUMER && idx == 0;
	int64_t timeout = faulty ? bench_param(ctx, "fault_after_ms") : -1;
	int n;

	while (!bench_stopping(ctx)) {
		/* Blocks without a timeout: only .stop ends a healthy consumer. */
		n = poll(&pfd, 1, (int)timeout);
		if (n < 0 && errno != EINTR)
			return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: consumer #%d: poll: %s",
					  ctx->bench->name, idx, strerror(errno));
		if (n == 0 && faulty)
			return bench_fail(ctx, BENCH_ERR_BENCH, EIO,
					  "%s: consumer #%d failed on purpose (fault='consumer')",
					  ctx->bench->name, idx);
	}
	return 0;
}

/* A program's hits, swapped out; worked (if not NULL): the sum of its
 * slots' worked counts, which only grow (only the BPF side writes them).
 * Both are read slot by slot: a hit bumps both counts of its slot, so only
 * a hit in flight on that one line falls between them, not every hit
 * during a pass over all the slots. */
static unsigned long long swap_slots(struct selftest_bpf *skel, unsigned long long *worked)
{
	unsigned long long sum = 0;
	int i;

	if (!skel)
		return 0;
	for (i = 0; i < SELFTEST_NR_SLOTS; i++) {
		sum += __atomic_exchange_n(&skel->bss->hits[i].value, 0, __ATOMIC_RELAXED);
		if (worked)
			*worked += __atomic_load_n(&skel->bss->hits[i].worked, __ATOMIC_RELAXED);
	}
	return sum;
}

static void selftest_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct selftest_state *st = ctx->priv;
	unsigned long long worked = 0;
	int i;

	s->hits = swap_slots(st->first, &worked);
	s->extra[2] = worked - st->worked;
	st->worked = worked;
	s->extra[0] = swap_slots(st->second, NULL);
	for (i = 0; i < ctx->env.producer_cnt; i++)
		s->extra[1] += atomic_exchange(&st->calls[i].value, 0);
	if (bench_param(ctx, "fault") == FAULT_MEASURE && fault_due(ctx, st) &&
	    !atomic_exchange(&st->measure_failed, true))
		bench_fail(ctx, BENCH_ERR_BENCH, EIO,
			   "%s: measuring failed on purpose (fault='measure')",
			   ctx->bench->name);
	if (bench_param(ctx, "fault") == FAULT_MEASURE_STALL && fault_due(ctx, st) &&
	    !atomic_exchange(&st->measure_failed, true))
		sleep_ms(ctx->env.interval_ns * 5 / 2 / 1000000);
}

const struct bench bench_selftest = {
	.name = "selftest",
	.needs = { "tracepoint" },
	.family = "selftest",
	.report = "hits_drops",
	.help = "exists to test the harness, not a measurement: two tracepoint programs "
		"count the producers' getpgid() calls; `fault` makes a stage fail on purpose",
	.params = selftest_params,
	.extra = selftest_extra,
	.default_consumers = 0,
	.max_consumers = 8,
	.validate = selftest_validate,
	.setup = selftest_setup,
	.producer = selftest_producer,
	.consumer = selftest_consumer,
	.stop = selftest_stop,
	.measure = selftest_measure,
	.teardown = selftest_teardown,
};

BENCH_REGISTER(bench_selftest);
