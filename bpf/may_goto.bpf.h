/* SPDX-License-Identifier: GPL-2.0 */
/*
 * can_loop: true while the kernel lets a loop go on (may_goto, Linux 6.9),
 * which lets the verifier accept a loop bounded by a value it cannot know.
 * Encoded by hand, as clang before 19 has no mnemonic for it:
 * BPF_JMP | BPF_JCOND (0xe5), no registers, the jump offset in 8-byte
 * instructions (the .long's low half), imm 0.  Shared by the BPF-side timing
 * loop (bpf_timing.bpf.h) and the feature probe.
 */
#ifndef BENCHBPF_MAY_GOTO_BPF_H
#define BENCHBPF_MAY_GOTO_BPF_H

#define bench_can_loop ({						\
	__label__ l_break, l_continue;					\
	bool __ret = true;						\
	asm volatile goto("1: .byte 0xe5; .byte 0; "			\
			  ".long ((%l[l_break] - 1b - 8) / 8) & 0xffff; .short 0" \
			  :::: l_break);				\
	goto l_continue;						\
l_break:								\
	__ret = false;							\
l_continue:								\
	__ret;								\
})

#endif /* BENCHBPF_MAY_GOTO_BPF_H */
