"""precision= (runs that end when the mean is known, over runs loaded anew)
and warmup="auto" (a warm-up that ends when steady): the rules on made-up
figures, the C sampler's early end of warm-up, and real runs of the library
and the CLI."""
import json
import math
import pickle
import random
import subprocess
import sys

import pytest

import benchbpf
from benchbpf import _core
from benchbpf.harness import _precision
from benchbpf.results import stats
from benchbpf.results.result import Result, Sample

import leakcheck
from conftest import rejected_before_loading


def made_runs(run_rates, interval=0.1, precision=0.05):
    """A precision Result made of runs with these per-sample hit rates (M/s)."""
    ns = int(interval * 1e9)
    samples = [Sample(ns, hits=int(round(x * 1e6 * interval))) for rates in run_rates
               for x in rates]
    return Result(name="count-local",
                  params={"interval": interval, "producers": 1, "precision": precision},
                  samples=samples,
                  metadata={"precision_runs": tuple(len(r) for r in run_rates),
                            "precision_warmups": (0,) * len(run_rates),
                            "stopped_by": "precision"})


# ---- the interval ----

def test_series_interval_of_independent_samples_has_tau_one():
    rng = random.Random(4)
    xs = [rng.gauss(100, 1) for _ in range(400)]
    ci = stats.series_mean_ci(xs)
    assert ci.basis == "samples"
    assert ci.tau < 1.5 and ci.low < 100 < ci.high
    assert ci.relative_half_width < 0.005


def test_series_interval_widens_with_autocorrelation():
    rng = random.Random(5)
    x, xs = 0.0, []
    for _ in range(400):
        x = 0.9 * x + rng.gauss(0, 1)
        xs.append(100 + x)
    ci = stats.series_mean_ci(xs)
    naive = stats.mean_ci(xs)
    assert ci.tau > 5
    assert ci.half_width > 2 * (naive[1] - naive[0]) / 2


def test_series_interval_needs_four_samples_and_runs_two():
    assert stats.series_mean_ci([1.0, 2.0, 3.0]) is None
    assert stats.runs_mean_ci([1.0]) is None
    ci = stats.runs_mean_ci([10.0, 11.0, 9.0, 10.0, 10.0])
    assert ci.basis == "runs" and ci.effective_n == 5 and ci.mean == 10.0
    assert ci.low < 10.0 < ci.high


# ---- the stopping rule ----

def _apart(n, every=5.0):
    """Start times of n runs, each in a group of its own."""
    return [i * every for i in range(n)]


def test_stop_needs_enough_runs_and_groups_then_the_precision():
    agree = [(100.0, 1.0), (100.4, 1.0), (99.8, 1.0), (100.1, 1.0)]
    assert _precision.stop_reason(agree, _apart(4), 2.0, 0.5, 60, 0.01) is None
    five = agree + [(100.2, 1.0)]
    assert _precision.stop_reason(five, _apart(5), 2.5, 0.5, 60, 0.01) == "precision"
    # The same five runs within one host phase: one group, no stop.
    assert _precision.stop_reason(five, _apart(5, 1.0), 2.5, 0.5, 60, 0.01) is None
    assert stats.runs_mean_ci([m for m, _ in five], _apart(5, 1.0)) is None
    wide = [(100.0, 1.0), (110.0, 1.0), (90.0, 1.0), (105.0, 1.0), (95.0, 1.0)]
    assert _precision.stop_reason(wide, _apart(5), 2.5, 0.5, 60, 0.01) is None


def test_runs_are_grouped_by_when_they_began():
    means = [10.0, 10.2, 12.0, 12.2, 9.0, 9.2, 11.0, 11.2]
    ci = stats.runs_mean_ci(means, [0, 1, 5, 6, 10, 11, 15, 16])
    assert ci.basis == "runs" and ci.effective_n == 4
    assert ci.mean == pytest.approx(sum(means) / 8)
    lo, hi = stats.mean_ci([10.1, 12.1, 9.1, 11.1])
    assert ci.half_width == pytest.approx((hi - lo) / 2)
    # Without start times each run is a group.
    assert stats.runs_mean_ci(means).effective_n == 8
    assert stats.runs_mean_ci([1.0, 2.0], [0, 1]) is None


