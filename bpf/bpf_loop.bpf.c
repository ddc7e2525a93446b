// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-loop: each getpgid() call of this process runs bpf_loop() over
 * calls_per_event iterations of outer_loop, each of which makes one
 * bpf_loop() call of nr_loops iterations of an empty callback: the kernel
 * bench's shape, one bpf_loop() nested in another.  hits counts the
 * iterations the helper reports done; a call the helper refuses (negative
 * return) adds nothing to hits and is counted in loop_errors instead, with
 * its error code in last_error, so user space can fail the run rather than
 * report loops that never ran.
 *
 * Entry points, filter and whoami: producer.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "producer.bpf.h"
#include "bpf_loop.h"

/* outer_loop iterations per event, 1 .. BPF_LOOP_CALLS_PER_EVENT. */
const volatile __u32 calls_per_event = BPF_LOOP_CALLS_PER_EVENT;

/* Read from memory on every call, as the kernel bench does. */
__u32 nr_loops = 0;
long hits = 0;
long loop_errors __attribute__((aligned(128))) = 0;
long last_error = 0;

static int empty_callback(__u32 index, void *data)
{
	return 0;
}

/* One bpf_loop() call of nr_loops; what it did is added as it returns,
 * one atomic add per call as in the kernel bench. */
static int outer_loop(__u32 index, void *data)
{
	/* Only the low 32 bits: where the verifier inlines bpf_loop() it
	 * returns -E2BIG as a 32-bit move, zero-extended, i.e. 4294967289. */
	long ret = (int)bpf_loop(nr_loops, empty_callback, NULL, 0);

	if (ret < 0) {
		last_error = ret;
		__sync_add_and_fetch(&loop_errors, 1);
		return 0;
	}
	__sync_add_and_fetch(&hits, ret);
	return 0;
}

static __always_inline int run_loops(void)
{
	if (!producer_is_ours())
		return 0;
	bpf_loop(calls_per_event, outer_loop, NULL, 0);
	return 0;
}

GETPGID_PROGRAMS(bpf_loop, run_loops())

char LICENSE[] SEC("license") = "GPL";
