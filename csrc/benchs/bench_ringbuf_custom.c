// SPDX-License-Identifier: MIT
/*
 * rb-custom and pb-custom: minimal readers of our own that walk the
 * mmapped ring buffer, or per-CPU perf buffers, directly (see
 * bench_ringbuf.c for the family and how they differ from the kernel
 * bench's).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_ringbuf.h"
#include "ringbuf.skel.h"
#include "perfbuf.skel.h"

/* Ring buffer record header bits (include/uapi/linux/bpf.h). */
#define RB_BUSY_BIT	(1u << 31)
#define RB_DISCARD_BIT	(1u << 30)

/* The custom readers' wake-up: an eventfd in their epoll set. */
static int add_wake_fd(struct bench_ctx *ctx, struct rb_state *st)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

	st->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (st->wake_fd < 0)
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: eventfd: %s",
				  ctx->bench->name, strerror(errno));
	if (epoll_ctl(st->epfd, EPOLL_CTL_ADD, st->wake_fd, &ev) < 0)
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: epoll_ctl: %s",
				  ctx->bench->name, strerror(errno));
	return 0;
}

int rb_custom_setup(struct bench_ctx *ctx, struct rb_state *st)
{
	int map_fd = bpf_map__fd(st->rskel->maps.ringbuf);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = st };
	void *p;

	st->ring_sz = rb_ring_size(ctx);
	st->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (st->epfd < 0)
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: epoll_create1: %s",
				  ctx->bench->name, strerror(errno));
	p = mmap(NULL, st->page_sz, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		return bench_fail(ctx, BENCH_ERR_OS, errno,
				  "%s: mmap of the ring buffer's consumer page: %s",
				  ctx->bench->name, strerror(errno));
	st->cons_page = p;
	/* producer page, then the data pages mapped twice in a row so that a
	 * record wrapping around the end reads contiguously */
	st->prod_area_len = st->page_sz + 2 * st->ring_sz;
	p = mmap(NULL, st->prod_area_len, PROT_READ, MAP_SHARED, map_fd, st->page_sz);
	if (p == MAP_FAILED)
		return bench_fail(ctx, BENCH_ERR_OS, errno,
				  "%s: mmap of the ring buffer's data pages: %s",
				  ctx->bench->name, strerror(errno));
	st->prod_area = p;
	if (epoll_ctl(st->epfd, EPOLL_CTL_ADD, map_fd, &ev) < 0)
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: epoll_ctl: %s",
				  ctx->bench->name, strerror(errno));
	return add_wake_fd(ctx, st);
}

