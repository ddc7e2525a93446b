"""prog_stats=True: the kernel's own accounting of each program a run loaded.

Run counts are checked against the hits of the same window on two families
(trigger, rename; bpf_loop one-sided), and the machine's statistics state is
checked to be what it was, after runs that succeed, fail and are interrupted.

Tolerances: the benchmark's counters and the programs' counters are read one
after the other at each end of the window, at most
metadata["prog_stats_boundary_ns"] apart.  Within that gap a CPU can run a
program at most gap / (time of one run) times; the kernel's mean time per
run, halved, stands for the shortest run.  Add one batch in flight per
producer, at each of the two ends.
"""
import json
import math
import os
import signal
import subprocess
import sys

import pytest

import benchbpf
import leakcheck
from benchbpf import _core
from benchbpf.results.result import ProgStats, Result
from conftest import SHORT, run_or_skip

STATS_SYSCTL = "/proc/sys/kernel/bpf_stats_enabled"
STATS_FD = "anon_inode:bpf-stats"
FAST = dict(warmup=0, duration=0.3, interval=0.1)


@pytest.fixture(autouse=True)
def clean():
    """Root only; each test leaves the process as it found it."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    before = leakcheck.snapshot()
    yield
    _, leaks = leakcheck.settle(before)
    assert not leaks, leaks


def stats_fds():
    """Descriptors of this process that keep the kernel's statistics on."""
    return [fd for fd, target in leakcheck.fd_targets().items() if target == STATS_FD]


def sysctl():
    with open(STATS_SYSCTL) as f:
        return f.read().strip()


def window_tolerance(r, prog, hits_per_run=1):
    """Hits one side may count that the other does not, at both window ends."""
    gap = r.metadata["prog_stats_boundary_ns"]
    shortest_run = prog.ns_per_run / 2
    per_end = (os.cpu_count() * gap / shortest_run + r.producers) * hits_per_run
    return 2 * per_end


def forks():
    """Processes and threads created on the machine since boot."""
    with open("/proc/stat") as f:
        return int(next(line for line in f if line.startswith("processes ")).split()[1])


# ---- run counts match hits over the measured window ----

def telling(r, allowance):
    """Whether a window one sample off would exceed the allowance: not so when
    the machine is so busy that the sampler was held up between its readings."""
    return allowance < min(s.hits for s in (*r.samples, *r.warmup_samples)) / 2


def test_trig_rawtp_counting_program_ran_once_per_hit():
    for _ in range(5):
        r = run_or_skip("trig-rawtp", prog_stats=True, trig_batch_iters=100,
                        **{**SHORT, "warmup": 0.4})
        progs = {p.name: p for p in r.prog_stats}
        assert set(progs) == {"trig_driver_kfunc", "trig_rawtp"}, progs
        counter = progs["trig_rawtp"]
        assert counter.type == "raw_tracepoint"
        assert counter.run_time_ns > 0 and 0 < counter.ns_per_run < 10_000
        # Both count every firing of the tracepoint, whoever fires it; the
        # window leaves the two warm-up samples out.
        tol = window_tolerance(r, counter)
        assert abs(counter.run_cnt - r.total_hits) <= tol, \
            (counter, r.total_hits, r.metadata["prog_stats_boundary_ns"])
        if telling(r, tol):
            break
    else:
        pytest.fail(f"the sampler was held up between its readings in every run: {r.metadata}")


def test_trig_kernel_count_driver_runs_are_batches_of_hits():
    batch = 100
    r = run_or_skip("trig-kernel-count", prog_stats=True, trig_batch_iters=batch, **SHORT)
    driver = r.program("trig_count")
    # Only this run's producers run its driver: each run adds `batch` hits.
    assert abs(driver.run_cnt * batch - r.total_hits) <= \
        window_tolerance(r, driver, hits_per_run=batch), (driver, r.total_hits)


def test_rename_rawtp_program_ran_once_per_write():
    """The program runs on every task rename on the machine: exec and new
    kernel threads (each comes with a fork, counted), and other processes
    renaming threads, such as another rename benchmark, which nothing here
    can count.  Every counted write ran it, in every run; no more than the
    boundary and the forks allow in one of five runs at least, so that a
    busy neighbour cannot fail it while a wrong window (a sample's worth)
    fails all five."""
    for _ in range(5):
        before = forks()
        r = run_or_skip("rename-rawtp", prog_stats=True, **{**SHORT, "warmup": 0.2})
        others = forks() - before
        prog = r.program("rename_rawtp")
        tol = window_tolerance(r, prog)
        assert prog.run_cnt >= r.total_hits - tol, (prog, r.total_hits)
        allowance = tol + others + 100
        if telling(r, allowance) and prog.run_cnt <= r.total_hits + allowance:
            break
    else:
        pytest.fail(f"other tasks renamed throughout: {prog} for {r.total_hits} "
                    f"hits, {others} forks, boundary tolerance {tol:.0f}")


def test_bpf_loop_runs_cover_its_iterations():
    nr_loops = 10
    r = run_or_skip("bpf-loop", prog_stats=True, nr_loops=nr_loops, **SHORT)
    prog = r.program("bpf_loop_tp")
    per_run = 1000 * nr_loops
    # Each of this process's getpgid() runs the program once for per_run
    # iterations; other processes' getpgid() runs it too, for none.
    assert prog.run_cnt * per_run >= \
        r.total_hits - window_tolerance(r, prog, hits_per_run=per_run), (prog, r.total_hits)
    # The whoami program ran once, during setup: before the window.
    assert r.program("producer_whoami").run_cnt == 0


