"""Host drift: measured on real runs, saved, applied to later runs' intervals."""
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time

import pytest

import benchbpf
from benchbpf.results import _drift as _host_drift, stats
from benchbpf import hostdrift
from benchbpf.results.fingerprint import fingerprint


def series(figure_at, span_s=600.0, every_s=1.2, names=("a", "b")):
    """Runs in turn over span_s: (name, start, figure, se)."""
    out, t, i = [], 0.0, 0
    while t < span_s:
        out.append((names[i % len(names)], t, figure_at(t, names[i % len(names)]), 0.0))
        t, i = t + every_s, i + 1
    return out


def test_steady_host_has_no_drift():
    rng = random.Random(1)
    windows = hostdrift.drift_windows(series(lambda t, n: 100 * (1 + rng.gauss(0, 0.02))),
                                      600.0)
    assert [w for w, _, _ in windows] == [5, 10, 20, 40, 80]  # up to a quarter of the span
    # Run-to-run noise is what the windows' own runs explain: next to no drift.
    assert all(sd < 0.006 for _, sd, _ in windows), windows


def test_a_step_in_the_hosts_speed_is_drift():
    rng = random.Random(2)
    windows = hostdrift.drift_windows(
        series(lambda t, n: (100 if t < 300 else 110) * (1 + rng.gauss(0, 0.01))), 600.0)
    # Half the time 4.8 % below the mean, half 4.8 % above.
    for w, sd, n in windows:
        assert 0.040 < sd < 0.058, (w, sd)
        assert n >= 8


def test_too_short_a_span_has_no_windows():
    assert hostdrift.drift_windows(series(lambda t, n: 1.0, span_s=15.0), 15.0) == ()


def drift(sd=0.03, windows=20):
    return hostdrift.HostDrift(windows=((10.0, sd / 2, windows), (40.0, sd, windows)),
                               span_s=600.0, calibrated_at="then",
                               machine={k: fingerprint().get(k)
                                        for k in hostdrift.MACHINE_KEYS},
                               benchmarks=("count-local",), runs=500)


def test_a_calibration_applies_only_on_its_own_machine_and_kernel(tmp_path):
    """Another guest of the same image and CPU (another machine id), or
    another kernel, does not take this machine's drift, also once saved."""
    here, d = fingerprint(), drift()
    assert d.applies_to(here)
    for key, other in (("machine_id", "machine-id:0000000000000000"),
                       ("kernel_release", "0.0.0-other"), ("nr_cpus", 1024)):
        assert not d.applies_to(dict(here, **{key: other})), key
    path = tmp_path / "drift.json"
    path.write_text(json.dumps(d.as_dict()))
    assert hostdrift.load(str(path), here) == d
    assert hostdrift.load(str(path), dict(here, machine_id="machine-id:0000000000000000")) is None


def test_widening_adds_the_drift_in_quadrature():
    ci = stats.MeanInterval(100.0, 99.0, 101.0, 0.95, 5, "runs")
    assert drift(0.0).widen(ci, 30.0).half_width == pytest.approx(1.0)
    wide = drift(0.03, windows=10_000).widen(ci, 30.0)
    se_run = 1.0 / stats._t_quantile(0.975, 4)
    assert wide.half_width > 1.96 * math.hypot(se_run, 3.0) * 0.999
    assert wide.basis == "runs+host" and wide.mean == 100.0
    # A run spanning 5 s takes the 10 s window's drift; one past every window the longest.
    assert drift().relative_sd(5.0) == (0.015, 20)
    assert drift().relative_sd(1000.0) == (0.03, 20)
    assert drift().widen(None, 30.0) is None
    # A small drift on few groups: the Welch-Satterthwaite t falls more than the
    # error grows, and the run's own interval stands.
    few = stats.MeanInterval(100.0, 96.0, 104.0, 0.95, 3, "runs")
    assert drift(0.002, windows=500).widen(few, 30.0).half_width == pytest.approx(4.0)


