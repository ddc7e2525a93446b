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

# The stopping rules are public in .stopping (scripts replay them); the
# run machinery reads them through here as before.
from .stopping import AUTO_WARMUP_CAP_S, AUTO_WARMUP_FLOOR_S, MIN_RUNS, MIN_RUNS_APART, WarmupController, stop_reason  # noqa: F401

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
