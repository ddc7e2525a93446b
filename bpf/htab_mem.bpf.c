// SPDX-License-Identifier: GPL-2.0
/*
 * htab-mem: hashmap element churn, for the memory the map uses.
 *
 * Each program runs on a syscall tracepoint of this process (as the kernel
 * bench attaches them) and writes or deletes HTAB_MEM_OP_BATCH elements,
 * keys from this CPU's number in steps of nr_thread, counting one op per
 * run (two for batch_add_batch_del):
 * - overwrite: update (BPF_ANY) existing-or-new elements;
 * - batch_add_batch_del: update a batch, then delete it;
 * - add_only (getpgid) / del_only (getppid): add new elements (BPF_NOEXIST)
 *   on one CPU and delete them on another, the producers taking turns.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "producer.bpf.h"
#include "htab_mem.h"

/* Value size, entries and flags set (the map created) by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, 4);
	__uint(value_size, 8);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} htab SEC(".maps");

unsigned char zeroed_value[HTAB_MEM_MAX_VALUE_SIZE];
__u32 nr_thread = 0;
long op_cnt = 0;

struct walk {
	__u32 from;
	__u32 step;
};

static int overwrite_one(__u32 i, struct walk *w)
{
	bpf_map_update_elem(&htab, &w->from, zeroed_value, BPF_ANY);
	w->from += w->step;
	return 0;
}

static int add_one(__u32 i, struct walk *w)
{
	bpf_map_update_elem(&htab, &w->from, zeroed_value, BPF_NOEXIST);
	w->from += w->step;
	return 0;
}

static int del_one(__u32 i, struct walk *w)
{
	bpf_map_delete_elem(&htab, &w->from);
	w->from += w->step;
	return 0;
}

SEC("?tp/syscalls/sys_enter_getpgid")
int overwrite(void *ctx)
{
	struct walk w = { bpf_get_smp_processor_id(), nr_thread };

	if (!producer_is_ours())
		return 0;
	bpf_loop(HTAB_MEM_OP_BATCH, overwrite_one, &w, 0);
	__sync_fetch_and_add(&op_cnt, 1);
	return 0;
}

SEC("?tp/syscalls/sys_enter_getpgid")
int batch_add_batch_del(void *ctx)
{
	struct walk w = { bpf_get_smp_processor_id(), nr_thread };

	if (!producer_is_ours())
		return 0;
	bpf_loop(HTAB_MEM_OP_BATCH, overwrite_one, &w, 0);
	w.from = bpf_get_smp_processor_id();
	bpf_loop(HTAB_MEM_OP_BATCH, del_one, &w, 0);
	__sync_fetch_and_add(&op_cnt, 2);
	return 0;
}

SEC("?tp/syscalls/sys_enter_getpgid")
int add_only(void *ctx)
{
	struct walk w = { bpf_get_smp_processor_id() / 2, nr_thread / 2 };

	if (!producer_is_ours())
		return 0;
	bpf_loop(HTAB_MEM_OP_BATCH, add_one, &w, 0);
	__sync_fetch_and_add(&op_cnt, 1);
	return 0;
}

SEC("?tp/syscalls/sys_enter_getppid")
int del_only(void *ctx)
{
	struct walk w = { bpf_get_smp_processor_id() / 2, nr_thread / 2 };

	if (!producer_is_ours())
		return 0;
	bpf_loop(HTAB_MEM_OP_BATCH, del_one, &w, 0);
	__sync_fetch_and_add(&op_cnt, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
