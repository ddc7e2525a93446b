"""Reliability: faults, interruption, environment faults, leaks, concurrency.

Faults are real: the selftest benchmark loads two tracepoint programs that
count its producers' getpgid() calls and can make a stage fail on purpose
(the verifier rejects the second program after the first is attached, an
attach targets a missing tracepoint, a producer, consumer or the sampler
fails).  After each test the process must hold exactly what it held before:
same descriptors and threads, no BPF or perf descriptor, no child, and no
selftest program or map left in the kernel.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

import benchbpf
import leakcheck
from benchbpf import _core
from benchbpf.harness._concurrency import ConcurrentRunWarning
from conftest import (REQUIRED_PARAMS, nested_counts_where_ran, producer_ran,
                      run_in_own_pid_namespace)

ROOT = Path(__file__).resolve().parent.parent
FAST = dict(warmup=0, duration=0.3, interval=0.1)
THREAD_FAULTS = ("producer", "consumer", "measure")


def selftest(**kw):
    return benchbpf.run("selftest", **{**FAST, **kw})


@pytest.fixture(scope="module", autouse=True)
def warm():
    """One run of each kind first: what a first run allocates for good
    (libbpf's feature cache, lazy imports) is not a leak."""
    if not benchbpf.describe("selftest").needs_bpf or os.geteuid() != 0:
        pytest.skip("needs root")
    selftest()
    benchbpf.run("count-local", **FAST)


@pytest.fixture
def clean():
    """The test must leave this process and the kernel as it found them."""
    objects = leakcheck.kernel_objects()
    before = leakcheck.snapshot()
    yield before
    _, leaks = leakcheck.settle(before)
    assert not leaks, leaks
    assert not leakcheck.wait_named_gone("selftest"), "selftest objects still loaded"
    assert not leakcheck.orphaned_objects(objects)


def sigint_later(delay):
    t = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
    t.start()
    return t


# ---- the selftest benchmark counts for real ----

def test_selftest_counts_its_producers_syscalls(clean):
    r = selftest(producers=2, consumers=2)
    assert r.metadata["trigger"] == "getpgid() syscall"
    for s in r.samples:
        calls = s.extra["calls"]
        assert (s.hits > 0 and calls > 0) or not producer_ran(s), s
        # Entry and exit programs see every call the producers made; the
        # three counters are read a few microseconds apart.
        slack = max(200, calls // 50)
        assert abs(s.hits - calls) <= slack, s
        assert abs(s.extra["exits"] - calls) <= slack, s


def test_selftest_counts_inside_its_own_pid_namespace():
    """In a new pid namespace with its own /proc (as in a container),
    getpid() is not the id BPF sees: the programs still count this
    process's calls, and only its calls."""
    got, outer_pid = run_in_own_pid_namespace("selftest")
    assert nested_counts_where_ran(got), got
    assert got["filter_tgids"] == [outer_pid, outer_pid], (got, outer_pid)
    assert outer_pid != got["pid"]


# ---- faults during a run ----

@pytest.mark.parametrize("fault, words", [
    ("setup-second-load", "loading selftest_exit (made invalid on purpose"),
    ("setup-attach", "failed on purpose (fault='setup-attach')"),
    ("producer", "producer #0 failed on purpose"),
    ("consumer", "consumer #0 failed on purpose"),
    ("measure", "measuring failed on purpose"),
])
def test_fault_stops_the_run_and_frees_everything(clean, fault, words):
    kw = dict(fault=fault, producers=2, consumers=2, warmup=0, duration=20, interval=0.1)
    if fault in THREAD_FAULTS:
        kw["fault_after_ms"] = 300
    setups = _core.setup_count()
    t0 = time.monotonic()
    with pytest.raises(benchbpf.BenchmarkError) as info:
        benchbpf.run("selftest", **kw)
    assert time.monotonic() - t0 < 5, "the run did not stop at the fault"
    assert type(info.value) is benchbpf.BenchmarkError   # not "unsupported"
    assert words in str(info.value)
    assert _core.setup_count() == setups + 1
    if fault == "setup-second-load":
        # libbpf's messages travel with the exception: the verifier's reason
        assert "invalid mem access" in info.value.log


def test_half_done_setup_is_undone(clean):
    """The first program really is loaded and attached when the second fails."""
    seen = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            seen.extend(name for _, name in leakcheck.named_objects("selftest_enter"))
            seen.extend("perf" for p in leakcheck.bpftool("perf", "list")
                        if p.get("pid") == os.getpid() and p.get("tracepoint") == "sys_enter_getpgid")
            time.sleep(0.05)

    w = threading.Thread(target=watch)
    w.start()
    try:
        with pytest.raises(benchbpf.BenchmarkError, match="made invalid on purpose"):
            selftest(fault="setup-second-load", setup_delay_ms=800)
    finally:
        stop.set()
        w.join()
    assert "selftest_enter" in seen and "perf" in seen, seen


def test_callback_that_raises_stops_a_bpf_run(clean):
    def boom(sample, index, warmup):
        raise RuntimeError("callback gave up")

    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="callback gave up"):
        selftest(consumers=1, duration=20, callback=boom)
    assert time.monotonic() - t0 < 5


# ---- Ctrl-C at any moment ----

def test_ctrl_c_while_waiting_for_another_run_loads_nothing(clean):
    started = threading.Event()
    errors = []

    def other():
        try:
            benchbpf.run("count-local", warmup=0, duration=1.5, interval=0.1,
                         callback=lambda *a: started.set())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    t = threading.Thread(target=other)
    t.start()
    try:
        assert started.wait(10)
        setups = _core.setup_count()
        timer = sigint_later(0.3)
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            selftest()
        assert time.monotonic() - t0 < 1.0
        timer.cancel()
        assert _core.setup_count() == setups, "something was set up after Ctrl-C"
    finally:
        t.join()
    assert not errors


def test_ctrl_c_during_setup(clean):
    samples = []
    timer = sigint_later(0.3)
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            # Ctrl-C lands between the first attach and the second load.
            selftest(setup_delay_ms=800, duration=20, callback=lambda *a: samples.append(a))
    finally:
        timer.cancel()
    elapsed = time.monotonic() - t0
    assert 0.8 <= elapsed < 2.5, elapsed   # setup finishes, then the run stops
    assert not samples, "the run went on measuring after Ctrl-C"


@pytest.mark.parametrize("phase", ["warmup", "measurement"])
def test_ctrl_c_during_sampling(clean, phase):
    def on_sample(sample, index, warmup):
        if warmup == (phase == "warmup"):
            os.kill(os.getpid(), signal.SIGINT)

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        selftest(warmup=2, duration=20, interval=0.1, consumers=2, producers=2,
                 callback=on_sample)
    limit = 1.5 if phase == "warmup" else 3.5
    assert time.monotonic() - t0 < limit


def test_ctrl_c_during_teardown_lets_it_finish(clean):
    timers = []

    def on_sample(sample, index, warmup):
        if index == 2:   # the last one: teardown starts right after
            timers.append(sigint_later(0.2))

    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            selftest(duration=0.3, teardown_delay_ms=1000, callback=on_sample)
    finally:
        for t in timers:
            t.cancel()
    assert time.monotonic() - t0 >= 1.3, "teardown was cut short"
    # Right away, not after some grace period: teardown had completed.
    held = [t for t in leakcheck.fd_targets().values() if leakcheck.is_bpf_target(t)]
    assert not held, held


# ---- options that contradict each other ----

@pytest.mark.parametrize("kw, words", [
    (dict(fault="none", fault_after_ms=50), "fault_after_ms=50 given with fault='none'"),
    (dict(fault="setup-attach", fault_after_ms=1), "fault_after_ms=1 given with fault='setup-attach'"),
    (dict(fault="consumer"), "fault='consumer' with consumers=0"),
    (dict(consumers=9), "consumers=9"),
])
def test_contradictory_selftest_options_load_nothing(clean, kw, words):
    setups = _core.setup_count()
    with pytest.raises(ValueError) as info:
        selftest(**kw)
    assert words in str(info.value)
    assert _core.setup_count() == setups


# ---- environment faults ----

def _in_private_mounts(shell, script, timeout=120):
    """Run python `script` after `shell` in a private mount namespace."""
    cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
           shell + ' && exec "$0" -c "$1"', sys.executable, script]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd="/")
    except FileNotFoundError:
        pytest.skip("unshare(1) is not installed")
    if out.returncode == 97:
        pytest.skip(out.stderr.strip().splitlines()[-1])
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_tracefs_is_mounted_when_missing_and_metadata_says_so():
    script = """
import json, os, sys, benchbpf
if os.path.isdir("/sys/kernel/tracing/events"):
    print("tracefs is still mounted in the namespace", file=sys.stderr); sys.exit(97)
r1 = benchbpf.run("selftest", warmup=0, duration=0.2, interval=0.1)
r2 = benchbpf.run("selftest", warmup=0, duration=0.1, interval=0.1)
print(json.dumps({"first": r1.metadata["tracefs_mounted"],
                  "second": r2.metadata["tracefs_mounted"],
                  "hits": r1.samples[0].hits,
                  "events": os.path.isdir("/sys/kernel/tracing/events")}))
"""
    shell = ("{ umount -l /sys/kernel/debug 2>/dev/null; umount -l /sys/kernel/tracing "
             "2>/dev/null; true; }")
    got = _in_private_mounts(shell, script)
    assert got == {"first": True, "second": False, "hits": got["hits"], "events": True}
    assert got["hits"] > 0
    # The mount lived in the namespace only.
    assert os.path.isdir("/sys/kernel/tracing/events")


