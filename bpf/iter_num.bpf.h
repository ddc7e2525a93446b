/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf_for(i, start, end): a loop over start .. end - 1 through the kernel's
 * open-coded numeric iterator (bpf_iter_num_new/next/destroy kfuncs, Linux
 * 6.4), as the kernel selftests' bpf_for(): each step calls
 * bpf_iter_num_next() and checks the value against the bounds, which is what
 * lets the verifier know i's range; the iterator is destroyed when the loop
 * variable's scope ends.  Shared by bpf-for and the feature probe.
 */
#ifndef BENCHBPF_ITER_NUM_BPF_H
#define BENCHBPF_ITER_NUM_BPF_H

extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __weak __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __weak __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __weak __ksym;

#define bpf_for(i, start, end)						\
	for (struct bpf_iter_num __it					\
		__attribute__((aligned(8), cleanup(bpf_iter_num_destroy))), \
		/* calls bpf_iter_num_new() once; names destroy so that \
		 * clang emits its BTF (cleanup() alone does not) */	\
		*__it_init __attribute__((unused)) =			\
			(bpf_iter_num_new(&__it, (start), (end)),	\
			 (void)bpf_iter_num_destroy, (void *)0);		\
	     ({ int *__v = bpf_iter_num_next(&__it);			\
		__v && ((i) = *__v, (i) >= (start) && (i) < (end)); });	\
	    )

#endif /* BENCHBPF_ITER_NUM_BPF_H */
