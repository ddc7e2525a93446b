// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf-loop benchmark's nest (bpf/bpf_loop_nest.bpf.h: 1000 outer callback
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

#include "../bpf/bpf_loop_nest.bpf.h"

SEC("xdp")
int loop_nest(struct xdp_md *ctx)
{
	bpf_loop(1000, outer_loop, NULL, 0);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
