"""A warm-up of any length; a duration of whole sampling intervals, at least one.

The sampler sleeps to absolute deadlines and never takes a sample before
its deadline, so a warm-up lasts at least what was asked; it lasts less
than that plus half an interval unless a sample was late (the machine is
busy: the deadlines then start again from the late sample).  Only those
bounds are asserted."""
import json
import re
import subprocess
import sys

import pytest

import benchbpf
from benchbpf import _core
from conftest import rejected_before_loading, run_or_skip

ITER = re.compile(r"^Iter +(\d+) \( *(-?\d+\.\d{3})us\): ")


def warmed_up_for(r, warmup_s, interval_s):
    """r's warm-up lasted warmup_s: at least that, and under half an
    interval more unless a warm-up sample was late."""
    assert r.warmup_s >= warmup_s - 1e-6, r.warmup_s
    if not any(s.late for s in r.warmup_samples):
        assert r.warmup_s < warmup_s + interval_s / 2, r.warmup_s


@pytest.mark.fast
def test_half_an_interval_of_warm_up_lasts_half_an_interval():
    r = benchbpf.run("count-local", warmup=0.5, duration=1)
    assert r.params["warmup"] == 0.5 and r.metadata["interval_ns"] == 10**9
    # One warm-up sample, half an interval long: not none, not a whole one.
    assert len(r.warmup_samples) == 1 and len(r.samples) == 1
    warmed_up_for(r, 0.5, 1.0)
    assert r.mean > 0


@pytest.mark.fast
@pytest.mark.parametrize("warmup, samples", [(0.05, 1), (0.25, 3), (0.2, 2)])
def test_a_warm_up_of_any_length_at_a_short_interval(warmup, samples):
    r = benchbpf.run("count-local", warmup=warmup, duration=0.2, interval=0.1)
    assert len(r.warmup_samples) == samples and len(r.samples) == 2
    warmed_up_for(r, warmup, 0.1)
    first = r.warmup_samples[0]
    left_over = round(warmup % 0.1, 9) or 0.1
    # The left-over part is the first sample: the rest are whole intervals.
    assert first.interval_ns >= left_over * 1e9 - 1000
    if not first.late:
        assert first.interval_ns < (left_over + 0.05) * 1e9


@pytest.mark.fast
def test_no_warm_up_still_takes_none():
    r = benchbpf.run("count-local", warmup=0, duration=0.2, interval=0.1)
    assert r.warmup_samples == () and r.warmup_s == 0 and len(r.samples) == 2


@pytest.mark.fast
def test_a_sweep_takes_a_fractional_warm_up():
    # The example: this raised before.
    rs = benchbpf.sweep("count-local", producers=[1], warmup=0.5, duration=1, progress=False)
    (r,) = rs.results
    assert len(r.warmup_samples) == 1 and len(r.samples) == 1
    warmed_up_for(r, 0.5, 1.0)


def test_a_precision_run_warms_each_load_up_for_a_fractional_warm_up():
    r = benchbpf.run("count-local", precision=0.5, warmup=0.05, duration=2.5)
    assert r.stopped_by in ("precision", "duration")
    warmups = r.metadata["precision_warmups"]
    # Each load warms up once, with one sample of half the 0.1 s interval.
    assert set(warmups) <= {0, 1} and sum(warmups) == len(r.metadata["precision_loads"])
    for s in r.warmup_samples:
        assert s.interval_ns >= 0.05e9 - 1000
        if not s.late:
            assert s.interval_ns < 0.1e9


def test_program_statistics_start_where_a_fractional_warm_up_ends():
    from test_prog_stats import window_tolerance
    r = run_or_skip("trig-rawtp", prog_stats=True, trig_batch_iters=100, warmup=0.3,
                    duration=0.4, interval=0.2)
    # 0.1 s, then a whole interval: the window leaves both out.
    assert len(r.warmup_samples) == 2
    counter = r.program("trig_rawtp")
    assert abs(counter.run_cnt - r.total_hits) <= window_tolerance(r, counter), \
        (counter, r.total_hits, r.metadata["prog_stats_boundary_ns"])


