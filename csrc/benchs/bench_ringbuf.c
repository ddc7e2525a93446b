// SPDX-License-Identifier: MIT
/*
 * rb-libbpf, rb-custom, pb-libbpf, pb-custom: BPF ring buffer and perf
 * buffer throughput, as the kernel bench measures it.
 *
 * Producers call getpgid() in a loop; a BPF program on that syscall emits
 * rb_batch_cnt records per call (bpf/ringbuf.bpf.c, bpf/perfbuf.bpf.c).
 * One consumer thread reads them, either through libbpf's ring_buffer /
 * perf_buffer API (*-libbpf) or through a minimal reader of our own that
 * walks the mmapped buffer directly (*-custom).  A hit is one record read
 * by the consumer; a drop is one record the BPF side could not emit
 * because the buffer was full.
 *
 * Differences from the kernel bench, all deliberate:
 * - Producers fire from fentry on the syscall when the kernel allows it,
 *   else from the syscalls/sys_enter_getpgid tracepoint (param trigger).
 * - rb-custom reads as the kernel bench's reader does by default: a pass
 *   that reaches a record still being written returns without publishing
 *   its consumer position, so the next wake-up reads (and counts) that
 *   pass's records again, and the producer meanwhile sees them as unread.
 *   rb_count_once=True publishes before stopping instead, each record
 *   counted once: a different figure, documented in results/.
 * - pb-custom opens its own per-CPU perf events (same attributes as
 *   pb-libbpf) instead of reading libbpf's private perf_buffer layout.
 * - perf buffers: sample_rate > batch_cnt is refused only with sampling in
 *   back-to-back mode, where the consumer would stall waiting for a
 *   wake-up; the kernel bench refuses it always.
 * - Configurations that could never wake the consumer are refused (see
 *   bufs_validate): the kernel bench accepts them and reads 0 hits.
 * - The last sample stops the producers and reads what is left in the
 *   buffers, so that over a run hits + drops = batch_cnt * program runs.
 * - Readers wait without a timeout, as the kernel bench's do, and are woken
 *   when the run stops; pb-libbpf alone polls with a 100 ms timeout, since
 *   nothing but a perf event can end libbpf's wait on its perf buffers.
 * - The BPF side emits only for this process's getpgid() calls, so that
 *   other processes calling getpgid() add no records.
 *
 * This file holds the ops tables, the checks, the producers, setup and
 * teardown, and the sampling; the readers are in bench_ringbuf_libbpf.c
 * (*-libbpf) and bench_ringbuf_custom.c (*-custom), and bench_ringbuf.h is
 * what the three share.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_ringbuf.h"
#include "ringbuf.skel.h"
#include "perfbuf.skel.h"

/* ---- parameters ---- */

