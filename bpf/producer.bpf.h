/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every BPF producer that fires on getpgid() shares, with
 * csrc/producer.c on the user-space side: the two entry points (fentry on
 * the syscall, the kernel bench's usual trigger, or its sys_enter
 * tracepoint where fentry is refused), the filter on this process, and
 * the whoami program that tells user space which id the filter compares.
 *
 * Include after vmlinux.h and bpf_helpers.h; write the body once and
 * GETPGID_PROGRAMS(name, body) for its two entry points.
 */
#ifndef BENCHBPF_PRODUCER_BPF_H
#define BENCHBPF_PRODUCER_BPF_H

#if defined(__TARGET_ARCH_arm64)
#define SYSCALL_PREFIX "__arm64_"
#elif defined(__TARGET_ARCH_s390)
#define SYSCALL_PREFIX "__s390x_"
#else
#define SYSCALL_PREFIX "__x64_"
#endif

/*
 * Only this process's getpgid() calls count (0: everyone's), so that other
 * processes calling getpgid() add nothing.  Set from producer_whoami after
 * load, before attach: the id BPF sees, right in any pid namespace.
 */
__u32 filter_tgid = 0;

static __always_inline bool producer_is_ours(void)
{
	return !filter_tgid || (bpf_get_current_pid_tgid() >> 32) == filter_tgid;
}

/*
 * Run once by user space through BPF_PROG_TEST_RUN, which runs it in the
 * calling thread: returns this process's id as BPF sees it, whatever pid
 * namespace the process lives in (its own /proc cannot tell).
 */
SEC("?raw_tp")
int producer_whoami(void *ctx)
{
	return bpf_get_current_pid_tgid() >> 32;
}

/* name##_fentry and name##_tp, none loaded unless user space enables it. */
#define GETPGID_PROGRAMS(name, body)					\
	SEC("?fentry/" SYSCALL_PREFIX "sys_getpgid")			\
	int name##_fentry(void *ctx)					\
	{								\
		return body;						\
	}								\
	SEC("?tp/syscalls/sys_enter_getpgid")				\
	int name##_tp(void *ctx)					\
	{								\
		return body;						\
	}

#endif /* BENCHBPF_PRODUCER_BPF_H */
