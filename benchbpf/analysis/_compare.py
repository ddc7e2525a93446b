"""Sweeps, comparisons and plots over Results.

The top of the package: what it re-exports lives below it (sweeps in
_sweep, statistics in stats, plots in _plot), so that families and Results
use those without importing this module."""
import datetime
import functools
import html
import math
import statistics
import warnings
from dataclasses import dataclass

from ..results._plot import log_scale_fits, plot
from ..harness import _runner
from ..harness._sweep import Sweep, sweep
from ..results.fingerprint import differences
from ..results.result import BLOCK_S, Result, check_emulation
from ..results.stats import NOT_ENOUGH_RUNS, SIGNIFICANT, WITHIN_NOISE, MeanInterval, RunStates, RunTest, across_runs, chi2_sf, instability, mann_whitney_u, mean_ci, median_ci, min_p_value, run_states, runs_mean_ci, runs_needed, samples_needed, series_mean_ci, welch_p
from ..results._drift import standard_error
from ._outcome import FASTER, SAME, SLOWER, THRESHOLD, UNDECIDED, Outcome, verdict_of

__all__ = ["Sweep", "sweep", "Comparison", "compare", "plot", "mann_whitney_u",
           "median_ci", "mean_ci", "samples_needed", "BenchmarkMismatchWarning",
           "across_runs", "RunTest", "runs_needed", "min_p_value",
           "configuration_differences", "SIGNIFICANT", "WITHIN_NOISE", "NOT_ENOUGH_RUNS",
           "run_speed", "usable_rates", "fastest", "MIN_PRODUCER_CPU_NS", "instability",
           "run_states", "RunStates", "chi2_sf", "run_mean_se", "run_agreement",
           "MeanInterval", "series_mean_ci", "runs_mean_ci", "HostTest", "host_test",
           "welch_p", "Outcome", "ratio_interval"]


#: Intervals in which the producers ran less CPU time than this are left
#: out of rates per CPU-second: the counters and the CPU-time clocks are
#: read a microsecond or so apart, 0.5 % of this.
MIN_PRODUCER_CPU_NS = 200_000


def _median(xs):
    return statistics.median(xs) if xs else math.nan


def _per_cpu(samples):
    """Whether every sample carries its producers' CPU time."""
    return bool(samples) and all(s.producer_cpu_ns is not None for s in samples)


def usable_rates(result, counter="hits", per_cpu=None):
    """Per-sample rates of the kept samples, in M/s.

    per_cpu (default: when the samples carry it): per CPU-second of the
    producer threads, counting only intervals in which they ran at least
    MIN_PRODUCER_CPU_NS (over a few microseconds of CPU the rate is noise);
    else per second of the interval.  Either way without catch-up samples:
    intervals shorter than half the sampling period (a late wake-up followed
    by back-to-back samples) carry a few hits over a tiny time."""
    period_ns = float(result.params.get("interval", 0) or 0) * 1e9
    kept = [s for s in result.samples if s.interval_ns >= period_ns / 2]
    if per_cpu is None:
        per_cpu = _per_cpu(result.samples)
    if not per_cpu:
        return [s.rate_mps(counter) for s in kept]
    return [s.rate_per_cpu_mps(counter) for s in kept
            if s.producer_cpu_ns and s.producer_cpu_ns >= MIN_PRODUCER_CPU_NS]


def fastest(xs, top_pct):
    """The fastest top_pct percent of xs (at least one)."""
    xs = sorted(xs)
    k = max(1, math.ceil(len(xs) * top_pct / 100.0))
    return xs[-k:] if xs else []


def run_speed(result, counter="hits", per_cpu=None, top_pct=50):
    """One figure for a run, as the gate and compare() judge it: the median
    of the fastest top_pct percent of its usable rates (usable_rates), M/s;
    NaN without a usable interval."""
    return _median(fastest(usable_rates(result, counter, per_cpu), top_pct))


def run_mean_se(result, counter="hits"):
    """(mean rate of the `counter`, standard error of it), M/s, from within
    one `result` (Result.mean_se: over blocks of about BLOCK_S)."""
    return result.mean_se(counter)