def test_missing_btf_is_unsupported_before_loading():
    script = """
import json, os, benchbpf
from benchbpf import _core
out = {"btf": os.path.exists("/sys/kernel/btf/vmlinux")}
try:
    benchbpf.run("selftest", warmup=0, duration=0.1, interval=0.1)
except benchbpf.UnsupportedError as e:
    out["error"] = str(e)
out["setups"] = _core.setup_count()
out["count"] = benchbpf.run("count-local", warmup=0, duration=0.1, interval=0.1).samples[0].hits
print(json.dumps(out))
"""
    got = _in_private_mounts("mount -t tmpfs none /sys/kernel/btf", script)
    assert got["btf"] is False
    assert "/sys/kernel/btf/vmlinux" in got["error"] and "CONFIG_DEBUG_INFO_BTF" in got["error"]
    assert got["setups"] == 0 and got["count"] > 0   # refused before setup; count-* still run


NOFILE_SCRIPT = """
import errno, json, os, resource, benchbpf
from benchbpf import _core
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
base = len(os.listdir("/proc/self/fd")) - 1
out = {"sweep": []}
for extra in list(range(0, 16)) + list(range(16, 120, 8)):
    resource.setrlimit(resource.RLIMIT_NOFILE, (base + extra, hard))
    setups = _core.setup_count()
    try:
        benchbpf.run("selftest", warmup=0, duration=0.05, interval=0.05)
        res = ["ok"]
    except OSError as e:
        res = ["oserror", e.errno, str(e), _core.setup_count() - setups]
    except BaseException as e:
        res = ["other", type(e).__name__, str(e)]
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    out["sweep"].append([extra] + res)
resource.setrlimit(resource.RLIMIT_NOFILE, (base + 3, hard))
out["count_local"] = benchbpf.run("count-local", warmup=0, duration=0.05, interval=0.05).samples[0].hits
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
out["after"] = benchbpf.run("selftest", warmup=0, duration=0.1, interval=0.1).samples[0].extra["calls"]
out["fds"] = [base, len(os.listdir("/proc/self/fd")) - 1]
print(json.dumps(out))
"""