int pb_custom_setup(struct bench_ctx *ctx, struct rb_state *st)
{
	int map_fd = bpf_map__fd(st->pskel->maps.perfbuf);
	int max = bpf_map__max_entries(st->pskel->maps.perfbuf);
	size_t mmap_sz = st->page_sz + st->pb_data_sz;
	struct perf_event_attr attr;
	int cpu, opened = 0;

	perf_attr(ctx, &attr);
	st->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (st->epfd < 0)
		return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: epoll_create1: %s",
				  ctx->bench->name, strerror(errno));
	st->cpus = calloc(max, sizeof(*st->cpus));
	st->events = calloc(max + 1, sizeof(*st->events));	/* + wake_fd */
	if (!st->cpus || !st->events)
		return -ENOMEM;
	for (cpu = 0; cpu < max; cpu++) {
		st->cpus[cpu].fd = -1;
		st->cpus[cpu].base = MAP_FAILED;
	}
	st->nr_cpus = max;
	for (cpu = 0; cpu < max; cpu++) {
		struct pb_cpu *c = &st->cpus[cpu];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

		c->fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (c->fd < 0) {
			if (errno == ENODEV)	/* offline CPU */
				continue;
			return bench_fail_bpf(ctx, -errno, "BPF output perf events",
					      "perf_event_open on CPU %d", cpu);
		}
		c->base = mmap(NULL, mmap_sz, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
		if (c->base == MAP_FAILED)
			return bench_fail(ctx, BENCH_ERR_OS, errno,
					  "%s: mmap of CPU %d's perf buffer: %s",
					  ctx->bench->name, cpu, strerror(errno));
		if (ioctl(c->fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			return bench_fail(ctx, BENCH_ERR_OS, errno,
					  "%s: enabling CPU %d's perf event: %s",
					  ctx->bench->name, cpu, strerror(errno));
		if (bpf_map_update_elem(map_fd, &cpu, &c->fd, BPF_ANY) < 0)
			return bench_fail(ctx, BENCH_ERR_OS, errno,
					  "%s: putting CPU %d's perf event in the map: %s",
					  ctx->bench->name, cpu, strerror(errno));
		if (epoll_ctl(st->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0)
			return bench_fail(ctx, BENCH_ERR_OS, errno, "%s: epoll_ctl: %s",
					  ctx->bench->name, strerror(errno));
		opened++;
	}
	if (!opened)
		return bench_fail(ctx, BENCH_ERR_OS, ENODEV,
				  "%s: no online CPU to open a perf buffer on", ctx->bench->name);
	return add_wake_fd(ctx, st);
}

/*
 * Each record bumps the shared hit counter on
 * its own (an atomic add per record), as the kernel bench's readers and
 * libbpf's callbacks do: adding once per pass measured 1.1-1.3x the kernel
 * bench's sampled rates, a reader cheaper than the one it measures.
 */
static inline void count_record(struct rb_state *st)
{
	atomic_fetch_add_explicit(&st->hits.value, 1, memory_order_relaxed);
}

/*
 * Read every committed record, publishing the consumer position once per
 * pass.  A record still being written ends the read: the kernel bench's
 * reader (the default) returns without publishing that pass, so the next
 * wake-up reads and counts it again, and counts discarded records too;
 * with count_once the pass is published first and each record that was
 * not discarded counts once.
 */
void rb_custom_drain(struct rb_state *st)
{
	uint64_t *cons_pos = st->cons_page;
	const uint64_t *prod_pos = st->prod_area;
	const char *data = (const char *)st->prod_area + st->page_sz;
	uint64_t mask = st->ring_sz - 1;
	uint64_t cons, prod, start;
	uint32_t len;

	cons = __atomic_load_n(cons_pos, __ATOMIC_ACQUIRE);
	for (;;) {
		start = cons;
		prod = __atomic_load_n(prod_pos, __ATOMIC_ACQUIRE);
		while (cons < prod) {
			len = __atomic_load_n((const uint32_t *)(data + (cons & mask)),
					      __ATOMIC_ACQUIRE);
			if (len & RB_BUSY_BIT) {
				if (!st->count_once)
					return;
				break;	/* come back on the next wake-up */
			}
			if (!st->count_once || !(len & RB_DISCARD_BIT))
				count_record(st);
			cons += rb_record_total(len & ~RB_DISCARD_BIT);
		}
		if (cons == start)
			break;
		__atomic_store_n(cons_pos, cons, __ATOMIC_RELEASE);
		if (cons < prod)
			break;	/* stopped at a busy record */
	}
}

int rb_custom_consume(struct bench_ctx *ctx)
{
	struct rb_state *st = ctx->priv;
	struct epoll_event ev;
	int cnt;

	while (bufs_running(ctx, st)) {
		if (st->b2b)
			bufs_trigger_batch(&st->calls[ctx->env.producer_cnt]);
		cnt = epoll_wait(st->epfd, &ev, 1, -1);
		if (cnt < 0 && errno != EINTR)
			return poll_failed(ctx, errno, "epoll_wait on the ring buffer");
		if (cnt <= 0 || !ev.data.ptr)	/* woken to stop */
			continue;
		count_poll(st);
		rb_custom_drain(st);
	}
	return 0;
}

/* Walk one CPU's perf ring from data_tail to data_head; count samples. */
void pb_custom_drain(struct rb_state *st, struct pb_cpu *c)
{
	struct perf_event_mmap_page *hdr = c->base;
	const char *data = (const char *)c->base + st->page_sz;
	uint64_t mask = st->pb_data_sz - 1;
	uint64_t head, tail;
	const struct perf_event_header *eh;

	head = __atomic_load_n(&hdr->data_head, __ATOMIC_ACQUIRE);
	tail = hdr->data_tail;
	while (tail != head) {
		/* records are 8-byte aligned, so a header never wraps */
		eh = (const void *)(data + (tail & mask));
		if (eh->type == PERF_RECORD_SAMPLE)
			count_record(st);
		tail += eh->size;
	}
	__atomic_store_n(&hdr->data_tail, tail, __ATOMIC_RELEASE);
}

int pb_custom_consume(struct bench_ctx *ctx)
{
	struct rb_state *st = ctx->priv;
	bool read_any;
	int cnt, i;

	while (bufs_running(ctx, st)) {
		if (st->b2b)
			bufs_trigger_batch(&st->calls[ctx->env.producer_cnt]);
		cnt = epoll_wait(st->epfd, st->events, st->nr_cpus + 1, -1);
		if (cnt < 0 && errno != EINTR)
			return poll_failed(ctx, errno, "epoll_wait on the perf buffers");
		read_any = false;
		for (i = 0; i < cnt; i++) {
			if (!st->events[i].data.ptr)
				continue;	/* woken to stop */
			pb_custom_drain(st, st->events[i].data.ptr);
			read_any = true;
		}
		if (read_any)
			count_poll(st);
	}
	return 0;
}