static const struct bench_param_def rb_params[] = {
	{ "rb_b2b", "--rb-b2b", BENCH_PARAM_BOOL, 0, 0, 1, NULL,
	  "back-to-back: one batch at a time, the consumer triggers the next "
	  "after reading, producer and consumer alternate on one CPU" },
	{ "rb_use_output", "--rb-use-output", BENCH_PARAM_BOOL, 0, 0, 1, NULL,
	  "emit with bpf_ringbuf_output() (a copy) instead of reserve + submit" },
	{ "rb_batch_cnt", "--rb-batch-cnt", BENCH_PARAM_INT, 500, 1, RB_MAX_BATCH, NULL,
	  "records the BPF program emits per syscall" },
	{ "rb_sampled", "--rb-sampled", BENCH_PARAM_BOOL, 0, 0, 1, NULL,
	  "notification sampling: wake the consumer only once rb_sample_rate "
	  "records are waiting" },
	{ "rb_sample_rate", "--rb-sample-rate", BENCH_PARAM_INT, 500, 1, 1000000, NULL,
	  "records per notification with rb_sampled" },
	{ "record_size", NULL, BENCH_PARAM_INT, RB_DEFAULT_RECORD_SIZE, 8,
	  RB_MAX_RECORD_SIZE, NULL,
	  "bytes per record (the kernel bench: 8); with reserve + submit only the "
	  "first 8 bytes are written, bpf_ringbuf_output() copies them all" },
	{ "ringbuf_sz", NULL, BENCH_PARAM_INT, 0, 0, 1 << 28, NULL,
	  "ring buffer bytes, a power of 2 of at least a page; 0: 512 KiB (the "
	  "kernel bench's), grown to hold at least 32 records" },
	{ "rb_bench_producer", "--rb-bench-producer", BENCH_PARAM_BOOL, 0, 0, 1, NULL,
	  "newest kernel bench only, rb-libbpf with consumers=0: count records "
	  "in BPF and never wake a consumer (a full ring then drops)",
	  .only = (const char *const[]){ "rb-libbpf", NULL } },
	{ "rb_count_once", "--rb-count-once", BENCH_PARAM_BOOL, 0, 0, 1, NULL,
	  "rb-custom only: publish the consumer position before stopping at a "
	  "record still being written, so each record is counted once; off: the "
	  "kernel bench's reader, which reads and counts that pass again",
	  .only = (const char *const[]){ "rb-custom", NULL } },
	BENCH_TRIGGER_PARAM("the BPF producer"),
	{ 0 },
};

static const struct bench_param_def pb_params[] = {
	{ "rb_b2b", "--rb-b2b", BENCH_PARAM_BOOL, 0, 0, 1, NULL,
	  "back-to-back: one batch at a time, the consumer triggers the next "
	  "after reading, producer and consumer alternate on one CPU" },
	{ "rb_batch_cnt", "--rb-batch-cnt", BENCH_PARAM_INT, 500, 1, RB_MAX_BATCH, NULL,
	  "samples the BPF program emits per syscall" },
	{ "rb_sampled", "--rb-sampled", BENCH_PARAM_BOOL, 0, 0, 1, NULL,
	  "notification sampling: the perf event wakes the consumer every "
	  "rb_sample_rate samples (wakeup_events)" },
	{ "rb_sample_rate", "--rb-sample-rate", BENCH_PARAM_INT, 500, 1, 1000000, NULL,
	  "samples per notification with rb_sampled" },
	{ "record_size", NULL, BENCH_PARAM_INT, RB_DEFAULT_RECORD_SIZE, 8,
	  PB_MAX_RECORD_SIZE, NULL,
	  "bytes per sample (the kernel bench: 8), all copied by "
	  "bpf_perf_event_output(); a perf record holds at most "
	  "65516 data bytes" },
	{ "perfbuf_sz", NULL, BENCH_PARAM_INT, PB_DEFAULT_PERFBUF_PAGES, 1, 1 << 16, NULL,
	  "data pages per CPU buffer, a power of 2 (the kernel bench's: 128)" },
	BENCH_TRIGGER_PARAM("the BPF producer"),
	{ 0 },
};

/*
 * wakeups: times the consumer thread slept and was woken (its voluntary
 * context switches): a wait for a notification, or a 100 ms poll timeout.
 * polls: poll calls that returned data; a poll on a non-empty buffer
 * returns at once, without sleeping or any notification.
 * runs: runs of the BPF producer program for this process, each emitting
 * rb_batch_cnt records; over a whole run hits + drops = rb_batch_cnt * runs
 * exactly (the last sample reads what is left in the buffers at rest).
 * calls: getpgid() calls this process made; the program runs for these
 * only, so over a whole run runs = calls.
 */
static const char *const rb_extra[] = { "wakeups", "polls", "runs", "calls", NULL };

static bool is_perf(struct bench_ctx *ctx)
{
	return ctx->bench->name[0] == 'p';
}

static bool is_custom(struct bench_ctx *ctx)
{
	return strstr(ctx->bench->name, "custom") != NULL;
}

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* Bytes one perf buffer raw sample takes. */
static uint64_t pb_record_total(uint64_t record_size)
{
	return sizeof(struct perf_event_header) + ((4 + record_size + 7) & ~7ull);
}