def test_too_few_file_descriptors_is_a_clear_error_and_poisons_nothing():
    # A fresh process: libbpf has not probed the kernel yet, which is when
    # running out of descriptors would do lasting harm.
    out = subprocess.run([sys.executable, "-c", NOFILE_SCRIPT], capture_output=True,
                         text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    kinds = [row[1] for row in got["sweep"]]
    assert "oserror" in kinds and "ok" in kinds, got["sweep"]
    # Refused below some limit, running above it; never anything else.
    assert kinds == sorted(kinds, key=lambda k: k == "ok"), got["sweep"]
    for row in got["sweep"]:
        if row[1] == "oserror":
            _, _, err, msg, setups = row
            assert err == 24 and "ulimit -n" in msg and "open-files limit" in msg, row
            assert setups == 0   # refused inside the core, before setup
            assert "selftest" in msg
    assert got["count_local"] > 0     # needs no descriptor
    assert got["after"] > 0           # the failures left libbpf working
    assert got["fds"][0] == got["fds"][1]


MEMLOCK_SCRIPT = """
import json, resource, benchbpf
out = {"limit": resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]}
try:
    r = benchbpf.run("selftest", warmup=0, duration=0.1, interval=0.1)
    out.update(hits=r.samples[0].hits, run=r.metadata["rlimit_memlock"],
               at_import=r.metadata["rlimit_memlock_at_import"])
except benchbpf.UnsupportedError as e:
    out["error"] = str(e)
print(json.dumps(out))
"""


@pytest.mark.parametrize("hard_too", [False, True])
def test_low_memlock_limit_is_raised_or_reported(hard_too):
    import resource

    low = 64 * 1024

    def lower():
        hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (low, low if hard_too else hard))

    out = subprocess.run([sys.executable, "-c", MEMLOCK_SCRIPT], capture_output=True,
                         text=True, timeout=60, cwd="/", preexec_fn=lower)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    limit = "unlimited" if got["limit"] == resource.RLIM_INFINITY else got["limit"]
    if "error" in got:
        # A kernel that charges BPF memory to RLIMIT_MEMLOCK (before 5.11).
        assert "ulimit -l" in got["error"]
        return
    assert got["hits"] > 0
    assert got["at_import"] == low               # what the core found
    assert got["run"] == limit                   # what the run had: recorded as is
    if not hard_too:
        assert got["run"] != low                 # the core raised it to the hard limit


