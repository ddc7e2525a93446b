"""sk-storage-get: gets of existing socket storage from a bpf_iter/tcp pass
(the kernel bench's later version) or a cgroup/getsockopt program (its
first), the kernel bench's "ops" report, nr_socks's range, the descriptor
limit, and nothing left loaded or attached after a run."""
import re
import resource
import subprocess
import sys

import pytest

import benchbpf
import leakcheck
from benchbpf import sk_storage

from conftest import SHORT, SHORT_SAMPLES, rejected_before_loading, run_or_skip

NAME = "sk-storage-get"
# the storage map, the .bss map (libbpf names it from the object) and the
# two programs, as the kernel truncates their names
PREFIXES = ("sk_get_stg", "sk_stora.bss", "iter_sk_storage", "getsockopt_sk_s")
OPS = re.compile(r"^Summary: throughput +\d+\.\d{3} \u00b1 +\d+\.\d{3} M ops/s "
                 r"\( *\d+\.\d{3}M ops/prod\), latency +\d+\.\d{3} ns/op$")
# few sockets: a short run on a busy machine still makes many passes
SOCKS = 200


@pytest.mark.fast
def test_registry_matches_the_kernel_bench():
    assert benchbpf.list_benchmarks("sk_storage") == [NAME]
    info = benchbpf.describe(NAME)
    assert (info.report, info.max_consumers, info.max_producers) == ("ops", 0, 1)
    p = info.params["nr_socks"]
    assert (p.cli, p.default, p.min, p.max) == ("--nr-socks", 100000, 1, sk_storage.MAX_SOCKS)
    assert info.params["caller"].choices == sk_storage.CALLERS
    assert sk_storage.BENCHMARKS == {"get": NAME}


def test_iter_pass_gets_every_socket(no_leaks):
    r = run_or_skip(sk_storage.get, nr_socks=SOCKS)
    assert len(r.samples) == SHORT_SAMPLES
    assert sum(s.hits for s in r.samples) > 0
    assert r.metadata["trigger"] == "iter/tcp"
    # the pass visits every TCP socket of the namespace: ours and others'
    assert int(r.metadata["sockets_per_pass"]) >= SOCKS
    assert OPS.match(r.summary()), r.summary()


@pytest.mark.fast
def test_getsockopt_makes_100_gets_per_call(no_leaks):
    r = run_or_skip(sk_storage.get, nr_socks=3, caller="getsockopt")
    assert sum(s.hits for s in r.samples) > 0
    assert all(s.hits % 100 == 0 for s in r.samples + r.warmup_samples)
    assert r.metadata["trigger"] == "cgroup/getsockopt"
    cgroup = r.metadata["cgroup"].split(" (")[0]
    # detached from the cgroup at the end of the run
    shown = subprocess.run([leakcheck.require_bpftool(), "cgroup", "show", cgroup],
                           capture_output=True, text=True)
    assert "getsockopt_sk_s" not in shown.stdout, shown.stdout


def test_other_getsockopt_calls_are_left_alone():
    """The program answers the benchmark's level only: a getsockopt() the
    protocol refuses is still refused while a run is attached."""
    import socket

    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    hits = []

    def look(sample, index, warmup):
        with pytest.raises(OSError):
            s.getsockopt(0xbeef, 1)
        hits.append(sample.hits)

    try:
        run_or_skip(sk_storage.get, nr_socks=1, caller="getsockopt", callback=look)
    finally:
        s.close()
    assert hits


@pytest.mark.fast
@pytest.mark.parametrize("nr_socks", [0, -1, 2**31])
def test_bad_nr_socks_refused_before_loading(nr_socks):
    with rejected_before_loading(ValueError, f"nr_socks={nr_socks}", "1..2147483647"):
        sk_storage.get(nr_socks=nr_socks, **SHORT)


