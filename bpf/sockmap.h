/* SPDX-License-Identifier: MIT */
/* sockmap: constants shared by bpf/sockmap.bpf.c and csrc/bench_sockmap.c. */
#ifndef BENCHBPF_SOCKMAP_H
#define BENCHBPF_SOCKMAP_H

/* Slots of each SOCKMAP, as the kernel bench sizes them; the verdict
 * programs redirect to slot SOCKMAP_TO (slot 0 holds the socket they run on). */
#define SOCKMAP_ENTRIES 20
#define SOCKMAP_FROM 0
#define SOCKMAP_TO 1

/* The file the producer sendfile()s over and over, and the consumer's read
 * size: the kernel bench's FILE_SIZE, filled with 0..9 repeated. */
#define SOCKMAP_FILE_SIZE (128 * 1024)
#define SOCKMAP_PATTERN_LEN 10

/* Longest stream parser message (rx_strp), see csrc/bench_sockmap.c. */
#define SOCKMAP_MAX_STRP (64 * 1024)

#endif /* BENCHBPF_SOCKMAP_H */
