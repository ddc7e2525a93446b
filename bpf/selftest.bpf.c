// SPDX-License-Identifier: GPL-2.0
/*
 * selftest: real programs for testing the harness, not a measurement.
 *
 * Each program counts the getpgid() syscalls made by one process (the
 * benchmark's own producers): selftest_enter on the syscall's entry
 * tracepoint, selftest_exit on its exit.  User space opens this object twice
 * and enables one program in each copy, so a run really holds two loaded
 * objects and two attachments, and a fault can strike between them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "producer.bpf.h"
#include "selftest.h"

char LICENSE[] SEC("license") = "GPL";

struct selftest_slot hits[SELFTEST_NR_SLOTS];

/* Set between open and load; whose syscalls count (filter_tgid) is set
 * after load, from producer_whoami. */
const volatile int reject = 0;		/* make the verifier refuse selftest_exit */
/* Dependent multiply-add steps each counted hit of selftest_enter adds: a
 * known slowdown on the BPF path, for checking that a comparison notices it. */
const volatile __u32 bpf_work = 0;
/* The steps run on one counted hit in bpf_work_every (per CPU), none on the
 * others: a hit's cost adds up over hits, so the slowdown is close to
 * bpf_work's divided by it, a finer knob than a step where the first steps
 * hide behind the syscall's own latency and the next ones do not. */
const volatile __u32 bpf_work_every = 1;

/* Exists only for the rejected path below.  A hash map, because a lookup
 * in it may return NULL whatever the key. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} scratch SEC(".maps");

static __always_inline int count_hit(bool work)
{
	int cpu = bpf_get_smp_processor_id();
	struct selftest_slot *slot = &hits[cpu & SELFTEST_SLOT_MASK];
	__u64 x = cpu;
	__u32 i;

	if (!producer_is_ours())
		return 0;
	__sync_fetch_and_add(&slot->value, 1);
	if (!work || !bpf_work)
		return 0;
	/* Plain adds: one CPU writes its slot, with migration off. */
	if (bpf_work_every > 1 && slot->tick++ % bpf_work_every)
		return 0;
	slot->worked++;
	/* An LCG step each: every step needs the one before, so the JIT
	 * leaves one multiply and one add per step. */
	for (i = 0; i < bpf_work && i < SELFTEST_MAX_WORK; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	slot->sink = x;
	return 0;
}

SEC("?tp/syscalls/sys_enter_getpgid")
int selftest_enter(void *ctx)
{
	return count_hit(true);
}

SEC("?tp/syscalls/sys_exit_getpgid")
int selftest_exit(void *ctx)
{
	if (reject) {
		__u32 zero = 0;
		__u64 *v = bpf_map_lookup_elem(&scratch, &zero);

		/*
		 * Dereferenced without a NULL check on purpose: when `reject`
		 * is set this path is live and the verifier must refuse the
		 * program; when it is 0 (read-only data, known at load) the
		 * verifier prunes the branch and the program loads.
		 */
		return *v != 0;
	}
	return count_hit(false);
}