/*
 * Records a ring buffer holds at once.  The kernel refuses a reservation
 * that would put the producer position a whole ring (or more) ahead of the
 * consumer's: at most ring - 1 bytes are ever waiting, in records of
 * `total` bytes.
 */
static uint64_t rb_max_waiting(uint64_t ring, uint64_t total)
{
	return (ring - 1) / total;
}

/*
 * A lost-samples record (PERF_RECORD_LOST: header, id, count).  After a
 * sample was lost to a full buffer, the next one written carries it.
 */
#define PB_LOST_RECORD_SZ 24

/*
 * Largest sample a perf buffer of `data` bytes can always take: the kernel
 * writes only while at most data - 1 bytes are in use, and a sample that
 * follows a loss carries a lost-samples record too.  A bigger one fits an
 * empty buffer once, then never again after the first loss.
 */
static uint64_t pb_max_record_size(uint64_t data)
{
	uint64_t room = ((data - 1) & ~7ull) - PB_LOST_RECORD_SZ -
			sizeof(struct perf_event_header);

	return room - 4;	/* the raw sample's u32 size */
}

static int bad(struct bench_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(struct bench_ctx *ctx, const char *fmt, ...)
{
	char msg[BENCH_MSG_LEN / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return bench_fail(ctx, BENCH_ERR_VALUE, EINVAL, "%s: %s", ctx->bench->name, msg);
}

static int bufs_validate(struct bench_ctx *ctx)
{
	int64_t batch = bench_param(ctx, "rb_batch_cnt");
	int64_t rate = bench_param(ctx, "rb_sample_rate");
	int64_t rec = bench_param(ctx, "record_size");
	bool sampled = bench_param(ctx, "rb_sampled");
	bool b2b = bench_param(ctx, "rb_b2b");
	bool bprod = !is_perf(ctx) && bench_param(ctx, "rb_bench_producer");
	int consumers = ctx->env.consumer_cnt;
	long page = sysconf(_SC_PAGESIZE);

	if (bprod) {
		if (consumers != 0)
			return bad(ctx, "rb_bench_producer=True runs no consumer: pass consumers=0 "
				   "(got consumers=%d)", consumers);
		if (b2b)
			return bad(ctx, "rb_b2b=True needs a consumer: it makes no sense with "
				   "rb_bench_producer=True");
		if (sampled)
			return bad(ctx, "rb_sampled=True samples consumer notifications: it makes "
				   "no sense with rb_bench_producer=True");
	} else if (consumers != 1) {
		return bad(ctx, "consumers=%d: this benchmark reads with exactly one consumer",
			   consumers);
	}
	if (b2b && ctx->env.producer_cnt > 1)
		return bad(ctx, "rb_b2b=True (back-to-back) takes a single producer, got "
			   "producers=%d", ctx->env.producer_cnt);

	if (is_perf(ctx)) {
		int64_t pages = bench_param(ctx, "perfbuf_sz");

		uint64_t data = (uint64_t)pages * page, most;

		if (!is_pow2(pages))
			return bad(ctx, "perfbuf_sz=%lld pages: must be a power of 2",
				   (long long)pages);
		most = pb_max_record_size(data);
		if ((uint64_t)rec > most)
			return bad(ctx, "record_size=%lld does not fit in a perf buffer of "
				   "perfbuf_sz=%lld pages (%llu bytes) for good: a sample takes "
				   "%llu bytes, one after a loss %d more, and the kernel writes "
				   "only while at most %llu bytes are in use, so after the first "
				   "loss nothing would be written again; record_size must be at "
				   "most %llu here (or raise perfbuf_sz)",
				   (long long)rec, (long long)pages, (unsigned long long)data,
				   (unsigned long long)pb_record_total(rec), PB_LOST_RECORD_SZ,
				   (unsigned long long)(data - 1), (unsigned long long)most);
		/* A perf buffer polls ready only once a wake-up was raised, and
		 * back-to-back the consumer triggers the next batch only once
		 * this one is ready.  (A ring buffer polls ready whenever it
		 * holds data, so it cannot stall this way.) */
		if (sampled && b2b && rate > batch)
			return bad(ctx, "rb_sample_rate=%lld with rb_batch_cnt=%lld and "
				   "rb_b2b=True: a batch would never raise a wake-up and the "
				   "consumer would stall (use rb_sample_rate <= rb_batch_cnt)",
				   (long long)rate, (long long)batch);
	} else {
		uint64_t ring = rb_ring_size(ctx), total = rb_record_total(rec);

		if (bench_param(ctx, "ringbuf_sz") &&
		    (!is_pow2(ring) || ring < (uint64_t)page))
			return bad(ctx, "ringbuf_sz=%llu: must be a power of 2 of at least "
				   "the page size (%ld)", (unsigned long long)ring, page);
		uint64_t most = rb_max_waiting(ring, total);

		/* A record takes its 8-byte header too, rounded up to 8: with
		 * total <= ring - 8, record_size <= ring - 16. */
		if (!most)
			return bad(ctx, "record_size=%lld (%llu bytes with its 8-byte header, "
				   "rounded to 8) does not fit in a ring buffer of ringbuf_sz=%llu "
				   "bytes: the kernel keeps at most %llu bytes waiting; "
				   "record_size must be at most %llu here (or raise ringbuf_sz)",
				   (long long)rec, (unsigned long long)total,
				   (unsigned long long)ring, (unsigned long long)(ring - 1),
				   (unsigned long long)(ring - 2 * RB_HDR_SZ));
		/* The producer wakes the consumer once rb_sample_rate records
		 * are waiting: past `most` that never happens, every later
		 * record is dropped and the consumer sleeps for good. */
		if (sampled && (uint64_t)rate > most)
			return bad(ctx, "rb_sample_rate=%lld: a ring buffer of ringbuf_sz=%llu "
				   "bytes holds at most %llu records of %llu bytes (record_size=%lld "
				   "with its 8-byte header, rounded to 8), because a reservation "
				   "fails once the producer is a whole ring ahead of the consumer; "
				   "the consumer would never be woken: rb_sample_rate must be at "
				   "most %llu here (or raise ringbuf_sz)",
				   (long long)rate, (unsigned long long)ring,
				   (unsigned long long)most, (unsigned long long)total,
				   (long long)rec, (unsigned long long)most);
	}
	return 0;
}

/* ---- loading ---- */

BENCH_SKELETON_CALLBACKS(ringbuf)
BENCH_SKELETON_CALLBACKS(perfbuf)
BENCH_SKELETON_PROGRAM(ringbuf, rb)
BENCH_SKELETON_PROGRAM(perfbuf, pb)

static int rb_configure(struct bench_ctx *ctx, void *skel)
{
	struct ringbuf_bpf *s = skel;
	int64_t rec = bench_param(ctx, "record_size");
	int err;

	s->rodata->batch_cnt = bench_param(ctx, "rb_batch_cnt");
	s->rodata->use_output = bench_param(ctx, "rb_use_output");
	s->rodata->record_size = rec;
	s->rodata->bench_producer = bench_param(ctx, "rb_bench_producer");
	if (bench_param(ctx, "rb_sampled"))
		s->rodata->wakeup_data_size =
			bench_param(ctx, "rb_sample_rate") * rb_record_total(rec);
	if (!is_custom(ctx) && !s->rodata->bench_producer) {
		err = bpf_program__set_autoload(s->progs.wake_reader, true);
		if (!err)
			err = bpf_map__set_max_entries(s->maps.wake_ring, sysconf(_SC_PAGESIZE));
		if (err)
			return err;
	}
	return bpf_map__set_max_entries(s->maps.ringbuf, rb_ring_size(ctx));
}

static int pb_configure(struct bench_ctx *ctx, void *skel)
{
	struct perfbuf_bpf *s = skel;
	long val = 42;

	s->rodata->batch_cnt = bench_param(ctx, "rb_batch_cnt");
	s->rodata->record_size = bench_param(ctx, "record_size");
	memcpy(s->bss->payload, &val, sizeof(val));
	return 0;
}

static const struct bench_producer_ops rb_producer = {
	BENCH_SKELETON_OPS(ringbuf),
	.what = "the ring buffer producer",
	.configure = rb_configure,
	.program = ringbuf_skel_program,
};

static const struct bench_producer_ops pb_producer = {
	BENCH_SKELETON_OPS(perfbuf),
	.what = "the perf buffer producer",
	.configure = pb_configure,
	.program = perfbuf_skel_program,
};

/* ---- consumer setup ---- */

static void wake_reader(struct rb_state *st)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	uint64_t one = 1;

	/* Either fails only when the reader is awake anyway: the eventfd's
	 * count would overflow, or the wake ring is full. */
	if (st->wake_fd >= 0)
		(void)!write(st->wake_fd, &one, sizeof(one));
	if (st->wake_prog_fd >= 0)
		(void)bpf_prog_test_run_opts(st->wake_prog_fd, &opts);
}

static int bufs_setup(struct bench_ctx *ctx)
{
	struct rb_state *st;
	int err, i;

	st = aligned_alloc(128, sizeof(*st));
	if (!st)
		return -ENOMEM;
	memset(st, 0, sizeof(*st));
	atomic_init(&st->hits.value, 0);
	atomic_init(&st->polls.value, 0);
	atomic_init(&st->quiesce, false);
	atomic_init(&st->parked, 0);
	st->epfd = -1;
	st->wake_fd = -1;
	st->wake_prog_fd = -1;
	st->status_fd = -1;
	ctx->priv = st;
	st->perf = is_perf(ctx);
	st->custom = is_custom(ctx);
	st->b2b = bench_param(ctx, "rb_b2b");
	st->count_once = !st->perf && bench_param(ctx, "rb_count_once");
	st->bench_producer = !st->perf && bench_param(ctx, "rb_bench_producer");
	st->page_sz = sysconf(_SC_PAGESIZE);
	st->calls = aligned_alloc(128, sizeof(*st->calls) * (ctx->env.producer_cnt + 1));
	if (!st->calls)
		return -ENOMEM;
	for (i = 0; i <= ctx->env.producer_cnt; i++)
		atomic_init(&st->calls[i].value, 0);
	if (st->perf)
		st->pb_data_sz = bench_param(ctx, "perfbuf_sz") * st->page_sz;

	/* Attached from here on, but only this process's getpgid() calls
	 * fire it, and none is made before the threads start. */
	err = bench_producer_start(ctx, st->perf ? &pb_producer : &rb_producer, &st->producer);
	if (err)
		return err;
	if (st->perf) {
		st->pskel = st->producer.skel;
		st->dropped = &st->pskel->bss->dropped;
		st->runs = st->pskel->bss->runs;
	} else {
		st->rskel = st->producer.skel;
		st->dropped = &st->rskel->bss->dropped;
		st->bpf_hits = &st->rskel->bss->hits;
		st->runs = st->rskel->bss->runs;
	}

	if (!st->perf && !st->custom && !st->bench_producer)
		return rb_libbpf_setup(ctx, st);
	if (!st->perf && st->custom)
		return rb_custom_setup(ctx, st);
	if (st->perf && !st->custom)
		return pb_libbpf_setup(ctx, st);
	if (st->perf)
		return pb_custom_setup(ctx, st);
	return 0;
}

static void bufs_teardown(struct bench_ctx *ctx)
{
	struct rb_state *st = ctx->priv;
	int i;

	if (!st)
		return;
	/* stop producing first */
	bench_producer_detach(&st->producer);
	ring_buffer__free(st->rb);
	perf_buffer__free(st->pb);
	if (st->prod_area)
		munmap(st->prod_area, st->prod_area_len);
	if (st->cons_page)
		munmap(st->cons_page, st->page_sz);
	for (i = 0; st->cpus && i < st->nr_cpus; i++) {
		if (st->cpus[i].base != MAP_FAILED)
			munmap(st->cpus[i].base, st->page_sz + st->pb_data_sz);
		if (st->cpus[i].fd >= 0)
			close(st->cpus[i].fd);
	}
	if (st->status_fd >= 0)
		close(st->status_fd);
	free(st->cpus);
	free(st->events);
	free(st->calls);
	if (st->epfd >= 0)
		close(st->epfd);
	if (st->wake_fd >= 0)
		close(st->wake_fd);
	bench_producer_destroy(&st->producer);
	free(st);
	ctx->priv = NULL;
}

/* ---- threads ---- */

static int bufs_producer(struct bench_ctx *ctx, int idx)
{
	struct rb_state *st = ctx->priv;

	if (st->b2b) {
		/* one batch to start; the consumer triggers the rest */
		bufs_trigger_batch(&st->calls[idx]);
	} else {
		while (bufs_running(ctx, st))
			bufs_trigger_batch(&st->calls[idx]);
	}
	atomic_fetch_add(&st->parked, 1);
	return 0;
}

/* Voluntary context switches of the thread whose status `fd` reads. */
static bool read_vcsw(int fd, uint64_t *out)
{
	static const char key[] = "voluntary_ctxt_switches:";
	char buf[4096], *p;
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return false;
	buf[n] = 0;
	for (p = buf; (p = strstr(p, key)); p++)
		if (p == buf || p[-1] == '\n') {	/* not nonvoluntary_... */
			*out = strtoull(p + sizeof(key) - 1, NULL, 10);
			return true;
		}
	return false;
}

/* The consumer publishes where the sampler can count its sleeps. */
static void consumer_begin(struct rb_state *st)
{
	char path[64];
	uint64_t v;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)gettid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!read_vcsw(fd, &v)) {
		close(fd);
		return;
	}
	st->last_vcsw = v;
	__atomic_store_n(&st->status_fd, fd, __ATOMIC_RELEASE);
}

