/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF crypto kfuncs (Linux 6.10, CONFIG_BPF_SYSCALL with a crypto type
 * such as skcipher registered), declared here with the kernel's types: this
 * build's vmlinux.h does not declare kfuncs, and one that does declares them
 * the same way.  Shared by crypto and the feature probe.
 */
#ifndef BENCHBPF_CRYPTO_KFUNCS_BPF_H
#define BENCHBPF_CRYPTO_KFUNCS_BPF_H

extern struct bpf_crypto_ctx *bpf_crypto_ctx_create(const struct bpf_crypto_params *params,
						    __u32 params__sz, int *err) __weak __ksym;
extern void bpf_crypto_ctx_release(struct bpf_crypto_ctx *ctx) __weak __ksym;
extern int bpf_crypto_encrypt(struct bpf_crypto_ctx *ctx, const struct bpf_dynptr *src,
			      const struct bpf_dynptr *dst,
			      const struct bpf_dynptr *siv__nullable) __weak __ksym;
extern int bpf_crypto_decrypt(struct bpf_crypto_ctx *ctx, const struct bpf_dynptr *src,
			      const struct bpf_dynptr *dst,
			      const struct bpf_dynptr *siv__nullable) __weak __ksym;
extern int bpf_dynptr_from_skb(struct __sk_buff *s, __u64 flags,
			       struct bpf_dynptr *ptr__uninit) __weak __ksym;

#endif /* BENCHBPF_CRYPTO_KFUNCS_BPF_H */
