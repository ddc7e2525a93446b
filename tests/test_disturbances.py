"""What the host did to a run, per sample: the sampler's lateness, steal time,
involuntary context switches and migrations of the worker threads
(Sample.late_ns, steal_ns, involuntary, migrations; Result.disturbances).

Runs are short; nothing here asserts a time, only that the fields are there,
add up, survive a file, and that a CPU hog on the worker's CPU shows."""
import json
import os
import subprocess
import sys

import pytest

import benchbpf
from benchbpf.results.result import HOST_FIELDS, Sample

QUICK = dict(warmup=0.1, duration=0.5, interval=0.05)


def _result(samples, note="steal_cpus=2 migrations=se.nr_migrations cost_ns_per_sample=7"):
    meta = {"host_watch": note} if note is not None else {}
    return benchbpf.Result("count-local", {}, tuple(samples), metadata=meta)


def test_disturbances_sum_the_kept_samples():
    samples = [Sample(100_000_000, hits=1, late_ns=5, steal_ns=10_000_000, involuntary=3,
                      migrations=1),
               Sample(100_000_000, hits=1, late=True, late_ns=60_000_000, involuntary=4)]
    d = _result(samples).disturbances
    assert d["steal_ns"] == 10_000_000
    # 10 ms stolen of 2 CPUs x 200 ms.
    assert d["steal_pct"] == pytest.approx(2.5)
    assert (d["involuntary"], d["migrations"]) == (7, 1)
    assert (d["late_samples"], d["max_late_ns"]) == (1, 60_000_000)
    assert d["watch_ns_per_sample"] == 7


def test_migrations_none_where_the_kernel_does_not_say():
    d = _result([Sample(1000, hits=1)],
                "steal_cpus=1 migrations=unavailable cost_ns_per_sample=1").disturbances
    assert d["migrations"] is None and d["involuntary"] == 0


def test_old_results_have_no_disturbances_and_load_unchanged():
    old = {"interval_ns": 1000, "hits": 1, "drops": 0, "false_hits": 0,
           "important_hits": 0, "extra": {}}
    s = Sample(**old)
    assert all(getattr(s, k) == 0 for k in HOST_FIELDS)
    # A sample the host left alone writes what it wrote before.
    assert s.as_dict() == old
    assert _result([s], note=None).disturbances is None


def test_a_run_records_the_host_per_sample_and_keeps_it_in_its_file(tmp_path):
    r = benchbpf.run("count-local", **QUICK)
    assert "host_watch" in r.metadata
    d = r.disturbances
    assert d is not None and d["watch_ns_per_sample"] > 0
    # The sampler never wakes before its deadline, so every sample says by how much.
    assert all(s.late_ns > 0 for s in r.samples)
    assert d["max_late_ns"] == max(s.late_ns for s in r.samples)
    assert d["involuntary"] == sum(s.involuntary for s in r.samples)
    assert d["migrations"] is None or d["migrations"] >= 0
    path = tmp_path / "r.json"
    r.to_json(path)
    again = benchbpf.Result.from_json(path)
    assert [s.as_dict() for s in again.samples] == [s.as_dict() for s in r.samples]
    assert again.disturbances == d
    assert "late_ns" in json.loads(path.read_text())["samples"][0]


def test_this_kernel_says_whether_it_counts_migrations():
    # 6.x kernels with CONFIG_SCHED_DEBUG expose se.nr_migrations per task;
    # the note and the summary must agree with what /proc shows.
    exposed = "se.nr_migrations" in open("/proc/thread-self/sched").read() \
        if os.path.exists("/proc/thread-self/sched") else False
    r = benchbpf.run("count-local", **QUICK)
    assert (r.disturbances["migrations"] is not None) == exposed


def test_a_hog_on_the_workers_cpu_raises_involuntary_switches():
    # A process spinning on CPU 0 where the one producer is pinned: the
    # scheduler must preempt the producer to run it, whatever else runs.
    hog = subprocess.Popen([sys.executable, "-c",
                            "import os\nos.sched_setaffinity(0, {0})\nwhile True: pass"])
    try:
        r = benchbpf.run("count-local", affinity=True, prod_affinity=[0], **QUICK)
    finally:
        hog.kill()
        hog.wait()
    assert r.metadata["host_watch"].startswith("steal_cpus=1 ")
    assert r.disturbances["involuntary"] > 0
