// SPDX-License-Identifier: GPL-2.0
/*
 * Trigger family: how much does it cost to fire a BPF program from each
 * kind of hook?  Every hook program only bumps its CPU's hit slot; user space
 * sums and zeroes the slots once per sampling interval.
 *
 * Kernel-side hooks are driven in batches: user space runs one of the two
 * raw_tp "driver" programs with BPF_PROG_TEST_RUN, and the driver calls the
 * hooked kernel function batch_iters times per run, so one bpf() syscall
 * buys batch_iters hits.  All programs are '?' (not autoloaded): the C side
 * enables only the driver and the hook a benchmark needs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "trigger.h"

char LICENSE[] SEC("license") = "GPL";

struct trig_slot hits[TRIG_NR_SLOTS];

/* Set between open and load. */
const volatile int batch_iters = 0;
/* --stacktrace: the hooked programs also take a stack trace per hit. */
const volatile int stacktrace = 0;	/* an int, as the kernel bench's */

/* Where the stack lands: a per-CPU buffer, read by nobody. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[TRIG_STACK_DEPTH]);
} trig_stack SEC(".maps");

static __always_inline void count_hit(void)
{
	int cpu = bpf_get_smp_processor_id();

	__sync_fetch_and_add(&hits[cpu & TRIG_SLOT_MASK].value, 1);
}

/* The kernel-side hooks: a hit, and with stacktrace the stack of the
 * hooked call, as the kernel bench's handle(). */
static __always_inline void count_hit_stack(void *ctx)
{
	__u64 *buf;

	count_hit();
	if (!stacktrace)
		return;
	/* the key made only past the check: without stacktrace a hit costs
	 * what the kernel bench's does */
	buf = bpf_map_lookup_elem(&trig_stack, &(__u32){0});
	if (buf)
		bpf_get_stack(ctx, buf, TRIG_STACK_DEPTH * sizeof(__u64), 0);
}

/* trig-kernel-count: the driver only counts, batch_iters hits per run,
 * with no hooked call in between: the in-kernel ceiling. */
SEC("?raw_tp")
int trig_count(void *ctx)
{
	int i;

	for (i = 0; i < batch_iters; i++)
		count_hit();
	return 0;
}

/* Driver for kprobe/fentry/fexit: calls the helper bpf_get_numa_node_id(),
 * whose kernel function the hook attaches to. */
SEC("?raw_tp")
int trig_driver(void *ctx)
{
	int i;

	for (i = 0; i < batch_iters; i++)
		(void)bpf_get_numa_node_id();
	return 0;
}

/* Driver for tp/rawtp/fmodret: the test kfunc fires the
 * bpf_test_run:bpf_trigger_tp tracepoint and is fmod_ret-able. */
extern int bpf_modify_return_test_tp(int nonce) __ksym __weak;

SEC("?raw_tp")
int trig_driver_kfunc(void *ctx)
{
	int i;

	for (i = 0; i < batch_iters; i++)
		(void)bpf_modify_return_test_tp(0);
	return 0;
}

SEC("?tp/bpf_test_run/bpf_trigger_tp")
int trig_tp(void *ctx)
{
	count_hit_stack(ctx);
	return 0;
}

SEC("?raw_tp/bpf_trigger_tp")
int trig_rawtp(void *ctx)
{
	count_hit_stack(ctx);
	return 0;
}

SEC("?kprobe/bpf_get_numa_node_id")
int trig_kprobe(void *ctx)
{
	count_hit_stack(ctx);
	return 0;
}

SEC("?kretprobe/bpf_get_numa_node_id")
int trig_kretprobe(void *ctx)
{
	count_hit_stack(ctx);
	return 0;
}

SEC("?kprobe.multi/bpf_get_numa_node_id")
int trig_kprobe_multi(void *ctx)
{
	count_hit_stack(ctx);
	return 0;
}

SEC("?kretprobe.multi/bpf_get_numa_node_id")
int trig_kretprobe_multi(void *ctx)
{
	count_hit_stack(ctx);
	return 0;
}

/* trig-k(ret)probe-multi-all: attached to every other traceable kernel
 * function while the counting program above measures; does nothing. */
SEC("?kprobe.multi/bpf_get_numa_node_id")
int trig_kprobe_multi_empty(void *ctx)
{
	return 0;
}

SEC("?kretprobe.multi/bpf_get_numa_node_id")
int trig_kretprobe_multi_empty(void *ctx)
{
	return 0;
}

SEC("?fentry/bpf_get_numa_node_id")
int trig_fentry(void *ctx)
{
	count_hit_stack(ctx);
	return 0;
}

SEC("?fexit/bpf_get_numa_node_id")
int trig_fexit(void *ctx)
{
	count_hit_stack(ctx);
	return 0;
}

/* Returns -EINVAL to the caller, as the kernel bench's. */
SEC("?fmod_ret/bpf_modify_return_test_tp")
int trig_fmodret(void *ctx)
{
	count_hit_stack(ctx);
	return -22;
}

/* Attached by hand (uprobe offset resolved in user space). */
SEC("?uprobe")
int trig_uprobe(void *ctx)
{
	count_hit();
	return 0;
}

/* Same body; loaded with expected attach type BPF_TRACE_UPROBE_MULTI and
 * attached with a raw BPF_LINK_CREATE (libbpf 1.1 has no uprobe.multi). */
SEC("?uprobe")
int trig_uprobe_multi(void *ctx)
{
	count_hit();
	return 0;
}

/* USDT probes benchbpf:trig_nop, trig_nop5, trig_nop10 (the C side emits
 * their notes). */
SEC("?usdt")
int trig_usdt(struct pt_regs *ctx)
{
	count_hit();
	return 0;
}
