"""strncmp-no-helper, strncmp-helper: string comparisons counted in BPF."""
import re
import shutil
import subprocess
import sys

import pytest

import benchbpf
import leakcheck
from benchbpf import _core, strncmp

from conftest import SHORT, SHORT_SAMPLES

ALL = ["strncmp-no-helper", "strncmp-helper"]
FUNCS = {"strncmp-no-helper": strncmp.no_helper, "strncmp-helper": strncmp.helper}
TP = "tp/syscalls/sys_enter_getpgid"
#: Our programs (strncmp_no_helper_*, strncmp_helper_*) and maps (strncmp_.bss, ...).
PREFIX = "strncmp"
MAX_LEN = 4095
SUMMARY = re.compile(r"^Summary: hits +\d+\.\d{3} \u00b1 +\d+\.\d{3}M/s \( *\d+\.\d{3}M/prod\), "
                     r"drops +0\.000 \u00b1 0\.000M/s, total operations +\d+\.\d{3} \u00b1 "
                     r"+\d+\.\d{3}M/s$")
ERRNO_NAMES = ("EPERM", "ENOENT", "EOPNOTSUPP", "ENOTSUPP", "ENOSYS", "EINVAL")


@pytest.fixture(scope="module", autouse=True)
def nothing_of_ours_left():
    yield
    assert leakcheck.left_behind(PREFIX) == [], "strncmp programs or maps left loaded"


@pytest.fixture
def no_leaks():
    before = leakcheck.snapshot()
    yield
    _, leaks = leakcheck.settle(before)
    assert not leaks, leaks
    assert leakcheck.left_behind(PREFIX) == []


def run(name, **kw):
    """A short run; skip only if this kernel lacks what the benchmark needs."""
    try:
        return FUNCS[name](**{**SHORT, **kw})
    except benchbpf.UnsupportedError as e:
        pytest.skip(f"{name}: {e}")


def test_registry_has_the_family():
    assert benchbpf.list_benchmarks("strncmp") == ALL
    assert list(strncmp.BENCHMARKS.values()) == ALL
    assert strncmp.MAX_CMP_STR_LEN == MAX_LEN
    for name in ALL:
        info = benchbpf.describe(name)
        assert info.report == "hits_drops" and info.needs_bpf
        assert info.max_consumers == 0 and info.default_consumers == 0
        p = info.params["cmp_str_len"]
        assert (p.cli, p.default, p.min, p.max) == ("--cmp-str-len", 32, 1, MAX_LEN)
        assert info.params["trigger"].choices == strncmp.TRIGGERS == ("auto", "fentry", "tp")


@pytest.mark.parametrize("name", ALL)
def test_default_run_counts_comparisons(name, no_leaks):
    r = run(name)
    assert r.name == name
    assert len(r.samples) == SHORT_SAMPLES
    assert all(s.hits > 0 and s.drops == 0 for s in r.samples), r.samples
    # The kernel bench attaches these to the tracepoint: so does auto.
    assert r.metadata["trigger"] == TP
    assert r.params["cmp_str_len"] == 32 and r.params["trigger"] == "auto"
    assert r.params["consumers"] == 0
    assert SUMMARY.match(str(r)), str(r)


@pytest.mark.parametrize("length", [1, 8, 512, MAX_LEN])
@pytest.mark.parametrize("name", ALL)
def test_every_length_loads_and_compares(name, length, no_leaks):
    """Every comparison finds the string smaller (a hit), at both ends of
    the range too: 1 character, and the whole 4095."""
    r = run(name, cmp_str_len=length)
    assert all(s.hits > 0 for s in r.samples), r.samples
    assert r.params["cmp_str_len"] == length


def test_longer_strings_cost_more(no_leaks):
    """Not a timing threshold: walking 4095 characters byte by byte is
    orders of magnitude more work than walking 1."""
    short = run("strncmp-no-helper", cmp_str_len=1)
    long = run("strncmp-no-helper", cmp_str_len=MAX_LEN)
    assert long.median < short.median


def test_explicit_tracepoint_trigger(no_leaks):
    r = run("strncmp-helper", trigger="tp")
    assert r.metadata["trigger"] == TP and r.params["trigger"] == "tp"


@pytest.mark.parametrize("name", ALL)
def test_fentry_trigger_runs_or_says_why(name, no_leaks):
    setups = _core.setup_count()
    seen = []
    try:
        r = FUNCS[name](trigger="fentry", callback=lambda *a: seen.append(a), **SHORT)
    except benchbpf.UnsupportedError as e:
        msg = str(e)
        assert "fentry" in msg and name in msg, msg
        assert any(n in msg for n in ERRNO_NAMES), msg
        assert e.errno > 0
        assert not seen, "samples were taken before the refusal"
        assert _core.setup_count() == setups + 1
        assert leakcheck.wait_named_gone(PREFIX) == []
        pytest.skip(msg)
    assert r.metadata["trigger"] == "fentry/sys_getpgid"
    assert all(s.hits > 0 for s in r.samples)


@pytest.mark.parametrize("value", [0, -1, MAX_LEN + 1, 1 << 40])
@pytest.mark.parametrize("name", ALL)
def test_cmp_str_len_out_of_range_rejected_before_loading(name, value):
    setups = _core.setup_count()
    with pytest.raises(ValueError) as info:
        FUNCS[name](cmp_str_len=value, **SHORT)
    msg = str(info.value)
    assert f"cmp_str_len={value}" in msg and f"1..{MAX_LEN}" in msg, msg
    assert _core.setup_count() == setups
    assert not leakcheck.snapshot().bpf_fds


@pytest.mark.parametrize("kw, exc, words", [
    (dict(cmp_str_len="8"), TypeError, ("cmp_str_len",)),
    (dict(trigger="raw_tp"), ValueError, ("trigger", "'tp'")),
    (dict(consumers=1), ValueError, ("consumers=1",)),
    (dict(nr_loops=10), TypeError, ("nr_loops",)),
])
def test_bad_options_rejected_before_loading(kw, exc, words):
    setups = _core.setup_count()
    with pytest.raises(exc) as info:
        benchbpf.run("strncmp-helper", **{**SHORT, **kw})
    for w in words:
        assert w in str(info.value), str(info.value)
    assert _core.setup_count() == setups
    assert not leakcheck.snapshot().bpf_fds


NESTED = """
import warnings, benchbpf
warnings.simplefilter("ignore")
r = benchbpf.run({name!r}, warmup=0.2, duration=0.6, interval=0.2)
print(min(s.hits for s in r.samples))
"""


@pytest.mark.parametrize("name", ALL)
def test_counts_inside_its_own_pid_namespace(name):
    """In a new pid namespace with its own /proc (as in a container) /proc
    shows only the inner pid; the comparisons of this process still count."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare not available")
    out = subprocess.run([unshare, "--pid", "--fork", "--mount-proc", sys.executable, "-c",
                          NESTED.format(name=name)], capture_output=True, text=True,
                         env=leakcheck._clean_env(), timeout=60)
    if out.returncode != 0 and "unshare" in out.stderr:
        pytest.skip(f"cannot create a pid namespace here: {out.stderr.strip()}")
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) > 0
