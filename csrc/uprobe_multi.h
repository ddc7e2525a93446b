/* SPDX-License-Identifier: MIT */
/*
 * Multi-uprobe links through the raw BPF_LINK_CREATE command.
 *
 * The system uapi headers and libbpf 1.1 predate uprobe_multi, so the few
 * uapi bits it needs are defined here with the kernel's values.  A program
 * meant for such a link must be loaded as a kprobe-type program with
 * expected attach type BENCH_BPF_TRACE_UPROBE_MULTI:
 *
 *	bpf_program__set_expected_attach_type(prog, BENCH_BPF_TRACE_UPROBE_MULTI);
 *
 * (between open and load; the section can be "?uprobe").
 */
#ifndef BENCHBPF_UPROBE_MULTI_H
#define BENCHBPF_UPROBE_MULTI_H

#include <stdbool.h>
#include <stddef.h>

/* enum bpf_attach_type value in kernels >= 6.6 */
#define BENCH_BPF_TRACE_UPROBE_MULTI 48
/* link_create.uprobe_multi.flags: return probes */
#define BENCH_BPF_F_UPROBE_MULTI_RETURN (1U << 0)

/*
 * Attach prog_fd to `cnt` uprobes (or uretprobes) at file offsets `offsets`
 * of the ELF file `path`, in every process mapping it.  Returns the link fd
 * (close it to detach) or -errno: -EINVAL for an unknown attach type on
 * kernels without uprobe_multi or for a program not loaded with
 * BENCH_BPF_TRACE_UPROBE_MULTI, -ENOENT for a missing file.
 */
int bench_attach_uprobe_multi(int prog_fd, const char *path,
			      const unsigned long *offsets, size_t cnt,
			      bool retprobe);

/*
 * File offset of the code at `addr` in this process, for uprobes: found in
 * /proc/self/maps.  Fills path (the mapped file) if path_sz > 0.  Returns the
 * offset or -errno (-ENOENT if `addr` is not in a file mapping).
 */
long bench_uprobe_offset(const void *addr, char *path, size_t path_sz);

#endif /* BENCHBPF_UPROBE_MULTI_H */