def test_more_sockets_than_the_kernel_allows_refused_before_loading():
    with rejected_before_loading(ValueError, f"nr_socks={sk_storage.MAX_SOCKS}",
                                 "fs.nr_open"):
        sk_storage.get(nr_socks=sk_storage.MAX_SOCKS, **SHORT)


def test_a_hard_limit_it_may_not_raise_is_named():
    """With a hard descriptor limit below the sockets, the run raises it
    where it may (CAP_SYS_RESOURCE) and runs; else it names the limit and
    leaves nothing behind.  In a process of its own: a lowered hard limit
    cannot be raised back."""
    code = (
        "import resource, sys, warnings, benchbpf\n"
        "warnings.simplefilter('ignore')\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))\n"
        "try:\n"
        "    r = benchbpf.run('sk-storage-get', nr_socks=1000, warmup=0.2, duration=0.4,\n"
        "                     interval=0.2)\n"
        "    print('ran', sum(s.hits for s in r.samples), resource.getrlimit(\n"
        "          resource.RLIMIT_NOFILE)[0])\n"
        "except (benchbpf.UnsupportedError, PermissionError) as e:\n"
        "    print('refused', type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    words = out.stdout.split()
    if words[0] == "ran":
        assert int(words[1]) > 0 and int(words[2]) == 256, out.stdout
    else:
        assert "nr_socks=1000" in out.stdout and "RLIMIT_NOFILE" in out.stdout, out.stdout
        assert "at most" in out.stdout and "hard 256" in out.stdout, out.stdout


@pytest.mark.fast
def test_bad_caller_and_threads_refused_before_loading():
    with rejected_before_loading(ValueError, "caller", "iter", "getsockopt"):
        sk_storage.get(nr_socks=1, caller="ioctl", **SHORT)
    with rejected_before_loading(ValueError, "producers=2"):
        sk_storage.get(nr_socks=1, producers=2, **SHORT)
    with rejected_before_loading(ValueError, "consumers=1"):
        sk_storage.get(nr_socks=1, consumers=1, **SHORT)


def test_descriptor_limit_raised_for_the_run_and_put_back(no_leaks):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = 256
    if hard != resource.RLIM_INFINITY and hard < 2 * low + 1024:
        pytest.skip(f"hard RLIMIT_NOFILE {hard} leaves no room to test")
    resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
    try:
        r = run_or_skip(sk_storage.get, nr_socks=2 * low)
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (low, hard)
        assert int(r.metadata["sockets_per_pass"]) >= 2 * low
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.parametrize("caller", sk_storage.CALLERS)
@pytest.mark.parametrize("when", [0, 2])
@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_interrupted_runs_leave_nothing_behind(caller, when, exc, no_leaks):
    """A run stopped in warm-up or measuring, by an exception or Ctrl-C
    from its caller, closes every socket and frees every link and program."""
    def stop(sample, index, warmup):
        if index == when:
            raise exc(f"stopped at sample {index}")

    with pytest.raises(exc):
        run_or_skip(sk_storage.get, nr_socks=SOCKS, caller=caller, callback=stop)


def test_cli_speaks_the_kernel_bench_s_flag(capsys):
    from benchbpf.tools import cli
    argv = ["-q", "-w0.2", "-d0.4", "--interval", "0.2", "--nr-socks", str(SOCKS),
            NAME]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    # the kernel bench's ops lines: hits per interval, then the summary
    assert re.search(r"^Iter   1 \( *-?\d+\.\d{3}us\): hits +\d+\.\d{3}M/s "
                     r"\( *\d+\.\d{3}M/prod\)$", out, re.M), out
    assert OPS.search(out.strip().splitlines()[-1]), out
    assert cli.main(["-q", "-w0", "-d0.4", "--interval", "0.2", "--nr-socks", "0", NAME]) == 2
    assert "--nr-socks 0 out of range" in capsys.readouterr().err
    assert cli.main([NAME, "--help"]) == 0
    assert "--nr-socks NUM" in capsys.readouterr().out
