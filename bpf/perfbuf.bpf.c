// SPDX-License-Identifier: GPL-2.0
/*
 * pb-libbpf / pb-custom producers: each getpgid() call emits batch_cnt
 * samples into the current CPU's perf buffer with bpf_perf_event_output().
 * A failed output (buffer full) is a drop.  Entry points as in
 * ringbuf.bpf.c: fentry on the syscall or its sys_enter tracepoint.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ringbuf.h"

#if defined(__TARGET_ARCH_arm64)
#define SYSCALL_PREFIX "__arm64_"
#elif defined(__TARGET_ARCH_s390)
#define SYSCALL_PREFIX "__s390x_"
#else
#define SYSCALL_PREFIX "__x64_"
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
} perfbuf SEC(".maps");

const volatile int batch_cnt = 0;
/* Emit only for this process's getpgid() calls (0: for everyone's), so
 * that other processes calling getpgid() do not add records. */
const volatile __u32 filter_tgid = 0;
const volatile __u32 record_size = RB_DEFAULT_RECORD_SIZE;

long dropped __attribute__((aligned(128))) = 0;

/* What each sample carries; user space stores the kernel bench's long 42
 * in its first 8 bytes, the rest is padding up to record_size. */
char payload[PB_MAX_RECORD_SIZE] __attribute__((aligned(8)));

static __always_inline int produce_batch(void *ctx)
{
	int i;

	if (filter_tgid && (bpf_get_current_pid_tgid() >> 32) != filter_tgid)
		return 0;
	for (i = 0; i < batch_cnt; i++) {
		if (bpf_perf_event_output(ctx, &perfbuf, BPF_F_CURRENT_CPU,
					  payload, record_size))
			__sync_add_and_fetch(&dropped, 1);
	}
	return 0;
}

SEC("?fentry/" SYSCALL_PREFIX "sys_getpgid")
int pb_fentry(void *ctx)
{
	return produce_batch(ctx);
}

SEC("?tp/syscalls/sys_enter_getpgid")
int pb_tp(void *ctx)
{
	return produce_batch(ctx);
}

char LICENSE[] SEC("license") = "GPL";
