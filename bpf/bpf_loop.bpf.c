// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-loop: each getpgid() call of this process runs
 * BPF_LOOP_CALLS_PER_EVENT bpf_loop() calls of nr_loops iterations of an
 * empty callback.  hits counts the iterations the helper reports done; a
 * call the helper refuses (negative return) adds nothing to hits and is
 * counted in loop_errors instead, with its error code in last_error, so
 * user space can fail the run rather than report loops that never ran.
 *
 * Entry points, filter and whoami: producer.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "producer.bpf.h"
#include "bpf_loop.h"

/* Passes per event, 1 .. BPF_LOOP_OUTER. */
const volatile __u32 nr_passes = BPF_LOOP_OUTER;

/* Read from memory on every call, as the kernel bench does. */
__u32 nr_loops = 0;
long hits = 0;
long loop_errors __attribute__((aligned(128))) = 0;
long last_error = 0;

static int empty_callback(__u32 index, void *data)
{
	return 0;
}

/*
 * One bpf_loop() call; a failed call (negative return) adds nothing to
 * hits and bumps *nr_failed, with its error code or-ed into *err.  No
 * branch: a branch per call would double the paths the verifier walks.
 */
static __always_inline void one_call(long *nr_failed, long *err)
{
	long ret, failed;

	/* Only the low 32 bits: where the verifier inlines bpf_loop() it
	 * returns -E2BIG as a 32-bit move, zero-extended, i.e. 4294967289. */
	ret = (int)bpf_loop(nr_loops, empty_callback, NULL, 0);
	failed = (__u64)ret >> 63;			/* 1 if ret < 0 */
	*nr_failed += failed;
	*err |= ret & -failed;				/* the error code, or 0 */
	__sync_add_and_fetch(&hits, ret & (failed - 1));	/* ret, or 0 */
	/* Keep the sums in registers call by call: left to itself the
	 * compiler spills every return value and adds them up per pass. */
	asm volatile("" : "+r"(*nr_failed), "+r"(*err));
}

/*
 * The BPF_LOOP_CALLS_PER_EVENT calls run as BPF_LOOP_OUTER passes of
 * BPF_LOOP_INNER unrolled calls.  A single loop of 1000 calls, as the
 * kernel bench writes it, exceeds the verifier's 1M-instruction budget on
 * recent kernels (each bpf_loop() call site is explored again per loop
 * pass still pending); with fewer than 64 passes it verifies in ~25k.
 * The calls are the same; only the loop overhead is smaller.  nr_passes
 * (known to the verifier) is BPF_LOOP_OUTER unless nr_loops is so large
 * that an event would exceed BPF_LOOP_EVENT_BUDGET iterations.
 */
_Static_assert(BPF_LOOP_OUTER * BPF_LOOP_INNER == BPF_LOOP_CALLS_PER_EVENT,
	       "the passes must make exactly BPF_LOOP_CALLS_PER_EVENT calls");

static __always_inline int run_loops(void)
{
	long nr_failed = 0, err = 0;
	int i, j;

	if (!producer_is_ours())
		return 0;
	for (i = 0; i < BPF_LOOP_OUTER; i++) {
		if (i >= nr_passes)
			break;
#pragma unroll
		for (j = 0; j < BPF_LOOP_INNER; j++)
			one_call(&nr_failed, &err);
	}
	if (nr_failed) {
		last_error = err;
		__sync_add_and_fetch(&loop_errors, nr_failed);
	}
	return 0;
}

GETPGID_PROGRAMS(bpf_loop, run_loops())

char LICENSE[] SEC("license") = "GPL";