def test_saved_calibration_applies_only_to_its_machine(tmp_path):
    path = tmp_path / "drift.json"
    path.write_text(json.dumps(drift().as_dict()))
    assert hostdrift.load(str(path), fingerprint()) == drift()
    other = dict(fingerprint(), kernel_release="0.0.0-other")
    assert hostdrift.load(str(path), other) is None
    path.write_text("{not json")
    assert hostdrift.load(str(path)) is None
    assert hostdrift.load(str(tmp_path / "missing.json")) is None


@pytest.mark.parametrize("minutes", [0, 0.01, 241, -1, float("nan")])
def test_bad_minutes_raise_before_running(minutes):
    with pytest.raises(ValueError, match=r"minutes=.*out of range: 0\.1\.\.240"):
        hostdrift.calibrate(minutes, save=False)


def test_bad_minutes_type_and_benchmark_raise():
    with pytest.raises(TypeError, match="minutes='5'"):
        hostdrift.calibrate("5", save=False)
    with pytest.raises(ValueError, match="no-such-bench"):
        hostdrift.calibrate(1, benchmarks=("no-such-bench",), save=False)


def test_calibration_on_real_runs_widens_later_intervals(tmp_path, monkeypatch):
    path = tmp_path / "drift.json"
    ticks = []
    d = hostdrift.calibrate(1, path=str(path), progress=lambda e, s: ticks.append(e))
    assert d.runs == len(ticks) >= 20
    assert d.windows and d.windows[0][0] == 5.0 and d.windows[0][2] >= 4
    assert all(sd >= 0 for _, sd, _ in d.windows)
    assert d.applies_to(fingerprint())
    assert hostdrift.load(str(path), fingerprint()) == d

    # Without a calibration a run states its own interval only.
    # 7 s: runs 5 s apart or more count apart (stats.RUN_GROUP_S), and an interval needs two such groups.
    r = benchbpf.run("count-local", precision=0.05, duration=7)
    assert "host_drift" not in r.metadata and r.host_ci_mps is None

    # With one it records it and states the widened interval too, also once saved.
    monkeypatch.setenv(hostdrift.ENV_PATH, str(path))
    wide = drift(0.04).as_dict()
    path.write_text(json.dumps(wide))
    r = benchbpf.run("count-local", precision=0.05, duration=7)
    assert r.host_drift == drift(0.04)
    own, host = r.mean_ci_mps, r.host_ci_mps
    assert host.mean == own.mean and host.half_width >= own.half_width
    # The drift of the shortest window as long as the run's span: 2 % up to 10 s, else 4 %.
    sd, _ = r.host_drift.relative_sd(r._span_s())
    assert sd == (0.02 if r._span_s() <= 10 else 0.04)
    assert host.relative_half_width > 1.96 * sd
    assert "with this host's drift over 10 min" in r.summary()
    again = benchbpf.Result.from_json(r.to_json())
    assert again.host_ci_mps == host


