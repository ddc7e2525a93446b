/* SPDX-License-Identifier: MIT */
/* local-storage-tasks-trace: limits shared by bpf/rcu_tasks_trace.bpf.c and its C side. */
#ifndef BENCHBPF_RCU_TASKS_TRACE_H
#define BENCHBPF_RCU_TASKS_TRACE_H

/* Sleeping tasks forked, as the kernel bench's study ran (up to 15000). */
#define TASKS_TRACE_MAX_PROCS 15000
#define TASKS_TRACE_DEFAULT_PROCS 1000

/* Grace-period counters, read and reset by user space each interval. */
struct tasks_trace_gp {
	__u64 completed;	/* grace periods that ended */
	__u64 timed;		/* of which the latency was measured */
	__u64 ns;		/* sum of their latencies (estimate) */
	__u64 bracket_ns;	/* sum of the estimates' half-widths (0 with fentry) */
};

#endif /* BENCHBPF_RCU_TASKS_TRACE_H */
