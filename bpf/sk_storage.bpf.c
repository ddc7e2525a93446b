// SPDX-License-Identifier: GPL-2.0
/*
 * sk-storage-get: bpf_sk_storage_get() on sockets that already have their
 * storage, as the kernel bench's progs/sk_storage_bench.c, in its two
 * versions (csrc/benchs/bench_sk_storage.c chooses one to load):
 *  - iter_sk_storage_get, the later one: a bpf_iter/tcp pass calls it once
 *    for every TCP socket of the network namespace, one get per socket;
 *  - getsockopt_sk_storage_get, the first one: a cgroup/getsockopt program
 *    making 100 gets of the storage of the socket getsockopt() was called on.
 * Every get that found (or made) the storage is a hit.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/* The level the producer's getsockopt() calls ask for: no protocol has it,
 * so the program answers only them and leaves every other call alone (it is
 * attached to this process's cgroup, which other processes may share). */
#define SK_STORAGE_LEVEL 0xdead
#define SK_STORAGE_GETS_PER_CALL 100

struct sk_val {
	__u64 cnt;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sk_val);
} sk_get_stg SEC(".maps");

long hits = 0;

SEC("iter/tcp")
int iter_sk_storage_get(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct sk_val *v;

	if (!skc)
		return 0;
	v = bpf_sk_storage_get(&sk_get_stg, skc, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (v) {
		v->cnt++;
		__sync_fetch_and_add(&hits, 1);
	}
	return 0;
}

SEC("cgroup/getsockopt")
int getsockopt_sk_storage_get(struct bpf_sockopt *ctx)
{
	struct sk_val *v = NULL;
	int i;

	if (ctx->level != SK_STORAGE_LEVEL)
		return 1;
	for (i = 0; i < SK_STORAGE_GETS_PER_CALL; i++) {
		v = bpf_sk_storage_get(&sk_get_stg, ctx->sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!v)
			break;
	}
	if (v)
		__sync_fetch_and_add(&hits, SK_STORAGE_GETS_PER_CALL);
	ctx->retval = 0;
	return 1;
}
