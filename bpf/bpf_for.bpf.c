// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-for: each getpgid() call of this process runs bpf_loop() over
 * calls_per_event outer callbacks, each of which loops nr_loops times with
 * bpf_for() (the open-coded numeric iterator: bpf_iter_num_new, then
 * bpf_iter_num_next per iteration, then bpf_iter_num_destroy) over an empty
 * body and adds nr_loops to hits: the kernel bench's bpf_for_bench.c, whose
 * measured work is the iterator itself.
 *
 * Entry points, filter and whoami: producer.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "producer.bpf.h"
#include "bpf_loop.h"
#include "iter_num.bpf.h"

/* outer callbacks per event, 1 .. BPF_LOOP_CALLS_PER_EVENT (bpf_loop.h). */
const volatile __u32 calls_per_event = BPF_LOOP_CALLS_PER_EVENT;

/* Read from memory on every call, as the kernel bench does. */
int nr_loops = 0;
long hits = 0;

static int outer_loop(__u32 index, void *data)
{
	int i;

	bpf_for(i, 0, nr_loops)
		;
	__sync_add_and_fetch(&hits, nr_loops);
	return 0;
}

static __always_inline int run_loops(void)
{
	if (!producer_is_ours())
		return 0;
	bpf_loop(calls_per_event, outer_loop, NULL, 0);
	return 0;
}

GETPGID_PROGRAMS(bpf_for, run_loops())

char LICENSE[] SEC("license") = "GPL";
