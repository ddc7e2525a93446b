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
from benchbpf import Result, Sample, _core
from conftest import (SHORT, SHORT_SAMPLES, counts_where_ran, nr_threads,
                      nr_threads_once_reaped, open_fds)

pytestmark = pytest.mark.fast


def test_registry_lists_count_family():
    names = benchbpf.list_benchmarks()
    assert "count-global" in names and "count-local" in names
    assert benchbpf.list_benchmarks(family="count") == ["count-global", "count-local"]
    info = benchbpf.describe("count-local")
    assert info.family == "count" and not info.needs_bpf and info.max_consumers == 0


def test_registry_lists_families_by_name_each_in_its_register_order():
    """registry.c sorts what the families registered (BENCH_REGISTER), not
    trusting the order compiler and linker emitted it in: by family, then
    by each family's register lines (hashmap registers full-update first)."""
    families = [benchbpf.describe(n).family for n in benchbpf.list_benchmarks()]
    assert families == sorted(families)
    assert benchbpf.list_benchmarks("hashmap") == ["bpf-hashmap-full-update",
                                                   "bpf-hashmap-lookup"]


@pytest.mark.parametrize("name", ["count-global", "count-local"])
def test_count_runs_and_samples(name):
    r = benchbpf.run(name, **SHORT, producers=2)
    assert len(r.samples) == SHORT_SAMPLES
    assert len(r.warmup_samples) == 1
    assert counts_where_ran(r.samples)
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


def test_samples_carry_the_producers_cpu_time(tmp_path):
    # Three busy producers on this machine's CPUs: each interval's CPU time
    # is theirs summed, at most every CPU for the whole interval, and hits
    # per CPU-second are hits over that time.
    r = benchbpf.run("count-local", producers=3, **SHORT)
    ncpu = os.cpu_count()
    for s in r.samples:
        assert 0 <= s.producer_cpu_ns <= min(3, ncpu) * s.interval_ns * 1.05 + 1e5, s
        if s.producer_cpu_ns:
            assert s.rate_per_cpu_mps() == pytest.approx(s.hits * 1e3 / s.producer_cpu_ns)
    total_cpu = sum(s.producer_cpu_ns for s in r.samples)
    total_wall = sum(s.interval_ns for s in r.samples)
    # Not the wall time counted once per producer: 3 threads cannot run more
    # than the CPUs allow; and they did run (how much depends on the machine's load).
    assert 0 < total_cpu <= min(3, ncpu) * total_wall * 1.05
    # Kept through JSON, as an extra counter.
    back = benchbpf.Result.from_json(r.to_json(tmp_path / "r.json"))
    assert back.samples[0].extra["producer_cpu_ns"] == r.samples[0].producer_cpu_ns
    # Samples recorded without it say so rather than making a rate up.
    old = benchbpf.Sample(interval_ns=1000, hits=5)
    assert old.producer_cpu_ns is None and old.rate_per_cpu_mps() is None


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
    assert SUMMARY.match(r.summary()), r.summary()
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
    assert nr_threads_once_reaped(threads) == threads


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
    (dict(prod_affinity="1,1", producers=2), ValueError, "one CPU per producer"),
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
    assert open_fds() == fds and nr_threads_once_reaped(threads) == threads


# ---- sampling: late wake-ups, the last samples ----

def test_a_late_sampler_gives_one_longer_sample_not_a_run_of_tiny_ones():
    # One measurement blocks the sampler for 2.5 intervals: catching up with
    # the missed deadlines would give samples of a few microseconds.
    interval = 0.05
    try:
        r = benchbpf.run("selftest", warmup=0, duration=0.6, interval=interval,
                         fault="measure-stall", fault_after_ms=100)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    lengths = [s.interval_ns / 1e9 for s in r.samples]
    assert len(lengths) == 12
    assert min(lengths) >= interval / 2, lengths
    late = [s for s in r.samples if s.late]
    assert late and max(s.interval_ns for s in late) >= 2 * interval * 1e9, lengths
    assert r.late_samples == len(late)
    assert r.metadata["interval_ns"] == 50_000_000
    assert f"{len(late)} late" in repr(r)
    back = Result.from_json(r.to_json())
    assert back == r and back.late_samples == len(late)


def _result(lengths_ms, late=()):
    return Result("count-local", {"producers": 1},
                  [Sample(int(ms * 1e6), hits=int(ms * 1e6), late=i in late)
                   for i, ms in enumerate(lengths_ms)],
                  metadata={"interval_ns": 100_000_000})


def test_late_samples_and_their_effect_on_the_statistics_are_shown():
    r = _result([100, 100, 250, 100], late={2})
    assert r.late_samples == 1
    rest = r.without_late_samples()
    assert len(rest.samples) == 3 and rest.late_samples == 0
    assert rest.metadata["late_samples_removed"] == 1
    assert "1 late (without: " in repr(r)
    assert "(late)" in r._repr_html_()
    # Only a late sample carries the flag in JSON; files without it load.
    d = r.as_dict()
    assert [s.get("late") for s in d["samples"]] == [None, None, True, None]
    old = _result([100, 100]).as_dict()
    assert Result.from_dict(old).late_samples == 0