@pytest.mark.fast
def test_the_command_line_takes_a_fractional_warm_up(tmp_path):
    path = tmp_path / "r.json"
    out = subprocess.run([sys.executable, "-m", "benchbpf", "-q", "-w0.5", "-d1", "count-local",
                          "--json", str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    iters = [ITER.match(line) for line in out.stdout.splitlines() if line.startswith("Iter")]
    assert [int(m.group(1)) for m in iters] == [0, 1], out.stdout
    # The warm-up's Iter line shows it as short by up to half the interval.
    assert float(iters[0].group(2)) >= -500000.0 - 1e-3
    saved = json.loads(path.read_text())
    assert len(saved["warmup_samples"]) == 1 and len(saved["samples"]) == 1
    warm = saved["warmup_samples"][0]
    assert warm["interval_ns"] >= 0.5e9 - 1000
    assert float(iters[0].group(2)) == pytest.approx((warm["interval_ns"] - 1e9) / 1000,
                                                     abs=1e-3)
    if not warm.get("late", False):
        assert warm["interval_ns"] < 1e9


@pytest.mark.fast
@pytest.mark.parametrize("kw, words", [
    (dict(duration=0.5), ["duration=0.5 is shorter than one sampling interval (interval=1)",
                          "whole number of sampling intervals, at least one",
                          "seconds in 1..86400"]),
    (dict(duration=0.05, interval=0.1), ["duration=0.05", "shorter than one sampling interval",
                                         "(interval=0.1)", "0.1..86400"]),
    (dict(duration=0, interval=0.1), ["duration=0 is shorter than one sampling interval"]),
    (dict(duration=0.15, interval=0.1), ["duration=0.15 is not a whole number of intervals",
                                         "(interval=0.1)"]),
    (dict(warmup=-0.5), ["warmup=-0.5 out of range", "0..86400"]),
])
def test_a_bad_length_is_refused_before_loading(kw, words):
    with rejected_before_loading(ValueError, *words):
        benchbpf.run("count-local", **kw)
    with rejected_before_loading(ValueError, *words):
        benchbpf.run("trig-rawtp", **kw)


@pytest.mark.fast
def test_a_comparison_takes_the_one_rule():
    with rejected_before_loading(ValueError, "duration=0.01 is shorter than one sampling "
                                 "interval (interval=0.05)"):
        benchbpf.ab("count-local", "count-local --work-per-hit 10", duration=0.01,
                    progress=False)


@pytest.mark.fast
def test_the_command_line_names_the_flag():
    out = subprocess.run([sys.executable, "-m", "benchbpf", "-w0.5", "-d0.5", "count-local"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "-d 0.5 is shorter than one sampling interval (--interval 1): duration must be" \
        in out.stderr, out.stderr
    assert "duration=" not in out.stderr
    assert not [line for line in out.stdout.splitlines() if line.startswith("Iter")]


@pytest.mark.fast
def test_help_states_the_rule():
    out = subprocess.run([sys.executable, "-m", "benchbpf", "--help"], capture_output=True,
                         text=True, timeout=120)
    text = " ".join(out.stdout.split())
    assert "warm-up period, seconds, any length >= 0" in text
    assert "duration of benchmark, seconds: whole sampling intervals, at least one" in text
    assert "any length of 0 s or more" in benchbpf.run.__doc__.replace("\n    ", " ")


@pytest.mark.fast
@pytest.mark.parametrize("env, words", [
    (dict(warmup_samples=0, first_sample_ns=50_000_000), ["first_sample_ns=50000000",
                                                          "warmup=0 intervals"]),
    (dict(warmup_samples=1, first_sample_ns=200_000_000), ["first_sample_ns=200000000",
                                                           "at most one interval"]),
    (dict(warmup_samples=1, first_sample_ns=-1), ["first_sample_ns=-1"]),
])
def test_the_core_refuses_a_first_sample_that_is_not_warm_up(env, words):
    """For callers that bypass the Python layer: a shortened first sample is
    warm-up, and at most one interval long."""
    setups = _core.setup_count()
    with pytest.raises(ValueError) as err:
        _core.validate("count-local", {"interval_ns": 100_000_000, "duration_samples": 1,
                                       **env}, {})
    for w in words:
        assert w in str(err.value), str(err.value)
    assert _core.setup_count() == setups
