"""Shared test helpers: short runs, skips for what this kernel lacks, leak checks."""
import contextlib
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

import benchbpf

# The Ctrl-C tests need SIGINT to raise KeyboardInterrupt; a suite started in
# the background by a non-interactive shell inherits SIGINT ignored, and Python
# then leaves it so.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# A host drift calibration of the machine would widen intervals and add to
# every Result's metadata and summary; tests that want one point at their own.
os.environ[benchbpf.hostdrift.ENV_PATH] = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "no-such-host-drift.json")
os.environ[benchbpf.hostdrift.HISTORY_ENV_PATH] = os.devnull

#: A run long enough to sample real work, short enough for CI.
SHORT = dict(warmup=0.2, duration=0.6, interval=0.2)
SHORT_SAMPLES = 3
#: Parameters some benchmarks require (no usable default, as in the kernel
#: bench): what tests that run every benchmark give them.
REQUIRED_PARAMS = {
    **{f"lpm-trie-{op}": {"nr_entries": 16} for op in
       ("noop", "baseline", "lookup", "insert", "update", "delete", "free")},
    "xdp-lb": {"scenario": "tcp-v4-lru-hit"},
}


#: What the getpgid() triggers are called in a Result's metadata.
FENTRY = "fentry/__x64_sys_getpgid"   # the program's section: what libbpf attached
TP = "tp/syscalls/sys_enter_getpgid"
TRIGGERS = (FENTRY, TP)
#: errno names a refused program kind is reported with.
ERRNO_NAMES = ("EPERM", "ENOENT", "EOPNOTSUPP", "ENOTSUPP", "ENOSYS", "EINVAL")


