"""The harness, Result and parameter checking, through the count family (no BPF)."""
import dataclasses
import json
import math
import os
import re
import signal
import statistics
import threading
import time

import pytest

import benchbpf
from benchbpf import Result
from conftest import SHORT, SHORT_SAMPLES, nr_threads, open_fds


def test_registry_lists_count_family():
    names = benchbpf.list_benchmarks()
    assert "count-global" in names and "count-local" in names
    assert benchbpf.list_benchmarks(family="count") == ["count-global", "count-local"]
    info = benchbpf.describe("count-local")
    assert info.family == "count" and not info.needs_bpf and info.max_consumers == 0


@pytest.mark.parametrize("name", ["count-global", "count-local"])
def test_count_runs_and_samples(name):
    r = benchbpf.run(name, **SHORT, producers=2)
    assert len(r.samples) == SHORT_SAMPLES
    assert len(r.warmup_samples) == 1
    assert all(s.hits > 0 for s in r.samples)
    # Every interval is close to what was asked: sampled at absolute deadlines.
    for s in r.samples:
        assert 0.1e9 < s.interval_ns < 0.4e9
    assert r.mean > 0 and r.per_producer_mps == pytest.approx(r.mean / 2)
    assert r.params["producers"] == 2
    assert r.metadata["kernel"] == os.uname().release
    assert r.metadata["nr_cpus"] == os.cpu_count()


def test_rates_are_normalised_by_real_interval():
    r = benchbpf.run("count-local", **SHORT)
    s = r.samples[0]
    assert s.hits_mps == pytest.approx(s.hits / (s.interval_ns / 1e9) / 1e6)


def test_statistics_vocabulary():
    r = benchbpf.run("count-local", warmup=0, duration=1, interval=0.2)
    xs = [s.hits_mps for s in r.samples]
    assert r.mean == pytest.approx(statistics.fmean(xs))
    assert r.stdev == pytest.approx(statistics.stdev(xs))
    assert r.median == pytest.approx(statistics.median(xs))
    assert r.percentile(0) == pytest.approx(min(xs))
    assert r.percentile(100) == pytest.approx(max(xs))
    assert min(xs) <= r.percentile(50) <= max(xs)
    assert r.latency_ns == pytest.approx(1e3 / r.mean)
    with pytest.raises(ValueError, match="p=101"):
        r.percentile(101)


def test_result_is_immutable():
    r = benchbpf.run("count-global", **SHORT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.name = "x"
    with pytest.raises(TypeError):
        r.params["producers"] = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.samples[0].hits = 0


def test_json_round_trip(tmp_path):
    r = benchbpf.run("count-local", **SHORT)
    path = tmp_path / "r.json"
    text = r.to_json(path)
    assert json.loads(text)["version"] == 1
    back = Result.from_json(str(path))
    assert back == r and str(back) == str(r)
    assert Result.from_json(text) == r
    bad = json.loads(text)
    bad["version"] = 99
    with pytest.raises(ValueError, match="version 99"):
        Result.from_dict(bad)


SUMMARY = re.compile(
    r"^Summary: hits +\d+\.\d{3} \u00b1 \d+\.\d{3}M/s \( *\d+\.\d{3}M/prod\), "
    r"drops +\d+\.\d{3} \u00b1 \d+\.\d{3}M/s, total operations +\d+\.\d{3} \u00b1 \d+\.\d{3}M/s$")


def test_summary_line_is_the_kernel_format():
    r = benchbpf.run("count-local", **SHORT)
    assert SUMMARY.match(str(r)), str(r)
    assert "<b>count-local</b>" in r._repr_html_()


def test_callback_sees_every_sample_in_order():
    seen = []
    r = benchbpf.run("count-local", **SHORT,
                     callback=lambda s, i, warm: seen.append((i, warm, s)))
    assert [i for i, _, _ in seen] == list(range(1 + SHORT_SAMPLES))
    assert [w for _, w, _ in seen] == [True] + [False] * SHORT_SAMPLES
    assert tuple(s for _, w, s in seen if not w) == r.samples


def test_callback_exception_stops_the_run():
    threads = nr_threads()

    def boom(sample, index, warmup):
        raise RuntimeError("from callback")

    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="from callback"):
        benchbpf.run("count-local", warmup=0, duration=30, interval=0.1, callback=boom)
    assert time.monotonic() - t0 < 5
    assert nr_threads() == threads


@pytest.mark.parametrize("kw, exc, words", [
    (dict(producers=0), ValueError, "producers=0"),
    (dict(producers=10**6), ValueError, "producers=1000000"),
    (dict(producers="2"), TypeError, "producers='2'"),
    (dict(producers=True), TypeError, "producers=True"),
    (dict(consumers=1), ValueError, "takes no consumer"),
    (dict(duration=0), ValueError, "duration=0"),
    (dict(duration=-1), ValueError, "duration=-1"),
    (dict(duration=float("nan")), ValueError, "duration=nan"),
    (dict(warmup=-1), ValueError, "warmup=-1"),
    (dict(warmup="1"), TypeError, "warmup='1'"),
    (dict(interval=0.0001), ValueError, "interval=0.0001"),
    (dict(duration=1.5, interval=1), ValueError, "whole number of intervals"),
    (dict(prod_affinity=[999]), ValueError, "CPU 999"),
    (dict(prod_affinity="0-x"), ValueError, "prod_affinity='0-x'"),
    (dict(prod_affinity=[0], producers=2), ValueError, "one CPU per producer"),
    (dict(affinity=True, producers=64), ValueError, "affinity=True"),
    (dict(affinity="yes"), TypeError, "affinity='yes'"),
    (dict(bogus=1), TypeError, "'bogus'"),
])
def test_bad_input_is_rejected_with_its_name(kw, exc, words):
    with pytest.raises(exc) as info:
        benchbpf.run("count-local", **kw)
    assert words in str(info.value)


def test_unknown_benchmark_suggests_names():
    with pytest.raises(ValueError, match="count-local"):
        benchbpf.run("count-locl")
    with pytest.raises(TypeError):
        benchbpf.run(42)


def test_cpu_sets_accept_kernel_strings():
    r = benchbpf.run("count-local", **SHORT, producers=2, prod_affinity="0-1")
    assert r.params["prod_affinity"] == (0, 1) and r.params["affinity"] is True


def test_ctrl_c_stops_a_run_quickly_and_cleans_up():
    fds, threads = open_fds(), nr_threads()
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            benchbpf.run("count-global", warmup=0, duration=60, producers=2)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - t0
    assert elapsed < 0.5 + 0.2 + 0.3, elapsed   # within 200 ms, with slack for CI
    assert open_fds() == fds and nr_threads() == threads
