// SPDX-License-Identifier: GPL-2.0
/*
 * Local storage: the cost of bpf_task_storage_get() as the number of task
 * storage maps grows past the per-task cache (local-storage-cache-*), a
 * hash map lookup as the control, and the cost of creating storage
 * (local-storage-create).
 *
 * Cache benchmarks: each getpgid() of this process runs one bpf_loop() of
 * LS_LOOPS_PER_EVENT iterations; iteration i gets map i % num_maps of an
 * array of maps (user space creates the maps and fills the array), and in
 * the interleaved variant also the important map 0 every third index.  A
 * hit is one get; a get of map 0 is also an important hit.  The
 * local_storage_skip_* programs (skip_access) run the same loop without
 * the get itself: the overhead control.
 *
 * Create benchmark: a tp_btf program on sched_process_fork (task) or an
 * LSM program on socket_post_create (socket) creates one storage per new
 * thread or socket of this process; a raw_tp on kmalloc counts this
 * process's kmalloc() calls meanwhile.
 *
 * No program is loaded by default: user space enables what a benchmark
 * needs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "local_storage.h"
#include "producer.bpf.h"

/* Inner map templates.  max_entries is not part of what an inner map must
 * match, so the hash template is one entry: the real map is created by
 * user space at full size. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, LS_MAX_NR_MAPS);
	__type(key, int);
	__type(value, int);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
		__uint(map_flags, BPF_F_NO_PREALLOC);
		__type(key, int);
		__type(value, int);
	});
} array_of_local_storage_maps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, LS_MAX_NR_MAPS);
	__type(key, int);
	__type(value, int);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_HASH);
		__uint(max_entries, 1);
		__type(key, int);
		__type(value, int);
	});
} array_of_hash_maps SEC(".maps");

struct storage {
	__u8 data[LS_CREATE_STORAGE_SZ];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct storage);
} task_storage_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct storage);
} sk_storage_map SEC(".maps");

/* Set before load. */
const volatile __u32 use_hashmap = 0;
const volatile __u32 interleave = 0;
const volatile __u32 num_maps = 1;
const volatile __u32 hashmap_num_keys = 1;

long hits = 0;
long important_hits __attribute__((aligned(128))) = 0;
/* Gets that returned NULL (no storage): still hits, as the kernel bench
 * counts them, but reported apart. */
long failed_gets __attribute__((aligned(128))) = 0;

long create_cnts __attribute__((aligned(128))) = 0;
long create_errs __attribute__((aligned(128))) = 0;
long kmalloc_cnts __attribute__((aligned(128))) = 0;

struct loop_ctx {
	struct task_struct *task;
	long hits;
	long important_hits;
};

/* skip: a constant, so that the program with the get (the default) has no
 * test of it per get: local_storage_skip_* is the overhead control. */
static __always_inline void get_one(__u32 map_idx, struct loop_ctx *lctx, const bool skip)
{
	void *inner;
	void *value = (void *)1;
	int key = 0;

	inner = bpf_map_lookup_elem(use_hashmap ? (void *)&array_of_hash_maps :
				    (void *)&array_of_local_storage_maps, &map_idx);
	if (!inner)
		return;
	if (use_hashmap) {
		key = bpf_get_prandom_u32() % hashmap_num_keys;
		if (!skip)
			value = bpf_map_lookup_elem(inner, &key);
	} else if (!skip) {
		value = bpf_task_storage_get(inner, lctx->task, &key,
					     BPF_LOCAL_STORAGE_GET_F_CREATE);
	}
	/* On the rare failure only, and not on the stack: a count the
	 * verifier tracks exactly would make every iteration a new state. */
	if (!value)
		__sync_add_and_fetch(&failed_gets, 1);
	lctx->hits++;
	if (!map_idx)
		lctx->important_hits++;
}

static __always_inline void get_iteration(__u32 index, struct loop_ctx *lctx, const bool skip)
{
	__u32 map_idx = index % num_maps;

	get_one(map_idx, lctx, skip);
	if (interleave && map_idx % LS_INTERLEAVE_EVERY == 0)
		get_one(0, lctx, skip);
}

static long get_loop(__u32 index, void *data)
{
	get_iteration(index, data, false);
	return 0;
}

static long skip_loop(__u32 index, void *data)
{
	get_iteration(index, data, true);
	return 0;
}

static __always_inline int run_gets(void *loop_fn)
{
	struct loop_ctx lctx = {};

	if (!producer_is_ours())
		return 0;
	lctx.task = bpf_get_current_task_btf();
	bpf_loop(LS_LOOPS_PER_EVENT, loop_fn, &lctx, 0);
	__sync_add_and_fetch(&hits, lctx.hits);
	__sync_add_and_fetch(&important_hits, lctx.important_hits);
	return 0;
}

GETPGID_PROGRAMS(local_storage_get, run_gets(get_loop))
GETPGID_PROGRAMS(local_storage_skip, run_gets(skip_loop))

/* ---- local-storage-create ---- */

static __always_inline void count_create(void *storage)
{
	if (storage)
		__sync_add_and_fetch(&create_cnts, 1);
	else
		__sync_add_and_fetch(&create_errs, 1);
}

SEC("?tp_btf/sched_process_fork")
int BPF_PROG(local_storage_create_task, struct task_struct *parent, struct task_struct *child)
{
	if (filter_tgid && parent->tgid != filter_tgid)
		return 0;
	count_create(bpf_task_storage_get(&task_storage_map, child, NULL,
					  BPF_LOCAL_STORAGE_GET_F_CREATE));
	return 0;
}

SEC("?lsm.s/socket_post_create")
int BPF_PROG(local_storage_create_socket, struct socket *sock, int family, int type,
	     int protocol, int kern)
{
	struct sock *sk = sock->sk;

	/* sock->sk is a trusted pointer that may be NULL: the verifier of
	 * 6.12 refuses it unchecked as bpf_sk_storage_get's argument. */
	if (!sk || !producer_is_ours())
		return 0;
	count_create(bpf_sk_storage_get(&sk_storage_map, sk, NULL,
					BPF_LOCAL_STORAGE_GET_F_CREATE));
	return 0;
}

SEC("?raw_tp/kmalloc")
int local_storage_kmalloc(void *ctx)
{
	if (producer_is_ours())
		__sync_add_and_fetch(&kmalloc_cnts, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