def test_runs_that_all_read_one_stepped_figure_do_not_state_an_exact_one():
    # A loop of 10000 gets per call counts in steps of 10000: 0.5 s runs of
    # 22 calls each all read 0.44 M/s, the next call one step (0.02 M/s) away.
    assert stats.count_step_mps([([40000, 50000, 40000], 0.3), ([50000], 0.5)]) == \
        pytest.approx(10000 / 0.3 / 1e6)
    assert stats.count_step_mps([([3, 5], 1.0)]) == pytest.approx(1e-6)
    assert stats.count_step_mps([([0, 0], 1.0)]) == 0.0
    means, starts = [0.44] * 12, _apart(12)
    assert stats.runs_mean_ci(means, starts).half_width == 0.0
    ci = stats.runs_mean_ci(means, starts, step_mps=0.02)
    t = stats._t_quantile(0.975, ci.effective_n - 1)
    assert ci.half_width == pytest.approx(t * 0.02 / math.sqrt(6 * 12))
    assert 0.01 < ci.relative_half_width < 0.03
    # Runs that differ by more than their step keep their own interval.
    spread = [0.40, 0.48] * 6
    assert stats.runs_mean_ci(spread, starts, step_mps=0.02) == \
        stats.runs_mean_ci(spread, starts)
    # A precision Result finds the step in its samples: 4 or 5 calls per 0.1 s.
    r = made_runs([[0.4, 0.5, 0.4, 0.5, 0.4]] * 6)
    assert r.mean_ci_mps.half_width == pytest.approx(
        stats._t_quantile(0.975, 5) * 0.02 / math.sqrt(6 * 6))
    # And a run does not stop on an interval the step alone makes too wide.
    same = [(0.44, 0.0)] * 6
    assert _precision.stop_reason(same, _apart(6), 3.0, 0.5, 10.0, 0.01, 0.02) is None
    assert _precision.stop_reason(same, _apart(6), 3.0, 0.5, 10.0, 0.01) == "precision"


def test_stop_by_duration_when_another_run_would_not_fit():
    wide = [(100.0, 1.0), (110.0, 1.0), (90.0, 1.0), (105.0, 1.0), (95.0, 1.0)]
    assert _precision.stop_reason(wide, _apart(5), 2.5, 0.5, 2.9, 0.01) == "duration"
    assert _precision.stop_reason(wide, _apart(5), 2.5, 0.5, 3.0, 0.01) is None


