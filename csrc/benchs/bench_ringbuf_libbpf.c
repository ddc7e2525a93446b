// SPDX-License-Identifier: MIT
/*
 * rb-libbpf and pb-libbpf: the readers through libbpf's ring_buffer and
 * perf_buffer API (see bench_ringbuf.c for the family).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "bench_ringbuf.h"
#include "ringbuf.skel.h"
#include "perfbuf.skel.h"

static int buf_process_sample(void *cookie, void *data, size_t len)
{
	struct rb_state *st = cookie;

	(void)data;
	(void)len;
	atomic_fetch_add_explicit(&st->hits.value, 1, memory_order_relaxed);
	return 0;
}

static enum bpf_perf_event_ret perf_process_event(void *cookie, int cpu,
						  struct perf_event_header *e)
{
	struct rb_state *st = cookie;

	(void)cpu;
	switch (e->type) {
	case PERF_RECORD_SAMPLE:
		atomic_fetch_add_explicit(&st->hits.value, 1, memory_order_relaxed);
		return LIBBPF_PERF_EVENT_CONT;
	case PERF_RECORD_LOST:
		return LIBBPF_PERF_EVENT_CONT;
	default:
		return LIBBPF_PERF_EVENT_ERROR;
	}
}

/* A record in the wake ring ends rb-libbpf's wait; it counts for nothing. */
static int ignore_wake_record(void *cookie, void *data, size_t len)
{
	return 0;
}

int rb_libbpf_setup(struct bench_ctx *ctx, struct rb_state *st)
{
	int err;

	st->rb = ring_buffer__new(bpf_map__fd(st->rskel->maps.ringbuf),
				  buf_process_sample, st, NULL);
	if (!st->rb)
		return bench_fail(ctx, BENCH_ERR_BENCH, errno,
				  "%s: creating libbpf's ring_buffer: %s",
				  ctx->bench->name, strerror(errno));
	err = ring_buffer__add(st->rb, bpf_map__fd(st->rskel->maps.wake_ring),
			       ignore_wake_record, NULL);
	if (err)
		return bench_fail(ctx, BENCH_ERR_BENCH, -err,
				  "%s: adding the wake ring to libbpf's ring_buffer: %s",
				  ctx->bench->name, strerror(-err));
	st->wake_prog_fd = bpf_program__fd(st->rskel->progs.wake_reader);
	return 0;
}

int pb_libbpf_setup(struct bench_ctx *ctx, struct rb_state *st)
{
	struct perf_event_attr attr;

	perf_attr(ctx, &attr);
	st->pb = perf_buffer__new_raw(bpf_map__fd(st->pskel->maps.perfbuf),
				      bench_param(ctx, "perfbuf_sz"), &attr,
				      perf_process_event, st, NULL);
	if (!st->pb)
		return bench_fail_bpf(ctx, -errno, "BPF output perf events",
				      "creating libbpf's perf_buffer");
	return 0;
}

/* Both readers' loop: the same but for the poll (pb-libbpf's with a
 * timeout, see POLL_MS). */
int bufs_libbpf_consume(struct bench_ctx *ctx)
{
	struct rb_state *st = ctx->priv;
	int n;

	while (bufs_running(ctx, st)) {
		n = st->perf ? perf_buffer__poll(st->pb, POLL_MS) : ring_buffer__poll(st->rb, -1);
		if (n < 0 && n != -EINTR)
			return poll_failed(ctx, -n, st->perf ? "perf_buffer__poll" :
							       "ring_buffer__poll");
		if (n > 0)
			count_poll(st);
		if (st->b2b)
			bufs_trigger_batch(&st->calls[ctx->env.producer_cnt]);
	}
	return 0;
}