def run_agreement(results, counter="hits", alpha=0.01, min_change=0.05):
    """Whether repeated runs of one configuration (`results`, Results) agree
    within their own spread on the `counter`'s rate (stats.run_states, at
    `alpha` and `min_change`, on each run's mean rate and its block
    standard error, run_mean_se): a RunStates, true when they disagree,
    whose text() says so and names two states when the runs fall into two
    well separated groups (a bistable ring buffer)."""
    pairs = [run_mean_se(r, counter) for r in results]
    return run_states([m for m, _ in pairs], [e for _, e in pairs], alpha, min_change)


class BenchmarkMismatchWarning(UserWarning):
    """Two Results of different benchmarks were compared."""


#: Options that say how long a run measured, not what or how finely:
#: compare() pairs runs whatever these were.  The sampling interval is not
#: one of them: it sets what one sample (and so a run's median) is.
_LENGTH_OPTIONS = ("warmup", "duration", "precision")


def configuration_differences(base, new, ignore=_LENGTH_OPTIONS, labels=("baseline", "new"),
                              strict=False):
    """What makes two Results runs of different configurations, one line
    each: benchmark, parameters (but those in `ignore`), trigger.  Between
    two benchmarks (rb-libbpf and pb-libbpf, compared as one figure) only
    the parameters both have count, and not the trigger, unless strict
    (the gate: a baseline is of one benchmark)."""
    why = []
    a_name, b_name = labels
    same = base.name == new.name or strict
    if base.name != new.name:
        why.append(f"benchmark: {a_name} {base.name}, {b_name} {new.name}")
    keys = set(base.params) | set(new.params) if same else \
        set(base.params) & set(new.params)
    taken = _taken(base.name) if base.name == new.name else None
    for k in sorted(keys):
        if k in ignore:
            continue
        if taken is not None and k not in taken and (k in base.params) != (k in new.params):
            continue    # saved before the benchmark stopped taking it (at its default)
        a, b = base.params.get(k, "<absent>"), new.params.get(k, "<absent>")
        if a != b:
            why.append(f"parameter {k}: {a_name} {a!r}, {b_name} {b!r}")
    ta, tb = base.metadata.get("trigger"), new.metadata.get("trigger")
    if ta != tb and same:   # another benchmark has its own trigger
        why.append(f"trigger: {a_name} {ta!r}, {b_name} {tb!r}")
    return why


def _taken(name):
    """The parameters benchmark `name` takes now, or None for a name the
    registry does not know.  Files saved before a shared parameter was
    limited to the benchmarks that use it (bench_param_def.only) hold it
    for the others too, always at its default: they refused any other."""
    try:
        return set(_runner.describe(name).params) | set(_runner.COMMON_OPTIONS)
    except (TypeError, ValueError):
        return None


def _overlapped(runs):
    """How many of `runs` overlapped another benchbpf run."""
    return sum(1 for r in runs if (r.metadata.get("concurrent_runs") or 0) >= 1)


def _plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def _time_range(runs):
    """(first start, last end) of runs, s since the epoch; None when a run
    does not say when it started."""
    spans = []
    for r in runs:
        try:
            start = datetime.datetime.fromisoformat(r.metadata["started"]).timestamp()
        except (KeyError, TypeError, ValueError):
            return None
        spans.append((start, start + r._span_s()))
    return min(a for a, _ in spans), max(b for _, b in spans)


def _host_interval(runs):
    """The host-widened interval of a side's mean hit rate: one run's
    Result.host_ci_mps; several runs' mean over their means, widened by the
    first one's drift over the time they span.  None when a run was taken
    without a host drift calibration."""
    if any(r.host_drift is None for r in runs):
        return None
    if len(runs) == 1:
        return runs[0].host_ci_mps
    means = [r.mean for r in runs]
    low, high = mean_ci(means)
    span = _time_range(runs)
    return runs[0].host_drift.widen(
        MeanInterval(statistics.fmean(means), low, high, 0.95, len(runs), "runs"),
        span[1] - span[0] if span else 0.0)


