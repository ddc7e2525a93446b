// SPDX-License-Identifier: MIT
/*
 * crypto-encrypt, crypto-decrypt: the BPF crypto kfuncs en- or decrypting
 * crypto_len bytes with crypto_cipher (bpf/crypto.bpf.c), the kernel
 * bench's bench_bpf_crypto.c.
 *
 * Setup makes the cipher's context once (a syscall program); producers run
 * the tc program through BPF_PROG_TEST_RUN, 64 runs a call, over a packet
 * of crypto_len random digits.  A hit is one en- or decryption; the report
 * is the kernel bench's hits/drops lines.
 *
 * Decided before loading: the kernel's BTF must have the crypto kfuncs
 * (else UnsupportedError saying so); crypto_len is 14..256: at most the
 * kernel bench's 256, and at least 14, the shortest packet BPF_PROG_TEST_RUN
 * takes for a tc program (the kernel bench takes 1 and up, ignores the test
 * run's error and reports 0 hits).  Beyond the kernel bench: a failed test run or a failed en- or
 * decryption (e.g. a length the cipher cannot take) fails the run, where
 * the kernel bench counts failed calls as hits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "crypto.h"
#include "crypto.skel.h"

struct crypto_state {
	struct crypto_bpf *skel;
	struct bpf_program *prog;
	char *input;
};

static const struct bench_param_def crypto_params[] = {
	{ "crypto_len", "--crypto-len", BENCH_PARAM_INT, 16, CRYPTO_MIN_LEN, CRYPTO_DST_LEN, NULL,
	  "length of the crypto buffer in bytes (at least 14: a tc program's test run "
	  "takes an Ethernet header of packet)" },
	{ "crypto_cipher", "--crypto-cipher", BENCH_PARAM_STRING, 0, 1, CRYPTO_MAX_CIPHER_LEN,
	  NULL, "the cipher to use, as the kernel's crypto API names it", "ecb(aes)" },
	{ 0 },
};

static bool decrypting(struct bench_ctx *ctx)
{
	return strcmp(ctx->bench->name, "crypto-decrypt") == 0;
}

/* Whether the running kernel's BTF has the kfunc: decided before loading. */
static int kfuncs_present(struct bench_ctx *ctx)
{
	static const char *const names[] = {
		"bpf_crypto_ctx_create", "bpf_crypto_ctx_release", "bpf_crypto_encrypt",
		"bpf_crypto_decrypt", "bpf_dynptr_from_skb",
	};
	struct btf *btf = btf__load_vmlinux_btf();
	int err = 0, i;

	if (!btf)
		return bench_fail(ctx, BENCH_ERR_UNSUPPORTED, errno ? errno : ENOENT,
				  "%s: the kernel's BTF could not be read, so its crypto kfuncs "
				  "cannot be found", ctx->bench->name);
	for (i = 0; i < (int)(sizeof(names) / sizeof(names[0])) && !err; i++)
		if (btf__find_by_name_kind(btf, names[i], BTF_KIND_FUNC) < 0)
			err = bench_fail(ctx, BENCH_ERR_UNSUPPORTED, ENOENT,
					 "%s: this kernel has no BPF crypto kfuncs: %s is not in "
					 "its BTF (they came in Linux 6.10, with CONFIG_BPF_SYSCALL "
					 "and the crypto API's skcipher)", ctx->bench->name, names[i]);
	btf__free(btf);
	return err;
}

/* Whether the object's map value holds the context as a kptr (the pointer
 * to it carries BTF type tag "kptr"): a clang before 15 leaves the tag out,
 * and the kernel would refuse the programs. */
static int kptr_in_btf(struct bench_ctx *ctx, struct crypto_bpf *skel)
{
	const struct btf *btf = bpf_object__btf(skel->obj);
	const struct btf_type *t = NULL;
	int id = btf ? btf__find_by_name_kind(btf, "crypto_ctx_value", BTF_KIND_STRUCT) : -1;

	if (id > 0) {
		t = btf__type_by_id(btf, btf_members(btf__type_by_id(btf, id))[0].type);
		t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
	}
	if (t && btf_is_type_tag(t) && strcmp(btf__name_by_offset(btf, t->name_off), "kptr") == 0)
		return 0;
	return bench_fail(ctx, BENCH_ERR_UNSUPPORTED, ENOTSUP,
			  "%s: this build's BPF object has no kptr type tag on its crypto "
			  "context (clang before 15 leaves it out), so the kernel would refuse "
			  "it: install clang 15 or newer (apt-get install clang-16) and rebuild",
			  ctx->bench->name);
}

/* crypto_len - 1 random digits and a NUL, as the kernel bench's input. */
static char *make_input(size_t len)
{
	uint64_t x = (uint64_t)time(NULL) * 6364136223846793005ull + 1442695040888963407ull;
	char *in = malloc(len);
	size_t i;

	if (!in)
		return NULL;
	for (i = 0; i + 1 < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		in[i] = (char)('1' + x % 9);
	}
	in[len - 1] = '\0';
	return in;
}

