/* SPDX-License-Identifier: MIT */
/* lpm-trie: layouts and limits shared by bpf/lpm_trie.bpf.c and csrc/bench_lpm_trie.c. */
#ifndef BENCHBPF_LPM_TRIE_H
#define BENCHBPF_LPM_TRIE_H

/* The kernel bench's key: a prefix length and 32 bits of data, in host order. */
struct lpm_trie_key {
	__u32 prefixlen;
	__u32 data;
};

/* The trie's capacity (the kernel bench's MAX_ENTRIES), so the most
 * entries a benchmark can fill it with. */
#define LPM_TRIE_MAX_ENTRIES 100000000
/* Operations per program run: one bpf_loop() of this many callbacks. */
#define LPM_TRIE_NR_LOOPS 10000
/* The name the free benchmark's maps have, which its fentry program looks for. */
#define LPM_TRIE_FREE_MAP_NAME "trie_free_map"

/* Operations, the value of the program's `op`. */
enum lpm_trie_op {
	LPM_OP_NOOP, LPM_OP_BASELINE, LPM_OP_LOOKUP, LPM_OP_INSERT, LPM_OP_UPDATE,
	LPM_OP_DELETE, LPM_OP_FREE,
};

/* What a program run returns; negative values are kernel error codes. */
#define LPM_TRIE_SUCCESS 0
#define LPM_TRIE_REINIT_MAP 1	/* reset the trie to its initial state */

#endif /* BENCHBPF_LPM_TRIE_H */
