"""A machine's host drift as data: what hostdrift.calibrate() measured, how
it is saved and found again, and how it widens an interval.  Results and
the runner read it; only hostdrift runs anything."""
import dataclasses
import json
import math
import numbers
import os
import statistics

from . import stats

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
