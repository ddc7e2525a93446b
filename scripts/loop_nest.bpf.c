// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf-loop benchmark's nest (bpf/bpf_loop.bpf.c: 1000 outer callback
 * calls per event, each one bpf_loop() of nr_loops empty callbacks and one
 * atomic add), as an XDP program so that BPF_PROG_TEST_RUN can run one
 * loaded copy after another.  scripts/jit_placement.py --copies loads it
 * many times and times the copies against each other: only where the JIT
 * placed each copy differs.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

__u32 nr_loops = 10;
long hits = 0;

static int empty_callback(__u32 index, void *data)
{
	return 0;
}

static int outer_loop(__u32 index, void *data)
{
	bpf_loop(nr_loops, empty_callback, NULL, 0);
	__sync_add_and_fetch(&hits, nr_loops);
	return 0;
}

SEC("xdp")
int loop_nest(struct xdp_md *ctx)
{
	bpf_loop(1000, outer_loop, NULL, 0);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
