/* SPDX-License-Identifier: MIT */
/* Layout shared by bpf/trigger.bpf.c and csrc/bench_trigger.c. */
#ifndef BENCHBPF_TRIGGER_H
#define BENCHBPF_TRIGGER_H

/*
 * Hit counters: one slot per CPU (BPF side) or per thread hash (user-space
 * counting), each on its own 128-byte line so that CPUs never share one.
 * The BPF side indexes with cpu & TRIG_SLOT_MASK.
 */
#define TRIG_NR_SLOTS 256
#define TRIG_SLOT_MASK (TRIG_NR_SLOTS - 1)

struct trig_slot {
	long value;
} __attribute__((aligned(128)));

/* Upper bound of trig_batch_iters, as the kernel bench. */
#define TRIG_MAX_BATCH_ITERS 1000

/* The kfunc the tp/rawtp/fmodret drivers call (trig_driver_kfunc): it
 * fires bpf_test_run:bpf_trigger_tp and is fmod_ret-able.  Linux 6.10 added
 * both; older kernels have neither, so those benchmarks cannot run there. */
#define TRIG_DRIVER_KFUNC "bpf_modify_return_test_tp"

/* USDT probe the producer of trig-usdt-nop fires. */
#define TRIG_USDT_PROVIDER "benchbpf"
#define TRIG_USDT_NAME "trig_nop"

#endif /* BENCHBPF_TRIGGER_H */
