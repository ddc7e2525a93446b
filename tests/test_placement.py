"""Thread placement: where each consumer and producer really runs, read from
the kernel while the run is in progress, against the kernel bench's rules
(bench.c next_cpu(): CPU sets walked in ascending order, otherwise CPUs in
turn modulo the online count, producers after the last consumer CPU)."""
import importlib
import os
import re

import pytest

import benchbpf
from benchbpf import _core

NR_CPUS = os.cpu_count() or 1
RUN = dict(warmup=0, duration=0.4, interval=0.2)

pytestmark = pytest.mark.skipif(NR_CPUS < 2, reason="placement needs 2 CPUs or more")


def worker_threads():
    """{("c"|"p", index): (allowed CPUs, CPU it last ran on)} of this process's
    benchmark threads, from /proc/self/task."""
    found = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/self/task/{tid}/stat") as f:
                # Field 39, "processor"; fields after the comm start at 3.
                processor = int(f.read().rsplit(")", 1)[1].split()[36])
            allowed = os.sched_getaffinity(int(tid))
        except (FileNotFoundError, ProcessLookupError):
            continue
        m = re.fullmatch(r"benchbpf-([cp])(\d+)", comm)
        if m:
            found[(m.group(1), int(m.group(2)))] = (allowed, processor)
    return found


def placed(name="selftest", **kw):
    """Run, and return (where the threads were at the first sample, Result)."""
    seen = []

    def probe(sample, index, warmup):
        if not seen:
            seen.append(worker_threads())

    try:
        r = benchbpf.run(name, **RUN, callback=probe, **kw)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert seen, "no sample arrived"
    return seen[0], r


def pinned(threads, role, count):
    """The CPU each thread of a role is pinned to, checking it also ran there."""
    cpus = []
    for i in range(count):
        allowed, processor = threads[(role, i)]
        assert len(allowed) == 1, f"{role}{i} not pinned: allowed on {sorted(allowed)}"
        (cpu,) = allowed
        assert processor == cpu, f"{role}{i} pinned to CPU {cpu} but ran on {processor}"
        cpus.append(cpu)
    return tuple(cpus)


N = NR_CPUS
# (options, consumer CPUs, producer CPUs) by the kernel bench's rules.
CASES = [
    (dict(affinity=True, consumers=1, producers=1), (0,), (1,)),
    # A consumer set alone: producers go on after the last consumer CPU.
    (dict(cons_affinity=[0], consumers=1, producers=1), (0,), (1,)),
    (dict(cons_affinity="1", consumers=1, producers=2), (1,), (2 % N, 3 % N)),
    # Sets are bitmaps: ascending order, repeats merged.
    (dict(cons_affinity="1,0", consumers=2, producers=1), (0, 1), (2 % N,)),
    (dict(prod_affinity=[1, 0, 1], consumers=0, producers=2), (), (0, 1)),
    (dict(prod_affinity="0", consumers=1, producers=1), (0,), (0,)),
    (dict(prod_affinity="1", cons_affinity="1", consumers=1, producers=1), (1,), (1,)),
    # No consumer: a consumer set moves nothing.
    (dict(cons_affinity=[1], consumers=0, producers=1), (), (0,)),
    # Without sets, more threads than CPUs wrap around (Linux 6.5 and later).
    (dict(affinity=True, consumers=1, producers=N + 1), (0,),
     tuple((1 + i) % N for i in range(N + 1))),
]


@pytest.mark.parametrize("kw, cons, prods", CASES)
def test_threads_run_where_the_kernel_bench_puts_them(kw, cons, prods):
    threads, r = placed(**kw)
    assert pinned(threads, "c", kw["consumers"]) == cons
    assert pinned(threads, "p", kw["producers"]) == prods
    # What the core reports, and the Python rules' answer, agree with it.
    assert r.metadata["consumer_cpus"] == cons and r.metadata["producer_cpus"] == prods
    assert benchbpf.harness._cpuset.place_threads(
        kw["consumers"], kw["producers"], N,
        benchbpf.harness._cpuset.parse_cpuset(kw.get("cons_affinity"), "c"),
        benchbpf.harness._cpuset.parse_cpuset(kw.get("prod_affinity"), "p")) == (cons, prods)
    assert r.params["affinity"] is True


