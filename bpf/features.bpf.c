// SPDX-License-Identifier: GPL-2.0
/*
 * Minimal programs for the kernel feature probes (csrc/features.c).  None
 * loads by default: the prober enables one program (and creates only the
 * maps it uses) per load, so one refusal never hides another answer.
 * Programs touch no kernel structure, so loading most of them needs no
 * vmlinux BTF on the user side.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "may_goto.bpf.h"
#include "iter_num.bpf.h"
#include "crypto_kfuncs.bpf.h"

/* ---- attach kinds ---- */

SEC("?tracepoint/syscalls/sys_enter_getpgid")
int feat_tracepoint(void *ctx)
{
	return 0;
}

SEC("?raw_tp/task_rename")
int feat_raw_tp(void *ctx)
{
	return 0;
}

SEC("?tp_btf/task_rename")
int feat_tp_btf(void *ctx)
{
	return 0;
}

SEC("?kprobe/__set_task_comm")
int feat_kprobe(void *ctx)
{
	return 0;
}

SEC("?kretprobe/__set_task_comm")
int feat_kretprobe(void *ctx)
{
	return 0;
}

/* Attached by the prober through BPF_LINK_CREATE with an explicit symbol. */
SEC("?kprobe.multi/__set_task_comm")
int feat_kprobe_multi(void *ctx)
{
	return 0;
}

SEC("?fentry/__set_task_comm")
int feat_fentry(void *ctx)
{
	return 0;
}

SEC("?fexit/__set_task_comm")
int feat_fexit(void *ctx)
{
	return 0;
}

/* bpf_modify_return_test is registered for fmod_ret; __set_task_comm is not. */
SEC("?fmod_ret/bpf_modify_return_test")
int feat_fmod_ret(void *ctx)
{
	return 0;
}

/* Uprobes: the prober attaches them to a function of its own. */
SEC("?uprobe")
int feat_uprobe(void *ctx)
{
	return 0;
}

SEC("?uretprobe")
int feat_uretprobe(void *ctx)
{
	return 0;
}

/* Loaded with expected attach type BPF_TRACE_UPROBE_MULTI by the prober. */
SEC("?uprobe")
int feat_uprobe_multi(void *ctx)
{
	return 0;
}

/* BPF_PROG_TEST_RUN: returns its first argument plus one. */
SEC("?raw_tp")
int feat_test_run(__u64 *ctx)
{
	return (int)ctx[0] + 1;
}

/* The trigger drivers' kfunc (TRIG_DRIVER_KFUNC of trigger.h), called
 * from a raw_tp program as they call it. */
extern int bpf_modify_return_test_tp(int nonce) __ksym __weak;

SEC("?raw_tp")
int feat_trigger_kfunc(void *ctx)
{
	return bpf_modify_return_test_tp(0);
}

/* BPF LSM, sleepable as socket storage's program: attaching is not enough
 * (the hook attaches where "bpf" is not in lsm= and never runs), so the
 * prober creates a socket and checks that the program counted it. */
__u64 feat_lsm_runs;

SEC("?lsm.s/socket_post_create")
int BPF_PROG(feat_bpf_lsm, struct socket *sock, int family, int type, int protocol, int kern)
{
	__sync_fetch_and_add(&feat_lsm_runs, 1);
	return 0;
}

/* ---- map types: each program uses one map through its helpers ---- */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} feat_ringbuf_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} feat_perf_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__type(value, __u32);
	__uint(max_entries, 16);
} feat_bloom_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} feat_task_storage_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 16);
} feat_hash_map SEC(".maps");

struct feat_lpm_key {
	__u32 prefixlen;
	__u32 data;
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct feat_lpm_key);
	__type(value, __u32);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16);
} feat_lpm_map SEC(".maps");

SEC("?raw_tp")
int feat_lpm_trie(void *ctx)
{
	struct feat_lpm_key k = { 32, 0 };

	return bpf_map_lookup_elem(&feat_lpm_map, &k) ? 1 : 0;
}

SEC("?raw_tp")
int feat_ringbuf(void *ctx)
{
	__u64 v = 1;

	return bpf_ringbuf_output(&feat_ringbuf_map, &v, sizeof(v), 0) ? 1 : 0;
}

SEC("?raw_tp")
int feat_perf_event_array(void *ctx)
{
	__u64 v = 1;

	return bpf_perf_event_output(ctx, &feat_perf_map, BPF_F_CURRENT_CPU, &v, sizeof(v)) ? 1 : 0;
}

SEC("?raw_tp")
int feat_bloom_filter(void *ctx)
{
	__u32 v = 1;

	return bpf_map_peek_elem(&feat_bloom_map, &v) ? 1 : 0;
}

SEC("?raw_tp")
int feat_task_storage(void *ctx)
{
	__u64 *v;

	v = bpf_task_storage_get(&feat_task_storage_map, bpf_get_current_task_btf(), 0, 0);
	return v ? 1 : 0;
}

SEC("?raw_tp")
int feat_hash(void *ctx)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&feat_hash_map, &k) ? 1 : 0;
}

/* ---- helpers ---- */

static long loop_step(__u64 i, void *data)
{
	*(__u64 *)data += i;
	return 0;
}

SEC("?raw_tp")
int feat_bpf_loop(void *ctx)
{
	__u64 sum = 0;

	bpf_loop(8, loop_step, &sum, 0);
	return (int)sum;
}

/* bpf_strncmp wants its second string in read-only map memory. */
const char feat_strncmp_want[8] = "benchbp";

SEC("?raw_tp")
int feat_bpf_strncmp(void *ctx)
{
	char have[8] = "benchbp";

	return bpf_strncmp(have, sizeof(have), feat_strncmp_want);
}

/* ---- loops and kfuncs ---- */

/* A loop over a bound the verifier cannot know, ended by may_goto. */
__u32 feat_loop_bound = 8;

SEC("?syscall")
int feat_may_goto(void *ctx)
{
	__u32 i;

	for (i = 0; i < feat_loop_bound && bench_can_loop; i++)
		;
	return i;
}

SEC("?raw_tp")
int feat_bpf_iter_num(void *ctx)
{
	int i, sum = 0;

	bpf_for(i, 0, 8)
		sum += i;
	return sum;
}

/* A crypto context made and released: the kfuncs exist and a syscall
 * program may call them. */
SEC("?syscall")
int feat_bpf_crypto(void *ctx)
{
	struct bpf_crypto_params params = { .type = "skcipher", .algo = "ecb(aes)",
					    .key_len = 16 };
	struct bpf_crypto_ctx *cctx;
	int err = 0;

	cctx = bpf_crypto_ctx_create(&params, sizeof(params), &err);
	if (cctx)
		bpf_crypto_ctx_release(cctx);
	return err;
}

char LICENSE[] SEC("license") = "GPL";
