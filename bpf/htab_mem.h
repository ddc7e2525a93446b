/* SPDX-License-Identifier: MIT */
/* htab-mem: limits shared by bpf/htab_mem.bpf.c and csrc/bench_htab_mem.c. */
#ifndef BENCHBPF_HTAB_MEM_H
#define BENCHBPF_HTAB_MEM_H

/* Largest value, as the kernel bench's. */
#define HTAB_MEM_MAX_VALUE_SIZE 4096
/* Elements written or deleted per program run. */
#define HTAB_MEM_OP_BATCH 64

#endif /* BENCHBPF_HTAB_MEM_H */