@dataclass(frozen=True)
class HostTest:
    """The test for sides taken apart in time on a machine with a host
    drift calibration (host_test): does the difference of their mean hit
    rates stand beyond their host-widened intervals (base, new: each side's
    Result.host_ci_mps, a stats.MeanInterval)?  p_value: Welch's t on those
    intervals' standard errors, two-sided or (alternative "less") for new
    below base.  young: the sides ("baseline", "new") whose interval rests
    on a young history (HostDrift.young_history): the drift it allows for is
    that of the minutes the machine has been watched, not of its hours."""
    base: MeanInterval
    new: MeanInterval
    p_value: float
    alternative: str = "two-sided"
    young: tuple = ()

    def text(self):
        """The test in words: both sides' host intervals (+- %), Welch's p,
        and the sides whose history is young."""
        sided = "one-sided " if self.alternative == "less" else ""
        young = "" if not self.young else \
            f" (young history: {' and '.join(self.young)}; the host's hours may move more)"
        return (f"taken apart in time, against this host's drift (\u00b1"
                f"{self.base.relative_half_width * 100:.1f}% and \u00b1"
                f"{self.new.relative_half_width * 100:.1f}%) {sided}Welch p={self.p_value:.2g}"
                + young)


def _young_history(runs):
    """Whether a side's host interval rests on a young history: a run of
    fixed length has only the calibration, a precision run what history it
    found (HostDrift.young_history)."""
    return any(r.host_drift.young_history() is not None for r in runs)


def host_test(base_runs, new_runs, alternative="two-sided"):
    """A HostTest of new_runs against base_runs when they were taken apart
    in time (their spans do not overlap: taken in turns, the host's drift
    falls on both alike) by runs with a host drift calibration; else None.
    compare() and the pytest gate decide with it."""
    b_span, n_span = _time_range(base_runs), _time_range(new_runs)
    if b_span and n_span and b_span[0] < n_span[1] and n_span[0] < b_span[1]:
        return None
    b, n = _host_interval(base_runs), _host_interval(new_runs)
    if b is None or n is None:
        return None
    p = welch_p(n.mean - b.mean, standard_error(b), b.effective_n - 1,
                standard_error(n), n.effective_n - 1, alternative)
    young = tuple(side for side, runs in (("baseline", base_runs), ("new", new_runs))
                  if _young_history(runs))
    return HostTest(b, n, p, alternative, young)


#: The method compare() decides by, as its Outcome names it.
RUNS_METHOD = "Mann-Whitney U on runs"
#: Up to this many runs in all ratio_interval inverts the exact test itself.
_EXACT_INTERVAL_RUNS = 20


def ratio_interval(base, new, alpha=0.05):
    """(ratio, low, high) of new over base, one figure per run each: the
    median of the pairwise ratios new/base (Hodges-Lehmann) and the ratios
    the test across runs (across_runs, two-sided at alpha) does not reject
    when the base figures are scaled by them (Mann-Whitney's interval, so
    that it excludes 1 where the test finds a difference; over
    _EXACT_INTERVAL_RUNS runs, its ends ranked by the normal approximation
    of U).  None when a side has no positive figure."""
    xs = [x for x in base if x > 0 and math.isfinite(x)]
    ys = [y for y in new if y > 0 and math.isfinite(y)]
    if not xs or not ys:
        return None
    ratios = sorted(y / x for x in xs for y in ys)
    if len(xs) + len(ys) > _EXACT_INTERVAL_RUNS:
        # Many runs: the test's exact distribution costs seconds per look;
        # the normal approximation of U gives the rank of each end.
        m, n = len(xs), len(ys)
        z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
        k = max(0, math.floor(m * n / 2 - z * math.sqrt(m * n * (m + n + 1) / 12)))
        return statistics.median(ratios), ratios[k], ratios[len(ratios) - 1 - k]

    def kept(i):
        return across_runs([x * ratios[i] for x in xs], ys, alpha).verdict != SIGNIFICANT

    # The p-value rises towards the middle ratio and falls past it: bisect
    # each side for the outermost ratio the test keeps.
    mid = (len(ratios) - 1) // 2
    lo, hi = 0, mid
    while lo < hi:
        i = (lo + hi) // 2
        lo, hi = (lo, i) if kept(i) else (i + 1, hi)
    low = lo
    lo, hi = mid, len(ratios) - 1
    while lo < hi:
        i = (lo + hi + 1) // 2
        lo, hi = (i, hi) if kept(i) else (lo, i - 1)
    return statistics.median(ratios), ratios[low], ratios[lo]