def test_without_affinity_nothing_is_pinned():
    threads, r = placed(consumers=1, producers=2)
    everywhere = os.sched_getaffinity(0)
    assert {k: a for k, (a, _) in threads.items()} == {
        ("c", 0): everywhere, ("p", 0): everywhere, ("p", 1): everywhere}
    assert r.metadata["consumer_cpus"] is None and r.metadata["producer_cpus"] is None


@pytest.mark.parametrize("kw, words", [
    (dict(prod_affinity="1,1", producers=2), ["prod_affinity='1,1'", "one CPU per producer"]),
    (dict(cons_affinity=[0, 0], consumers=2), ["cons_affinity=[0, 0]", "one CPU per consumer"]),
])
def test_a_set_with_too_few_cpus_is_refused(kw, words):
    before = _core.setup_count()
    with pytest.raises(ValueError) as info:
        benchbpf.run("selftest", **RUN, **kw)
    assert all(w in str(info.value) for w in words), str(info.value)
    assert _core.setup_count() == before


def test_the_core_refuses_a_set_with_too_few_cpus_itself():
    env = dict(interval_ns=10**8, warmup_samples=0, duration_samples=1)
    with pytest.raises(ValueError, match="prod_affinity lists 1 CPUs for producers=2"):
        _core.run("count-local", {**env, "producers": 2, "prod_affinity": [1, 1]}, {})
    with pytest.raises(ValueError, match="cons_affinity lists 1 CPUs for consumers=2"):
        _core.run("selftest", {**env, "consumers": 2, "cons_affinity": [0, 0]}, {})


def test_same_cpu_study_runs_both_threads_on_one_cpu():
    ringbufs = importlib.import_module("benchbpf.ringbuf")
    seen = {}

    def probe(sample, index, warmup):
        # A ring buffer run's last sample is taken once its threads have
        # left their loops (to read what is left), and they exit one by one:
        # look while both still run.
        threads = worker_threads()
        if ("c", 0) in threads and ("p", 0) in threads:
            seen.setdefault(len(seen), threads)

    try:
        res = ringbufs.same_cpu(cpu=1, callback=probe, **RUN)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert len(seen) >= len(res)
    for threads in seen.values():
        assert pinned(threads, "c", 1) == (1,) and pinned(threads, "p", 1) == (1,)


def test_the_command_line_places_threads_the_same_way():
    # The kernel bench's own example of the rule: a consumer list alone.
    import subprocess
    import sys
    import time
    proc = subprocess.Popen([sys.executable, "-m", "benchbpf", "-w0", "-d2", "--interval", "0.2",
                             "--cons-affinity", "0", "rb-libbpf"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found = {}
    try:
        deadline = time.monotonic() + 30
        while len(found) < 2 and proc.poll() is None and time.monotonic() < deadline:
            for tid in os.listdir(f"/proc/{proc.pid}/task"):
                try:
                    with open(f"/proc/{proc.pid}/task/{tid}/comm") as f:
                        comm = f.read().strip()
                    if comm in ("benchbpf-c0", "benchbpf-p0"):
                        found[comm] = os.sched_getaffinity(int(tid))
                except (FileNotFoundError, ProcessLookupError):
                    pass
            time.sleep(0.02)
    finally:
        out, err = proc.communicate(timeout=60)
    if proc.returncode == 3:
        pytest.skip(err.strip())
    assert proc.returncode == 0, err
    assert found == {"benchbpf-c0": {0}, "benchbpf-p0": {1}}