static int crypto_setup(struct bench_ctx *ctx)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	const char *cipher = bench_param_str(ctx, "crypto_cipher");
	struct crypto_state *st;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	err = kfuncs_present(ctx);
	if (err)
		return err;
	st->input = make_input(bench_param(ctx, "crypto_len"));
	if (!st->input)
		return -ENOMEM;
	st->skel = crypto_bpf__open();
	if (!st->skel)
		return bench_fail_bpf(ctx, -errno, "the crypto programs", "opening the BPF object");
	snprintf(st->skel->bss->cipher, sizeof(st->skel->bss->cipher), "%s", cipher);
	memcpy(st->skel->bss->key, "12345678testtest", 16);
	st->skel->bss->key_len = 16;
	st->skel->bss->authsize = 0;
	st->skel->rodata->len = (unsigned int)bench_param(ctx, "crypto_len");
	err = kptr_in_btf(ctx, st->skel);
	if (err)
		return err;
	st->prog = decrypting(ctx) ? st->skel->progs.crypto_decrypt :
				     st->skel->progs.crypto_encrypt;
	bpf_program__set_autoload(st->prog, true);
	err = crypto_bpf__load(st->skel);
	if (err)
		return bench_fail_bpf(ctx, err, "BPF crypto kfuncs", "loading the crypto programs");
	err = bpf_prog_test_run_opts(bpf_program__fd(st->skel->progs.crypto_setup), &opts);
	if (err)
		return bench_fail(ctx, BENCH_ERR_BENCH, errno, "%s: running crypto_setup: %s",
				  ctx->bench->name, strerror(errno));
	if (st->skel->bss->status) {
		int e = -st->skel->bss->status;

		return bench_fail(ctx, e == ENOENT || e == EINVAL || e == EOPNOTSUPP ?
				  BENCH_ERR_VALUE : BENCH_ERR_BENCH,
				  e, "crypto_cipher='%s': the kernel could not make an skcipher "
				  "context of it with a 16-byte key: %s (%s)", cipher,
				  bench_errno_name(e), strerror(e));
	}
	return 0;
}

static int crypto_producer(struct bench_ctx *ctx, int idx)
{
	struct crypto_state *st = ctx->priv;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = CRYPTO_REPEAT, .data_in = st->input,
		    .data_size_in = (__u32)bench_param(ctx, "crypto_len"));
	int fd = bpf_program__fd(st->prog);

	(void)idx;
	while (!bench_stopping(ctx)) {
		if (bpf_prog_test_run_opts(fd, &opts))
			return bench_fail(ctx, BENCH_ERR_BENCH, errno,
					  "%s: BPF_PROG_TEST_RUN of %s failed: %s", ctx->bench->name,
					  bpf_program__name(st->prog), strerror(errno));
	}
	return 0;
}

static void crypto_measure(struct bench_ctx *ctx, struct bench_sample *s)
{
	struct crypto_state *st = ctx->priv;
	int status = __atomic_load_n(&st->skel->bss->status, __ATOMIC_RELAXED);

	s->hits = __atomic_exchange_n(&st->skel->bss->hits, 0, __ATOMIC_RELAXED);
	if (status < 0)
		bench_fail(ctx, BENCH_ERR_BENCH, -status,
			   "%s: %s failed: %s (%s) with crypto_cipher='%s', crypto_len=%lld; the "
			   "run is void (its hits would count failed calls)", ctx->bench->name,
			   decrypting(ctx) ? "bpf_crypto_decrypt" : "bpf_crypto_encrypt",
			   bench_errno_name(-status), strerror(-status),
			   bench_param_str(ctx, "crypto_cipher"),
			   (long long)bench_param(ctx, "crypto_len"));
}

static void crypto_teardown(struct bench_ctx *ctx)
{
	struct crypto_state *st = ctx->priv;

	if (!st)
		return;
	crypto_bpf__destroy(st->skel);
	free(st->input);
	free(st);
	ctx->priv = NULL;
}

#define CRYPTO_BENCH(var, bench_name, what)				\
	const struct bench var = {					\
		.name = bench_name,					\
		.family = "crypto",					\
		.report = "hits_drops",					\
		.help = what,						\
		.params = crypto_params,				\
		.max_consumers = 0,					\
		.setup = crypto_setup,					\
		.producer = crypto_producer,				\
		.measure = crypto_measure,				\
		.teardown = crypto_teardown,				\
		.needs = { "bpf_crypto" },				\
	}

CRYPTO_BENCH(bench_crypto_encrypt, "crypto-encrypt",
	     "bpf_crypto_encrypt() of crypto_len bytes from a tc program (M calls/s)");
CRYPTO_BENCH(bench_crypto_decrypt, "crypto-decrypt",
	     "bpf_crypto_decrypt() of crypto_len bytes from a tc program (M calls/s)");

BENCH_REGISTER(bench_crypto_encrypt);
BENCH_REGISTER(bench_crypto_decrypt);
