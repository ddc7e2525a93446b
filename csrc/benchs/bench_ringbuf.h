/* SPDX-License-Identifier: MIT */
/*
 * The ringbuf family's private parts, shared by its three files:
 * bench_ringbuf.c (the ops tables, parameters, producers, setup, sampling),
 * bench_ringbuf_libbpf.c (rb-libbpf's and pb-libbpf's readers, through
 * libbpf's API) and bench_ringbuf_custom.c (rb-custom's and pb-custom's
 * readers of the mmapped buffers).
 */
#ifndef BENCHBPF_BENCH_RINGBUF_H
#define BENCHBPF_BENCH_RINGBUF_H

#include <linux/perf_event.h>
#include <string.h>
#include <sys/epoll.h>

#include <bpf/libbpf.h>

#include "bench.h"
#include "ringbuf.h"

#define POLL_MS 100

struct rb_counter {
	_Alignas(128) atomic_ullong value;
};

/* One CPU's perf buffer, for pb-custom. */
struct pb_cpu {
	int fd;
	void *base;		/* perf_event_mmap_page, then the data pages */
};

struct rb_state {
	struct rb_counter hits;		/* records read by the consumer */
	struct rb_counter polls;	/* poll returns with data */
	uint64_t polls_last;		/* their total at the previous sample */
	/* getpgid() calls this process made: one slot per producer, then the
	 * back-to-back consumer's */
	struct rb_counter *calls;
	uint64_t calls_last;

	bool perf;			/* pb-*: perf buffer, else ring buffer */
	bool custom;			/* *-custom reader */
	bool b2b;
	bool bench_producer;

	struct bench_producer producer;	/* ringbuf_bpf or perfbuf_bpf */
	struct ringbuf_bpf *rskel;	/* producer.skel, typed */
	struct perfbuf_bpf *pskel;
	long *dropped;			/* in the skeleton's .bss */
	long *bpf_hits;
	struct rb_run_slot *runs;	/* the producer program's runs, per CPU */
	uint64_t runs_last;		/* their total at the previous sample */

	/* Before the last sample, threads leave their loops (quiesce) and
	 * say so (parked), so that what is left can be read at rest. */
	atomic_bool quiesce;
	atomic_int parked;

	/* rb-libbpf / pb-libbpf */
	struct ring_buffer *rb;
	struct perf_buffer *pb;

	/* rb-custom */
	int epfd;
	/* rb-/pb-custom: in epfd with a NULL data.ptr; written to wake the
	 * reader at the end, so it can wait without a timeout, as the kernel
	 * bench's reader does */
	int wake_fd;
	/* rb-libbpf: wake_reader, whose record wakes the reader at the end */
	int wake_prog_fd;
	void *cons_page;		/* consumer position, writable */
	bool count_once;		/* rb_count_once */
	void *prod_area;		/* producer position page + data twice */
	size_t ring_sz;
	size_t prod_area_len;

	/* pb-custom */
	struct pb_cpu *cpus;
	int nr_cpus;
	size_t page_sz;
	size_t pb_data_sz;		/* data bytes per CPU */
	struct epoll_event *events;

	/* The consumer thread's /proc status, for its sleep count. */
	int status_fd;
	uint64_t last_vcsw;
};

/* Bytes one ring buffer record takes: header + data, 8-byte aligned. */
static inline uint64_t rb_record_total(uint64_t record_size)
{
	return (RB_HDR_SZ + record_size + 7) & ~7ull;
}

static inline uint64_t roundup_pow2(uint64_t x)
{
	uint64_t r = 1;

	while (r < x)
		r <<= 1;
	return r;
}

static inline uint64_t rb_ring_size(struct bench_ctx *ctx)
{
	uint64_t sz = bench_param(ctx, "ringbuf_sz");
	uint64_t rec = rb_record_total(bench_param(ctx, "record_size"));

	if (sz)
		return sz;
	sz = roundup_pow2(rec * 32);
	return sz < RB_DEFAULT_RINGBUF_SZ ? RB_DEFAULT_RINGBUF_SZ : sz;
}

/* The perf events both perf buffer readers open. */
static inline void perf_attr(struct bench_ctx *ctx, struct perf_event_attr *attr)
{
	uint64_t every = bench_param(ctx, "rb_sampled") ? bench_param(ctx, "rb_sample_rate") : 1;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_BPF_OUTPUT;
	attr->sample_type = PERF_SAMPLE_RAW;
	/* notify every Nth sample */
	attr->sample_period = every;
	attr->wakeup_events = every;
}

/*
 * Adds one to a counter only its own thread writes: a plain load and
 * store, no locked add.  A locked add after every getpgid() made a
 * producer sharing its CPU with the consumer 8 % slower than the kernel
 * bench's, which counts nothing there; the sampler's relaxed loads still
 * see every count.
 */
static inline void owned_counter_inc(struct rb_counter *c)
{
	atomic_store_explicit(&c->value,
			      atomic_load_explicit(&c->value, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* One getpgid() call, counted in `calls` (a slot of its own per thread). */
static inline void bufs_trigger_batch(struct rb_counter *calls)
{
	bench_getpgid_call();
	owned_counter_inc(calls);
}

static inline bool bufs_running(struct bench_ctx *ctx, struct rb_state *st)
{
	return !bench_stopping(ctx) &&
	       !atomic_load_explicit(&st->quiesce, memory_order_relaxed);
}

/* Only the one consumer counts polls. */
static inline void count_poll(struct rb_state *st)
{
	owned_counter_inc(&st->polls);
}

static inline int poll_failed(struct bench_ctx *ctx, int err, const char *what)
{
	return bench_fail(ctx, BENCH_ERR_OS, err, "%s: %s failed: %s",
			  ctx->bench->name, what, strerror(err));
}

/* bench_ringbuf_libbpf.c */
int rb_libbpf_setup(struct bench_ctx *ctx, struct rb_state *st);
int pb_libbpf_setup(struct bench_ctx *ctx, struct rb_state *st);
int bufs_libbpf_consume(struct bench_ctx *ctx);

/* bench_ringbuf_custom.c */
int rb_custom_setup(struct bench_ctx *ctx, struct rb_state *st);
int pb_custom_setup(struct bench_ctx *ctx, struct rb_state *st);
int rb_custom_consume(struct bench_ctx *ctx);
int pb_custom_consume(struct bench_ctx *ctx);
/* Read what is committed, as the reader would (the last sample, at rest). */
void rb_custom_drain(struct rb_state *st);
void pb_custom_drain(struct rb_state *st, struct pb_cpu *c);

#endif /* BENCHBPF_BENCH_RINGBUF_H */
