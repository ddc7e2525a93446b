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
 * Two variants, each on the syscalls/sys_enter_getpgid tracepoint (the
 * kernel bench's trigger) or as fentry on the syscall: producer.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "producer.bpf.h"
#include "strncmp.h"

/* Set before load. */
const volatile unsigned int cmp_str_len = 1;
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

static __always_inline int no_helper(void)
{
	const char *target_str = target;

	/* As the kernel bench: the compiler forgets what the pointer is, so
	 * it stays in a register instead of being rebuilt (a 64-bit load of
	 * the map address) for every character. */
	__asm__ __volatile__("" : "+r"(target_str));
	if (producer_is_ours() && bytewise_cmp(str, cmp_str_len + 1, target_str) < 0)
		__sync_add_and_fetch(&hits, 1);
	return 0;
}

static __always_inline int with_helper(void)
{
	if (producer_is_ours() && bpf_strncmp(str, cmp_str_len + 1, target) < 0)
		__sync_add_and_fetch(&hits, 1);
	return 0;
}

GETPGID_PROGRAMS(strncmp_no_helper, no_helper())
GETPGID_PROGRAMS(strncmp_helper, with_helper())

char LICENSE[] SEC("license") = "GPL";
