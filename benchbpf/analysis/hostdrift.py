"""How far this machine moves a figure over minutes: its host drift.

A run, even a precision run, sees only its own half-minute.  On a shared
or virtual machine the speed of the CPUs moves by several percent over
minutes (results/precision-2cpu.md), so the figure another half-minute
would give differs by more than any run's own interval says.  calibrate()
measures that movement once per machine: short runs of steady benchmarks,
taken in turn for `minutes`, and for windows of 5 s to a quarter of that
span the spread of a window's mean about the mean over the whole span,
less what the window's own runs would explain.  The result is saved
(default_path()) and read by every later run on the same machine and
kernel, which records it (Result.metadata["host_drift"]) and states a
second interval, Result.host_ci_mps: the run's own interval widened by the
drift at the run's span, for the figure this machine gives over the
calibration's span.  Runs keep their own interval (mean_ci_mps) for what
they stop on and for comparisons taken in turn, where the drift falls on
both sides alike.

A quiet span of calibration does not see the phases that come and go over
hours.  So on a calibrated machine each precision run also joins a history
(default_history_path(), one JSON line per run), and finds there the
precision runs of the same benchmark and parameters of the last
HISTORY_HOURS: how far their figures differed beyond their own intervals
(History) widens the interval too, when that is wider than the
calibration's.  Until that history spans MATURE_HISTORY_S (an hour), it
knows only the minutes it has seen: such a run says so in its warnings.
"""
import datetime
import json
import time

from ..harness import _runner
from ..results._drift import CALIBRATION_BENCHMARKS, ENV_PATH, HISTORY_ENV_PATH, HISTORY_HOURS, MACHINE_KEYS, MATURE_HISTORY_S, MAX_MINUTES, MIN_HISTORY_RUNS, MIN_MINUTES, WINDOWS_S, History, HostDrift, check_minutes, default_history_path, default_path, drift_windows, history_key, history_of, load, read_histories, read_history, remember
from ..results._files import replace_text
from ..results.fingerprint import fingerprint

__all__ = ["HostDrift", "History", "calibrate", "load", "default_path", "drift_windows",
           "default_history_path", "history_key", "history_of", "read_histories",
           "read_history", "remember",
           "CALIBRATION_BENCHMARKS", "ENV_PATH", "HISTORY_ENV_PATH", "HISTORY_HOURS",
           "MACHINE_KEYS", "MATURE_HISTORY_S", "MIN_HISTORY_RUNS", "MIN_MINUTES", "MAX_MINUTES",
           "WINDOWS_S"]


def calibrate(minutes=20, benchmarks=CALIBRATION_BENCHMARKS, path=None, save=True,
              progress=None):
    """Measure this machine's host drift for `minutes` and (save=True) save
    it to `path` (default_path()), where later runs find it.  Each step is
    one short run of the next benchmark in turn, loaded anew (automatic
    warm-up, 0.5 s in 0.1 s samples), as a precision run's runs are.
    progress(elapsed_s, span_s) is called after each.  Run it on an
    otherwise idle machine: what else runs is measured as drift."""
    minutes = check_minutes(minutes)
    benchmarks = tuple(benchmarks)
    if not benchmarks:
        raise ValueError("benchmarks=(): at least one benchmark to calibrate with")
    for name in benchmarks:
        _runner.describe(name)  # unknown names raise before anything runs
    span_s = minutes * 60.0
    began, runs, i = time.monotonic(), [], 0
    while True:
        start = time.monotonic() - began
        if start >= span_s:
            break
        name = benchmarks[i % len(benchmarks)]
        r = _runner.run(name, warmup="auto", duration=0.5, interval=0.1)
        mean, se = r.mean_se()
        runs.append((name, start, mean, se))
        i += 1
        if progress is not None:
            progress(time.monotonic() - began, span_s)
    windows = drift_windows(runs, span_s)
    if not windows:
        raise ValueError(f"minutes={minutes:g}: too short to measure drift over "
                         f"{WINDOWS_S[0]:g} s windows (at least {4 * WINDOWS_S[0] / 60:g} "
                         "minutes)")
    machine = {k: fingerprint().get(k) for k in MACHINE_KEYS}
    drift = HostDrift(windows=windows, span_s=span_s,
                      calibrated_at=datetime.datetime.now(datetime.timezone.utc)
                      .strftime("%Y-%m-%d %H:%M UTC"),
                      machine=machine, benchmarks=benchmarks, runs=len(runs))
    if save:
        replace_text(path or default_path(), json.dumps(drift.as_dict(), indent=1))
    return drift
