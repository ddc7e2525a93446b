// SPDX-License-Identifier: GPL-2.0
/*
 * bloom-*, hashmap-*: BPF bloom filter map operations, and hashmap lookups
 * with and without a bloom filter in front, one program run per getpgid().
 *
 * bloom_lookup / bloom_update walk every element of array_map and peek it
 * in (push it into) bloom_map: one hit per element.
 * bloom_hashmap_lookup does BLOOM_LOOKUPS_PER_RUN lookups of keys read at
 * a random offset of rand_vals[] (consecutive keys overlap, value_size
 * bytes apart).  With use_bloom, a key the bloom filter rules out is a hit
 * at once; any other key is looked up in the hashmap: found is a hit, not
 * found is a drop (and, with count_false_hits, a false hit: the filter
 * said maybe, the hashmap said no).  Without the bloom filter every key
 * is looked up, and random keys are all but never there: drops.
 *
 * Maps' sizes, value size and number of hash functions are set by user
 * space before loading; it also fills the maps and rand_vals[].
 *
 * Entry points, filter and whoami: producer.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "producer.bpf.h"
#include "bloom.h"

#define BLOOM_ENOENT 2

/* Sizes, value size and map_extra (hash functions) are set before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 8);
	__uint(max_entries, 1);
} array_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(value_size, 8);
	__uint(max_entries, 1);
	__uint(map_extra, 3);
} bloom_map SEC(".maps");

/* Keys and values are the same random bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, 8);
	__uint(value_size, 8);
	__uint(max_entries, 1);
} hashmap SEC(".maps");

const volatile __u32 value_size = 8;
const volatile bool use_bloom = false;
const volatile bool count_false_hits = false;

__u8 rand_vals[BLOOM_RAND_BYTES];
__u64 percpu_stats[BLOOM_NR_SLOTS * BLOOM_SLOT_WORDS] __attribute__((aligned(256)));
int error = 0;
int error_errno = 0;

static __always_inline void count(__u32 what)
{
	__u32 slot = bpf_get_smp_processor_id() & BLOOM_SLOT_MASK;

	percpu_stats[slot * BLOOM_SLOT_WORDS + what]++;
}

/* Map helpers' answers are taken as int, as the kernel bench does: before
 * Linux 6.4 the verifier turned these calls into direct calls of map ops
 * returning int, so only the low 32 bits of R0 are defined (6.1 handed
 * -ENOENT back as 0xfffffffe, which no long equals). */
static __always_inline __u64 iter_result(int err)
{
	if (err) {
		error |= BLOOM_ERR_ITER;
		error_errno = -err;
		return 1;	/* stop walking */
	}
	count(BLOOM_HIT);
	return 0;
}

static __u64 peek_cb(struct bpf_map *map, __u32 *key, void *val, void *data)
{
	return iter_result(bpf_map_peek_elem(&bloom_map, val));
}

static __u64 push_cb(struct bpf_map *map, __u32 *key, void *val, void *data)
{
	return iter_result(bpf_map_push_elem(&bloom_map, val, 0));
}

static __always_inline int lookup_all(void)
{
	if (!producer_is_ours())
		return 0;
	bpf_for_each_map_elem(&array_map, peek_cb, NULL, 0);
	return 0;
}

static __always_inline int update_all(void)
{
	if (!producer_is_ours())
		return 0;
	bpf_for_each_map_elem(&array_map, push_cb, NULL, 0);
	return 0;
}

static __always_inline int hashmap_lookups(void)
{
	__u32 index, i;
	int err;	/* not long: see iter_result() */

	if (!producer_is_ours())
		return 0;
	index = bpf_get_prandom_u32();
	for (i = 0; i < BLOOM_LOOKUPS_PER_RUN; i++, index += value_size) {
		index &= BLOOM_RAND_SPAN - 1;
		if (use_bloom) {
			err = bpf_map_peek_elem(&bloom_map, rand_vals + index);
			if (err) {
				if (err != -BLOOM_ENOENT) {
					error |= BLOOM_ERR_PEEK;
					error_errno = -err;
					return 0;
				}
				count(BLOOM_HIT);	/* ruled out without a lookup */
				continue;
			}
		}
		if (bpf_map_lookup_elem(&hashmap, rand_vals + index)) {
			count(BLOOM_HIT);
		} else {
			if (use_bloom && count_false_hits)
				count(BLOOM_FALSE_HIT);
			count(BLOOM_DROP);
		}
	}
	return 0;
}

GETPGID_PROGRAMS(bloom_lookup, lookup_all())
GETPGID_PROGRAMS(bloom_update, update_all())
GETPGID_PROGRAMS(bloom_hashmap, hashmap_lookups())

char LICENSE[] SEC("license") = "GPL";
