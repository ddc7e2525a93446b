/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bpf-loop nest's callbacks, the kernel bench's: one bpf_loop() call of
 * nr_loops empty callbacks, then nr_loops added to hits, one atomic add per
 * call.  The includer defines `__u32 nr_loops` and `long hits`; shared with
 * scripts/loop_nest.bpf.c, which times where the JIT puts these same
 * instructions.
 */
#ifndef BPF_LOOP_NEST_BPF_H
#define BPF_LOOP_NEST_BPF_H

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

#endif