static int bufs_consumer(struct bench_ctx *ctx, int idx)
{
	struct rb_state *st = ctx->priv;
	int err;

	(void)idx;
	consumer_begin(st);
	if (!st->custom)
		err = bufs_libbpf_consume(ctx);
	else
		err = st->perf ? pb_custom_consume(ctx) : rb_custom_consume(ctx);
	atomic_fetch_add(&st->parked, 1);
	return err;
}

/* How long the last sample waits for the threads to leave their loops:
 * pb-libbpf's reader may be in a poll of POLL_MS. */
#define QUIESCE_NS (2000ull * 1000000ull)

/*
 * Before the run's last sample: stop producing, wait until every thread
 * left its loop, and read what is left in the buffers, as the consumer
 * would have.  Then nothing is in flight and the counters add up exactly:
 * every record produced was read (a hit) or dropped.  Records emitted in
 * earlier intervals and read now count in this last one.
 */
static void bufs_quiesce(struct bench_ctx *ctx, struct rb_state *st)
{
	int threads = ctx->env.producer_cnt + ctx->env.consumer_cnt, cpu;
	uint64_t deadline = bench_now_ns() + QUIESCE_NS;

	atomic_store(&st->quiesce, true);
	wake_reader(st);
	while (atomic_load(&st->parked) < threads) {
		if (bench_stopping(ctx) || bench_now_ns() > deadline)
			return;		/* a thread is stuck: never read beside it */
		usleep(100);
	}
	/* Every reader counts each record it reads in hits itself. */
	if (st->rb)
		ring_buffer__consume(st->rb);
	else if (st->pb)
		perf_buffer__consume(st->pb);
	else if (st->custom && !st->perf)
		rb_custom_drain(st);
	for (cpu = 0; st->cpus && cpu < st->nr_cpus; cpu++)
		if (st->cpus[cpu].base != MAP_FAILED)
			pb_custom_drain(st, &st->cpus[cpu]);
}