def test_runs_in_two_states_need_more_runs_before_a_stop():
    # Five runs in two states, each run sure of its own figure: the interval
    # over five is within 20 %, but the states need more runs.
    states = [(9.0, 0.02), (11.0, 0.02), (11.05, 0.02), (9.02, 0.02), (11.02, 0.02)]
    assert stats.runs_mean_ci([m for m, _ in states]).relative_half_width < 0.2
    assert stats.run_states([m for m, _ in states], [e for _, e in states]).states
    assert _precision.stop_reason(states, _apart(5), 2.5, 0.5, 60, 0.2) is None
    many = states * (_precision.MIN_RUNS_APART // len(states))
    assert _precision.stop_reason(many, _apart(len(many)), 10.0, 0.5, 60, 0.2) == "precision"


def test_simulated_coverage_of_the_rule_is_near_95_percent():
    """The rule's own coverage on seeded normal run figures (the script's
    cases at 1000 repetitions are in results/precision-2cpu.md)."""
    rng = random.Random(11)
    covered, reps = 0, 400
    for _ in range(reps):
        runs = []
        while True:
            m = rng.gauss(100.0, 2.0)
            runs.append((m, 1.0))
            starts = [i * 1.2 for i in range(len(runs))]
            why = _precision.stop_reason(runs, starts, len(runs), 1, 120, 0.02)
            if why:
                break
        ci = stats.runs_mean_ci([m for m, _ in runs], starts)
        covered += ci.low <= 100.0 <= ci.high
    assert 0.88 <= covered / reps <= 0.99


# ---- Results of several runs ----

def test_a_precision_result_splits_into_its_runs_and_states_their_interval():
    r = made_runs([[10.0, 10.2, 9.9], [10.1, 10.0, 10.1], [9.8, 9.9, 10.0],
                   [10.2, 10.1, 10.0], [10.0, 10.0, 9.9]])
    runs = r.runs()
    assert [len(x.samples) for x in runs] == [3] * 5
    assert all("precision" not in x.params for x in runs)
    ci = r.mean_ci_mps
    assert ci.basis == "runs" and ci.effective_n == 5
    assert ci.mean == pytest.approx(sum(x.mean for x in runs) / 5)
    assert r.precision_reached == pytest.approx(ci.relative_half_width)
    assert "over 5 runs in 0 s, stopped by precision after 1.5 s measured" in r.summary()
    assert r.summary().startswith("Summary: hits ")


def test_a_plain_result_is_one_run_with_a_sample_interval():
    r = made_runs([[10.0, 10.2, 9.9, 10.1, 10.0]])
    r = Result(name=r.name, params={"interval": 0.1, "producers": 1}, samples=r.samples)
    assert r.runs() == (r,)
    assert r.mean_ci_mps.basis == "samples"
    assert r.stopped_by is None
    assert "CI" not in r.summary()


def test_runs_in_two_states_are_reported_with_their_states():
    low, high = [4.0, 4.05, 3.95], [11.8, 11.9, 11.7]
    r = made_runs([low, high, high, low, high, low])
    text = "\n".join(r.warnings)
    assert "runs disagree" in text and "states" in text, text
    assert "WARNING: hits: runs disagree" in str(r)


def test_precision_results_survive_json_and_pickle(tmp_path):
    r = made_runs([[10.0, 10.2, 9.9], [10.1, 10.0, 10.1], [9.8, 9.9, 10.0]])
    path = tmp_path / "r.json"
    r.to_json(path)
    back = Result.from_json(path)
    assert back.stopped_by == "precision"
    assert [len(x.samples) for x in back.runs()] == [3, 3, 3]
    assert back.mean_ci_mps == r.mean_ci_mps
    assert pickle.loads(pickle.dumps(r)).mean_ci_mps == r.mean_ci_mps


# ---- bad values, before anything is loaded ----

@pytest.mark.parametrize("value, exc, words", [
    (0, ValueError, ("precision=0", "0.0001..0.5")),
    (0.6, ValueError, ("precision=0.6", "0.0001..0.5")),
    (-0.01, ValueError, ("precision=-0.01",)),
    (math.nan, ValueError, ("precision=nan",)),
    ("1%", TypeError, ("precision='1%'",)),
    (True, TypeError, ("precision=True",)),
])
def test_bad_precision_is_rejected_before_loading(value, exc, words):
    with rejected_before_loading(exc, *words):
        benchbpf.run("count-local", precision=value)


def test_bad_warmup_text_is_rejected_before_loading():
    with rejected_before_loading(TypeError, "warmup='soon'", "'auto'"):
        benchbpf.run("count-local", warmup="soon")
    with rejected_before_loading(TypeError, "warmup='1'"):
        benchbpf.run("count-local", warmup="1")


def test_a_duration_too_short_for_five_runs_is_rejected_before_loading():
    with rejected_before_loading(ValueError, "duration=2", "precision=0.05", "at least 2.5 s"):
        benchbpf.run("count-local", precision=0.05, duration=2)


@pytest.mark.parametrize("name, words", [
    ("bpf-nop", ("precision=0.05", "bpf-nop", "BPF-timed")),
    ("bloom-false-positive", ("precision=0.05", "bloom-false-positive", "false-positive")),
])
def test_precision_is_refused_where_the_figure_is_not_a_rate(name, words):
    with rejected_before_loading(ValueError, *words):
        benchbpf.run(name, precision=0.05)
    with rejected_before_loading(ValueError, "warmup='auto'", name):
        benchbpf.run(name, warmup="auto")


def test_prog_stats_with_precision_is_refused_before_loading():
    with rejected_before_loading(ValueError, "prog_stats=True", "precision=0.05"):
        benchbpf.run("trig-rawtp", precision=0.05, prog_stats=True)


def test_check_takes_precision_as_run_does():
    benchbpf.check("count-local", precision=0.05)
    with pytest.raises(ValueError, match="precision=0.9"):
        benchbpf.check("count-local", precision=0.9)


# ---- the C sampler's early end of warm-up ----

def test_the_sampler_ends_warm_up_where_the_callback_asks():
    interval_ns = 50_000_000
    env = {"interval_ns": interval_ns, "warmup_samples": 40, "duration_samples": 4,
           "producers": 1, "consumers": 0, "affinity": False, "verbose": False,
           "prog_stats": False}
    seen = []

    def callback(index, raw, warm):
        seen.append((index, warm))
        return _core.END_WARMUP if index == 2 else None
    raw = _core.run("count-local", env, {}, callback)
    warm = raw["warmup_samples"]
    # Asked after the third sample: the sampler settles it at the next it
    # has not begun, and the measured part keeps its four samples after it.
    assert 3 < warm <= 6, warm
    assert len(raw["samples"]) == warm + 4
    # Each sample was told what it turned out to be.
    assert seen == [(i, i < warm) for i in range(warm + 4)]


def test_other_callback_returns_do_not_end_warm_up():
    env = {"interval_ns": 50_000_000, "warmup_samples": 6, "duration_samples": 2,
           "producers": 1, "consumers": 0, "affinity": False, "verbose": False,
           "prog_stats": False}
    for value in (True, 2, 1.0, "1", 2 ** 80):
        raw = _core.run("count-local", env, {}, lambda i, s, w, v=value: v)
        assert raw["warmup_samples"] == 6 and len(raw["samples"]) == 8, value


# ---- real runs ----

def test_a_steady_benchmark_stops_by_precision():
    r = benchbpf.run("count-local", precision=0.2, duration=30)
    assert r.stopped_by == "precision"
    runs = r.runs()
    # Loads of up to WINDOWS_PER_LOAD runs in a row, each load warmed up once.
    loads = r.metadata["precision_loads"]
    assert sum(loads) == len(runs) and all(1 <= n <= _precision.WINDOWS_PER_LOAD
                                           for n in loads)
    assert _precision.MIN_RUNS <= len(runs) and len(loads) <= _precision.MIN_RUNS_APART
    first = [sum(loads[:k]) for k in range(len(loads))]
    assert all(bool(x.warmup_samples) == (i in first) for i, x in enumerate(runs))
    assert r.duration_s < 30
    ci = r.mean_ci_mps
    assert ci.basis == "runs" and ci.relative_half_width <= 0.2
    assert ci.low <= r.mean <= ci.high and r.mean > 0
    assert r.params["precision"] == 0.2 and r.params["warmup"] == "auto"
    assert r.params["interval"] == _precision.INTERVAL_S
    # Every run was loaded and measured: hits in each, its own warm-up.
    assert all(x.samples and sum(s.hits for s in x.samples) > 0 for x in runs)
    assert len(r.metadata["warmup_ended_by"]) == len(runs)
    assert "stopped by precision" in r.summary()


def test_a_run_that_cannot_reach_the_precision_stops_at_its_duration():
    r = benchbpf.run("count-local", precision=0.0001, duration=5)
    assert r.stopped_by == "duration"
    assert len(r.runs()) == 10
    assert r.duration_s == pytest.approx(5, rel=0.2)
    # Ten runs span two groups at least: an interval, wider than asked.
    assert r.mean_ci_mps.effective_n >= 2 and r.precision_reached > 0.0001
    assert "stopped by duration" in r.summary()


def test_runs_too_close_for_an_interval_say_so():
    # Five runs of 0.5 s without warm-up all begin within one group's 5 s.
    r = benchbpf.run("count-local", precision=0.0001, duration=2.5, warmup=0)
    assert r.stopped_by == "duration" and len(r.runs()) == 5
    assert r.metadata["precision_run_starts_s"][-1] < stats.RUN_GROUP_S
    assert r.mean_ci_mps is None and r.precision_reached is None
    assert "95% CI unknown over 5 runs in " in r.summary()
    assert "stopped by duration" in r.summary()


def test_auto_warm_up_ends_between_its_floor_and_its_cap():
    r = benchbpf.run("count-local", warmup="auto", duration=0.5)
    floor = math.ceil(_precision.AUTO_WARMUP_FLOOR_S / _precision.INTERVAL_S - 1e-9)
    cap = math.ceil(_precision.AUTO_WARMUP_CAP_S / _precision.INTERVAL_S - 1e-9)
    n = len(r.warmup_samples)
    assert floor <= n <= cap
    assert r.metadata["warmup_ended_by"] == ("steady" if n < cap else "cap")
    assert len(r.samples) == 5
    assert r.stopped_by is None and "CI" not in r.summary()


def test_a_callback_sees_every_sample_of_every_run_in_order():
    got = []
    r = benchbpf.run("count-local", precision=0.5, duration=2.5,
                     callback=lambda s, i, w: got.append((i, w)))
    warm = [w for one in r.runs()
            for w in [True] * len(one.warmup_samples) + [False] * len(one.samples)]
    assert [i for i, _ in got] == list(range(len(warm)))
    assert [w for _, w in got] == warm


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "benchbpf", *args],
                          capture_output=True, text=True, timeout=300)