@dataclass(frozen=True)
class Comparison:
    """How the `new_runs` differ from the `base_runs` on one counter.

    What it prints: base_median and new_median, the medians of the runs'
    median rates (M/s, per second, as the report shows them), and
    change_pct from baseline to new.

    What it decides on: each run's speed (run_speed, the gate's figure):
    with per_cpu (default when every run recorded its producers' CPU time)
    the median of the fastest top_pct percent of its rates per CPU-second
    of the producer threads, which does not drop when the producers share
    their CPUs with other processes, the main source of run-to-run noise on
    a busy machine; without, each run's median rate.  The verdict is a test
    across runs of those figures (across_runs: exact two-sided Mann-Whitney
    U): "significant" (p < alpha), "within noise", or "not enough runs" when
    there are too few runs per side for any ordering to reach alpha (one
    run each can never be significant; four each can at alpha 0.05).
    Sides taken apart in time on a machine with a host drift calibration
    (hostdrift) must also differ beyond the host's drift (host_test):
    their runs cannot show a phase of the host that holds for minutes,
    which alone would make two runs of one kernel differ.
    `differences` lists the configuration differences the caller accepted
    (different_params=True); `fingerprint_differences` what differs between
    the machines.

    `outcome` states it as every comparison does (an Outcome): B/A of the
    figures with its interval (ratio_interval), and the verdict "slower" or
    "faster" where the test finds a difference, "same" where the interval
    lies within +-threshold (default 2 %), else "undecided".  `verdict`
    keeps the test's own words, as before."""
    base_runs: tuple
    new_runs: tuple
    counter: str = "hits"
    alpha: float = 0.05
    differences: tuple = ()
    per_cpu: bool = False
    top_pct: float = 50
    threshold: float = THRESHOLD

    @property
    def base(self):
        """The first baseline run."""
        return self.base_runs[0]

    @property
    def new(self):
        """The first new run."""
        return self.new_runs[0]

    def _medians(self, runs):
        return tuple(_median(r.rates_mps(self.counter)) for r in runs)

    def _figures(self, runs):
        if not self.per_cpu:
            return self._medians(runs)
        return tuple(run_speed(r, self.counter, True, self.top_pct) for r in runs)

    base_figures = property(lambda self: self._figures(self.base_runs),
                            doc="Each baseline run's figure the verdict is on, M/s.")
    new_figures = property(lambda self: self._figures(self.new_runs),
                           doc="Each new run's figure the verdict is on, M/s.")

    @property
    def base_median(self):
        """Median of the baseline runs' median rates, M/s."""
        return _median_of(self._medians(self.base_runs))

    @property
    def new_median(self):
        """Median of the new runs' median rates, M/s."""
        return _median_of(self._medians(self.new_runs))

    @property
    def ratio(self):
        """new median / base median."""
        b = self.base_median
        return self.new_median / b if b else math.inf

    @property
    def change_pct(self):
        """Change from base_median to new_median, percent."""
        return (self.ratio - 1.0) * 100.0

    @property
    def figure_change_pct(self):
        """Change of the median figure the verdict is on, percent."""
        b = _median_of(self.base_figures)
        return (_median_of(self.new_figures) / b - 1.0) * 100.0 if b else math.inf

    def figure_text(self):
        """What the verdict is on, in words."""
        if not self.per_cpu:
            return "run medians"
        which = "median" if self.top_pct == 100 else f"median of the fastest {self.top_pct:g}%"
        return f"per producer CPU-second, {which}"

    def test(self, alternative="two-sided"):
        """The test across runs of the figures (a RunTest at alpha);
        `alternative` "less": new is slower, "greater": faster."""
        return across_runs(self.base_figures, self.new_figures, self.alpha, alternative)

    def p_value(self, alternative="two-sided"):
        """p-value of the test across runs (new vs base figures).
        alternative "less": new is slower; "greater": faster."""
        return self.test(alternative).p_value

    @functools.cached_property
    def host_test(self):
        """host_test() of the sides on the hit rate (two-sided), or None."""
        if self.counter != "hits":
            return None
        return host_test(self.base_runs, self.new_runs)

    @property
    def verdict(self):
        """"significant", "within noise" or "not enough runs": the test
        across runs, and for sides taken apart in time the host_test too."""
        verdict = self.test().verdict
        host = self.host_test
        if verdict == SIGNIFICANT and host is not None and host.p_value >= self.alpha:
            return WITHIN_NOISE
        return verdict

    @property
    def significant(self):
        """True only when the test across runs gives p < alpha."""
        return self.verdict == SIGNIFICANT

    @functools.cached_property
    def outcome(self):
        """The comparison as every comparison states it (an Outcome): B/A of
        the figures and its interval at 1 - alpha (ratio_interval), the
        verdict (see the class) and the method."""
        test = self.test()
        method = RUNS_METHOD + ("" if self.host_test is None else " and the host's drift")
        rates = (f"error rates of {RUNS_METHOD} comparisons: not in the package data "
                 "(results/compare-rates-2cpu.md)")
        found = ratio_interval(self.base_figures, self.new_figures, self.alpha) \
            if test.verdict != NOT_ENOUGH_RUNS else None
        if found is None:
            note = f"not enough runs (needs {test.runs_needed} per side)" \
                if test.verdict == NOT_ENOUGH_RUNS else "no figure to compare"
            return Outcome(None, None, None, 1 - self.alpha, method, UNDECIDED, False,
                           self.threshold, None, rates, note)
        ratio, low, high = found
        within, beyond = verdict_of(low, high, self.threshold)
        note = ""
        if self.verdict == SIGNIFICANT:
            verdict = SLOWER if ratio < 1 else FASTER
        else:
            verdict, beyond = (SAME, False) if within == SAME else (UNDECIDED, False)
            if test.verdict == SIGNIFICANT:
                note = "not beyond the host's drift"
        return Outcome(ratio, low, high, 1 - self.alpha, method, verdict, beyond,
                       self.threshold, None, rates, note)

    @property
    def overlapped(self):
        """(baseline runs, new runs) that overlapped another benchbpf run."""
        return _overlapped(self.base_runs), _overlapped(self.new_runs)

    @property
    def fingerprint_differences(self):
        """What differed between the two runs' machines, one line each."""
        return differences(self.base.metadata.get("fingerprint"),
                           self.new.metadata.get("fingerprint"))

    def test_text(self):
        """The test behind the outcome: runs, figure, p-value, the host's
        drift, in words."""
        t = self.test()
        runs = f"{len(self.base_runs)} -> {len(self.new_runs)} runs"
        if t.verdict == NOT_ENOUGH_RUNS:
            return (f"{runs}: not enough runs to call it significant (at alpha "
                    f"{self.alpha:g} the test across runs needs {t.runs_needed} per side)")
        on = "" if not self.per_cpu else \
            f" on {self.figure_text()} ({self.figure_change_pct:+.1f}%)"
        host = "" if self.host_test is None else f", {self.host_test.text()}"
        return f"{runs}, Mann-Whitney U across runs{on} p={t.p_value:.2g}{host}"

    def verdict_text(self):
        """The test's verdict with its test, p-value and runs, in words
        (the words of `verdict`; the outcome's are in str())."""
        t = self.test()
        if t.verdict == NOT_ENOUGH_RUNS:
            return self.test_text()
        return f"{self.test_text()}: {self.verdict}"

    @property
    def agreement(self):
        """(baseline, new) RunStates: whether each side's runs agree within
        their own spread (run_agreement); None for a side of one run."""
        return tuple(run_agreement(runs, self.counter) if len(runs) > 1 else None
                     for runs in (self.base_runs, self.new_runs))

    def overlap_text(self):
        """A mark for runs taken while another benchbpf run was going, or ""."""
        b, n = self.overlapped
        if not b and not n:
            return ""
        return (f"[OVERLAPPED other benchbpf runs: baseline {b} of {len(self.base_runs)}, "
                f"new {n} of {len(self.new_runs)} runs]")

    def __str__(self):
        names = self.base.name if self.base.name == self.new.name else \
            f"{self.base.name} -> {self.new.name}"
        if self.new.metadata.get("family", self.new.name) != \
                self.base.metadata.get("family", self.base.name):
            names += " (DIFFERENT BENCHMARKS)"
        o = self.outcome
        head = (f"{names}: {self.counter} median {self.base_median:.3f} -> "
                f"{self.new_median:.3f} M/s ({self.change_pct:+.1f}%): {o.text()}; "
                f"{self.test_text()} [{o.rates_text}]")
        mark = self.overlap_text()
        if mark:
            head += " " + mark
        for side, states in zip(("baseline", "new"), self.agreement):
            if states:
                head += f"\n{side}: {states.text()}"
        if self.differences:
            head += "\nconfiguration differs (accepted):\n" + \
                "\n".join("  " + d for d in self.differences)
        diffs = self.fingerprint_differences
        if diffs:
            head += "\nfingerprint differences:\n" + "\n".join("  " + d for d in diffs)
        return head

    def _repr_html_(self):
        def row(label, runs, figures):
            rates = [x for r in runs for x in r.rates_mps(self.counter)]
            over = _overlapped(runs)
            return (f"<tr><td>{label}</td><td>{html.escape(runs[0].name)}</td>"
                    f"<td>{_median_of(self._medians(runs)):.3f}</td><td>{len(runs)}</td>"
                    f"<td>{html.escape(', '.join(f'{x:.3f}' for x in figures))}</td>"
                    f"<td>{len(rates)}</td><td>{over or ''}</td>"
                    f"<td>{html.escape(str(runs[0].metadata.get('started', '?')))}</td></tr>")
        diffs = self.fingerprint_differences
        diff_html = ("<br><b>fingerprint differences</b><ul>"
                     + "".join(f"<li><code>{html.escape(d)}</code></li>" for d in diffs)
                     + "</ul>") if diffs else ""
        conf_html = ("<br><b>configuration differs (accepted)</b><ul>"
                     + "".join(f"<li><code>{html.escape(d)}</code></li>"
                               for d in self.differences) + "</ul>") if self.differences else ""
        return (f"<div><b>{html.escape(self.counter)}</b>: baseline &rarr; new "
                f"{self.change_pct:+.1f}% (ratio {self.ratio:.3f}), "
                f"<b>{html.escape(self.outcome.text())}</b>; "
                f"{html.escape(self.test_text())} {html.escape(self.overlap_text())}"
                f"<table><tr><th></th><th>benchmark</th><th>median of run medians, M/s</th>"
                f"<th>runs</th><th>{html.escape(self.figure_text())}</th><th>samples</th>"
                f"<th>overlapped runs</th>"
                f"<th>started</th></tr>"
                f"{row('baseline', self.base_runs, self.base_figures)}"
                f"{row('new', self.new_runs, self.new_figures)}</table>"
                f"{conf_html}{diff_html}</div>")