# ---- off by default, refused where nothing is loaded ----

def test_off_by_default():
    r = benchbpf.run("selftest", **FAST)
    assert r.prog_stats == () and "prog_stats_boundary_ns" not in r.metadata
    assert r.params["prog_stats"] is False


@pytest.mark.parametrize("name", ["count-local", "trig-syscall-count", "rename-base"])
def test_benchmark_without_bpf_refuses_before_loading(name):
    setups = _core.setup_count()
    with pytest.raises(ValueError, match=f"prog_stats=True: {name} loads no BPF program"):
        benchbpf.run(name, prog_stats=True, **FAST)
    assert _core.setup_count() == setups


def test_core_refuses_it_too():
    env = dict(interval_ns=100_000_000, warmup_samples=0, duration_samples=1,
               prog_stats=True)
    setups = _core.setup_count()
    with pytest.raises(ValueError, match="count-local loads no BPF program"):
        _core.run("count-local", env, {})
    assert _core.setup_count() == setups


def test_prog_stats_must_be_a_bool():
    with pytest.raises(TypeError, match="prog_stats=1: must be True or False"):
        benchbpf.run("selftest", prog_stats=1, **FAST)


# ---- the machine's state is restored ----

def test_statistics_on_only_while_a_run_holds_them():
    seen = []
    state = sysctl()
    r = benchbpf.run("selftest", prog_stats=True, producers=2,
                     callback=lambda *a: seen.append(len(stats_fds())), **FAST)
    assert seen and all(n == 1 for n in seen), seen
    assert not stats_fds() and sysctl() == state
    enter, exit_ = r.program("selftest_enter"), r.program("selftest_exit")
    calls = sum(s.extra["calls"] for s in r.samples)
    assert enter.run_cnt >= calls - window_tolerance(r, enter)
    assert exit_.run_cnt > 0
    # And a run without them leaves them off.
    benchbpf.run("selftest", callback=lambda *a: seen.append(len(stats_fds())), **FAST)
    assert seen[-1] == 0 and not stats_fds() and sysctl() == state


@pytest.mark.parametrize("kw", [
    dict(fault="setup-second-load"),
    dict(fault="producer", fault_after_ms=150, duration=5),
    dict(fault="measure", fault_after_ms=150, duration=5),
])
def test_failed_run_restores_the_state(kw):
    state = sysctl()
    with pytest.raises(benchbpf.BenchmarkError, match="on purpose"):
        benchbpf.run("selftest", prog_stats=True, **{**FAST, **kw})
    assert not stats_fds() and sysctl() == state


def test_interrupted_run_restores_the_state():
    state = sysctl()

    def interrupt(sample, index, warmup):
        os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        benchbpf.run("selftest", prog_stats=True, callback=interrupt,
                     **{**FAST, "duration": 20})
    assert not stats_fds() and sysctl() == state


def test_statistics_the_user_turned_on_stay_on():
    if sysctl() != "0":
        pytest.skip("the sysctl is already on here")
    try:
        with open(STATS_SYSCTL, "w") as f:
            f.write("1")
    except OSError as e:
        pytest.skip(f"cannot set {STATS_SYSCTL}: {e}")
    try:
        r = benchbpf.run("selftest", prog_stats=True, **FAST)
        assert sysctl() == "1" and not stats_fds()
        assert r.program("selftest_enter").run_cnt > 0
    finally:
        with open(STATS_SYSCTL, "w") as f:
            f.write("0")


# ---- the Result carries them ----

def test_result_round_trips_and_old_files_load():
    r = benchbpf.run("selftest", prog_stats=True, **FAST)
    assert all(isinstance(p, ProgStats) for p in r.prog_stats)
    with pytest.raises(AttributeError):
        r.prog_stats[0].run_cnt = 0
    back = Result.from_json(r.to_json())
    assert back.prog_stats == r.prog_stats
    old = json.loads(r.to_json())
    del old["prog_stats"]
    assert Result.from_dict(old).prog_stats == ()
    assert "selftest_enter" in r._repr_html_() and "programs' stats" in repr(r)
    with pytest.raises(KeyError, match="have producer_whoami, selftest_enter, "
                                         "producer_whoami, selftest_exit"):
        r.program("nope")


def test_ns_per_run():
    p = ProgStats("p", "tracepoint", 4, 10)
    assert p.ns_per_run == 2.5
    assert str(p) == "prog p (tracepoint): run_cnt 4, run_time_ns 10, 2.500 ns/run"
    assert math.isnan(ProgStats("q", "tracepoint", 0, 0).ns_per_run)


def test_cli_prints_one_line_per_program_after_the_summary():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-m", "benchbpf", "-w0", "-d1", "--interval", "0.2",
                          "-q", "--prog-stats", "selftest"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith("Summary:"))
    progs = lines[i + 1:]
    # Each of the two objects has its whoami program (run once, at setup).
    assert [line.split()[1] for line in progs] == \
        ["producer_whoami", "selftest_enter", "producer_whoami", "selftest_exit"], lines
    assert all(line.endswith(" ns/run") for line in progs), progs
    assert all(" (tracepoint): run_cnt " in line for line in progs if "selftest_" in line), progs
    out = subprocess.run([sys.executable, "-m", "benchbpf", "-d1", "--prog-stats",
                          "count-local"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 2 and "loads no BPF program" in out.stderr
