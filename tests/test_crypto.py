"""crypto-encrypt / crypto-decrypt: the BPF crypto kfuncs, real short runs; the
options' edges; bad values and failed calls refused."""
import pytest

import benchbpf
from benchbpf import crypto

from conftest import SHORT, SHORT_SAMPLES, rejected_before_loading, run_or_skip

PREFIXES = ("crypto_",)


@pytest.mark.fast
def test_registry():
    assert benchbpf.list_benchmarks("crypto") == ["crypto-encrypt", "crypto-decrypt"]
    p = benchbpf.describe("crypto-encrypt").params
    assert (p["crypto_len"].cli, p["crypto_len"].default, p["crypto_len"].min,
            p["crypto_len"].max) == ("--crypto-len", 16, 14, 256)
    c = p["crypto_cipher"]
    assert (c.cli, c.type, c.default, c.min, c.max) == ("--crypto-cipher", "string",
                                                         "ecb(aes)", 1, 32)


@pytest.mark.fast
@pytest.mark.parametrize("fn", (crypto.encrypt, crypto.decrypt))
def test_default_runs(fn, no_leaks):
    r = run_or_skip(fn)
    assert len(r.samples) == SHORT_SAMPLES and sum(s.hits for s in r.samples) > 0
    assert r.params["crypto_cipher"] == "ecb(aes)" and r.params["crypto_len"] == 16
    assert str(r).startswith("Summary: hits ")


@pytest.mark.parametrize("length", (16, 256))
def test_length_edges_run(length, no_leaks):
    r = run_or_skip(crypto.encrypt, crypto_len=length)
    assert sum(s.hits for s in r.samples) > 0


def test_a_cipher_needing_an_iv_fails_the_run(no_leaks):
    """cbc(aes) is made, but each call passes an empty IV (the kernel bench's
    program does): every call fails, and the run says so instead of counting."""
    try:
        with pytest.raises(benchbpf.BenchmarkError, match="bpf_crypto_decrypt failed: EINVAL"):
            crypto.decrypt(crypto_len=32, crypto_cipher="cbc(aes)", **SHORT)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))


def test_a_length_the_cipher_refuses_fails_the_run(no_leaks):
    try:
        with pytest.raises(benchbpf.BenchmarkError, match="bpf_crypto_encrypt failed"):
            crypto.encrypt(crypto_len=20, **SHORT)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))


def test_unknown_cipher_is_named(no_leaks):
    try:
        with pytest.raises(ValueError, match="crypto_cipher='nosuch'"):
            crypto.encrypt(crypto_cipher="nosuch", **SHORT)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))


@pytest.mark.fast
@pytest.mark.parametrize("kw, words", [
    (dict(crypto_len=13), ("crypto_len=13", "14..256")),
    (dict(crypto_len=0), ("crypto_len=0", "14..256")),
    (dict(crypto_len=257), ("crypto_len=257", "14..256")),
    (dict(crypto_cipher=""), ("crypto_cipher=''", "1..32")),
    (dict(crypto_cipher="x" * 33), ("crypto_cipher=", "1..32")),
])
def test_bad_values_refused_before_loading(kw, words):
    with rejected_before_loading(ValueError, *words):
        crypto.encrypt(**kw, **SHORT)


@pytest.mark.fast
def test_cipher_must_be_text():
    with rejected_before_loading(TypeError, "crypto_cipher=5"):
        crypto.encrypt(crypto_cipher=5, **SHORT)


def test_cli_flags(capfd):
    from benchbpf.tools.cli import main
    try:
        rc = main(["-q", "-w0", "-d0.4", "--interval", "0.2", "--crypto-len", "32",
                   "--crypto-cipher", "ecb(aes)", "crypto-decrypt"])
    except SystemExit as e:
        rc = e.code
    out = capfd.readouterr().out
    assert rc in (0, 3)
    if rc == 0:
        assert out.strip().splitlines()[-1].startswith("Summary: hits ")
