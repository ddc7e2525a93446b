// SPDX-License-Identifier: GPL-2.0
/*
 * strncmp-no-helper / strncmp-helper: on each getpgid() call of this
 * process, compare the first cmp_str_len + 1 bytes of str (writable data)
 * with target (read-only data), either with an open-coded byte loop or
 * with the bpf_strncmp() helper.  User space fills both so that they
 * differ only in their last compared character, where str is smaller:
 * every comparison walks cmp_str_len characters and returns < 0, which
 * counts one hit.
 *
 * Four entry points, none loaded by default: the two variants, each on
 * the syscalls/sys_enter_getpgid tracepoint (the kernel bench's trigger)
 * or as fentry on the syscall.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "strncmp.h"

#if defined(__TARGET_ARCH_arm64)
#define SYSCALL_PREFIX "__arm64_"
#elif defined(__TARGET_ARCH_s390)
#define SYSCALL_PREFIX "__s390x_"
#else
#define SYSCALL_PREFIX "__x64_"
#endif

/* Set before load. */
const volatile unsigned int cmp_str_len = 1;
/* Count only this process's getpgid() calls (0: everyone's).  Set from
 * whoami after load, before attach. */
__u32 filter_tgid = 0;
const char target[STRNCMP_STR_SZ];

long hits = 0;
char str[STRNCMP_STR_SZ];

/* Byte-wise like strncmp(): the first difference or NUL ends it. */
static __always_inline int bytewise_cmp(const char *a, unsigned int n, const char *b)
{
	unsigned int i;
	int diff = 0;

	for (i = 0; i < n; i++) {
		diff = (unsigned char)a[i] - (unsigned char)b[i];
		if (diff || !a[i])
			break;
	}
	return diff;
}

static __always_inline bool ours(void)
{
	return !filter_tgid || (bpf_get_current_pid_tgid() >> 32) == filter_tgid;
}

static __always_inline int no_helper(void)
{
	if (ours() && bytewise_cmp(str, cmp_str_len + 1, target) < 0)
		__sync_add_and_fetch(&hits, 1);
	return 0;
}

static __always_inline int with_helper(void)
{
	if (ours() && bpf_strncmp(str, cmp_str_len + 1, target) < 0)
		__sync_add_and_fetch(&hits, 1);
	return 0;
}

SEC("?tp/syscalls/sys_enter_getpgid")
int strncmp_no_helper_tp(void *ctx)
{
	return no_helper();
}

SEC("?tp/syscalls/sys_enter_getpgid")
int strncmp_helper_tp(void *ctx)
{
	return with_helper();
}

SEC("?fentry/" SYSCALL_PREFIX "sys_getpgid")
int strncmp_no_helper_fentry(void *ctx)
{
	return no_helper();
}

SEC("?fentry/" SYSCALL_PREFIX "sys_getpgid")
int strncmp_helper_fentry(void *ctx)
{
	return with_helper();
}

/*
 * Run once by user space through BPF_PROG_TEST_RUN, which runs it in the
 * calling thread: returns this process's id as BPF sees it, whatever pid
 * namespace the process lives in (its own /proc cannot tell).
 */
SEC("?raw_tp")
int strncmp_whoami(void *ctx)
{
	return bpf_get_current_pid_tgid() >> 32;
}

char LICENSE[] SEC("license") = "GPL";
