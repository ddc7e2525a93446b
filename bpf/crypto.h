/* SPDX-License-Identifier: MIT */
/* crypto: sizes shared by bpf/crypto.bpf.c and csrc/bench_crypto.c. */
#ifndef BENCHBPF_CRYPTO_H
#define BENCHBPF_CRYPTO_H

/* The output buffer, so the longest --crypto-len (the kernel bench's dst[256]). */
#define CRYPTO_DST_LEN 256
/* --crypto-cipher's longest name, as the kernel bench's MAX_CIPHER_LEN. */
#define CRYPTO_MAX_CIPHER_LEN 32
/* Test runs per BPF_PROG_TEST_RUN call, as the kernel bench's producer. */
#define CRYPTO_REPEAT 64
/* The shortest packet a tc program's test run takes: an Ethernet header. */
#define CRYPTO_MIN_LEN 14

#endif /* BENCHBPF_CRYPTO_H */