def copy_package(into):
    """A copy of the benchbpf package under directory `into` (built core
    included, caches left out); returns the copy's path."""
    dest = os.path.join(into, "benchbpf")
    shutil.copytree(os.path.dirname(benchbpf.__file__), dest,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def producer_ran(sample):
    """The producers had CPU for at least half of the sample's interval: only then
    may a test demand that they counted something.  On a loaded machine a 200 ms
    sample can pass without the producer running at all (hits=0, producer_cpu_ns=0),
    and a local storage loop of 10000 gets over 1000 maps takes 25 ms of CPU."""
    cpu = sample.producer_cpu_ns
    return cpu is None or cpu >= sample.interval_ns // 2


def counts_where_ran(samples, count=lambda s: s.hits):
    """Something was counted, and in every sample in which the producers ran."""
    samples = list(samples)
    return sum(count(s) for s in samples) > 0 and \
        all(count(s) > 0 or not producer_ran(s) for s in samples)


def nested_counts_where_ran(got):
    """counts_where_ran() of what run_in_own_pid_namespace() reports."""
    ran = [cpu is None or cpu >= iv // 2 for cpu, iv in zip(got["cpu_ns"], got["interval_ns"])]
    return sum(got["hits"]) > 0 and all(h > 0 or not r for h, r in zip(got["hits"], ran))


def calibration(relative_sd, window_s=10.0):
    """A host drift calibration's dict (Result metadata["host_drift"]): a
    host whose figure moves by relative_sd over windows of window_s."""
    from benchbpf import hostdrift
    return hostdrift.HostDrift(windows=((window_s, relative_sd, 100),), span_s=600.0,
                               calibrated_at="then", machine={},
                               benchmarks=("count-local",), runs=100).as_dict()


def run_or_skip(bench, **kw):
    """Run a benchmark (a name, or a family's function) with SHORT; skip,
    with the kernel's reason, where this kernel lacks a feature."""
    call = bench if callable(bench) else (lambda **k: benchbpf.run(bench, **k))
    try:
        return call(**{**SHORT, **kw})
    except benchbpf.UnsupportedError as e:
        pytest.skip(f"{bench}: {e}")


def _prefixes(module):
    return tuple(getattr(module, "PREFIXES", ())) + (
        (module.PREFIX,) if hasattr(module, "PREFIX") else ())


def ours_left_behind(prefixes, timeout=20.0):
    """Programs and maps named prefix... this process still holds or nobody
    holds, once the kernel had up to `timeout` seconds for its deferred
    frees (seconds on a machine this busy: closed objects of any process
    on it are listed until freed, and nobody holds them meanwhile)."""
    import time

    import leakcheck

    deadline = time.monotonic() + timeout
    while True:
        left = [name for p in prefixes for _, name in leakcheck.left_behind(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


@pytest.fixture(scope="module", autouse=True)
def nothing_of_ours_left(request):
    """After a module that names its objects (PREFIX or PREFIXES), none of
    them may stay loaded."""
    yield
    prefixes = _prefixes(request.module)
    if prefixes:
        import leakcheck

        leakcheck.require_bpftool()
        assert not ours_left_behind(prefixes), f"{prefixes} programs or maps left loaded"


@pytest.fixture
def no_leaks(request):
    """The test leaves this process as it found it, and nothing of its
    module's family (PREFIX/PREFIXES) loaded."""
    import leakcheck

    before = leakcheck.snapshot()
    yield
    _, leaks = leakcheck.settle(before)
    assert not leaks, leaks
    prefixes = _prefixes(request.module)
    if prefixes:
        leakcheck.require_bpftool()
        assert not ours_left_behind(prefixes)


@contextlib.contextmanager
def rejected_before_loading(exc, *words):
    """`with rejected_before_loading(ValueError, "nr_loops=0"): ...`: the
    body raises exc with every word in its message, and loaded nothing."""
    import leakcheck

    setups = benchbpf._core.setup_count()
    with pytest.raises(exc) as info:
        yield info
    for w in words:
        assert w in str(info.value), str(info.value)
    assert benchbpf._core.setup_count() == setups, "something was set up"
    assert not leakcheck.snapshot().bpf_fds


def fentry_runs_or_says_why(call, name, prefixes=()):
    """Run `call(trigger="fentry", ...)`: it runs from fentry, or this kernel
    refuses fentry and the run says so (UnsupportedError naming fentry, the
    benchmark and the errno), took no sample and left nothing loaded."""
    setups = benchbpf._core.setup_count()
    seen = []
    try:
        r = call(trigger="fentry", callback=lambda *a: seen.append(a), **SHORT)
    except benchbpf.UnsupportedError as e:
        msg = str(e)
        assert "fentry" in msg and name in msg, msg
        assert any(n in msg for n in ERRNO_NAMES), msg
        assert e.errno > 0
        assert not seen, "samples were taken before the refusal"
        assert benchbpf._core.setup_count() == setups + 1
        assert ours_left_behind(prefixes) == []
        pytest.skip(msg)
    assert r.metadata["trigger"] == FENTRY
    return r


_NESTED = """
import json, os, sys, warnings
sys.path.insert(0, {tests!r})
import benchbpf, leakcheck
warnings.simplefilter("ignore")
tgids = []
def look(sample, index, warmup):
    if index == 0:
        tgids.extend(v["filter_tgid"] for v in leakcheck.held_data_vars(".bss")
                     if "filter_tgid" in v)
r = benchbpf.run({name!r}, warmup=0.2, duration=0.6, interval=0.2, callback=look, **{kw!r})
every = r.warmup_samples + r.samples
totals = dict(hits=sum(s.hits for s in every), drops=sum(s.drops for s in every))
totals.update({{k: sum(s.extra[k] for s in every) for k in every[0].extra}})
print(json.dumps(dict(hits=[s.hits for s in r.samples], totals=totals, params=dict(r.params),
                      cpu_ns=[s.producer_cpu_ns for s in r.samples],
                      interval_ns=[s.interval_ns for s in r.samples],
                      filter_tgids=tgids, pid=os.getpid())))
"""


def run_in_own_pid_namespace(name, **kw):
    """Run `name` in a child inside a new pid namespace with its own /proc
    (as in a container), where /proc shows only the inner pid.  Returns
    (what the child reports: its samples' hits, totals of every counter over
    the whole run, its params, the filter ids its BPF programs hold, its own
    pid there; and its pid as the kernel knows it)."""
    import json
    import subprocess
    import sys
    import time

    import leakcheck

    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare not available")
    script = _NESTED.format(tests=os.path.dirname(__file__), name=name, kw=kw)
    proc = subprocess.Popen([unshare, "--pid", "--fork", "--mount-proc", sys.executable,
                             "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=leakcheck._clean_env())
    outer_pid = None
    while outer_pid is None and proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
                kids = f.read().split()
        except OSError:
            kids = []
        outer_pid = int(kids[0]) if kids else None
        time.sleep(0.001)
    out, err = proc.communicate(timeout=60)
    if proc.returncode != 0 and "unshare" in err:
        pytest.skip(f"cannot create a pid namespace here: {err.strip()}")
    assert proc.returncode == 0, err
    return json.loads(out.splitlines()[-1]), outer_pid


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def nr_threads():
    return len(os.listdir("/proc/self/task"))


def nr_threads_once_reaped(expected, timeout=1.0):
    """This process's thread count, given a moment to fall to `expected`:
    pthread_join returns when the kernel clears the thread's id, just before
    the exiting thread leaves /proc/self/task."""
    deadline = time.monotonic() + timeout
    while nr_threads() > expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return nr_threads()


@pytest.fixture(scope="session", autouse=True)
def nothing_left_loaded():
    """After the whole suite, nothing it loaded may still be in the kernel:
    no BPF descriptor in this process, and no object loaded meanwhile that
    no process holds (objects other processes on the machine hold are theirs)."""
    import leakcheck

    before = leakcheck.kernel_objects()
    yield
    held = leakcheck.snapshot().bpf_fds
    assert not held, f"BPF descriptors still open after the test suite: {held}"
    orphans = leakcheck.orphaned_objects(before)
    assert not orphans, f"BPF objects left loaded after the test suite: {orphans}"