# ---- without privilege ----

def _as_nobody(fn):
    """Run fn() in a forked child that dropped to user nobody; returns its JSON."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # pragma: no cover - child
        code = 1
        try:
            signal.alarm(120)   # a hang kills the child, and the test fails
            os.close(r)
            # Markers would go to a /tmp directory owned by nobody; a
            # place it cannot write turns detection off, as it should.
            os.environ["BENCHBPF_LOCK_DIR"] = "/proc/benchbpf-none"
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            os.write(w, json.dumps(fn()).encode())
            code = 0
        except BaseException as e:
            os.write(w, json.dumps({"child_error": repr(e)}).encode())
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    got = json.loads(data)
    assert "child_error" not in got, got
    assert os.waitstatus_to_exitcode(status) == 0
    return got


def _privilege_report():
    env = {"interval_ns": 50_000_000, "warmup_samples": 0, "duration_samples": 1}
    out = {"uid": os.geteuid(), "runs": {}, "core": {}}
    for name in benchbpf.list_benchmarks():
        required = REQUIRED_PARAMS.get(name, {})
        # The core takes parameters as the runner converts them (a choice's index).
        params = benchbpf.describe(name).params
        core_required = {k: params[k].to_core(v) for k, v in required.items()}
        for key, call in (("runs", lambda: benchbpf.run(name, warmup=0, duration=0.05,
                                                        interval=0.05, **required)),
                          ("core", lambda: _core.run(name, env, dict(core_required)))):
            try:
                call()
                res = "ok"
            except PermissionError as e:
                res = "PermissionError: " + str(e)
            except BaseException as e:
                res = f"{type(e).__name__}: {e}"
            out[key][name] = res
    snap = leakcheck.snapshot()
    out["bpf_fds"] = snap.bpf_fds
    out["threads"] = snap.threads
    return out


def _check_privilege_report(got):
    for name in benchbpf.list_benchmarks():
        needs = benchbpf.describe(name).needs_bpf
        for key in ("runs", "core"):
            res = got[key][name]
            if needs:
                # Python refuses up front; the core, called directly, gets
                # the kernel's EPERM and says what is missing.
                assert res.startswith("PermissionError:") and "CAP_BPF" in res, (key, name, res)
            else:
                assert res == "ok", (key, name, res)
    assert got["bpf_fds"] == []


def test_unprivileged_user_gets_permission_errors_and_count_runs():
    got = _as_nobody(_privilege_report)
    assert got["uid"] == 65534
    _check_privilege_report(got)


NOCAPS_SCRIPT = """
import json, sys
sys.path.insert(0, %r)
import test_reliability
print(json.dumps(test_reliability._privilege_report()))
"""


def test_root_without_capabilities_gets_permission_errors():
    """uid 0 in a container that dropped every capability is not privileged."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def drop_all():
        for cap in range(64):
            libc.prctl(24, cap, 0, 0, 0)   # PR_CAPBSET_DROP: gone after exec

    out = subprocess.run([sys.executable, "-c", NOCAPS_SCRIPT % str(ROOT / "tests")],
                         capture_output=True, text=True, timeout=120, cwd="/",
                         preexec_fn=drop_all)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["uid"] == 0
    _check_privilege_report(got)


# ---- concurrency ----