/* pb-libbpf's reader polls with a timeout and sees the stop flag by
 * itself; the others wait until woken. */
static void bufs_stop(struct bench_ctx *ctx)
{
	if (ctx->priv)
		wake_reader(ctx->priv);
}

static bool last_sample(struct bench_ctx *ctx)
{
	bool last;

	pthread_mutex_lock(&ctx->lock);
	last = ctx->nr_samples + 1 >= ctx->nr_samples_total;
	pthread_mutex_unlock(&ctx->lock);
	return last;
}

/* getpgid() calls made so far, all threads. */
static uint64_t bufs_calls(struct bench_ctx *ctx, struct rb_state *st)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i <= ctx->env.producer_cnt; i++)
		total += atomic_load_explicit(&st->calls[i].value, memory_order_relaxed);
	return total;
}

/* Total runs of the producer program so far, all CPUs. */
static uint64_t bufs_runs(struct rb_state *st)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < RB_RUN_SLOTS; i++)
		total += __atomic_load_n(&st->runs[i].value, __ATOMIC_RELAXED);
	return total;
}

static void bufs_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct rb_state *st = ctx->priv;
	uint64_t v, runs;
	int fd;

	if (last_sample(ctx))
		bufs_quiesce(ctx, st);
	runs = bufs_runs(st);
	s->extra[2] = runs - st->runs_last;
	st->runs_last = runs;
	v = bufs_calls(ctx, st);
	s->extra[3] = v - st->calls_last;
	st->calls_last = v;
	if (st->bench_producer)
		s->hits = __atomic_exchange_n(st->bpf_hits, 0, __ATOMIC_RELAXED);
	else
		s->hits = atomic_exchange(&st->hits.value, 0);
	s->drops = __atomic_exchange_n(st->dropped, 0, __ATOMIC_RELAXED);
	fd = __atomic_load_n(&st->status_fd, __ATOMIC_ACQUIRE);
	if (fd >= 0 && read_vcsw(fd, &v)) {
		s->extra[0] = v - st->last_vcsw;
		st->last_vcsw = v;
	}
	v = atomic_load_explicit(&st->polls.value, memory_order_relaxed);
	s->extra[1] = v - st->polls_last;
	st->polls_last = v;
}

