// SPDX-License-Identifier: GPL-2.0
/*
 * lpm-trie: operations on an LPM trie holding keys 0 .. nr_entries - 1,
 * the kernel bench's (bench_lpm_trie_map.c).  Each run of lpm_run for the
 * op user space set (XDP, run by BPF_PROG_TEST_RUN) makes one bpf_loop() of
 * LPM_TRIE_NR_LOOPS callbacks, times it with bpf_ktime_get_ns() and adds
 * the callbacks run to hits and the time to duration_ns.  The callbacks are
 * the kernel bench's: each makes a key (the next one, or a random one) and
 * does one operation; a failed one stops the loop and its error is the
 * run's return value; insert and delete ask for the trie to be reset after
 * the last key.
 *
 * The settings are plain globals read on every operation, as the kernel
 * bench's, not constants the verifier could fold into the key arithmetic.
 *
 * lpm_free_entry/lpm_free_exit (lpm-trie-free only) time the kernel's
 * deferred free of the benchmark's trie_free_map maps, with fentry/fexit
 * on bpf_map_free_deferred.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "lpm_trie.h"

#define ENOENT 2
#define EINVAL 22
#define BPF_OBJ_NAME_LEN 16U

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct lpm_trie_key);
	__type(value, __u32);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LPM_TRIE_MAX_ENTRIES);
} trie_map SEC(".maps");

long hits;
long duration_ns;

/* Set by user space after load; read on every operation. */
__u32 nr_entries;
__u32 prefixlen;
bool random;
__u8 op;

/* The next key, shared by every run and CPU (not atomic), as the kernel bench's. */
static __u32 cur_key;

static __always_inline void generate_key(struct lpm_trie_key *key)
{
	key->prefixlen = prefixlen;
	if (random)
		key->data = bpf_get_prandom_u32() % nr_entries;
	else
		key->data = cur_key++ % nr_entries;
}

static int noop(__u32 index, int *unused)
{
	return 0;
}

/* The key, without the map: what lookup and update cost besides the map. */
static int baseline(__u32 index, int *unused)
{
	struct lpm_trie_key key;
	__u32 blackbox = 0;

	generate_key(&key);
	/* Keep the compiler from dropping the modulo. */
	asm volatile("" : "+r"(blackbox));
	blackbox = *(volatile __u32 *)&key.data;
	return 0;
}

static int lookup(__u32 index, int *retval)
{
	struct lpm_trie_key key;

	generate_key(&key);
	if (!bpf_map_lookup_elem(&trie_map, &key)) {
		*retval = -ENOENT;
		return 1;
	}
	return 0;
}

static int insert(__u32 index, int *retval)
{
	struct lpm_trie_key key;
	__u32 val = 1;
	int err;

	generate_key(&key);
	err = bpf_map_update_elem(&trie_map, &key, &val, BPF_NOEXIST);
	if (err) {
		*retval = err;
		return 1;
	}
	/* The trie is full: user space empties it before the next run. */
	if (key.data == nr_entries - 1) {
		*retval = LPM_TRIE_REINIT_MAP;
		return 1;
	}
	return 0;
}

static int update(__u32 index, int *retval)
{
	struct lpm_trie_key key;
	__u32 val = 1;
	int err;

	generate_key(&key);
	err = bpf_map_update_elem(&trie_map, &key, &val, BPF_EXIST);
	if (err) {
		*retval = err;
		return 1;
	}
	return 0;
}

static int delete(__u32 index, int *retval)
{
	struct lpm_trie_key key;
	int err;

	generate_key(&key);
	err = bpf_map_delete_elem(&trie_map, &key);
	if (err) {
		*retval = err;
		return 1;
	}
	/* The trie is empty: user space refills it before the next run (one
	 * producer only, so no other run deletes meanwhile). */
	if (key.data == nr_entries - 1) {
		*retval = LPM_TRIE_REINIT_MAP;
		return 1;
	}
	return 0;
}

/*
 * One timed bpf_loop() of op's callbacks; its error, if any, is returned.
 * One program for every op, switching on `op` as the kernel bench's does:
 * clang then makes a single bpf_loop() call whose callback depends on op,
 * which the verifier cannot inline, so each operation costs the helper's
 * indirect call as there.  (A program per op gets its bpf_loop() inlined
 * and runs noop and baseline ~1.5-2x faster than the kernel bench.)
 */
SEC("?xdp")
int lpm_run(struct xdp_md *ctx)
{
	int err = LPM_TRIE_SUCCESS;
	__u64 start = bpf_ktime_get_ns(), delta;
	long loops;

	switch (op) {
	case LPM_OP_NOOP:
		loops = bpf_loop(LPM_TRIE_NR_LOOPS, noop, NULL, 0);
		break;
	case LPM_OP_BASELINE:
		loops = bpf_loop(LPM_TRIE_NR_LOOPS, baseline, NULL, 0);
		break;
	case LPM_OP_LOOKUP:
		loops = bpf_loop(LPM_TRIE_NR_LOOPS, lookup, &err, 0);
		break;
	case LPM_OP_INSERT:
		loops = bpf_loop(LPM_TRIE_NR_LOOPS, insert, &err, 0);
		break;
	case LPM_OP_UPDATE:
		loops = bpf_loop(LPM_TRIE_NR_LOOPS, update, &err, 0);
		break;
	case LPM_OP_DELETE:
		loops = bpf_loop(LPM_TRIE_NR_LOOPS, delete, &err, 0);
		break;
	default:
		return -EINVAL;
	}
	delta = bpf_ktime_get_ns() - start;
	__sync_add_and_fetch(&duration_ns, delta);
	__sync_add_and_fetch(&hits, loops);
	return err;
}

/* ---- lpm-trie-free: the deferred free of a trie_free_map, timed ---- */

static __u64 free_start;

SEC("?fentry/bpf_map_free_deferred")
int BPF_PROG(lpm_free_entry, struct work_struct *work)
{
	struct bpf_map *map = container_of(work, struct bpf_map, work);
	char name[BPF_OBJ_NAME_LEN];

	if (BPF_CORE_READ(map, map_type) != BPF_MAP_TYPE_LPM_TRIE)
		return 0;
	/* The map's id is gone by now: its name tells ours. */
	BPF_CORE_READ_STR_INTO(&name, map, name);
	if (bpf_strncmp(name, BPF_OBJ_NAME_LEN, LPM_TRIE_FREE_MAP_NAME))
		return 0;
	free_start = bpf_ktime_get_ns();
	return 0;
}

SEC("?fexit/bpf_map_free_deferred")
int BPF_PROG(lpm_free_exit, struct work_struct *work)
{
	__u64 delta;

	if (!free_start)
		return 0;
	delta = bpf_ktime_get_ns() - free_start;
	free_start = 0;
	__sync_add_and_fetch(&duration_ns, delta);
	__sync_add_and_fetch(&hits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