def test_cli_precision_prints_the_interval_and_saves_the_runs(tmp_path):
    path = tmp_path / "r.json"
    out = _cli("-q", "--precision", "20", "count-local", "--json", str(path))
    assert out.returncode == 0, out.stderr
    summary = [line for line in out.stdout.splitlines() if line.startswith("Summary:")]
    assert len(summary) == 1 and "95% CI" in summary[0] and "stopped by precision" in summary[0]
    r = Result.from_json(path)
    assert r.params["precision"] == 0.2 and len(r.runs()) >= _precision.MIN_RUNS
    assert json.loads(path.read_text())["metadata"]["stopped_by"] == "precision"


@pytest.mark.parametrize("args, words", [
    (("--precision", "0", "count-local"), ("--precision", "0.01..50")),
    (("--precision", "x", "count-local"), ("--precision", "not a number")),
    (("-w", "soon", "count-local"), ("-w/--warmup",)),
    (("--precision", "5", "-d", "1", "count-local"),
     ("-d 1 out of range with --precision 5: at least 2.5 s",)),
    (("--precision", "5", "bpf-nop"), ("--precision 5: not for bpf-nop",)),
])
def test_cli_rejects_bad_precision_options(args, words):
    out = _cli(*args)
    assert out.returncode == 2, out
    for w in words:
        assert w in out.stderr, out.stderr


