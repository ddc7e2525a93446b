/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF-side timing for every BPF-timed family (user side: csrc/bpf_timing_user.c).
 *
 * BPF_TIMING_LOOP(body, reset) runs `body` batch_iters times between two
 * bpf_ktime_get_ns() reads, records the elapsed time as one batch of this
 * CPU (while user space has timing_enabled set), then runs `body` once more,
 * untimed, and evaluates to that run's int result so that the caller can
 * check what one operation returns.  The loop is bounded by may_goto
 * (can_loop), as the kernel bench's bench_bpf_timing.bpf.h: the verifier
 * cannot bound a loop over a value user space writes.
 *
 * Beyond the kernel bench: a batch that may_goto cut short (fewer than
 * batch_iters iterations ran) is not recorded as if all had run; it is
 * counted in timing_short[cpu] and user space fails the run.
 */
#ifndef BENCHBPF_BPF_TIMING_BPF_H
#define BENCHBPF_BPF_TIMING_BPF_H

#include "bpf_timing.h"
#include "may_goto.bpf.h"

#define BPF_TIMING_CPU_MASK (BPF_TIMING_NR_CPUS - 1)

__u64 timing_samples[BPF_TIMING_NR_CPUS][BPF_TIMING_NR_SAMPLES];
__u32 timing_idx[BPF_TIMING_NR_CPUS];
__u32 timing_short[BPF_TIMING_NR_CPUS];

/* Written by user space while programs run: read on every use. */
volatile __u32 batch_iters;
volatile __u32 timing_enabled;

static __always_inline void bpf_timing_record(__u64 elapsed_ns, bool cut)
{
	__u32 cpu, idx;

	if (!timing_enabled)
		return;
	cpu = bpf_get_smp_processor_id() & BPF_TIMING_CPU_MASK;
	if (cut) {
		timing_short[cpu]++;
		return;
	}
	idx = timing_idx[cpu];
	if (idx >= BPF_TIMING_NR_SAMPLES)
		return;
	timing_samples[cpu][idx] = elapsed_ns;
	/* Published after the sample: user space reads up to the index
	 * (x86 keeps stores in order; the compiler must too). */
	asm volatile("" ::: "memory");
	timing_idx[cpu] = idx + 1;
}

/*
 * batch_iters is read on every iteration, as the kernel bench's loop does.
 * Whether may_goto cut the batch short is found before the clock is read
 * again (one compare per batch), so that the counter is dead across that
 * call and the compiler keeps the loop in the same registers as the kernel
 * bench's (a counter kept across the call goes to a callee-saved register:
 * ~0.3 ns more per iteration here).
 */
#define BPF_TIMING_LOOP(body, reset) ({					\
	__u64 __bt_start = bpf_ktime_get_ns();				\
	__u32 __bt_i;							\
	bool __bt_cut;							\
	int __bt_result;						\
									\
	for (__bt_i = 0; __bt_i < batch_iters && bench_can_loop; __bt_i++) { \
		__bt_result = (body);					\
		reset;							\
	}								\
	__bt_cut = __bt_i < batch_iters;				\
	asm volatile("" : "+r"(__bt_cut));	/* computed here */	\
	bpf_timing_record(bpf_ktime_get_ns() - __bt_start, __bt_cut);	\
	__bt_result = (body);						\
	__bt_result;							\
})

#endif /* BENCHBPF_BPF_TIMING_BPF_H */
