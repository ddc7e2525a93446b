// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-hashmap-lookup, bpf-hashmap-full-update: hashmap lookups and updates
 * of a full hashmap, timed in BPF, one batch per getpgid() of this process.
 *
 * lookup: nr_outer bpf_loop() passes of nr_entries lookups of keys 1 ..
 * nr_entries (the first 4 bytes of the key; user space sets the rest), as
 * the kernel bench's nested bpf_loop.  full-update: HASHMAP_FULL_NR_LOOPS
 * updates with BPF_ANY of a key not in the full map, which the map refuses.
 *
 * Unlike the kernel bench, each event counts the operations it really did
 * and a lookup that finds nothing stops the event and is counted in misses
 * (user space fails the run); each CPU builds its key in its own per-CPU
 * buffer (the kernel bench shares one global key between CPUs); and events
 * add up per CPU until they cover min_run_ns, so a kept sample is never a
 * short event.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "producer.bpf.h"
#include "hashmap.h"

/* Key and value size, entries and flags are set by user space before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, 4);
	__uint(value_size, 8);
	__uint(max_entries, 1);
} hash_map_bench SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, HASHMAP_FULL_MAX_ENTRIES);
} hash_map_full SEC(".maps");

/* This CPU's key: bytes 4.. are set by user space, bytes 0..3 per lookup. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__uint(value_size, HASHMAP_MAX_KEY_SIZE);
	__uint(max_entries, 1);
} key_buf SEC(".maps");

/* Entries: nr_cpus, and nr_cpus * HASHMAP_NR_SLOTS, set before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct hashmap_cpu);
	__uint(max_entries, 1);
} cpu_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct hashmap_run);
	__uint(max_entries, 1);
} runs SEC(".maps");

const volatile __u32 nr_entries = 1;
const volatile __u32 nr_outer = 1;	/* nr_loops / nr_entries */
const volatile __u64 min_run_ns = 10000000;

struct lookup_pass {
	__u32 *key;
	__u64 done;
	__u64 missed;
};

static int lookup_one(__u32 index, struct lookup_pass *p)
{
	__u32 *key = p->key;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	*key = index + 1;
#else
	*key = __builtin_bswap32(index + 1);
#endif
	if (bpf_map_lookup_elem(&hash_map_bench, key))
		return 0;
	p->missed++;
	return 1;
}

/* No branch on what the loops return: the verifier would then walk the
 * nested loops value by value. */
static int lookup_pass(__u32 index, struct lookup_pass *p)
{
	p->done += (__u32)bpf_loop(nr_entries, lookup_one, p, 0);
	return 0;
}

/* What the update returns is not looked at, as in the kernel bench: an
 * update the full map took would leave its key there, and user space
 * fails the run when it finds one. */
static int update_one(__u32 index, __u32 *key)
{
	__u64 init_val = 1;

	bpf_map_update_elem(&hash_map_full, key, &init_val, BPF_ANY);
	return 0;
}

/* Add one timed event to this CPU's accumulator; a run once it covers min_run_ns. */
static __always_inline void account(__u32 cpu, __u64 ns, __u64 ops, __u64 misses)
{
	struct hashmap_cpu *st = bpf_map_lookup_elem(&cpu_state, &cpu);
	struct hashmap_run *run;
	__u32 slot;

	if (!st)
		return;
	st->events++;
	st->misses += misses;
	st->acc_ns += ns;
	st->acc_ops += ops;
	if (st->acc_ns < min_run_ns)
		return;
	slot = cpu * HASHMAP_NR_SLOTS + st->runs % HASHMAP_NR_SLOTS;
	run = bpf_map_lookup_elem(&runs, &slot);
	if (run) {
		run->time_ns = st->acc_ns;
		run->ops = st->acc_ops;
	}
	st->acc_ns = 0;
	st->acc_ops = 0;
	/* Published last: user space reads the slot once it sees the count. */
	__sync_fetch_and_add(&st->runs, 1);
}

static __always_inline int lookup_event(void)
{
	struct lookup_pass p = {};
	__u32 zero = 0, cpu;
	__u64 start;

	if (!producer_is_ours())
		return 0;
	p.key = bpf_map_lookup_elem(&key_buf, &zero);
	if (!p.key)
		return 0;
	cpu = bpf_get_smp_processor_id();
	start = bpf_ktime_get_ns();
	bpf_loop(nr_outer, lookup_pass, &p, 0);
	account(cpu, bpf_ktime_get_ns() - start, p.done, p.missed);
	return 0;
}

static __always_inline int full_update_event(void)
{
	__u32 cpu, key;
	__u64 start;

	if (!producer_is_ours())
		return 0;
	cpu = bpf_get_smp_processor_id();
	/* Not in the map, which user space filled with keys 0 .. max - 1. */
	key = cpu + HASHMAP_FULL_MAX_ENTRIES;
	start = bpf_ktime_get_ns();
	bpf_loop(HASHMAP_FULL_NR_LOOPS, update_one, &key, 0);
	account(cpu, bpf_ktime_get_ns() - start, HASHMAP_FULL_NR_LOOPS, 0);
	return 0;
}

GETPGID_PROGRAMS(hashmap_lookup, lookup_event())
GETPGID_PROGRAMS(hashmap_full_update, full_update_event())

char LICENSE[] SEC("license") = "GPL";