def test_compare_counts_a_precision_run_as_its_runs():
    from benchbpf.analysis import compare
    base = made_runs([[10.0, 10.1, 9.9]] * 3 + [[10.1, 10.0, 10.0]] * 3)
    slower = made_runs([[8.0, 8.1, 7.9]] * 3 + [[8.1, 8.0, 8.0]] * 3)
    c = compare(base, slower)
    assert len(c.base_runs) == 6 and len(c.new_runs) == 6
    assert c.verdict == stats.SIGNIFICANT
    plain = Result(name="count-local", params={"interval": 0.1, "producers": 1},
                   samples=base.samples[:3])
    # precision, like duration, may differ; a plain run is one run.
    c = compare(plain, base)
    assert len(c.base_runs) == 1 and c.verdict == stats.NOT_ENOUGH_RUNS


def test_sweeps_and_studies_take_precision():
    rs = benchbpf.sweep("count-local", producers=[1, 2], precision=0.5, duration=2.5,
                        warmup=0)
    assert [r.params["producers"] for r in rs] == [1, 2]
    for r in rs:
        assert r.stopped_by in ("precision", "duration") and len(r.runs()) >= 5
        assert r.params["precision"] == 0.5


def test_a_precision_sweep_interleaves_its_runs():
    """One run of each combination in turn: every combination's runs span
    the sweep, each run of one a run of the other apart."""
    rs = benchbpf.sweep("count-local", producers=[1, 2], precision=0.5, duration=2.5,
                        progress=False)
    for r in rs:
        starts, loads = r.metadata["precision_run_starts_s"], r.metadata["precision_loads"]
        assert len(starts) >= 5
        # Between two loads of one combination came a load of the other: its
        # own load, warm-up and runs measured.
        firsts = [starts[sum(loads[:k])] for k in range(len(loads))]
        assert all(t1 - t0 >= 1.0 for t0, t1 in zip(firsts, firsts[1:])), (starts, loads)
    for r in rs:
        assert r.stopped_by in ("precision", "duration")
    assert not leakcheck.snapshot().bpf_fds


