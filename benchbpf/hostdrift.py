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
"""
import dataclasses
import datetime
import json
import math
import numbers
import os
import statistics
import time

from . import stats

__all__ = ["HostDrift", "calibrate", "load", "default_path", "CALIBRATION_BENCHMARKS"]

#: Steady benchmarks of different kinds (user-space loop; syscall into a
#: BPF program), taken in turn: the drift is the host's, not theirs.
CALIBRATION_BENCHMARKS = ("count-local", "trig-rawtp")
#: calibrate(minutes=) allowed range.
MIN_MINUTES, MAX_MINUTES = 0.1, 240.0
#: Windows the drift is measured over, s; those longer than a quarter of
#: the span are left out (fewer than four windows say little).
WINDOWS_S = (5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0, 1280.0)
#: A window's mean counts when it has at least this many runs of a benchmark.
MIN_RUNS_PER_WINDOW = 2
#: What must match for a calibration to apply to a run.
MACHINE_KEYS = ("kernel_release", "machine", "cpu_model", "nr_cpus")
ENV_PATH = "BENCHBPF_HOST_DRIFT"


def default_path():
    """$BENCHBPF_HOST_DRIFT, else host-drift.json in benchbpf's cache
    directory ($XDG_CACHE_HOME or ~/.cache)."""
    if os.environ.get(ENV_PATH):
        return os.environ[ENV_PATH]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "benchbpf", "host-drift.json")


@dataclasses.dataclass(frozen=True)
class HostDrift:
    """A machine's measured drift.  windows: (window_s, relative_sd,
    windows_counted) for each window length, relative_sd the standard
    deviation of a window's mean figure about the mean over span_s, as a
    fraction of it, beyond what the window's own runs show."""
    windows: tuple
    span_s: float
    calibrated_at: str
    machine: dict
    benchmarks: tuple
    runs: int

    def relative_sd(self, span_s):
        """(relative sd, windows it stands on) for a run spanning span_s:
        the shortest window at least as long, else the longest."""
        for w, sd, n in self.windows:
            if w >= span_s:
                return sd, n
        w, sd, n = self.windows[-1]
        return sd, n

    def applies_to(self, fingerprint):
        """Whether this calibration was taken on the machine and kernel of
        `fingerprint` (fingerprint.fingerprint())."""
        return all(self.machine.get(k) == (fingerprint or {}).get(k) for k in MACHINE_KEYS)

    def widen(self, ci, span_s):
        """ci (a stats.MeanInterval of a run spanning span_s) widened by the
        drift: standard errors added in quadrature, Student's t at the
        Welch-Satterthwaite degrees of freedom of the two; never narrower
        than ci (the drift's many windows raise the degrees of freedom, and
        so lower t, more than a small drift adds)."""
        if ci is None:
            return None
        t_run = stats._t_quantile(0.5 + ci.confidence / 2, max(1.0, ci.effective_n - 1))
        se_run = ci.half_width / t_run
        rel, n = self.relative_sd(span_s)
        se_host = rel * abs(ci.mean)
        se = math.hypot(se_run, se_host)
        if se == 0:
            return ci
        df_run, df_host = max(1.0, ci.effective_n - 1), max(1.0, n - 1)
        df = se ** 4 / (se_run ** 4 / df_run + se_host ** 4 / df_host)
        half = max(ci.half_width, stats._t_quantile(0.5 + ci.confidence / 2, df) * se)
        return stats.MeanInterval(ci.mean, ci.mean - half, ci.mean + half, ci.confidence,
                                  df + 1, ci.basis + "+host", ci.tau)

    def as_dict(self):
        return {"windows": [list(w) for w in self.windows], "span_s": self.span_s,
                "calibrated_at": self.calibrated_at, "machine": dict(self.machine),
                "benchmarks": list(self.benchmarks), "runs": self.runs}

    @classmethod
    def from_dict(cls, d):
        return cls(windows=tuple(tuple(w) for w in d["windows"]), span_s=float(d["span_s"]),
                   calibrated_at=d["calibrated_at"], machine=dict(d["machine"]),
                   benchmarks=tuple(d["benchmarks"]), runs=int(d["runs"]))

    def __str__(self):
        shown = ", ".join(f"{w:g} s: \u00b1{sd * 100:.2f} %" for w, sd, _ in self.windows)
        return (f"host drift over {self.span_s / 60:.3g} min (calibrated "
                f"{self.calibrated_at}, {self.runs} runs of {', '.join(self.benchmarks)}; "
                f"sd of a window's figure): {shown}")


def drift_windows(runs, span_s):
    """The (window_s, relative_sd, windows_counted) of runs: (benchmark,
    start_s, figure, its standard error) over span_s seconds.  For each
    benchmark and window length, the windows' means about the benchmark's
    mean over the span: their variance (k - 1 in the denominator: the mean
    is theirs) less the mean variance of a window's mean from its own runs
    (s^2 / n), pooled over benchmarks by windows, as a fraction of the mean."""
    by_bench = {}
    for name, start, figure, _ in runs:
        by_bench.setdefault(name, []).append((start, figure))
    out = []
    for w in WINDOWS_S:
        if w > span_s / 4:
            break
        excess, counted = 0.0, 0
        for series in by_bench.values():
            overall = statistics.fmean(f for _, f in series)
            if overall <= 0:
                continue
            bins = {}
            for start, figure in series:
                bins.setdefault(int(start // w), []).append(figure / overall)
            means, noise = [], []
            for values in bins.values():
                if len(values) >= MIN_RUNS_PER_WINDOW:
                    means.append(statistics.fmean(values))
                    noise.append(statistics.variance(values) / len(values))
            if len(means) < 4:
                continue
            between = statistics.variance(means)
            excess += (between - statistics.fmean(noise)) * len(means)
            counted += len(means)
        if counted:
            out.append((w, math.sqrt(max(0.0, excess / counted)), counted))
    return tuple(out)


def check_minutes(minutes):
    if isinstance(minutes, bool) or not isinstance(minutes, numbers.Real):
        raise TypeError(f"minutes={minutes!r}: must be a number of minutes in "
                        f"{MIN_MINUTES:g}..{MAX_MINUTES:g}")
    if not MIN_MINUTES <= float(minutes) <= MAX_MINUTES:
        raise ValueError(f"minutes={minutes!r} out of range: {MIN_MINUTES:g}..{MAX_MINUTES:g}")
    return float(minutes)


def calibrate(minutes=20, benchmarks=CALIBRATION_BENCHMARKS, path=None, save=True,
              progress=None):
    """Measure this machine's host drift for `minutes` and (save=True) save
    it to `path` (default_path()), where later runs find it.  Each step is
    one short run of the next benchmark in turn, loaded anew (automatic
    warm-up, 0.5 s in 0.1 s samples), as a precision run's runs are.
    progress(elapsed_s, span_s) is called after each.  Run it on an
    otherwise idle machine: what else runs is measured as drift."""
    from . import _runner
    from .fingerprint import fingerprint
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
        path = path or default_path()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(drift.as_dict(), f, indent=1)
        os.replace(tmp, path)
    return drift


def load(path=None, fingerprint=None):
    """The saved calibration, or None when there is none, it cannot be read,
    or (given a fingerprint) it was taken on another machine or kernel."""
    path = path or default_path()
    try:
        with open(path) as f:
            drift = HostDrift.from_dict(json.load(f))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if fingerprint is not None and not drift.applies_to(fingerprint):
        return None
    return drift
