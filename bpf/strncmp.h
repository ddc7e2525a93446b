/* SPDX-License-Identifier: MIT */
/* strncmp-*: constants shared by bpf/strncmp.bpf.c and csrc/bench_strncmp.c. */
#ifndef BENCHBPF_STRNCMP_H
#define BENCHBPF_STRNCMP_H

/* Bytes of the compared buffers, NUL included (the kernel bench's 4096):
 * cmp_str_len can be 1 .. STRNCMP_STR_SZ - 1. */
#define STRNCMP_STR_SZ 4096

#endif /* BENCHBPF_STRNCMP_H */