def test_cli_refuses_bad_minutes_and_shows_none(tmp_path):
    bad = subprocess.run([sys.executable, "-m", "benchbpf", "host-drift", "--minutes", "0"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--minutes=0.0 out of range" in bad.stderr
    path = tmp_path / "none.json"
    show = subprocess.run([sys.executable, "-m", "benchbpf", "host-drift", "--show",
                           "-o", str(path)], capture_output=True, text=True)
    assert show.returncode == 1 and "no host drift calibration" in show.stderr
    path.write_text(json.dumps(drift().as_dict()))
    history = str(tmp_path / "history.jsonl")
    now = time.time()
    for i, figure in enumerate((100.0, 110.0, 100.0, 110.0)):
        hostdrift.remember("count-local(producers=1)", fingerprint(), now - i, figure, 0.0,
                           path=history)
    hostdrift.remember("trig-rawtp()", fingerprint(), now, 40.0, 0.0, path=history)
    show = subprocess.run([sys.executable, "-m", "benchbpf", "host-drift", "--show",
                           "-o", str(path)], capture_output=True, text=True,
                          env=dict(os.environ, **{hostdrift.HISTORY_ENV_PATH: history}))
    assert show.returncode == 0 and "40 s: \u00b13.00 %" in show.stdout
    assert "5 runs of 2 configurations" in show.stdout
    assert "count-local(producers=1): 4 runs, differing by \u00b15.50% beyond their own " \
        "intervals, over 0 min: young (under 60)" in show.stdout
    assert "trig-rawtp(): 1 run, fewer than 3: not used yet" in show.stdout


def test_history_is_the_spread_between_runs_beyond_their_own():
    rng = random.Random(3)
    steady = [(i, 100 * (1 + rng.gauss(0, 0.01)), 1.0) for i in range(200)]
    assert hostdrift.history_of(steady).relative_sd < 0.003
    phases = [(i, (100 if i % 2 else 106) * (1 + rng.gauss(0, 0.01)), 1.0) for i in range(200)]
    h = hostdrift.history_of(phases)
    # Two levels 6 % apart: 3 % either side of the mean.
    assert 0.025 < h.relative_sd < 0.035 and h.runs == 200
    assert h.since.endswith("UTC") and h.until.endswith("UTC")
    assert hostdrift.history_of(phases[:2]) is None
    assert hostdrift.history_of(phases[:2] + [(5, math.nan, 1.0)]) is None


def test_history_file_keeps_one_benchmark_one_machine_one_day(tmp_path, monkeypatch):
    path = str(tmp_path / "history.jsonl")
    me, now = fingerprint(), 1_800_000_000.0
    key = hostdrift.history_key("count-local", {"producers": 1, "duration": 5,
                                                "precision": 0.01, "affinity": False})
    assert key == hostdrift.history_key("count-local", {"producers": 1, "affinity": False})
    assert key != hostdrift.history_key("count-local", {"producers": 2, "affinity": False})
    for i in range(3):
        hostdrift.remember(key, me, now - 100 + i, 200.0 + i, 1.0, path=path)
    hostdrift.remember("other()", me, now - 50, 50.0, 1.0, path=path)
    hostdrift.remember(key, dict(me, kernel_release="0.0"), now - 50, 1.0, 1.0, path=path)
    hostdrift.remember(key, me, now - 25 * 3600, 1.0, 1.0, path=path)
    with open(path, "a") as f:
        f.write("{not json\n")
    assert [f for _, f, _ in hostdrift.read_history(key, me, now, path)] == [200, 201, 202]
    assert hostdrift.read_history(key, me, now, str(tmp_path / "none.jsonl")) == []
    # Past its size the file drops what is older than a day, and what cannot be read.
    monkeypatch.setattr(_host_drift, "HISTORY_MAX_BYTES", 1)
    hostdrift.remember(key, me, now, 203.0, 1.0, path=path)
    with open(path) as f:
        assert len(f.readlines()) == 6
    assert len(hostdrift.read_history(key, me, now, path)) == 4


def test_widening_takes_the_wider_of_calibration_and_history():
    import dataclasses
    ci = stats.MeanInterval(100.0, 99.0, 101.0, 0.95, 5, "runs")
    calibrated = drift(0.01, windows=1000)
    quiet = dataclasses.replace(calibrated, history=hostdrift.History(0.001, 30, "a", "b"))
    assert quiet.widen(ci, 30.0) == calibrated.widen(ci, 30.0)
    phased = dataclasses.replace(calibrated, history=hostdrift.History(0.03, 30, "a", "b"))
    wide = phased.widen(ci, 30.0)
    assert wide.half_width > 1.96 * 3.0 > calibrated.widen(ci, 30.0).half_width
    assert hostdrift.HostDrift.from_dict(phased.as_dict()) == phased
    assert "30 earlier precision runs" in str(phased) and "\u00b13.00 %" in str(phased)


def test_a_host_interval_on_a_young_history_says_so():
    import dataclasses
    from benchbpf.results.result import Result, Sample
    rng = random.Random(7)
    records = [(3600.0 * i / 9, 100 * (1 + rng.gauss(0, 0.02)), 0.5) for i in range(10)]
    assert hostdrift.history_of(records).span_s == pytest.approx(3600.0)
    assert not hostdrift.history_of(records).young
    assert hostdrift.history_of(records[:9]).young  # 53 min
    assert hostdrift.History(0.01, 5, "a", "b").young is False  # saved before span_s was
    assert hostdrift.History.from_dict(hostdrift.history_of(records).as_dict()) == \
        hostdrift.history_of(records)

    def run(history, precision=0.05):
        calibrated = dataclasses.replace(drift(0.001), history=history)
        samples = [Sample(100_000_000, hits=int(100 * 1e5 * (1 + 0.001 * (i % 3))))
                   for i in range(32)]
        return Result(name="count-local", samples=samples,
                      params={"interval": 0.1, "producers": 1, "precision": precision},
                      metadata={"precision_runs": (8,) * 4, "precision_warmups": (0,) * 4,
                                "precision_run_starts_s": (0.0, 6.0, 12.0, 18.0),
                                "stopped_by": "precision",
                                "host_drift": calibrated.as_dict()})

    def young(r):
        return [w for w in r.warnings if "young history" in w]
    none, short = run(None), run(hostdrift.history_of(records[:9]))
    assert young(none) == [f"hits: host interval \u00b1"
                           f"{none.host_ci_mps.relative_half_width * 100:.2f}% rests on a young "
                           "history (fewer than 3 earlier precision runs of this benchmark on "
                           "this machine, only the 10 min calibration): it holds for about that "
                           "long, the machine's slower or faster hours may lie outside it"]
    assert "(9 earlier precision runs of this benchmark over 53 min, under 60)" in \
        young(short)[0]
    assert "WARNING: hits: host interval" in str(short)
    assert young(Result.from_json(short.to_json())) == young(short)
    assert young(run(hostdrift.history_of(records))) == []
    # A run of fixed length neither reads nor joins the history: no such warning.
    fixed = run(None, precision=None)
    assert fixed.host_ci_mps is not None and young(fixed) == []
    # Without a calibration a precision run says its interval is its own only.
    bare = dataclasses.replace(none, metadata={k: v for k, v in none.metadata.items()
                                               if k != "host_drift"})
    assert bare.host_ci_mps is None and young(bare) == []
    assert [w for w in bare.warnings if "no host drift calibration" in w] == [
        f"hits: the \u00b1{bare.mean_ci_mps.relative_half_width * 100:.2f}% interval describes "
        "this run's own runs only: with no host drift calibration for this machine and "
        "kernel (benchbpf host-drift), nothing allows for how far the host moves the "
        "figure between runs"]
    assert not any("calibration" in w for w in fixed.warnings)


def test_precision_runs_on_a_calibrated_machine_build_a_history(tmp_path, monkeypatch):
    monkeypatch.setenv(hostdrift.ENV_PATH, str(tmp_path / "drift.json"))
    monkeypatch.setenv(hostdrift.HISTORY_ENV_PATH, str(tmp_path / "history.jsonl"))
    (tmp_path / "drift.json").write_text(json.dumps(drift(0.001).as_dict()))
    figures = []
    for _ in range(hostdrift.MIN_HISTORY_RUNS):
        r = benchbpf.run("count-local", precision=0.05, duration=7)
        assert r.host_drift.history is None
        figures.append(r.mean)
    # Plain runs neither join the history nor read it.
    plain = benchbpf.run("count-local", warmup=0.2, duration=0.6, interval=0.2)
    assert plain.host_drift.history is None
    lines = (tmp_path / "history.jsonl").read_text().splitlines()
    assert [json.loads(x)["figure"] for x in lines] == pytest.approx(figures)

    from benchbpf.harness import _runner
    r, = _runner.run_interleaved([("a", "count-local", {"precision": 0.05, "duration": 7})])
    h = r.host_drift.history
    assert h.runs == hostdrift.MIN_HISTORY_RUNS
    mean = statistics.fmean(figures)
    assert h.relative_sd <= statistics.stdev(figures) / mean + 1e-12
    assert r.host_ci_mps.half_width >= r.mean_ci_mps.half_width
    assert f"and {h.runs} earlier runs" in r.summary()
    # All of it taken within the minute: a young history, and the run says so.
    assert h.young and any("rests on a young history" in w for w in r.warnings)
    assert benchbpf.Result.from_json(r.to_json()).host_ci_mps == r.host_ci_mps
    assert len((tmp_path / "history.jsonl").read_text().splitlines()) == len(lines) + 1