def _median_of(xs):
    return _median([x for x in xs if not math.isnan(x)])


def _runs(label, side):
    """One side of a comparison as a tuple of Results of one configuration:
    a precision run counts as the runs it is made of (Result.runs()), the
    units its interval stands on."""
    if isinstance(side, Result):
        return side.runs()
    if isinstance(side, (str, bytes)) or not hasattr(side, "__iter__"):
        raise TypeError(f"{label} must be a benchbpf.Result or a sequence of them "
                        f"(a ResultSet, list or tuple), not {type(side).__name__}")
    runs = tuple(side)
    for r in runs:
        if not isinstance(r, Result):
            raise TypeError(f"{label} must be a benchbpf.Result or a sequence of them, "
                            f"but holds a {type(r).__name__}")
    if not runs:
        raise ValueError(f"{label} holds no run")
    runs = tuple(part for r in runs for part in r.runs())
    for r in runs[1:]:
        why = configuration_differences(runs[0], r, labels=("its first run", "another"))
        if why:
            raise ValueError(f"{label} holds runs of different configurations ("
                             + "; ".join(why) + "): compare one configuration per side "
                             "(ResultSet.where)")
    return runs


#: The command-line flags of compare()'s keywords, for messages both read.
_FLAGS = {"different_benchmarks": "--different-benchmarks",
          "different_params": "--different-params"}


