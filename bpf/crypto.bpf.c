// SPDX-License-Identifier: GPL-2.0
/*
 * crypto-encrypt, crypto-decrypt: the BPF crypto kfuncs, as the kernel
 * bench's progs/crypto_bench.c.  crypto_setup (a syscall program, run once)
 * makes an skcipher context of `cipher` with the 16-byte key and keeps it in
 * a map as a kptr; crypto_encrypt / crypto_decrypt (tc programs, run by
 * BPF_PROG_TEST_RUN 64 times a call) each en- or decrypt the packet, len
 * bytes, into dst and count a hit.  `status` holds the last call's result:
 * user space fails the run if a call failed, where the kernel bench counts
 * failed calls as hits.
 *
 * benchbpf-build: kptr (setup.py compiles this file with clang >= 15 where
 * one is installed: clang 14 leaves the __kptr type tag out of the BTF)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "crypto.h"

struct crypto_ctx_value {
	struct bpf_crypto_ctx __kptr *ctx;
};

#include "crypto_kfuncs.bpf.h"

#define EINVAL 22
#define ENOENT 2
#define EEXIST 17

const volatile unsigned int len = 16;
char cipher[128] = {};
__u32 key_len, authsize;
char dst[CRYPTO_DST_LEN] = {};
__u8 key[256] = {};
long hits = 0;
int status;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, struct crypto_ctx_value);
	__uint(max_entries, 1);
} crypto_ctx_map SEC(".maps");

static __always_inline struct crypto_ctx_value *ctx_value(void)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&crypto_ctx_map, &k);
}

/* Keep ctx in the map (releasing it on failure); -EEXIST if one was there. */
static __always_inline int ctx_insert(struct bpf_crypto_ctx *ctx)
{
	struct crypto_ctx_value empty = { .ctx = NULL }, *v;
	struct bpf_crypto_ctx *old;
	__u32 k = 0;
	int err;

	err = bpf_map_update_elem(&crypto_ctx_map, &k, &empty, 0);
	if (err) {
		bpf_crypto_ctx_release(ctx);
		return err;
	}
	v = bpf_map_lookup_elem(&crypto_ctx_map, &k);
	if (!v) {
		bpf_crypto_ctx_release(ctx);
		return -ENOENT;
	}
	old = bpf_kptr_xchg(&v->ctx, ctx);
	if (old) {
		bpf_crypto_ctx_release(old);
		return -EEXIST;
	}
	return 0;
}

SEC("syscall")
int crypto_setup(void *args)
{
	struct bpf_crypto_params params = {
		.type = "skcipher",
		.key_len = key_len,
		.authsize = authsize,
	};
	struct bpf_crypto_ctx *cctx;
	int err = 0;

	status = 0;
	if (!cipher[0] || !key_len || key_len > 256) {
		status = -EINVAL;
		return 0;
	}
	__builtin_memcpy(&params.algo, cipher, sizeof(cipher));
	__builtin_memcpy(&params.key, key, sizeof(key));
	cctx = bpf_crypto_ctx_create(&params, sizeof(params), &err);
	if (!cctx) {
		status = err;
		return 0;
	}
	err = ctx_insert(cctx);
	if (err && err != -EEXIST)
		status = err;
	return 0;
}

SEC("?tc")
int crypto_encrypt(struct __sk_buff *skb)
{
	struct crypto_ctx_value *v;
	struct bpf_crypto_ctx *ctx;
	struct bpf_dynptr psrc, pdst, iv;

	v = ctx_value();
	if (!v) {
		status = -ENOENT;
		return 0;
	}
	ctx = v->ctx;
	if (!ctx) {
		status = -ENOENT;
		return 0;
	}
	bpf_dynptr_from_skb(skb, 0, &psrc);
	bpf_dynptr_from_mem(dst, len, 0, &pdst);
	bpf_dynptr_from_mem(dst, 0, 0, &iv);
	status = bpf_crypto_encrypt(ctx, &psrc, &pdst, &iv);
	__sync_add_and_fetch(&hits, 1);
	return 0;
}

SEC("?tc")
int crypto_decrypt(struct __sk_buff *skb)
{
	struct bpf_dynptr psrc, pdst, iv;
	struct crypto_ctx_value *v;
	struct bpf_crypto_ctx *ctx;

	v = ctx_value();
	if (!v)
		return -ENOENT;
	ctx = v->ctx;
	if (!ctx)
		return -ENOENT;
	bpf_dynptr_from_skb(skb, 0, &psrc);
	bpf_dynptr_from_mem(dst, len, 0, &pdst);
	bpf_dynptr_from_mem(dst, 0, 0, &iv);
	status = bpf_crypto_decrypt(ctx, &psrc, &pdst, &iv);
	__sync_add_and_fetch(&hits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
