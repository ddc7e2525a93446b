"""A machine's host drift as data: what hostdrift.calibrate() measured, how
it is saved and found again, the history of precision runs taken since,
and how both widen an interval.  Results and the runner read it; only
hostdrift runs anything."""
import dataclasses
import json
import math
import numbers
import os
import statistics
import time

from . import stats
from ._files import replace_text

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
#: What must match for a calibration to apply to a run.  machine_id keeps a
#: calibration copied to another guest of the same image and CPU (its
#: ~/.cache with it) from applying there: its host is another's.
MACHINE_KEYS = ("kernel_release", "machine", "cpu_model", "nr_cpus", "machine_id")
#: The environment variable naming the calibration file (default_path()).
ENV_PATH = "BENCHBPF_HOST_DRIFT"
#: The environment variable naming the history file (default_history_path()).
HISTORY_ENV_PATH = "BENCHBPF_HOST_HISTORY"
#: A precision run's history: the runs of the same benchmark and parameters
#: on this machine and kernel within this many hours before it...
HISTORY_HOURS = 24.0
#: ...counted when there are at least this many.
MIN_HISTORY_RUNS = 3
#: Parameters that change how long or how finely a figure is measured, not
#: the figure: runs differing only in them share a history.
TIMING_PARAMS = ("warmup", "duration", "interval", "precision")
#: Beyond this size the history file keeps only its last HISTORY_HOURS.
HISTORY_MAX_BYTES = 1 << 20
#: A history whose runs span less than this, s, has not yet seen the
#: machine's slower and faster hours: live on a new machine, every run whose
#: host interval missed the session's figure came in the history's first
#: 27 minutes (results/precision-2cpu.md, "Live").
MATURE_HISTORY_S = 3600.0


def _cached(env, name):
    """$env, else `name` in benchbpf's cache directory ($XDG_CACHE_HOME or
    ~/.cache)."""
    if os.environ.get(env):
        return os.environ[env]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "benchbpf", name)


def default_path():
    """$BENCHBPF_HOST_DRIFT, else host-drift.json in benchbpf's cache
    directory ($XDG_CACHE_HOME or ~/.cache)."""
    return _cached(ENV_PATH, "host-drift.json")


def default_history_path():
    """$BENCHBPF_HOST_HISTORY, else host-history.jsonl in benchbpf's cache
    directory."""
    return _cached(HISTORY_ENV_PATH, "host-history.jsonl")


@dataclasses.dataclass(frozen=True)
class History:
    """How precision runs of one benchmark and parameters on this machine
    differed in the HISTORY_HOURS before a run: relative_sd, the standard
    deviation of a run's figure about their mean, as a fraction of it,
    beyond what each run's own interval explains, over `runs` runs from
    `since` to `until` (UTC), span_s seconds apart (None in a history
    saved before it was kept)."""
    relative_sd: float
    runs: int
    since: str
    until: str
    span_s: float = None

    @property
    def young(self):
        """True when its runs span less than MATURE_HISTORY_S."""
        return self.span_s is not None and self.span_s < MATURE_HISTORY_S

    def as_dict(self):
        """The fields as a plain dict (for JSON)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d):
        """The History that as_dict() gave `d` (KeyError for a missing field)."""
        span = d.get("span_s")
        return cls(relative_sd=float(d["relative_sd"]), runs=int(d["runs"]),
                   since=str(d["since"]), until=str(d["until"]),
                   span_s=None if span is None else float(span))


def _utc(epoch_s):
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch_s))


def history_key(name, params):
    """Benchmark `name` and those of its `params` (a Result.params mapping)
    its figure depends on (not TIMING_PARAMS, not None), as one string:
    "name(k=v,...)", the key of its history."""
    shown = ",".join(f"{k}={params[k]!r}" for k in sorted(params)
                     if k not in TIMING_PARAMS and params[k] is not None)
    return f"{name}({shown})"


def history_of(records):
    """The History of records [(epoch_s, figure, standard_error)], or None
    with fewer than MIN_HISTORY_RUNS: the variance of the figures (n - 1)
    less their mean squared standard error, as a relative sd."""
    records = [r for r in records if all(math.isfinite(x) for x in r)]
    if len(records) < MIN_HISTORY_RUNS:
        return None
    figures = [f for _, f, _ in records]
    mean = statistics.fmean(figures)
    if mean <= 0:
        return None
    excess = statistics.variance(figures) - statistics.fmean(se * se for _, _, se in records)
    first, last = min(t for t, _, _ in records), max(t for t, _, _ in records)
    return History(relative_sd=math.sqrt(max(0.0, excess)) / mean, runs=len(records),
                   since=_utc(first), until=_utc(last), span_s=last - first)


def _machine_of(fingerprint):
    return {k: (fingerprint or {}).get(k) for k in MACHINE_KEYS}


def read_histories(fingerprint, now, path=None):
    """{key: [(epoch_s, figure, standard_error)]}: the precision runs on the
    machine of `fingerprint` in the HISTORY_HOURS before `now`, by benchmark
    and parameters; lines that cannot be read are passed over."""
    machine, out = _machine_of(fingerprint), {}
    try:
        with open(path or default_history_path()) as f:
            lines = f.readlines()
    except OSError:
        return out
    for line in lines:
        try:
            d = json.loads(line)
            if d["machine"] == machine and 0 <= now - d["time"] <= HISTORY_HOURS * 3600:
                out.setdefault(d["key"], []).append(
                    (float(d["time"]), float(d["figure"]), float(d["se"])))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def read_history(key, fingerprint, now, path=None):
    """read_histories()'s runs of `key`."""
    return read_histories(fingerprint, now, path).get(key, [])


