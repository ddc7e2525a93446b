/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf_timing_can_loop: may_goto as a loop condition, for the BPF-timed
 * loops (bpf_timing.bpf.h) and the feature probe that checks the kernel
 * takes it (features.bpf.c).
 */
#ifndef BENCHBPF_MAY_GOTO_BPF_H
#define BENCHBPF_MAY_GOTO_BPF_H

/*
 * may_goto, encoded by hand: clang before 19 has no mnemonic for it.
 * BPF_JMP | BPF_JCOND (0xe5), no registers, the jump offset in 8-byte
 * instructions, imm 0.  True while the kernel lets the loop go on.
 */
#define BPF_TIMING_MAY_GOTO_INSN						\
	"1: .byte 0xe5; .byte 0; .long ((%l[l_break] - 1b - 8) / 8) & 0xffff; .short 0"
#define bpf_timing_can_loop ({						\
	__label__ l_break, l_continue;					\
	bool __ret = true;						\
	asm volatile goto(BPF_TIMING_MAY_GOTO_INSN :::: l_break);	\
	goto l_continue;						\
l_break:								\
	__ret = false;							\
l_continue:								\
	__ret;								\
})

#endif /* BENCHBPF_MAY_GOTO_BPF_H */
