"""When a run's warm-up ends and when a precision run stops: the two rules
benchbpf applies while it measures, public so that a measurement can replay
them on figures it took or simulated (scripts/load_once.py,
scripts/precision_coverage.py).

warmup="auto": WarmupController decides sample by sample, in the run's
callback, when two consecutive windows of hit rates agree; warmup_end()
replays it on a series of rates.  precision=: stop_reason() decides after
each short run whether the interval of the runs' means is within the
precision asked (stats.runs_mean_ci over groups of runs that began within
stats.RUN_GROUP_S of each other), or the duration allows no further run."""
import math

from ..results import stats

__all__ = ["stop_reason", "WarmupController", "warmup_end", "MIN_RUNS", "MIN_RUNS_APART",
           "MIN_GROUPS", "AUTO_WARMUP_FLOOR_S", "AUTO_WARMUP_CAP_S", "AUTO_WARMUP_WINDOW_S",
           "AUTO_WARMUP_WINDOW_SAMPLES", "STEADY_WITHIN"]

#: A precision stop needs at least this many runs ...
MIN_RUNS = 5
#: ... or this many when they disagree beyond their own spread (a bistable
#: ring buffer: stats.run_states), so that the interval stands on enough of
#: each state.
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
#: Auto warm-up: the longest it lasts, s.
AUTO_WARMUP_CAP_S = 5.0
#: Auto warm-up: the length of each of the two windows compared, s ...
AUTO_WARMUP_WINDOW_S = 0.15
#: ... and the fewest samples a window holds.
AUTO_WARMUP_WINDOW_SAMPLES = 3
#: Two windows agree when their means are within this fraction of each
#: other, or within 3 standard errors of their difference.
STEADY_WITHIN = 0.02


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
    agree (STEADY_WITHIN), after AUTO_WARMUP_FLOOR_S; the cap is the run's
    warm-up length.  WarmupController(interval_s, end_warmup): called with
    each sample's index and hit rate (M/s), it returns end_warmup (the C
    sampler's END_WARMUP request) once, else None."""

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


def warmup_end(rates_mps, interval_s):
    """Where the auto warm-up would have ended on a run's per-sample hit
    rates (M/s, one every interval_s seconds, from the run's start): the
    index of the first measured sample, or None when the rates never
    became steady."""
    if not interval_s > 0:
        raise ValueError(f"interval_s={interval_s!r} out of range: must be > 0")
    controller = WarmupController(interval_s, True)
    for i, rate in enumerate(rates_mps):
        if controller(i, rate) is not None:
            return controller.measured_from
    return None