def test_a_budget_stops_the_unfinished_and_says_so():
    import time
    t0 = time.monotonic()
    rs = benchbpf.sweep("count-local", producers=[1, 2], precision=0.0001, duration=60,
                        budget=3, progress=False)
    took = time.monotonic() - t0
    for r in rs:
        assert r.stopped_by == "budget", r.stopped_by
        assert 1 <= len(r.runs()) < 20
        assert "stopped by budget" in r.summary() or "stopped by budget" in str(r)
    # No run starts past the budget: at most one more of each after it.
    assert took < 3 + 2 * 5.0 + 2.0, took
    assert not leakcheck.snapshot().bpf_fds


@pytest.mark.parametrize("budget, exc, words", [
    (0, ValueError, ("budget=0", "at most 86400")),
    (-1, ValueError, ("budget=-1",)),
    (True, ValueError, ("budget=True",)),
    ("5", ValueError, ("budget='5'",)),
])
def test_bad_budget_is_rejected_before_loading(budget, exc, words):
    with rejected_before_loading(exc, *words):
        benchbpf.sweep("count-local", producers=[1, 2], precision=0.05, budget=budget,
                       progress=False)


def test_a_budget_without_precision_is_rejected_before_loading():
    with rejected_before_loading(ValueError, "budget=10", "precision="):
        benchbpf.sweep("count-local", producers=[1, 2], budget=10, progress=False)
    with rejected_before_loading(ValueError, "budget=10", "precision="):
        benchbpf.ringbuf_study("reserve_vs_output", budget=10, progress=False)


def test_every_interleaved_run_is_checked_before_the_first_loads():
    with rejected_before_loading(ValueError, "producers"):
        benchbpf.sweep("count-local", producers=[1, 0], precision=0.05, progress=False)
    with rejected_before_loading(ValueError, "precision=None"):
        benchbpf.sweep("count-local", precision=[0.05, None], progress=False)


def test_the_gate_counts_a_precision_baseline_as_its_runs():
    from benchbpf.tools.pytest_plugin import Baseline
    base = made_runs([[10.0, 10.1, 9.9]] * 3 + [[10.1, 10.0, 10.0]] * 3)
    b = Baseline([base], top_pct=100, per_cpu=False)
    assert len(b.speeds) == 6 and len(b.runs) == 1
    assert "of 6 loads" in b.describe()
    plain = Baseline(base.runs()[:2], top_pct=100, per_cpu=False)
    assert len(plain.speeds) == 2 and "loads" not in plain.describe()


def test_a_budget_bounds_a_precision_run_and_nothing_else():
    import time
    t0 = time.monotonic()
    r = benchbpf.run("count-local", precision=0.0001, duration=60, budget=4)
    took = time.monotonic() - t0
    assert r.stopped_by == "budget" and "stopped by budget" in r.summary()
    assert took < 4 + 4   # the load under way when the budget ran out ends
    assert len(r.metadata["precision_loads"]) >= 1
    with rejected_before_loading(ValueError, "budget=4", "precision="):
        benchbpf.run("count-local", budget=4)
    with rejected_before_loading(ValueError, "budget=-1", "seconds of wall time"):
        benchbpf.run("count-local", precision=0.01, budget=-1)


def test_cli_budget_bounds_repeated_runs():
    out = _cli("-q", "-w", "0.1", "-d", "0.3", "--interval", "0.1", "--repeat", "50",
               "--budget", "2", "count-local")
    assert out.returncode == 0, out.stderr
    taken = int(out.stderr.split("--budget 2 s: ")[1].split()[0])
    assert 1 <= taken < 50
    assert out.stdout.count("Summary:") == taken
    bad = _cli("--budget", "2", "count-local")
    assert bad.returncode == 2 and "--budget 2" in bad.stderr and "--repeat" in bad.stderr
