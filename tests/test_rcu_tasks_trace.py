"""local-storage-tasks-trace: forked sleepers, kthread ticks, grace periods."""
import _thread
import os
import re
import threading
import time

import pytest

import benchbpf
import leakcheck
from benchbpf import rcu_tasks_trace

from conftest import SHORT, rejected_before_loading

NAME = "local-storage-tasks-trace"
PREFIXES = ("tasks_trace", "producer_whoami")
PROCS = 20
LATENCY = re.compile(r"^SUMMARY tasks_trace grace period latency\t(avg \d+\.\d{3} us\t"
                     r"stddev \d+\.\d{3} us|unavailable: .+)$")
TICKS = re.compile(r"^SUMMARY ticks per tasks_trace grace period\tavg \d+\.\d{3}\t"
                   r"stddev \d+\.\d{3}$")
LONG = dict(warmup=0.5, duration=1.5, interval=0.5)


def zombies():
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == "Z" and int(fields[1]) == os.getpid():
                out.append(int(entry))
    return out


@pytest.fixture(autouse=True)
def no_child_left():
    yield
    assert leakcheck.children() == [] and zombies() == []


def run(**kw):
    try:
        return rcu_tasks_trace.tasks_trace(**{**LONG, "nr_procs": PROCS, **kw})
    except benchbpf.UnsupportedError as e:
        pytest.skip(f"{NAME}: {e}")


@pytest.mark.fast
def test_registry_and_kernel_options():
    assert benchbpf.list_benchmarks("rcu_tasks_trace") == [NAME]
    info = benchbpf.describe(NAME)
    p = info.params
    assert (p["nr_procs"].cli, p["nr_procs"].default, p["nr_procs"].min, p["nr_procs"].max) == \
        ("--nr_procs", 1000, 1, 15000)
    assert (p["kthread_pid"].cli, p["kthread_pid"].default) == ("--kthread_pid", 0)
    assert info.max_producers == 1 and info.max_consumers == 0


@pytest.mark.fast
def test_grace_periods_and_ticks_come_out():
    r = run()
    assert sum(s.hits for s in r.samples) > 0       # storage created and deleted
    assert int(r.metadata["nr_children"]) == PROCS
    assert int(r.metadata["kthread_pid"]) > 0
    lines = r.summary().splitlines()
    assert len(lines) == 2 and LATENCY.match(lines[0]) and TICKS.match(lines[1]), lines
    assert sum(s.extra["gp_count"] for s in r.samples) > 0
    assert sum(s.extra["kthread_ticks"] for s in r.samples) >= 0
    src = r.metadata["gp_latency_source"]
    if src.startswith("unavailable"):
        assert r.metadata["gp_latency_unavailable"]
    else:
        timed = sum(s.extra["gp_timed"] for s in r.samples)
        assert timed > 0 and sum(s.extra["gp_ns"] for s in r.samples) > 0
        mean, _ = rcu_tasks_trace.gp_latency_us(r)
        assert 0 < mean < 10e6
        if "sched_switch" in src:
            assert len(r.series["gp_bracket_ns"]) == len(r.samples)


def test_kthread_pid_given():
    r = run()
    again = run(kthread_pid=int(r.metadata["kthread_pid"]), nr_procs=1)
    assert again.metadata["kthread_pid"] == r.metadata["kthread_pid"]


def test_failed_setup_reaps_every_child():
    """fentry is refused on locked-down kernels: setup fails after forking."""
    with pytest.raises((benchbpf.UnsupportedError, benchbpf.BenchmarkError, OSError)):
        rcu_tasks_trace.tasks_trace(nr_procs=PROCS, trigger="fentry", **SHORT)
    # (where fentry loads, the run succeeds and the fixture checks the same)


def test_ctrl_c_reaps_every_child():
    seen = []

    def interrupt_once_forked():
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            kids = leakcheck.children()
            if len(kids) >= PROCS:
                seen.append(len(kids))
                time.sleep(0.3)
                _thread.interrupt_main()
                return
            time.sleep(0.01)

    t = threading.Thread(target=interrupt_once_forked)
    t.start()
    with pytest.raises(KeyboardInterrupt):
        rcu_tasks_trace.tasks_trace(nr_procs=PROCS, warmup=0, duration=30)
    t.join()
    assert seen and seen[0] >= PROCS


def test_exception_in_callback_reaps_every_child():
    def boom(sample, index, warmup):
        assert leakcheck.children()
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        rcu_tasks_trace.tasks_trace(nr_procs=PROCS, callback=boom, **SHORT)


def test_nr_procs_edges():
    for n in (1, 3):
        r = run(nr_procs=n, warmup=0, duration=0.5, interval=0.5)
        assert int(r.metadata["nr_children"]) == n


@pytest.mark.fast
@pytest.mark.parametrize("kw, word", [
    (dict(nr_procs=0), "nr_procs"), (dict(nr_procs=15001), "nr_procs"),
    (dict(kthread_pid=-1), "kthread_pid"), (dict(kthread_pid=1), "kthread_pid=1"),
    (dict(kthread_pid=4194304), "kthread_pid=4194304"), (dict(producers=2), "producers"),
    (dict(consumers=1), "consumers"),
])
def test_bad_values_raise_before_anything(kw, word):
    with rejected_before_loading((ValueError, TypeError), word):
        rcu_tasks_trace.tasks_trace(**{**SHORT, **kw})
    assert leakcheck.children() == []
