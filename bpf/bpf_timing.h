/* SPDX-License-Identifier: MIT */
/*
 * BPF-side timing: the layout bpf/bpf_timing.bpf.h keeps in a skeleton's
 * .bss and csrc/bpf_timing_user.c reads, shared by every BPF-timed family.
 * Sizes are the kernel bench's (bench_bpf_timing.h): 4096 batches per CPU,
 * CPUs 0..255 (a CPU id is masked into that range).
 */
#ifndef BENCHBPF_BPF_TIMING_H
#define BENCHBPF_BPF_TIMING_H

#define BPF_TIMING_NR_SAMPLES 4096
#define BPF_TIMING_NR_CPUS 256
/* Timed batches kept per producer before a run ends, as upstream's 200. */
#define BPF_TIMING_TARGET_SAMPLES 200

#endif /* BENCHBPF_BPF_TIMING_H */
