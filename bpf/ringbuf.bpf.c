// SPDX-License-Identifier: GPL-2.0
/*
 * rb-libbpf / rb-custom producers: each getpgid() call emits a batch of
 * batch_cnt records into one BPF ring buffer, either by reserve + submit or
 * by bpf_ringbuf_output().  A failed reserve/output is a drop.
 *
 * Entry points, filter and whoami: producer.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "producer.bpf.h"
#include "ringbuf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RB_DEFAULT_RINGBUF_SZ);	/* resized before load */
} ringbuf SEC(".maps");

const volatile int batch_cnt = 0;
const volatile long use_output = 0;
/* Notification sampling: wake the consumer only once this much data is
 * waiting (0: wake on every record, the kernel's default policy). */
const volatile long wakeup_data_size = 0;
const volatile __u32 record_size = RB_DEFAULT_RECORD_SIZE;
/* No consumer: count successful records here and never wake anyone. */
const volatile bool bench_producer = false;

long sample_val = 42;
long dropped __attribute__((aligned(128))) = 0;
struct rb_run_slot runs[RB_RUN_SLOTS];
long hits __attribute__((aligned(128))) = 0;

/* Source of bpf_ringbuf_output() copies; its content does not matter. */
char payload[RB_MAX_RECORD_SIZE] __attribute__((aligned(8)));

static __always_inline long submit_flags(void)
{
	long avail;

	if (!wakeup_data_size)
		return 0;
	avail = bpf_ringbuf_query(&ringbuf, BPF_RB_AVAIL_DATA);
	return avail >= wakeup_data_size ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/*
 * The kernel bench's loops, record for record: nothing else runs per
 * record, and the default size is an immediate as its sizeof() is, since
 * a consumer that keeps up more often is woken more often and the
 * producer's cost per record decides how often it keeps up.
 */
static __always_inline void reserve_batch(__u32 size)
{
	long *rec, flags;
	int i;

	for (i = 0; i < batch_cnt; i++) {
		rec = bpf_ringbuf_reserve(&ringbuf, size, 0);
		if (!rec) {
			__sync_add_and_fetch(&dropped, 1);
		} else {
			*rec = sample_val;
			flags = submit_flags();
			bpf_ringbuf_submit(rec, flags);
		}
	}
}

static __always_inline void output_batch(__u32 size)
{
	long flags;
	int i;

	for (i = 0; i < batch_cnt; i++) {
		flags = submit_flags();
		if (bpf_ringbuf_output(&ringbuf, payload, size, flags))
			__sync_add_and_fetch(&dropped, 1);
	}
}

/* No consumer: count what went in here, and wake no one. */
static __always_inline void counted_batch(void)
{
	long *rec;
	int i;

	for (i = 0; i < batch_cnt; i++) {
		if (use_output) {
			if (bpf_ringbuf_output(&ringbuf, payload, record_size, BPF_RB_NO_WAKEUP)) {
				__sync_add_and_fetch(&dropped, 1);
				continue;
			}
		} else {
			rec = bpf_ringbuf_reserve(&ringbuf, record_size, 0);
			if (!rec) {
				__sync_add_and_fetch(&dropped, 1);
				continue;
			}
			*rec = sample_val;
			bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
		}
		__sync_add_and_fetch(&hits, 1);
	}
}

static __always_inline int produce_batch(void)
{
	if (!producer_is_ours())
		return 0;
	runs[bpf_get_smp_processor_id() & RB_RUN_SLOT_MASK].value++;
	if (bench_producer)
		counted_batch();
	else if (use_output)
		output_batch(record_size);
	else if (record_size == RB_DEFAULT_RECORD_SIZE)
		reserve_batch(RB_DEFAULT_RECORD_SIZE);
	else
		reserve_batch(record_size);
	return 0;
}

GETPGID_PROGRAMS(rb, produce_batch())

/*
 * rb-libbpf's reader waits without a timeout, as the kernel bench's does:
 * a record forced awake here, in a ring of its own in the same libbpf
 * ring_buffer, ends its wait when the run stops.  Sized to a page before
 * load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} wake_ring SEC(".maps");

SEC("?syscall")
int wake_reader(void *ctx)
{
	bpf_ringbuf_output(&wake_ring, &sample_val, sizeof(sample_val), BPF_RB_FORCE_WAKEUP);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
