"""bpf-nop: the empty BPF-timed loop, run through BPF_PROG_TEST_RUN; the
shared BPF-side timing core (calibration, batches as samples, the stop)."""
import re
import subprocess
import sys

import pytest

import benchbpf
from benchbpf import bpf_nop
from benchbpf.results import bpf_timing

from conftest import SHORT, rejected_before_loading, run_or_skip

NAME = "bpf-nop"
PREFIXES = ("bpf_nop",)
LINE = re.compile(r"^bpf-nop: median \d+\.\d\d ns/op, stddev \d+\.\d\d, p99 \d+\.\d\d "
                  r"\(\d+ samples\)$")


@pytest.mark.fast
def test_registry_has_the_benchmark():
    assert benchbpf.list_benchmarks("bpf_nop") == [NAME]
    info = benchbpf.describe(NAME)
    assert info.report == "bpf_timing" and info.needs_bpf
    assert info.max_consumers == 0
    assert info.extra == ("batches", "timed_ns")


@pytest.mark.fast
def test_batches_are_the_samples(no_leaks):
    r = run_or_skip(bpf_nop.nop)
    meta = r.metadata["bpf_timing"]
    iters = meta["batch_iters"]
    assert 100 <= iters <= 10_000_000
    assert r.samples and all(s.hits == iters and s.interval_ns > 0 for s in r.samples)
    assert r.warmup_samples == ()
    assert len(r.samples) == meta["raw"]["samples"]
    assert meta["iqr"]["samples"] + meta["iqr"]["removed"] == meta["raw"]["samples"]
    cal = meta["calibration"]
    assert cal["seed_iters"] == 100 and cal["seed_ns"] > 0 and not cal["defaulted"]
    # Not 2n > n: a burst during the n batch can reverse them, which the
    # proportionality warning then reports.
    assert cal["n_ns"] > 0 and cal["2n_ns"] > 0
    assert cal["ratio_2n_n"] == cal["2n_ns"] / cal["n_ns"]
    assert (cal["warning"] is None) == (cal["proportionality_error_pct"] <= 5.0)
    assert LINE.match(r.summary()), r.summary()
    s = bpf_timing.stats(r)
    assert s.median_ns > 0 and s.min_ns <= s.median_ns <= s.p99_ns <= s.max_ns


def test_stops_after_200_batches_per_producer(no_leaks):
    """Batches of ~10 ms: 200 take ~2 s, well within a 30 s bound."""
    r = run_or_skip(bpf_nop.nop, warmup=0.2, duration=30, interval=0.2)
    meta = r.metadata["bpf_timing"]
    assert meta["stopped_by"] == "samples" and meta["target_samples"] == 200
    assert len(r.samples) >= 200
    assert r.duration_s < 30


def test_duration_bounds_the_run(no_leaks):
    r = run_or_skip(bpf_nop.nop, warmup=0, duration=0.2, interval=0.2)
    meta = r.metadata["bpf_timing"]
    assert meta["stopped_by"] == "duration"
    assert 0 < len(r.samples) < 200


def test_two_producers(no_leaks):
    r = run_or_skip(bpf_nop.nop, producers=2, **SHORT)
    assert r.metadata["bpf_timing"]["target_samples"] == 400
    assert r.samples


@pytest.mark.fast
def test_consumers_refused_before_loading():
    with rejected_before_loading(ValueError, "consumers=1", NAME):
        bpf_nop.nop(consumers=1)


def test_cli_prints_upstreams_line():
    out = subprocess.run([sys.executable, "-m", "benchbpf", "-q", "-w0", "-d0.6",
                          "--interval", "0.2", NAME], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert LINE.match(out.stdout.strip().splitlines()[-1]), out.stdout
    assert "Iter" not in out.stdout
