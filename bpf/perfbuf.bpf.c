// SPDX-License-Identifier: GPL-2.0
/*
 * pb-libbpf / pb-custom producers: each getpgid() call emits batch_cnt
 * samples into the current CPU's perf buffer with bpf_perf_event_output().
 * A failed output (buffer full) is a drop.  Entry points, filter
 * and whoami: producer.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "producer.bpf.h"
#include "ringbuf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
} perfbuf SEC(".maps");

const volatile int batch_cnt = 0;
const volatile __u32 record_size = RB_DEFAULT_RECORD_SIZE;

long dropped __attribute__((aligned(128))) = 0;
struct rb_run_slot runs[RB_RUN_SLOTS];

/* What each sample carries; user space stores the kernel bench's long 42
 * in its first 8 bytes, the rest is padding up to record_size. */
char payload[PB_MAX_RECORD_SIZE] __attribute__((aligned(8)));

static __always_inline int produce_batch(void *ctx)
{
	/* Read once per run: the kernel bench's size is a constant, not a
	 * load per record. */
	__u32 size = record_size;
	int i;

	if (!producer_is_ours())
		return 0;
	runs[bpf_get_smp_processor_id() & RB_RUN_SLOT_MASK].value++;
	for (i = 0; i < batch_cnt; i++) {
		if (bpf_perf_event_output(ctx, &perfbuf, BPF_F_CURRENT_CPU,
					  payload, size))
			__sync_add_and_fetch(&dropped, 1);
	}
	return 0;
}

GETPGID_PROGRAMS(pb, produce_batch(ctx))

char LICENSE[] SEC("license") = "GPL";