#define BUFS_BENCH(bname, text, ptable, map_feature)			\
	{								\
		.name = bname,						\
		.family = "ringbuf",					\
		.report = "hits_drops",					\
		.help = text,						\
		.params = ptable,					\
		.extra = rb_extra,					\
		.default_consumers = 1,					\
		.max_consumers = 1,					\
		.validate = bufs_validate,				\
		.setup = bufs_setup,					\
		.producer = bufs_producer,				\
		.consumer = bufs_consumer,				\
		.stop = bufs_stop,					\
		.measure = bufs_measure,				\
		.teardown = bufs_teardown,				\
		.needs = { map_feature, "tracepoint" },		\
	}

const struct bench bench_rb_libbpf = BUFS_BENCH("rb-libbpf",
	"BPF ring buffer, read with libbpf's ring_buffer API",
	rb_params, "ringbuf");
const struct bench bench_rb_custom = BUFS_BENCH("rb-custom",
	"BPF ring buffer, read by a minimal mmap + epoll reader",
	rb_params, "ringbuf");
const struct bench bench_pb_libbpf = BUFS_BENCH("pb-libbpf",
	"perf buffer (bpf_perf_event_output), read with libbpf's perf_buffer API",
	pb_params, "perf_event_array");
const struct bench bench_pb_custom = BUFS_BENCH("pb-custom",
	"perf buffer (bpf_perf_event_output), read by walking the mmapped per-CPU rings",
	pb_params, "perf_event_array");

BENCH_REGISTER(bench_rb_libbpf);
BENCH_REGISTER(bench_rb_custom);
BENCH_REGISTER(bench_pb_libbpf);
BENCH_REGISTER(bench_pb_custom);
