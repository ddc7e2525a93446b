// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-loop: each getpgid() call of this process runs bpf_loop() over
 * calls_per_event iterations of an outer callback, each of which makes one
 * bpf_loop() call of nr_loops iterations of an empty callback: the kernel
 * bench's shape, one bpf_loop() nested in another.
 *
 * bpf_loop_*: as the kernel bench, each call adds nr_loops to hits (user
 * space checks that nr_loops is what the helper accepts, the only way a
 * call can fail).  bpf_loop_returned_* (count_returned): hits adds the
 * iterations the helper reports done; a call the helper refuses (negative
 * return) adds nothing and is counted in loop_errors instead, with its
 * error code in last_error, so user space can fail the run rather than
 * report loops that never ran.
 *
 * Entry points, filter and whoami: producer.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "producer.bpf.h"
#include "bpf_loop.h"

/* outer callback iterations per event, 1 .. BPF_LOOP_CALLS_PER_EVENT. */
const volatile __u32 calls_per_event = BPF_LOOP_CALLS_PER_EVENT;

/* Read from memory on every call, as the kernel bench does. */
__u32 nr_loops = 0;
long hits = 0;
long loop_errors __attribute__((aligned(128))) = 0;
long last_error = 0;

#include "bpf_loop_nest.bpf.h"

/* One bpf_loop() call of nr_loops; what it did is added as it returns. */
static int returned_outer_loop(__u32 index, void *data)
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

static __always_inline int run_loops(void *outer)
{
	if (!producer_is_ours())
		return 0;
	bpf_loop(calls_per_event, outer, NULL, 0);
	return 0;
}

GETPGID_PROGRAMS(bpf_loop, run_loops(outer_loop))
GETPGID_PROGRAMS(bpf_loop_returned, run_loops(returned_outer_loop))

char LICENSE[] SEC("license") = "GPL";