def compare(base, new, counter="hits", alpha=0.05, different_benchmarks=False,
            different_params=False, per_cpu=None, top_pct=50, allow_emulated=False,
            threshold=THRESHOLD):
    """Compare a baseline with new runs (e.g. before/after a kernel change).

    base, new: a Result, or several Results of one configuration (a
    ResultSet, list or tuple: repetitions, `benchbpf NAME --repeat N`).
    Each run counts as one figure, its median; the verdict is a test across
    runs (see Comparison), so a single run per side gives medians and the
    change but the verdict "not enough runs", never "significant".

    Two benchmarks of one family with the same report (rb-libbpf and
    pb-libbpf: records read per second) compare as they are.  Results of
    benchmarks that measure different things (count-global and rb-libbpf)
    are refused (ValueError) unless different_benchmarks=True, and then
    compared with a BenchmarkMismatchWarning.  Runs whose parameters,
    trigger or sampling interval differ are refused (ValueError naming each
    difference) unless different_params=True says that the difference is
    the point; the Comparison then lists them.  Warm-up, duration and
    precision may differ.  A precision run (precision=) counts as its runs,
    each loaded anew: one per side is enough for a verdict.

    per_cpu: decide on each run's speed per producer CPU-second (the median
    of its fastest top_pct percent of intervals, as the gate does); default
    when every run recorded its producers' CPU time.  False: decide on the
    runs' median rates per second, the figures printed.

    A run in an emulated guest and one on real CPUs are refused unless
    allow_emulated=True (result.check_emulation).

    threshold: the change that matters, a fraction (default 0.02): the
    outcome says "same" when B/A's interval lies within it."""
    base_runs, new_runs = _runs("base", base), _runs("new", new)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} out of range: 0 < alpha < 1")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) \
            or not 0 < threshold < 1:
        raise ValueError(f"threshold={threshold!r} out of range: a fraction, 0 < threshold < 1")
    b, n = base_runs[0], new_runs[0]
    family = b.metadata.get("family")
    alike = b.name == n.name or (family is not None and family == n.metadata.get(
        "family") and b.report == n.report)
    if not alike:
        if not different_benchmarks:
            raise ValueError(f"base is {b.name} and new is {n.name}: these "
                             "benchmarks measure different things; pass "
                             "different_benchmarks=True (command line: "
                             f"{_FLAGS['different_benchmarks']}) to compare them anyway")
        warnings.warn(f"comparing different benchmarks: {b.name} -> {n.name}",
                      BenchmarkMismatchWarning, stacklevel=2)
    why = [d for d in configuration_differences(b, n) if not d.startswith("benchmark:")]
    if why and not different_params:
        raise ValueError(f"{b.name}: the baseline and the new runs differ in\n  "
                         + "\n  ".join(why) + "\nrefusing to compare; pass "
                         "different_params=True (command line: "
                         f"{_FLAGS['different_params']}) if that difference is the point")
    for r in base_runs[1:] + new_runs:
        check_emulation(b, r, allow_emulated)
    b.rates_mps(counter)  # KeyError naming the counters if unknown
    if isinstance(top_pct, bool) or not isinstance(top_pct, (int, float)) \
            or not 0 < top_pct <= 100:
        raise ValueError(f"top_pct={top_pct!r} out of range: 0 < pct <= 100")
    recorded = all(_per_cpu(r.samples) for r in base_runs + new_runs)
    if per_cpu is None:
        per_cpu = recorded
    elif per_cpu and not recorded:
        raise ValueError("per_cpu=True: some runs were recorded without their producers' "
                         "CPU time (an earlier benchbpf); pass per_cpu=False")
    return Comparison(base_runs, new_runs, counter, alpha, tuple(why), bool(per_cpu), top_pct,
                      float(threshold))