def remember(key, fingerprint, when, figure, se, path=None):
    """Add a precision run to the history, one JSON line; past
    HISTORY_MAX_BYTES, first drop what is older than HISTORY_HOURS.  A
    history that cannot be written is left be: the run's figure stands."""
    path = path or default_history_path()
    line = json.dumps({"key": key, "machine": _machine_of(fingerprint), "time": when,
                       "figure": figure, "se": se}) + "\n"
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        if os.path.exists(path) and os.path.getsize(path) > HISTORY_MAX_BYTES:
            _prune(path, when)
        with open(path, "a") as f:
            f.write(line)
    except OSError:
        pass


def _prune(path, now):
    kept = []
    with open(path) as f:
        for line in f:
            try:
                if now - json.loads(line)["time"] <= HISTORY_HOURS * 3600:
                    kept.append(line)
            except (ValueError, KeyError, TypeError):
                continue
    replace_text(path, "".join(kept))


def standard_error(ci):
    """The standard error a stats.MeanInterval stands on: its half width
    over Student's t at its degrees of freedom (MeanInterval.standard_error)."""
    return ci.standard_error


def _widened(ci, relative_sd, df_host):
    """ci with relative_sd of its mean added in quadrature, Student's t at the
    Welch-Satterthwaite degrees of freedom; never narrower than ci (a small
    sd on many degrees of freedom lowers t by more than it adds)."""
    se_run, se_host = standard_error(ci), relative_sd * abs(ci.mean)
    se = math.hypot(se_run, se_host)
    if se == 0:
        return ci
    df = stats.welch_df(se_run, ci.effective_n - 1, se_host, df_host)
    half = stats._t_quantile(0.5 + ci.confidence / 2, df) * se
    # Not wider: ci's own bounds, not mean -+ its half width, which can round
    # a last bit inside them.
    low, high = (ci.mean - half, ci.mean + half) if half > ci.half_width else (ci.low, ci.high)
    return stats.MeanInterval(ci.mean, low, high, ci.confidence, df + 1, ci.basis + "+host",
                              ci.tau)


@dataclasses.dataclass(frozen=True)
class HostDrift:
    """A machine's measured drift.  windows: (window_s, relative_sd,
    windows_counted) for each window length, relative_sd the standard
    deviation of a window's mean figure about the mean over span_s, as a
    fraction of it, beyond what the window's own runs show.  history: how
    the benchmark's earlier precision runs on the machine differed (a
    History), when a precision run found enough of them."""
    windows: tuple
    span_s: float
    calibrated_at: str
    machine: dict
    benchmarks: tuple
    runs: int
    history: History = None

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
        drift of the calibration's window as long as the run, or by the
        history's spread between runs when there is one, whichever is wider:
        the history sees phases longer than the calibration's span, the
        calibration stands on more windows."""
        if ci is None:
            return None
        rel, n = self.relative_sd(span_s)
        out = _widened(ci, rel, n - 1)
        if self.history is not None:
            by_history = _widened(ci, self.history.relative_sd, self.history.runs - 1)
            if by_history.half_width > out.half_width:
                out = by_history
        return out

    def young_history(self):
        """Why a precision run's host interval cannot yet speak for the
        machine's hours (a short text), or None: fewer than MIN_HISTORY_RUNS
        earlier runs of its benchmark, or runs spanning less than
        MATURE_HISTORY_S.  Such an interval holds about as long as what it
        has seen (the calibration's span, the history's)."""
        h = self.history
        if h is None:
            return (f"fewer than {MIN_HISTORY_RUNS} earlier precision runs of this "
                    f"benchmark on this machine, only the {self.span_s / 60:.3g} min calibration")
        if h.young:
            return (f"{h.runs} earlier precision runs of this benchmark over "
                    f"{h.span_s / 60:.0f} min, under {MATURE_HISTORY_S / 60:.0f}")
        return None

    def as_dict(self):
        """The calibration as plain dicts and lists, as the calibration file
        holds it (the history too when there is one)."""
        d = {"windows": [list(w) for w in self.windows], "span_s": self.span_s,
             "calibrated_at": self.calibrated_at, "machine": dict(self.machine),
             "benchmarks": list(self.benchmarks), "runs": self.runs}
        if self.history is not None:
            d["history"] = self.history.as_dict()
        return d

    @classmethod
    def from_dict(cls, d):
        """The HostDrift that as_dict() gave `d` (KeyError for a missing field)."""
        return cls(windows=tuple(tuple(w) for w in d["windows"]), span_s=float(d["span_s"]),
                   calibrated_at=d["calibrated_at"], machine=dict(d["machine"]),
                   benchmarks=tuple(d["benchmarks"]), runs=int(d["runs"]),
                   history=History.from_dict(d["history"]) if d.get("history") else None)

    def __str__(self):
        shown = ", ".join(f"{w:g} s: \u00b1{sd * 100:.2f} %" for w, sd, _ in self.windows)
        return (f"host drift over {self.span_s / 60:.3g} min (calibrated "
                f"{self.calibrated_at}, {self.runs} runs of {', '.join(self.benchmarks)}; "
                f"sd of a window's figure): {shown}" + (
                    "" if self.history is None else
                    f"; {self.history.runs} earlier precision runs of this benchmark "
                    f"({self.history.since} to {self.history.until}) differed by "
                    f"\u00b1{self.history.relative_sd * 100:.2f} %"))


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
