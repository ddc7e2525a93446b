"""Runs that end when their figure is known.

precision=: a run is a series of short runs, each loading the benchmark
anew, until the 95 % interval of the mean over those runs is within
`precision` of it (stats.runs_mean_ci, over groups of the runs that began
within 5 s of each other).  The unit is the run, not the sample, and runs
in a row count as one: a load's placement and the host's phases move a
figure by more than its own samples show, and only runs apart show it.
warmup="auto": the warm-up of each run ends when the benchmark is steady,
decided sample by sample in the run's callback and handed to the C
sampler (END_WARMUP), which honours it from its next sample on."""
import math
import numbers

from ..results import stats

#: Sampling interval of precision and auto-warm-up runs when none is given.
INTERVAL_S = 0.1
#: Precision is a fraction of the mean: 0.0001 (0.01 %) .. 0.5 (50 %).
MIN_PRECISION, MAX_PRECISION = 0.0001, 0.5
#: What a precision run's duration bounds when none is given: the time
#: measured over all its runs, s.
DURATION_S = 60.0
#: One run of a precision run measures this long (and at least
#: RUN_MIN_SAMPLES samples) ...
RUN_S = 0.5
RUN_MIN_SAMPLES = 3
#: One load measures this many runs in a row, where a fresh load is not
#: what tells runs apart: the host's phases do, and runs within one group of
#: stats.RUN_GROUP_S count as one anyway.  Families whose figure moves with
#: each load's placement (a ring buffer's states) load anew for every run.
#: Measured: results/load-once-2cpu.md.
WINDOWS_PER_LOAD = 4
FRESH_LOAD_FAMILIES = frozenset({"ringbuf"})
#: ... and a precision stop needs at least this many runs, or MIN_RUNS_APART
#: when they disagree beyond their own spread.
MIN_RUNS = 5
MIN_RUNS_APART = 20
#: The interval is over groups of the runs that began within
#: stats.RUN_GROUP_S of each other, at least this many groups.
MIN_GROUPS = 4
#: Auto warm-up: at least FLOOR, at most CAP, steady when two windows of
#: WINDOW (and at least WINDOW_SAMPLES samples) agree.  Most benchmarks are
#: steady from their first 0.1 s; a ring buffer's producer ramps up over
#: about 0.5 s, which the windows mostly see: the second after the warm-up
#: read 2-4 % under the run's last (results/load-once-2cpu.md).
AUTO_WARMUP_FLOOR_S = 0.3
AUTO_WARMUP_CAP_S = 5.0
AUTO_WARMUP_WINDOW_S = 0.15
AUTO_WARMUP_WINDOW_SAMPLES = 3
#: Two windows agree when their means are within this fraction of each
#: other, or within 3 standard errors of their difference.
STEADY_WITHIN = 0.02

AUTO = "auto"


def check_precision(value):
    """None, or the precision as a float; raises naming the allowed range."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"precision={value!r}: must be a fraction of the mean "
                        f"in {MIN_PRECISION:g}..{MAX_PRECISION:g} (0.01 = 1 %) or None")
    if not MIN_PRECISION <= float(value) <= MAX_PRECISION:
        raise ValueError(f"precision={value!r} out of range: a fraction of the mean in "
                         f"{MIN_PRECISION:g}..{MAX_PRECISION:g} (0.01 = 1 %)")
    return float(value)


def is_auto(warmup):
    return isinstance(warmup, str) and warmup == AUTO


def default_interval(precision, warmup):
    """The sampling interval when none is given, s."""
    return INTERVAL_S if precision is not None or is_auto(warmup) else 1.0


def check_warmup_text(warmup):
    if isinstance(warmup, str) and not is_auto(warmup):
        raise TypeError(f"warmup={warmup!r}: must be a number of seconds or 'auto'")


def run_samples(interval_s):
    """Samples one run of a precision run measures."""
    return max(RUN_MIN_SAMPLES, math.ceil(RUN_S / interval_s - 1e-9))


def windows_per_load(family):
    """Runs one load of a precision run measures, for a benchmark of family."""
    return 1 if family in FRESH_LOAD_FAMILIES else WINDOWS_PER_LOAD


def stop_reason(runs, starts_s, measured_s, run_s, duration_s, precision, step_mps=0.0):
    """After a run: "precision" when the interval of the runs' means is
    within it, "duration" when another run would exceed the duration, else
    None.  runs: (mean, its standard error from within the run) of each
    run so far, in order; starts_s: when each began, s.  A stop needs
    MIN_RUNS runs in MIN_GROUPS groups of stats.RUN_GROUP_S.  Runs that disagree
    beyond their own spread (a bistable ring buffer: stats.run_states) need
    MIN_RUNS_APART runs, so that the interval stands on enough of each
    state.  step_mps: the step of a run's mean (stats.count_step_mps)."""
    means = [m for m, _ in runs]
    ci = stats.runs_mean_ci(means, starts_s, step_mps=step_mps)
    if len(means) >= MIN_RUNS and ci is not None and ci.effective_n >= MIN_GROUPS \
            and ci.relative_half_width <= precision:
        least = MIN_RUNS_APART if stats.run_states(means, [e for _, e in runs]).disagree \
            else MIN_RUNS
        if len(means) >= least:
            return "precision"
    if measured_s + run_s > duration_s * (1 + 1e-9):
        return "duration"
    return None


class WarmupController:
    """Ends a run's warm-up when two consecutive windows of hit rates
    agree (_steady), after a floor; the cap is the run's warm-up length.
    Called with each sample's index and hit rate (M/s); returns END_WARMUP
    once, else None."""

    def __init__(self, interval_s, end_warmup):
        self._end_warmup = end_warmup
        self.window = max(AUTO_WARMUP_WINDOW_SAMPLES,
                          math.ceil(AUTO_WARMUP_WINDOW_S / interval_s - 1e-9))
        self.floor = max(2 * self.window, math.ceil(AUTO_WARMUP_FLOOR_S / interval_s - 1e-9))
        #: Samples before this index are warm-up (None: not decided yet).
        self.measured_from = None
        self._rates = []

    def __call__(self, index, rate_mps):
        if self.measured_from is not None:
            return None
        self._rates.append(rate_mps)
        seen = index + 1
        if seen < self.floor:
            return None
        w = self.window
        if not _steady(self._rates[-2 * w:-w], self._rates[-w:]):
            return None
        # The sampler takes one more warm-up sample after the request.
        self.measured_from = seen + 1
        return self._end_warmup


def _steady(a, b):
    """Two consecutive windows of rates agree: their means within
    STEADY_WITHIN of each other, or their difference within 3 standard
    errors."""
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    if abs(mb - ma) <= STEADY_WITHIN * max(abs(ma), abs(mb)):
        return True
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1)
    return abs(mb - ma) <= 3.0 * math.sqrt(va / len(a) + vb / len(b))
