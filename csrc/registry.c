// SPDX-License-Identifier: MIT
/* Every benchmark, found by name.  A family adds its ops tables here. */
#include <string.h>

#include "bench.h"

extern const struct bench bench_count_global;
extern const struct bench bench_count_local;
extern const struct bench bench_selftest;
extern const struct bench bench_rename_base, bench_rename_kprobe, bench_rename_kretprobe, bench_rename_rawtp, bench_rename_fentry, bench_rename_fexit;
extern const struct bench bench_trig_syscall_count, bench_trig_usermode_count, bench_trig_kernel_count, bench_trig_tp, bench_trig_rawtp, bench_trig_kprobe, bench_trig_kretprobe, bench_trig_kprobe_multi, bench_trig_kretprobe_multi, bench_trig_fentry, bench_trig_fexit, bench_trig_fmodret, bench_trig_uprobe_nop, bench_trig_uprobe_push, bench_trig_uprobe_ret, bench_trig_uretprobe_nop, bench_trig_uretprobe_push, bench_trig_uretprobe_ret, bench_trig_uprobe_multi_nop, bench_trig_uprobe_multi_push, bench_trig_uprobe_multi_ret, bench_trig_uretprobe_multi_nop, bench_trig_uretprobe_multi_push, bench_trig_uretprobe_multi_ret, bench_trig_usdt_nop;
extern const struct bench bench_rb_libbpf, bench_rb_custom, bench_pb_libbpf, bench_pb_custom;
extern const struct bench bench_bloom_lookup, bench_bloom_update, bench_bloom_false_positive, bench_hashmap_without_bloom, bench_hashmap_with_bloom;
extern const struct bench bench_bpf_loop;
extern const struct bench bench_strncmp_no_helper, bench_strncmp_helper;
extern const struct bench bench_local_storage_cache_seq_get, bench_local_storage_cache_int_get, bench_local_storage_cache_hashmap_control, bench_local_storage_create;
extern const struct bench bench_bpf_hashmap_lookup, bench_bpf_hashmap_full_update;
extern const struct bench bench_htab_mem;
extern const struct bench bench_local_storage_tasks_trace;
extern const struct bench bench_bpf_nop;
extern const struct bench bench_bpf_for;
extern const struct bench bench_crypto_encrypt, bench_crypto_decrypt;
extern const struct bench bench_lpm_trie_noop, bench_lpm_trie_baseline, bench_lpm_trie_lookup, bench_lpm_trie_insert, bench_lpm_trie_update, bench_lpm_trie_delete, bench_lpm_trie_free;

static const struct bench *const registry[] = {
	&bench_count_global,
	&bench_count_local,
	&bench_selftest,
	&bench_rename_base, &bench_rename_kprobe, &bench_rename_kretprobe, &bench_rename_rawtp, &bench_rename_fentry, &bench_rename_fexit,
	&bench_trig_syscall_count, &bench_trig_usermode_count, &bench_trig_kernel_count, &bench_trig_tp, &bench_trig_rawtp, &bench_trig_kprobe, &bench_trig_kretprobe, &bench_trig_kprobe_multi, &bench_trig_kretprobe_multi, &bench_trig_fentry, &bench_trig_fexit, &bench_trig_fmodret, &bench_trig_uprobe_nop, &bench_trig_uprobe_push, &bench_trig_uprobe_ret, &bench_trig_uretprobe_nop, &bench_trig_uretprobe_push, &bench_trig_uretprobe_ret, &bench_trig_uprobe_multi_nop, &bench_trig_uprobe_multi_push, &bench_trig_uprobe_multi_ret, &bench_trig_uretprobe_multi_nop, &bench_trig_uretprobe_multi_push, &bench_trig_uretprobe_multi_ret, &bench_trig_usdt_nop,
	&bench_rb_libbpf, &bench_rb_custom, &bench_pb_libbpf, &bench_pb_custom,
	&bench_bloom_lookup, &bench_bloom_update, &bench_bloom_false_positive, &bench_hashmap_without_bloom, &bench_hashmap_with_bloom,
	&bench_bpf_loop,
	&bench_strncmp_no_helper, &bench_strncmp_helper,
	&bench_local_storage_cache_seq_get, &bench_local_storage_cache_int_get, &bench_local_storage_cache_hashmap_control, &bench_local_storage_create,
	&bench_bpf_hashmap_full_update, &bench_bpf_hashmap_lookup,
	&bench_htab_mem,
	&bench_local_storage_tasks_trace,
	&bench_bpf_nop,
	&bench_bpf_for,
	&bench_crypto_encrypt, &bench_crypto_decrypt,
	&bench_lpm_trie_noop, &bench_lpm_trie_baseline, &bench_lpm_trie_lookup, &bench_lpm_trie_insert, &bench_lpm_trie_update, &bench_lpm_trie_delete, &bench_lpm_trie_free,
};

const struct bench *const *bench_all(int *count)
{
	*count = sizeof(registry) / sizeof(registry[0]);
	return registry;
}

const struct bench *bench_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}
