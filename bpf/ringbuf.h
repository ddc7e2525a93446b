/* SPDX-License-Identifier: MIT */
/*
 * Layout shared by bpf/ringbuf.bpf.c, bpf/perfbuf.bpf.c and
 * csrc/bench_ringbuf.c: record size limits and the default buffer sizes.
 */
#ifndef BENCHBPF_RINGBUF_H
#define BENCHBPF_RINGBUF_H

/* One record as the kernel bench emits it: a single long. */
#define RB_DEFAULT_RECORD_SIZE	8

/* Largest ring buffer record we produce (the payload array is this big). */
#define RB_MAX_RECORD_SIZE	(1 << 20)

/*
 * Largest perf buffer sample: a perf record's size field is 16 bits and a
 * raw sample carries an 8-byte record header and a 4-byte size before the
 * data, the whole padded to 8 bytes: 8 + round_up(4 + n, 8) <= 65535.
 */
#define PB_MAX_RECORD_SIZE	65516

/* Ring buffer size the kernel bench uses (bytes) and its perf buffer size
 * (pages per CPU). */
#define RB_DEFAULT_RINGBUF_SZ	(512 * 1024)
#define PB_DEFAULT_PERFBUF_PAGES 128

/*
 * Most records per batch: the verifier walks the batch loop once per
 * record and gives up past a million instructions (about 5000 records
 * with sampling on this kernel).
 */
#define RB_MAX_BATCH		4000

/* Ring buffer record header: 32-bit length (with busy/discard bits) and a
 * 32-bit page offset. */
#define RB_HDR_SZ		8

/*
 * The producer program's own runs (for this process), one counter per CPU
 * (cpu & RB_RUN_SLOT_MASK) on its own 128-byte line: a run emits one batch,
 * so batch_cnt * runs records were produced, each either read (a hit) or
 * dropped.  No atomics: a CPU runs one instance of the program at a time.
 */
#define RB_RUN_SLOTS		256
#define RB_RUN_SLOT_MASK	(RB_RUN_SLOTS - 1)

struct rb_run_slot {
	unsigned long long value;
} __attribute__((aligned(128)));

#endif /* BENCHBPF_RINGBUF_H */
