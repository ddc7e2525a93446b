// SPDX-License-Identifier: MIT
/*
 * Raw BPF_LINK_CREATE for multi-uprobe links, and file offsets of our own
 * code for uprobes.  See uprobe_multi.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "uprobe_multi.h"

/*
 * The BPF_LINK_CREATE part of union bpf_attr as kernels >= 6.6 lay it out
 * for uprobe_multi.  Passing its own size is enough: the kernel zero-fills
 * the rest of its larger union.
 */
struct uprobe_multi_link_attr {
	uint32_t prog_fd;
	uint32_t target_fd;		/* must be 0 */
	uint32_t attach_type;		/* BENCH_BPF_TRACE_UPROBE_MULTI */
	uint32_t flags;			/* link flags, must be 0 */
	uint64_t path __attribute__((aligned(8)));
	uint64_t offsets __attribute__((aligned(8)));
	uint64_t ref_ctr_offsets __attribute__((aligned(8)));
	uint64_t cookies __attribute__((aligned(8)));
	uint32_t cnt;
	uint32_t uprobe_flags;		/* BENCH_BPF_F_UPROBE_MULTI_RETURN */
	uint32_t pid;			/* 0: any process */
};

_Static_assert(offsetof(struct uprobe_multi_link_attr, path) == 16, "uapi layout");
_Static_assert(offsetof(struct uprobe_multi_link_attr, cnt) == 48, "uapi layout");
_Static_assert(offsetof(struct uprobe_multi_link_attr, pid) == 56, "uapi layout");

int bench_attach_uprobe_multi(int prog_fd, const char *path,
			      const unsigned long *offsets, size_t cnt,
			      bool retprobe)
{
	struct uprobe_multi_link_attr attr;
	long fd;

	if (prog_fd < 0 || !path || !offsets || cnt == 0 || cnt > UINT32_MAX)
		return -EINVAL;
	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = prog_fd;
	attr.attach_type = BENCH_BPF_TRACE_UPROBE_MULTI;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)offsets;
	attr.cnt = (uint32_t)cnt;
	attr.uprobe_flags = retprobe ? BENCH_BPF_F_UPROBE_MULTI_RETURN : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : (int)fd;
}

long bench_uprobe_offset(const void *addr, char *path, size_t path_sz)
{
	uintptr_t a = (uintptr_t)addr;
	char line[4096];
	long ret = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, off;
		char perms[8];
		int name_at = 0;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*u %n", &start, &end,
			   perms, &off, &name_at) < 4 || !name_at)
			continue;
		if (a < start || a >= end)
			continue;
		if (line[name_at] != '/')
			break;		/* anonymous: no file to probe */
		if (path_sz) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, path_sz, "%s", line + name_at);
		}
		ret = (long)(a - start + off);
		break;
	}
	fclose(f);
	return ret;
}