def test_two_threads_running_bpf_benchmarks_are_serialised(clean, monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHBPF_LOCK_DIR", str(tmp_path))
    spans, results, errors = [], [], []

    def one():
        try:
            t0 = time.monotonic()
            results.append(selftest(duration=0.4, interval=0.2, producers=2))
            spans.append((t0, time.monotonic()))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=one) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert max(e for _, e in spans) - min(s for s, _ in spans) >= 0.75
    for r in results:
        assert all(s.hits > 0 for s in r.samples)
        assert r.metadata["concurrent_runs"] == 0   # same process: serialised, not concurrent


def _run_elsewhere(seconds, cwd):
    script = ("import json, benchbpf; "
              f"r = benchbpf.run('count-local', warmup=0, duration={seconds}, interval=0.1); "
              "print(json.dumps(r.metadata['concurrent_runs']))")
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd)


def test_another_process_running_is_detected_both_ways(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHBPF_LOCK_DIR", str(tmp_path))
    other = _run_elsewhere(8, tmp_path)
    try:
        deadline = time.monotonic() + 20
        while not any(e.startswith(f"{other.pid}-") for e in os.listdir(tmp_path)):
            assert time.monotonic() < deadline and other.poll() is None, other.communicate()
            time.sleep(0.02)
        with pytest.warns(ConcurrentRunWarning, match=f"pid {other.pid}") as seen:
            r = benchbpf.run("count-local", warmup=0, duration=0.2, interval=0.1)
        assert r.metadata["concurrent_runs"] == 1
        # The warning points at the caller of run(), also from a precision run's runs.
        assert seen[0].filename == __file__
        with pytest.warns(ConcurrentRunWarning, match=f"pid {other.pid}") as seen:
            benchbpf.run("count-local", precision=0.5, duration=2.5, warmup=0)
        assert seen[0].filename == __file__
        out, err = other.communicate(timeout=60)
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
    assert other.returncode == 0, err
    assert json.loads(out) == 1 and "ConcurrentRunWarning" in err   # it saw us too
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConcurrentRunWarning)
        r = benchbpf.run("count-local", warmup=0, duration=0.1, interval=0.1)
    assert r.metadata["concurrent_runs"] == 0
    assert os.listdir(tmp_path) == []


def test_marker_of_a_killed_process_is_not_a_concurrent_run(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHBPF_LOCK_DIR", str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    (tmp_path / f"{dead}-0.lock").write_text("")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConcurrentRunWarning)
        r = benchbpf.run("count-local", warmup=0, duration=0.1, interval=0.1)
    assert r.metadata["concurrent_runs"] == 0
    assert os.listdir(tmp_path) == []   # the stale marker was cleaned away


# ---- nothing left behind after many runs of every family ----

def test_many_short_runs_of_every_benchmark_leave_nothing_behind():
    """scripts/soak.py in a fresh process: one pass over every benchmark, the
    selftest faults and rejected options, then 40 more runs."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "soak.py"), "--runs", "40",
                          "--json", "--rss-slack-kb", "2048"],
                         capture_output=True, text=True, timeout=600, cwd="/")
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["ok"], report["problems"]
    assert out.returncode == 0
    assert report["fds"]["baseline"] == report["fds"]["end"]
    assert report["threads"]["baseline"] == report["threads"]["end"]
    # Every selftest fault and rejection came out as intended.
    for key, counts in report["outcomes"].items():
        if key.startswith("selftest ") or key.startswith("count-local producers"):
            assert set(counts) == {"expected"}, (key, counts)


# ---- the leak checks themselves cannot pass without looking ----

def test_leak_checks_fail_without_bpftool(monkeypatch):
    monkeypatch.setattr(leakcheck, "BPFTOOL", None)
    with pytest.raises(leakcheck.BpftoolError, match="bpftool not found"):
        leakcheck.kernel_objects()
    with pytest.raises(leakcheck.BpftoolError):
        leakcheck.left_behind("selftest")


def test_leak_checks_fail_when_bpftool_fails(monkeypatch, tmp_path):
    broken = tmp_path / "bpftool"
    broken.write_text("#!/bin/sh\necho 'Error: cannot list' >&2\nexit 255\n")
    broken.chmod(0o755)
    monkeypatch.setattr(leakcheck, "BPFTOOL", str(broken))
    with pytest.raises(leakcheck.BpftoolError, match="cannot list"):
        leakcheck.orphaned_objects({})
