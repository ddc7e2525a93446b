// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-nop: the empty BPF-timed loop, the floor of every BPF-timed figure
 * (the loop's own counter, bound check and may_goto per iteration).  Run
 * through BPF_PROG_TEST_RUN as a syscall program, as the kernel bench's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf_timing.bpf.h"

SEC("syscall")
int bpf_nop(void *ctx)
{
	return BPF_TIMING_LOOP(0, ({}));
}

char LICENSE[] SEC("license") = "GPL";