def test_a_callback_sees_every_sample_of_every_run():
    # The last sample and the end of sampling come close together: the
    # callback loop must not take "done" from after the sample count.
    # (A race: a loop that does fails here about once in a few hundred runs.)
    env = dict(interval_ns=1_000_000, warmup_samples=1, duration_samples=2, producers=2)
    counts = []
    for _ in range(200):
        got = []
        raw = _core.run("count-global", env, {}, lambda i, t, w: got.append(i))
        counts.append((got, len(raw["samples"])))
    assert [c for c in counts if c != ([0, 1, 2], 3)] == []


# ---- a callback that starts a run ----

NESTED = """
import benchbpf
def cb(sample, index, warmup):
    benchbpf.{call}
try:
    benchbpf.run("count-local", warmup=0, duration=0.4, interval=0.2, callback=cb)
except RuntimeError as e:
    print("RuntimeError:", e)
"""


@pytest.mark.parametrize("call", ["run('count-local', warmup=0, duration=0.2, interval=0.2)",
                                  "features()"])
def test_a_run_from_inside_a_callback_is_refused_not_a_deadlock(call):
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", NESTED.format(call=call)],
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert "RuntimeError:" in out.stdout, (out.stdout, out.stderr)
    assert "called from inside a running benchmark's callback" in out.stdout


def test_runs_after_a_refused_nested_run_still_work():
    def cb(sample, index, warmup):
        benchbpf.run("count-local", warmup=0, duration=0.2, interval=0.2)

    with pytest.raises(RuntimeError, match="inside a running benchmark's callback"):
        benchbpf.run("count-local", warmup=0, duration=0.4, interval=0.2, callback=cb)
    assert len(benchbpf.run("count-local", **SHORT).samples) == SHORT_SAMPLES


# ---- the core's own checks, through its private entry point ----

CORE_ENV = dict(interval_ns=100_000_000, warmup_samples=0, duration_samples=1)


def test_unknown_benchmark_named_by_keyword():
    with pytest.raises(ValueError, match="unknown benchmark 'nope'"):
        _core.run(name="nope", env={}, params={})


def test_sample_counts_that_would_overflow_are_refused():
    before = _core.setup_count()
    with pytest.raises(ValueError, match="at most 100000000"):
        _core.run("count-local", {**CORE_ENV, "warmup_samples": 2**31 - 1,
                                  "duration_samples": 2**31 - 1}, {})
    with pytest.raises(ValueError, match=r"duration=86400 at interval=0.001 .* at most"):
        benchbpf.run("count-local", warmup=86400, duration=86400, interval=0.001)
    assert _core.setup_count() == before


@pytest.mark.parametrize("cpu", [2**32, 2**32 + 1, -2**32, 2**70])
def test_cpu_numbers_are_range_checked_before_narrowing(cpu):
    before = _core.setup_count()
    with pytest.raises(ValueError, match=f"prod_affinity names CPU {cpu}"):
        _core.run("count-local", {**CORE_ENV, "prod_affinity": [cpu]}, {})
    assert _core.setup_count() == before


# ---- what Result.params keeps ----

def test_params_hold_plain_values_whatever_the_caller_passed():
    from fractions import Fraction
    np = pytest.importorskip("numpy")
    try:
        r = benchbpf.run("selftest", warmup=np.int64(0), duration=Fraction(2, 5),
                         interval=np.float64(0.2), producers=np.int32(1),
                         prod_affinity=[np.int64(0)], fault=np.str_("none"),
                         setup_delay_ms=np.int16(1), teardown_delay_ms=np.uint8(0))
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    for key, value in r.params.items():
        assert type(value) in (int, float, bool, str, tuple, type(None)), (key, type(value))
    assert r.params["duration"] == 0.4 and r.params["setup_delay_ms"] == 1
    assert r.params["prod_affinity"] == (0,)
    assert Result.from_json(r.to_json()) == r


def test_numpy_booleans_are_booleans():
    # As a DataFrame gives them back: df.rb_sampled.unique() -> [np.False_, np.True_].
    np = pytest.importorskip("numpy")
    for value in (np.False_, np.True_, np.bool_(True)):
        benchbpf.check("rb-libbpf", rb_sampled=value, rb_b2b=value, affinity=value,
                       verbose=np.False_, prog_stats=value)
    try:
        r = benchbpf.run("rb-libbpf", rb_sampled=np.True_, affinity=np.False_,
                         prog_stats=np.False_, **SHORT)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert r.params["rb_sampled"] is True and r.params["affinity"] is False
    assert benchbpf.trigger.uprobe_name("nop", ret=np.True_, multi=np.False_) == \
        "trig-uretprobe-nop"
    # A boolean is still no count.
    with pytest.raises(TypeError, match=r"producers=np\.True_: must be an int"):
        benchbpf.check("rb-libbpf", producers=np.True_)
