"""Rename family: renames counted in user space, one program per attach kind."""
import os
import threading
import time

import pytest

import benchbpf
from benchbpf import rename

import leakcheck
from conftest import SHORT, SHORT_SAMPLES, nr_threads, nr_threads_once_reaped, open_fds, run_or_skip

ALL = ["rename-base", "rename-kprobe", "rename-kretprobe", "rename-rawtp",
       "rename-fentry", "rename-fexit"]
#: Attach kinds a locked-down kernel may refuse, and the feature each names.
MAY_BE_REFUSED = {
    "rename-kprobe": "kprobes", "rename-kretprobe": "kretprobes",
    "rename-fentry": "fentry", "rename-fexit": "fexit",
}
ERRNO_NAMES = ("EPERM", "ENOENT", "EOPNOTSUPP", "ENOTSUPP", "ENOSYS", "EINVAL")
STATS_SYSCTL = "/proc/sys/kernel/bpf_stats_enabled"


def our_programs():
    """Loaded programs of this family as dicts."""
    return [p for p in leakcheck.bpftool("prog", "list")
            if p.get("name", "").startswith("rename_")]


def left_loaded():
    """Programs of this family this process still holds or nobody holds."""
    return [name for _, name in leakcheck.left_behind("rename_")]


def thread_names():
    """comm of this process's main thread and of the calling thread."""
    with open("/proc/self/comm") as f:
        main = f.read()
    with open(f"/proc/self/task/{threading.get_native_id()}/comm") as f:
        mine = f.read()
    return main, mine


@pytest.mark.fast
def test_registry_has_the_family():
    assert benchbpf.list_benchmarks("rename") == ALL
    assert "rename-fmodret" not in benchbpf.list_benchmarks()
    for name in ALL:
        info = benchbpf.describe(name)
        assert info.max_producers == 1
        assert info.max_consumers == 0 and info.default_consumers == 0
        assert list(info.params) == ["comm"]
        p = info.params["comm"]
        assert (p.default, p.choices) == ("process", ("process", "thread"))
    assert not benchbpf.describe("rename-base").needs_bpf
    assert benchbpf.describe("rename-rawtp").needs_bpf
    assert sorted(rename.BENCHMARKS.values()) == sorted(ALL)


@pytest.mark.fast
@pytest.mark.parametrize("comm", ["process", "thread"])
def test_base_counts_renames_and_gives_our_names_back(comm):
    """comm="process" (default) renames the main thread, as the kernel
    bench's /proc/self/comm writes do, and puts its name back at the end;
    comm="thread": the producer renames only itself."""
    before = thread_names()
    threads, fds = nr_threads(), open_fds()
    during = []
    r = rename.base(**SHORT, callback=lambda *a: during.append(thread_names()), comm=comm)
    assert len(r.samples) == SHORT_SAMPLES
    assert all(s.hits > 0 and s.drops == 0 for s in r.samples), r.samples
    assert r.name == "rename-base"
    assert r.params["producers"] == 1 and r.params["consumers"] == 0
    assert r.params["comm"] == comm
    path = (f"/proc/self/task/{os.getpid()}/comm" if comm == "process"
            else "/proc/thread-self/comm")
    assert r.metadata["trigger"] == f"write({path})"
    main = {m for m, _ in during}
    assert main == ({"test_overhead\n"} if comm == "process" else {before[0]}), main
    assert thread_names() == before
    assert nr_threads_once_reaped(threads) == threads and open_fds() == fds
    assert left_loaded() == []


def test_main_thread_name_is_given_back_when_the_run_fails():
    before = thread_names()

    def fail(sample, index, warmup):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        rename.base(**SHORT, callback=fail)
    assert thread_names() == before


def test_rawtp_program_is_loaded_and_fires():
    """While rename-rawtp runs its raw_tp program is in the kernel and runs
    once per rename (run counts need kernel.bpf_stats_enabled)."""
    seen = []
    try:
        with open(STATS_SYSCTL) as f:
            stats_before = f.read().strip()
    except OSError:
        stats_before = None

    def look(sample, index, warmup):
        seen.append((sample.hits, our_programs()))

    try:
        if stats_before == "0":
            with open(STATS_SYSCTL, "w") as f:
                f.write("1")
        try:
            r = rename.rawtp(**SHORT, callback=look)
        except benchbpf.UnsupportedError as e:
            pytest.skip(f"rename-rawtp: {e}")
    finally:
        if stats_before == "0":
            with open(STATS_SYSCTL, "w") as f:
                f.write("0")
    assert all(s.hits > 0 for s in r.samples)
    assert seen
    for hits, progs in seen:
        assert [p["name"] for p in progs] == ["rename_rawtp"], progs
        assert progs[0]["type"] == "raw_tracepoint"
    if stats_before is not None:
        run_cnt = seen[-1][1][0].get("run_cnt", 0)
        # Every counted rename ran the program once (a last one may be in flight).
        assert run_cnt >= sum(h for h, _ in seen) - 1
    assert left_loaded() == []


@pytest.mark.parametrize("name", ALL)
def test_every_variant_runs_or_says_why(name):
    seen = []
    try:
        r = benchbpf.run(name, **SHORT, callback=lambda *a: seen.append(a))
    except benchbpf.UnsupportedError as e:
        assert name in MAY_BE_REFUSED, f"{name} should run here: {e}"
        msg = str(e)
        assert MAY_BE_REFUSED[name] in msg and any(n in msg for n in ERRNO_NAMES), msg
        assert e.errno > 0
        assert not seen, "samples were taken before the refusal"
    else:
        assert len(r.samples) == SHORT_SAMPLES
        assert all(s.hits > 0 and s.drops == 0 for s in r.samples)
    assert left_loaded() == []


@pytest.mark.fast
@pytest.mark.parametrize("func", sorted(rename.BENCHMARKS))
def test_python_functions_name_their_benchmark(func):
    try:
        r = getattr(rename, func)(warmup=0, duration=0.2, interval=0.2)
    except benchbpf.UnsupportedError as e:
        assert rename.BENCHMARKS[func] in str(e)
    else:
        assert r.name == rename.BENCHMARKS[func]


@pytest.mark.fast
@pytest.mark.parametrize("kw, exc", [
    (dict(producers=2), ValueError),
    (dict(consumers=1), ValueError),
    (dict(rename_iters=3), TypeError),
])
def test_bad_options_are_rejected(kw, exc):
    with pytest.raises(exc):
        rename.rawtp(**SHORT, **kw)
    assert left_loaded() == []
