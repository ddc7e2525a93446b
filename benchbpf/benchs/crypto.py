"""crypto-encrypt, crypto-decrypt: the BPF crypto kfuncs, as the kernel
bench's bench_bpf_crypto.c.

Setup makes an skcipher context of ``crypto_cipher`` with a 16-byte key (a
syscall program, once); producers run a tc program through BPF_PROG_TEST_RUN,
64 runs a call, each en- or decrypting a packet of ``crypto_len`` random
digits into a buffer with ``bpf_crypto_encrypt()`` / ``bpf_crypto_decrypt()``.
A hit is one call; ``print(result)`` is the kernel bench's hits/drops summary.

Options (kernel bench flags ``--crypto-len``, ``--crypto-cipher``)::

    crypto_len     16, 14 .. 256 bytes (the kernel bench takes 1 .. 256, but a
                   tc program's test run needs 14 bytes of packet: below that it
                   reports 0 hits)
    crypto_cipher  "ecb(aes)", 1 .. 32 characters, as the crypto API names it

A cipher the kernel cannot make raises ValueError naming it (once loaded: the
kernel's crypto API decides); a call that fails (say a length that is not a
multiple of the cipher's block) fails the run with its error, where the kernel
bench counts failed calls as hits.  Where the kernel's BTF lacks the crypto
kfuncs (before Linux 6.10, or without the skcipher crypto type), or this
build's BPF object has no kptr type tag (built with clang before 15), both
raise benchbpf.UnsupportedError saying so, before anything is loaded.

    >>> from benchbpf import crypto
    >>> print(crypto.encrypt(crypto_len=64, duration=3))
"""
from ..harness._runner import run

__all__ = ["encrypt", "decrypt", "BENCHMARKS", "MAX_LEN", "MAX_CIPHER_LEN"]

#: Function name -> benchmark name.
BENCHMARKS = {"encrypt": "crypto-encrypt", "decrypt": "crypto-decrypt"}
#: The longest buffer, bytes (the kernel bench's dst[256]).
MAX_LEN = 256
#: The longest cipher name, characters (the kernel bench's MAX_CIPHER_LEN).
MAX_CIPHER_LEN = 32


def encrypt(crypto_len=16, crypto_cipher="ecb(aes)", **options):
    """crypto-encrypt: bpf_crypto_encrypt() of crypto_len bytes per call.

    crypto_len: bytes per call, 14..256; crypto_cipher: the cipher, as the
    kernel's crypto API names it, 1..32 characters.  `options`: the common
    options of benchbpf.run.  Returns the Result (hits: calls, M/s);
    ValueError for a value out of range or a cipher the kernel cannot make,
    UnsupportedError where the kernel lacks the crypto kfuncs, BenchmarkError
    when a call fails."""
    return run("crypto-encrypt", crypto_len=crypto_len, crypto_cipher=crypto_cipher, **options)


def decrypt(crypto_len=16, crypto_cipher="ecb(aes)", **options):
    """crypto-decrypt: bpf_crypto_decrypt() of crypto_len bytes per call.
    crypto_len, crypto_cipher, `options`, the Result and the errors: as
    encrypt()."""
    return run("crypto-decrypt", crypto_len=crypto_len, crypto_cipher=crypto_cipher, **options)
