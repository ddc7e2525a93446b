"""pytest plugin: regression gates on benchbpf Results::

    def test_count_local(benchbpf_gate):
        benchbpf_gate.check("count-local",
                            lambda: benchbpf.run("count-local", warmup=0.2, duration=1,
                                                 interval=0.001),
                            max_drop_pct=15)

`pytest --benchbpf-baseline DIR --benchbpf-save` records baselines as
DIR/<key>.json (BASELINE_FORMAT: what the comparison needs of each run, a few
kB); `pytest --benchbpf-baseline DIR` compares against them.  `--benchbpf-save` alone and `--benchbpf-compare` use
``.benchbpf-baselines`` in pytest's rootdir.  --benchbpf-baseline always
takes a directory; a test file there is a usage error.

What is compared: a run's speed is the median of the fastest `top_pct`
percent (default 10) of its per-interval rates, per CPU-second of the
producer threads (the harness reads each one's CPU-time clock at every
sample; only intervals in which they ran at least 0.2 ms count).
Per CPU-second, a producer that shares its CPU with another thread is not
slower; the fastest intervals leave out the ones in which something else
slowed it while it ran (another process on the other CPUs, the host).
What neither removes is a slowdown lasting a whole run: on a virtual
machine a CPU runs some 17 % slower for seconds at a time, whatever runs
on it (the host's doing), so runs, not samples, are the unit.  A baseline
is recorded from several runs (Gate.baseline_runs, default 5, 1 s apart);
its reference is the highest lower confidence bound of their speeds (the
code is as fast as its fastest undisturbed run), and the runs' speeds and
spread are stored and shown.

The rule (Gate's docstring): a run is slower when the upper (1 - alpha)
confidence bound of its speed is more than max_drop_pct below the
baseline's reference AND a one-sided Mann-Whitney U test of its fastest
rates against the baseline's gives p < alpha (default 0.01).  A check
fails only when a slower run is confirmed by three more independent runs,
each slower, after pauses of 2, 5 and 10 s (Gate.confirm_delays_s); the
first run whose speed is within max_drop_pct passes it; and the slower
runs' speeds must be below the baseline runs' by the test across runs that
`benchbpf compare` uses (analysis.across_runs, one-sided, at alpha); on a
machine with a host drift calibration, their mean hit rate below the
baseline's beyond the host's drift too (analysis.host_test, one-sided).  A
slower run that overlapped another benchbpf run is measured again, up to
Gate.max_overlap_retries times, then counted and named; a check that cannot
decide while runs overlapped is skipped saying so.  A run with fewer samples
than the baseline's spread needs is topped up by the next.  A failure
names both speeds, the change and its bound, the p-value, the baseline's
file and date, and what differs in the machine.  An UnsupportedError
inside check() skips the test with its reason.

A baseline of another benchmark, other parameters or another trigger is
not comparable: an outcome of its own, counted apart from failures
("1 not comparable"), saying what differs and how to re-save; it fails the
session, since a gate that compares nothing guards nothing.  Without a
baseline nothing is compared: each check is listed as NOT CHECKED in the
terminal summary, naming the flags to use.

`--benchbpf-history [PATH|URL]` records every run of each check into the
history store; `--benchbpf-baseline-from-history N` compares each check
against the last N runs of its series on this machine and kernel there
instead of a file.
"""
import json
import math
import os
import re
import statistics
import time
import warnings

import pytest

from .._core import UnsupportedError
# Parameters that may differ between a baseline and a run: how long and how
# often it sampled, not what it measured (the host history's rule too).
from ..results._drift import TIMING_PARAMS
from ..analysis._compare import MIN_PRODUCER_CPU_NS, SIGNIFICANT, across_runs, configuration_differences, host_test, mann_whitney_u, median_ci, min_p_value, ratio_interval, samples_needed
# The gate's speed of a run, shared with compare(): usable rates (per producer
# CPU-second where recorded), the fastest of them, their median.
from ..analysis._compare import _median, fastest as _top, run_speed, usable_rates as _rates
from ..analysis._outcome import FASTER, SAME, SLOWER, UNDECIDED, Outcome
from ..results.fingerprint import machine_differences
from ..results.result import Result
from ..results.resultset import ResultSet
from ._gate_file import BASELINE_FORMAT, BASELINE_VERSION as _BASELINE_VERSION, Baseline, NotComparable as _NotComparable

__all__ = ["Gate", "Baseline", "GateWarning", "DEFAULT_BASELINE_DIR", "TIMING_PARAMS",
           "BASELINE_FORMAT", "MIN_HISTORY_RUNS", "MAX_HISTORY_RUNS", "HISTORY_METHOD"]

#: Where baselines go when --benchbpf-baseline / --benchbpf-save name no directory.
DEFAULT_BASELINE_DIR = ".benchbpf-baselines"
#: The range of --benchbpf-baseline-from-history N, runs.
MIN_HISTORY_RUNS, MAX_HISTORY_RUNS = 1, 1000


_REPORTS = "benchbpf_reports"
#: The user property that marks a check as not comparable with its baseline.
_NOT_COMPARABLE_MARK = ("benchbpf_outcome", "not comparable")

class GateWarning(UserWarning):
    """The baseline was taken on a machine that differs (kernel, CPU, mitigations...)."""


def pytest_addoption(parser):
    group = parser.getgroup("benchbpf", "BPF benchmark regression gates")
    group.addoption("--benchbpf-baseline", metavar="DIR", default=None,
                    help="the baselines' directory (<key>.json): compare against them, or "
                         "with --benchbpf-save record them there")
    group.addoption("--benchbpf-compare", action="store_true", default=False,
                    help="compare against the baselines in --benchbpf-baseline DIR, else "
                         f"in {DEFAULT_BASELINE_DIR} in the rootdir")
    group.addoption("--benchbpf-save", action="store_true", default=False,
                    help="save this run's results as baselines (to --benchbpf-baseline, "
                         f"else {DEFAULT_BASELINE_DIR} in the rootdir)")
    group.addoption("--benchbpf-history", metavar="PATH|URL", nargs="?", const="",
                    default=None,
                    help="record every run of each check into this history store (an "
                         "SQLite file or a postgresql:// URL; without a value, "
                         "$BENCHBPF_HISTORY or the default store)")
    group.addoption("--benchbpf-baseline-from-history", metavar="N", type=int, default=None,
                    help="take each check's baseline as its last N runs in the history "
                         "store (--benchbpf-history, else the default) on this machine, "
                         "kernel and parameters, instead of a baseline file; the check's "
                         f"runs are recorded there too ({MIN_HISTORY_RUNS} <= N <= "
                         f"{MAX_HISTORY_RUNS})")


def _baseline_dir_error(value):
    """Why `value` of --benchbpf-baseline looks like a test path, not a
    baseline directory (`pytest --benchbpf-baseline test_rb.py` takes the
    test file as the directory), or None."""
    if "::" in value or value.endswith(".py") or os.path.isfile(value):
        return (f"--benchbpf-baseline {value}: that is a test file, not a baseline "
                "directory; --benchbpf-baseline takes a directory (write "
                "--benchbpf-baseline=DIR), and --benchbpf-compare alone compares against "
                f"{DEFAULT_BASELINE_DIR} in the rootdir")
    return None


def _history_options_error(config):
    """What is wrong with --benchbpf-history / --benchbpf-baseline-from-history
    as given, or None: a value that looks like a test path, N out of range,
    a file baseline asked for as well, or a store that is no store (or,
    for a baseline from it, one that cannot be used now)."""
    store = config.getoption("--benchbpf-history", None)
    n = config.getoption("--benchbpf-baseline-from-history", None)
    if store and ("::" in store or store.endswith(".py") or os.path.isdir(store)):
        return (f"--benchbpf-history {store}: that is a test path or a directory, not a "
                "history store; write --benchbpf-history=PATH (an SQLite file or a "
                "postgresql:// URL), or --benchbpf-history alone for the default store")
    if n is None and store is None:
        return None
    if n is not None and not MIN_HISTORY_RUNS <= n <= MAX_HISTORY_RUNS:
        return (f"--benchbpf-baseline-from-history {n}: out of range, "
                f"{MIN_HISTORY_RUNS} <= N <= {MAX_HISTORY_RUNS} (the runs the baseline is "
                "taken from)")
    if n is not None and (config.getoption("--benchbpf-baseline", None) is not None or
                          config.getoption("--benchbpf-save") or
                          config.getoption("--benchbpf-compare")):
        return ("--benchbpf-baseline-from-history takes the baseline from the history "
                "store: give it without --benchbpf-baseline, --benchbpf-save or "
                "--benchbpf-compare (baseline files)")
    from .. import history
    try:
        history.check(store or None)
    except history.HistoryUnavailable as e:
        # A store that cannot take runs now: recording only, the checks
        # run and each says it could not record; a baseline cannot be read.
        if n is not None:
            return f"--benchbpf-baseline-from-history {n}: {e}"
    except history.HistoryError as e:
        return f"--benchbpf-history {store or '(the default store)'}: {e}"
    return None


def pytest_configure(config):
    setattr(config, _REPORTS, [])
    value = config.getoption("--benchbpf-baseline", None)
    if value is not None:
        why = _baseline_dir_error(value)
        if why:
            raise pytest.UsageError(why)
    why = _history_options_error(config)
    if why:
        raise pytest.UsageError(why)


def pytest_report_teststatus(report, config):
    # A check whose baseline is of another configuration failed without
    # comparing anything: counted apart from failures ("1 not comparable"),
    # so the summary never reads as a slowdown.  The session still fails.
    if report.when == "call" and report.failed and \
            _NOT_COMPARABLE_MARK in getattr(report, "user_properties", ()):
        return "not comparable", "N", "NOT COMPARABLE"
    return None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    reports = getattr(config, _REPORTS, None)
    if not reports:
        return
    terminalreporter.section("benchbpf gate")
    for line in reports:
        terminalreporter.write_line(line)


class _Verdict:
    PASS, REGRESSION, UNCLEAR = "pass", "regression", "unclear"


def _rel_spread(xs):
    """Robust relative spread of samples: interquartile range / 1.349 / median."""
    if len(xs) < 4:
        return math.nan
    q = statistics.quantiles(xs, n=4)
    med = statistics.median(xs)
    return (q[2] - q[0]) / 1.349 / med if med > 0 else math.nan




def _load_baseline(path, counter="hits", top_pct=10, alpha=0.01):
    """The Baseline saved at `path`: the gate's own format, a ResultSet of
    runs (as versions before it saved) or one Result (older still, a
    baseline of one run).  _NotComparable when the file kept another
    counter, fastest share or unit than the check asks for."""
    with open(path) as f:
        try:
            d = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON ({e})") from None
    if not isinstance(d, dict):
        raise ValueError(f"{path}: not a benchbpf baseline (a JSON {type(d).__name__})")
    if d.get("format") == BASELINE_FORMAT:
        if d.get("version") != _BASELINE_VERSION:
            raise ValueError(f"{path}: gate baseline version {d.get('version')!r} not "
                             f"supported (this benchbpf reads {_BASELINE_VERSION})")
        return Baseline.from_dict(d, counter, top_pct, alpha)
    if d.get("format") == "benchbpf-result":
        return Baseline((Result.from_dict(d),), counter, top_pct, alpha=alpha)
    return Baseline(tuple(ResultSet.from_dict(d)), counter, top_pct, alpha=alpha)


def _store_name(location):
    """A history store's location as the store names it (a URL without its
    password); None: the default store's."""
    from ..history import Store, default_location
    named = Store.__new__(Store)    # not opened: only its name is wanted
    named.location = str(location or default_location())
    return named.where


def _unit(per_cpu):
    return "per producer CPU-second" if per_cpu else "per second"


class Gate:
    """Compares Results against saved baselines, one key per gate.

    The rule, for a check against a baseline of B runs (see check()):

    - a run's speed is the median of the fastest top_pct percent of its
      per-interval rates, per CPU-second of the producer threads (per
      second of the interval for samples recorded without that);
    - the baseline's reference is the highest lower (1 - alpha) confidence
      bound of its runs' speeds (see Baseline);
    - a run is slower when the upper (1 - alpha) confidence bound of its
      speed is more than max_drop_pct below the reference AND a one-sided
      Mann-Whitney U test of its fastest rates against the baseline runs'
      gives p < alpha;
    - the check fails only when a slower run is confirmed by
      len(confirm_delays_s) more independent runs, each slower, after
      pauses of confirm_delays_s; the first run whose speed is no more than
      max_drop_pct below the reference passes it.  The pauses grow: a CPU
      slowed by the host stays slow for seconds;
    - and, as `benchbpf compare` decides, the slower runs' speeds must be
      below the baseline runs' speeds by across_runs (one-sided, at alpha):
      the decision both share.  One baseline run can never reach it;
    - on a machine with a host drift calibration, the slower runs' mean hit
      rate must be below the baseline runs' beyond both sides' host-widened
      intervals (analysis.host_test, one-sided Welch p < alpha), as compare()
      requires of sides taken apart in time; else the check is undecided.
    """

    #: At most this many runs of a callable per check.
    max_runs = 8
    #: At most this many slower runs that overlapped another benchbpf run
    #: are measured again instead of counted.
    max_overlap_retries = 3
    #: Runs a baseline is recorded from, given a callable, and the pause
    #: between them, seconds.
    baseline_runs = 5
    baseline_delay_s = 1.0
    #: Pauses before the runs that confirm a slower run, seconds.
    confirm_delays_s = (2.0, 5.0, 10.0)

    @property
    def regression_runs(self):
        """Slower runs in a row a regression needs."""
        return len(self.confirm_delays_s) + 1

    def __init__(self, directory, save, request, reports=None, history=False,
                 history_runs=None):
        self.directory = directory
        self.save = save
        self.request = request
        self.reports = reports if reports is not None else []
        #: The history store every run of a check is recorded into: a path
        #: or URL, None for the default store (history.default_location()),
        #: False for none.
        self.history = history
        #: Take the baseline as the last history_runs runs in that store
        #: (None: from the baseline directory).
        self.history_runs = history_runs

    def _path(self, key):
        if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", key):
            raise ValueError(f"key={key!r}: use letters, digits, '_', '.', '-'")
        return os.path.join(self.directory, key + ".json")

    def _note(self, line):
        self.reports.append(line)
        self.request.node.user_properties.append(("benchbpf", line))

    def _not_comparable(self, key, path, when, why):
        """Stop the check: its baseline is of another configuration.  Its
        own outcome, not a regression: the report is counted as "not
        comparable" (pytest_report_teststatus), and fails the session,
        since a gate that cannot compare guards nothing."""
        self.request.node.user_properties.append(_NOT_COMPARABLE_MARK)
        self._note(f"{key}: NOT COMPARABLE, baseline {path} ({when}) is of another "
                   "configuration: " + "; ".join(why) + "; re-save it with "
                   "--benchbpf-save")
        pytest.fail(f"{key}: not comparable: baseline {path} ({when}) is of another "
                    "configuration than this check, so nothing was compared (not a "
                    "regression):\n  " + "\n  ".join(why) + "\nif the change is "
                    "meant, record the baseline again: pytest --benchbpf-baseline DIR "
                    "--benchbpf-save", pytrace=False)

    @staticmethod
    def mismatch(base, result, allow=()):
        """What makes `base` no baseline for `result`: a list of lines, empty if
        none (analysis.configuration_differences, compare()'s own check, but
        for TIMING_PARAMS: the gate's rates per CPU-second of fastest
        intervals do not depend on the sampling interval as medians do)."""
        return configuration_differences(base, result, ignore=TIMING_PARAMS + tuple(allow),
                                         labels=("baseline", "this run"), strict=True)

    def required_samples(self, base, max_drop_pct, counter="hits", alpha=0.01, top_pct=10):
        """Samples a run needs to tell a max_drop_pct drop from the baseline's
        spread (see analysis.samples_needed), counting every sample of which
        the fastest top_pct percent are compared.  base: a Result or a Baseline."""
        if isinstance(base, Result):
            base = Baseline((base,), counter, top_pct)
        spread = _median([_rel_spread(t) for t in base.tops])
        if not math.isfinite(spread):
            spread = 0.5    # too few baseline samples to tell: assume a wide one
        n = samples_needed(spread, max_drop_pct / 100.0, alpha=alpha)
        return math.ceil(n * 100.0 / top_pct)

    def _save(self, key, path, get, runner, counter, top_pct, alpha):
        runs = []
        for i in range(self.baseline_runs if runner else 1):
            if i:
                time.sleep(self.baseline_delay_s)
            runs.append(get())
        base = Baseline(runs, counter, top_pct, alpha=alpha)
        os.makedirs(self.directory, exist_ok=True)
        with open(path, "w") as f:
            json.dump(base.as_dict(), f, separators=(",", ":"))
            f.write("\n")
        self._note(f"{key}: saved baseline {path} ({runs[0].name} {counter} "
                   f"{_unit(base.per_cpu)}, fastest {top_pct:g}%: {base.describe()})"
                   + ("" if runner else " [one run: pass a callable to record "
                      f"{self.baseline_runs}]"))

    def check(self, key, result, max_drop_pct=20.0, counter="hits", alpha=0.01,
              top_pct=10, allow_param_changes=()):
        """Fail the test if `result` regressed against baseline `key`.

        result: a benchbpf.Result, or a callable returning one (prefer it:
            then --benchbpf-save records the baseline from `baseline_runs`
            runs, and a check can run again to top up samples, to confirm a
            regression with independent runs, and to measure again a run
            that overlapped another benchbpf run).
        max_drop_pct: the smallest drop that counts, percent of the
            baseline's reference speed.
        alpha: level of the confidence bound and of the one-sided
            Mann-Whitney U test (new < baseline).
        top_pct: compare the fastest top_pct percent of each run's
            per-interval rates (100: all of them).  Threads of other
            processes take whole intervals from the producers, or slow them
            down while they run (the CPUs' other work, or the host's); the
            fastest intervals are the ones they ran through undisturbed.
            Sample often (a short `interval`) so that many do.
        allow_param_changes: parameters that may differ from the baseline's
            (what the comparison is about, e.g. a tuning knob).

        The decision is the class docstring's rule.  A run with fewer
        samples than the baseline's spread needs, or whose speed is below
        the limit while its confidence bound is not, is topped up by the
        next run's samples.  With history_runs, the baseline is the last
        history_runs runs of the check's series on this machine and kernel
        in the history store (compared as the store keeps them: one mean
        per run); with a history store, every run is recorded there.
        Returns a dict describing the decision (None when saving, when no
        baseline directory was given, or when the store holds too few
        runs): its
        "outcome" is the decision as every comparison states it (an
        analysis Outcome, see _outcome), its "verdict" the gate's own word
        ("pass", "regression", "unclear")."""
        if not (isinstance(result, Result) or callable(result)):
            raise TypeError("result must be a benchbpf.Result or a callable returning one, "
                            f"not {type(result).__name__}")
        if isinstance(max_drop_pct, bool) or not isinstance(max_drop_pct, (int, float)) \
                or not 0 < max_drop_pct < 100:
            raise ValueError(f"max_drop_pct={max_drop_pct!r} out of range: 0 < pct < 100")
        if not 0 < alpha < 0.5:
            raise ValueError(f"alpha={alpha!r} out of range: 0 < alpha < 0.5")
        if isinstance(top_pct, bool) or not isinstance(top_pct, (int, float)) \
                or not 0 < top_pct <= 100:
            raise ValueError(f"top_pct={top_pct!r} out of range: 0 < pct <= 100")
        path = self._path(key) if self.directory is not None else None
        runner = result if callable(result) and not isinstance(result, Result) else None

        def get():
            try:
                r = runner() if runner else result
            except UnsupportedError as e:
                # A kernel without the feature: nothing to gate here, not a failure.
                self._note(f"{key}: SKIPPED, cannot run here: {e}")
                pytest.skip(f"{key}: cannot run here: {e}")
            if not isinstance(r, Result):
                raise TypeError(f"the callable returned {type(r).__name__}, not a "
                                "benchbpf.Result")
            ran.append(r)
            return r

        ran = []
        try:
            return self._check(key, path, get, runner, max_drop_pct, counter, alpha, top_pct,
                               allow_param_changes)
        finally:
            # Whatever the check decided (or raised), its runs go into the store.
            if self.history is not False and ran:
                self._record(key, ran)

    def _record(self, key, runs):
        """Record `runs` into the history store; a store that cannot take
        them is a HistoryWarning and a note, the runs' figures kept."""
        from .. import history
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", history.HistoryWarning)
            new = sum(history.record(r, self.history or None) for r in runs)
        failed = [w for w in caught if issubclass(w.category, history.HistoryWarning)]
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        where = _store_name(self.history)
        if failed:
            self._note(f"{key}: history: NOT RECORDED in {where}: {failed[0].message} "
                       f"(its figures: " + ", ".join(f"{r.mean:.3f}" for r in runs)
                       + " M/s mean)")
        else:
            self._note(f"{key}: history: {new} run(s) recorded in {where}")

    def _check_history(self, key, get, runner, max_drop_pct, alpha):
        """The check against the last history_runs runs of its series on
        this machine and kernel in the history store.  The store keeps a
        run's figures, not its samples: what is compared, run against run,
        is its mean hit rate per second (all its hits over all its time: a
        producer that got the CPU in slices leaves many 1-ms samples empty,
        and their median at 0).  A run within max_drop_pct of the stored
        runs' median passes; a slower one is confirmed by more runs, after
        confirm_delays_s, until len(confirm_delays_s) + 1 slower runs are
        below the stored ones by across_runs (one-sided, at alpha).  Fewer
        stored runs than history_runs: NOT CHECKED, saying how many."""
        from .. import history
        n, store = self.history_runs, self.history or None
        where = _store_name(self.history)
        r = get()
        try:
            rows = history.last_runs(r, n, store)
        except history.HistoryError as e:
            pytest.fail(f"{key}: cannot read the baseline from history: {e}", pytrace=False)
        base = [x["mean_mps"] for x in rows if x["mean_mps"] is not None]
        kernel = rows[-1]["kernel_release"] if rows else r.metadata.get("kernel")
        if len(base) < n:
            self._note(f"{key}: NOT CHECKED, history store {where} holds {len(base)} of the "
                       f"{n} runs of {r.name} with these parameters on this machine and "
                       f"kernel the baseline needs (--benchbpf-baseline-from-history {n}); "
                       "each check with --benchbpf-history records its runs there "
                       f"({r.name} mean {r.mean:.3f} M/s)")
            return None
        ref = _median(base)
        if not ref > 0:
            pytest.fail(f"{key}: the last {n} runs in history store {where} have no hits: "
                        "no baseline to compare with (record on a less loaded machine)",
                        pytrace=False)
        figures, slower, lines = [], [], []
        verdict = _Verdict.UNCLEAR
        while True:
            figures.append(r.mean)
            change = (r.mean / ref - 1.0) * 100.0
            if change >= -max_drop_pct:
                verdict = _Verdict.PASS
            else:
                slower.append(r.mean)
            lines.append(f"run {len(figures)}: mean {r.mean:.3f} M/s, {change:+.1f}% -> "
                         + ("pass" if verdict == _Verdict.PASS else "slower"))
            if verdict == _Verdict.PASS:
                break
            left = self.max_runs - len(figures) if runner else 0
            if len(slower) >= self.regression_runs and \
                    across_runs(base, slower, alpha, "less").verdict == SIGNIFICANT:
                verdict = _Verdict.REGRESSION
                break
            if not left or min_p_value(len(base), len(slower) + left, "less") >= alpha:
                break   # no number of runs left could decide
            time.sleep(self.confirm_delays_s[min(len(slower), len(self.confirm_delays_s)) - 1])
            r = get()
        found = ratio_interval(base, figures, 2 * alpha)
        ratio, low, high = found if found else (math.nan, math.nan, math.nan)
        outcome = _outcome(verdict, ratio * ref, [low * ref, high * ref], ref, alpha,
                           max_drop_pct, HISTORY_METHOD)
        detail = (f"{r.name} mean hits per second: {_median(figures):.3f} M/s (median of "
                  f"{len(figures)} run(s)) vs {ref:.3f} M/s, the median of the last {n} runs "
                  f"in history store {where} ({rows[0]['started']}..{rows[-1]['started']}, "
                  f"kernel {kernel}), limit -{max_drop_pct:g}%")
        decision = {"key": key, "verdict": verdict, "outcome": outcome,
                    "speed_mps": _median(figures), "baseline_mps": ref,
                    "baseline_speeds_mps": tuple(base), "runs": len(figures),
                    "slower_runs": len(slower), "history": tuple(lines)}
        if verdict == _Verdict.REGRESSION:
            self._note(f"{key}: REGRESSION {outcome.text()}; {detail}")
            pytest.fail(f"{key}: regression: {outcome.text()}; {detail}\n"
                        + "\n".join(lines), pytrace=False)
        if verdict == _Verdict.UNCLEAR:
            self._note(f"{key}: UNDECIDED {outcome.text()}; {detail}")
            pytest.fail(f"{key}: cannot decide: {outcome.text()}; {detail}; "
                        f"{len(slower)} slower run(s), {self.regression_runs} a regression "
                        f"needs, below the stored runs by the test across runs at alpha "
                        f"{alpha:g}" + ("" if runner else " (pass a callable)") + "\n"
                        + "\n".join(lines), pytrace=False)
        self._note(f"{key}: ok {outcome.text()}; {detail}")
        return decision

    def _check(self, key, path, get, runner, max_drop_pct, counter, alpha, top_pct,
               allow_param_changes):
        """check() once its arguments are checked: `get` returns the next run."""
        if self.history_runs:
            return self._check_history(key, get, runner, max_drop_pct, alpha)
        if self.directory is None:
            r = get()
            self._note(f"{key}: NOT CHECKED, no baseline: record one with "
                       "--benchbpf-baseline DIR --benchbpf-save (or --benchbpf-save alone, "
                       f"into {DEFAULT_BASELINE_DIR}), check with --benchbpf-baseline DIR "
                       "(or --benchbpf-compare) "
                       f"({r.name} median {r.median:.3f} M/s)")
            return None
        if self.save:
            self._save(key, path, get, runner, counter, top_pct, alpha)
            return None
        if not os.path.exists(path):
            pytest.fail(f"no baseline {path}: record one with --benchbpf-save")
        try:
            base = _load_baseline(path, counter, top_pct, alpha)
        except _NotComparable as e:
            self._not_comparable(key, path, "unknown date", e.args[0])
        when = base.first.metadata.get("started", "unknown date")
        ref = base.reference
        if not ref > 0:
            pytest.fail(f"{key}: baseline {path} ({when}) has no usable interval: its "
                        f"producers ran under {MIN_PRODUCER_CPU_NS / 1e6:g} ms of CPU time "
                        "in every one (record it again, on a less loaded machine)",
                        pytrace=False)
        need = self.required_samples(base, max_drop_pct, counter, alpha, top_pct)

        def decide(pool):
            xs = _top(pool, top_pct)
            speed = _median(xs)
            lower, upper = median_ci(xs, 1.0 - 2.0 * alpha)
            if not xs:
                # No interval in which the producers ran enough: no speed.
                return _Verdict.UNCLEAR, math.nan, math.nan, math.nan, math.nan
            interval[:] = [lower, upper]
            change = (speed / ref - 1.0) * 100.0 if ref > 0 else math.inf
            bound = (upper / ref - 1.0) * 100.0 if ref > 0 else math.inf
            p = mann_whitney_u(xs, base.pooled_top, "less")[1]
            if change >= -max_drop_pct:
                verdict = _Verdict.PASS
            elif bound < -max_drop_pct and p < alpha:
                verdict = _Verdict.REGRESSION
            else:
                verdict = _Verdict.UNCLEAR
            return verdict, speed, change, bound, p

        pool, runs_done, regressions, history, interval = [], 0, 0, [], []
        slower_speeds, slower_results, overlapped_runs, retried = [], [], 0, 0
        first = None
        while True:
            r = get()
            runs_done += 1
            if first is None:
                first = r
                why = self.mismatch(base.first, r, allow_param_changes)
                if why:
                    self._not_comparable(key, path, when, why)
            before = list(pool)
            own = _rates(r, counter, base.per_cpu)
            pool.extend(own)
            verdict, speed, change, bound, p = decide(pool)
            decided = list(pool)
            if len(pool) < need:
                verdict = _Verdict.UNCLEAR
            overlapped = r.metadata.get("concurrent_runs") or 0
            overlapped_runs += bool(overlapped)
            note = f" (overlapped {overlapped} other benchbpf run(s))" if overlapped else ""
            if own:
                what = (f"{len(own)} usable samples, median {_median(own):.3f} M/s; "
                        f"{len(pool)} pooled, top {top_pct:g}% median {speed:.3f} M/s, "
                        f"{change:+.1f}% (bound {bound:+.1f}%), p={p:.2g}")
            else:
                what = (f"no usable interval (its producers ran under "
                        f"{MIN_PRODUCER_CPU_NS / 1e6:g} ms of CPU time in every one)")
            if verdict == _Verdict.REGRESSION and overlapped and runner is not None \
                    and retried < self.max_overlap_retries and runs_done < self.max_runs:
                # Another benchbpf run shared the CPUs: its drop may be that
                # run's doing.  Measure again instead of counting it, a
                # bounded number of times; after that overlapped runs count
                # (rates per producer CPU-second do not drop for sharing a
                # CPU) and the decision says how many there were.
                retried += 1
                verdict, note = _Verdict.UNCLEAR, f" (overlapped {overlapped} other " \
                    "benchbpf run(s): not counted, measuring again)"
                pool = before
            history.append(f"run {runs_done}: {what} -> {verdict}{note}")
            if verdict == _Verdict.REGRESSION:
                regressions += 1
                slower_results.append(r)
                # A precision run is its runs, each loaded anew: one speed each.
                units = r.runs()
                slower_speeds.extend([speed] if len(units) == 1 else
                                     [run_speed(u, counter, base.per_cpu, top_pct)
                                      for u in units])
                if runner is None:
                    break
                if regressions >= self.regression_runs:
                    if across_runs(base.speeds, slower_speeds, alpha,
                                   "less").verdict == SIGNIFICANT:
                        break
                    known = sum(1 for x in base.speeds if not math.isnan(x))
                    if min_p_value(known, regressions + self.max_runs - runs_done,
                                   "less") >= alpha:
                        break   # no number of runs left could reach alpha
                # Confirm with a fresh, independent run, later each time:
                # a slowed CPU or a burst of load rarely lasts through all.
                pool = []
                if runs_done < self.max_runs:
                    time.sleep(self.confirm_delays_s[
                        min(regressions, len(self.confirm_delays_s)) - 1])
            elif verdict == _Verdict.PASS:
                break
            if runner is None or runs_done >= self.max_runs:
                break
        if verdict == _Verdict.REGRESSION:
            # The decision compare() makes too: the slower runs' speeds
            # against the baseline runs', one figure per run.
            test = across_runs(base.speeds, slower_speeds, alpha, "less")
            if test.verdict != SIGNIFICANT or regressions < self.regression_runs and \
                    runner is not None:
                verdict = _Verdict.UNCLEAR
                history.append(
                    f"{regressions} slower run(s) in {runs_done}, of the "
                    f"{self.regression_runs} in a row a regression needs; across runs "
                    f"(their speeds against the baseline's {len(base.speeds)}), one-sided "
                    f"Mann-Whitney U p={test.p_value:.2g}: {test.verdict}"
                    + ("" if test.verdict == SIGNIFICANT else
                       f" (a baseline of {len(test.base)} run(s) can never reach alpha "
                       f"{alpha:g} within {self.max_runs} runs: record it from a callable, "
                       f"{self.baseline_runs} runs)"
                       if min_p_value(len(test.base), self.max_runs, "less") >= alpha else
                       " (too few slower runs for alpha "
                       f"{alpha:g}{'' if runner else ': pass a callable'})"))
        # Baseline and check are always taken apart in time: on a machine with
        # a host drift calibration the drop must also stand beyond the host's
        # drift, as compare() requires of such sides.
        host = host_test(base.host_runs, slower_results, "less") \
            if verdict == _Verdict.REGRESSION and counter == "hits" else None
        if host is not None:
            beyond = host.p_value < alpha
            history.append(f"{regressions} slower run(s): mean hit rate "
                           f"{host.new.mean:.3f} M/s against the baseline's "
                           f"{host.base.mean:.3f} M/s, {host.text()}: " + (
                               "beyond this host's drift" if beyond else
                               "not beyond what this host does to the figure over time at "
                               f"alpha {alpha:g} (take baseline and check in turns, or "
                               "record the baseline again)"))
            if not beyond:
                verdict = _Verdict.UNCLEAR

        diffs = machine_differences(base.first.metadata.get("fingerprint"),
                                    first.metadata.get("fingerprint"))
        which = "median" if top_pct == 100 else f"median of the fastest {top_pct:g}%"
        detail = (f"{first.name} {counter} {_unit(base.per_cpu)}, {which}: "
                  f"{_median(_top(decided, top_pct)):.3f} M/s vs baseline {base.describe()} "
                  f"({change:+.1f}%, upper {100 * (1 - alpha):g}% bound {bound:+.1f}%, limit "
                  f"-{max_drop_pct:g}%), one-sided Mann-Whitney U p={p:.2g} (alpha "
                  f"{alpha:g}); all-sample medians {_median(decided):.3f} vs "
                  f"{base.all_median:.3f} M/s, {len(decided)} vs {base.n_rates} "
                  f"samples; baseline {path} recorded {when}")
        if not decided:
            detail = (f"{first.name} {counter} {_unit(base.per_cpu)}: no speed, no interval "
                      f"in which the producers ran {MIN_PRODUCER_CPU_NS / 1e6:g} ms of CPU "
                      f"time, against baseline {base.describe()}; baseline {path} recorded "
                      f"{when}")
        fp_note = ""
        if diffs:
            fp_note = "\nthe machine differs from the baseline's:\n  " + "\n  ".join(diffs)
            warnings.warn(f"{key}: baseline {path} was taken on a different machine: "
                          + "; ".join(diffs), GateWarning, stacklevel=2)
        outcome = _outcome(verdict, speed, interval, ref, alpha, max_drop_pct)
        decision = {"key": key, "verdict": verdict, "outcome": outcome, "change_pct": change,
                    "bound_pct": bound, "p_value": p, "speed_mps": speed,
                    "baseline_mps": ref, "baseline_speeds_mps": tuple(base.speeds),
                    "samples": len(decided), "needed_samples": need, "runs": runs_done,
                    "slower_runs": regressions,
                    "host_p_value": host.p_value if host is not None else None,
                    "history": tuple(history), "fingerprint_differences": tuple(diffs)}
        overlap_note = ""
        if overlapped_runs:
            overlap_note = (f"\n{overlapped_runs} of its {runs_done} runs overlapped other "
                            f"benchbpf runs (each run records it in metadata"
                            f"['concurrent_runs']); {retried} slower one(s) measured again")
        if verdict == _Verdict.REGRESSION:
            self._note(f"{key}: REGRESSION {outcome.text()}; {detail}"
                       + (f" [{overlapped_runs} runs overlapped other benchbpf runs]"
                          if overlapped_runs else ""))
            pytest.fail(f"{key}: regression: {outcome.text()}; {detail}"
                        + (f"\nconfirmed by {regressions} independent runs"
                           if regressions > 1 else "") + overlap_note
                        + fp_note + "\n" + "\n".join(history), pytrace=False)
        known = sum(1 for x in base.speeds if not math.isnan(x))
        decidable = min_p_value(known, self.max_runs if runner else 1, "less") < alpha
        if verdict == _Verdict.UNCLEAR and overlapped_runs and decidable:
            # Other benchbpf runs competed for the CPUs: say so plainly
            # rather than "cannot decide" as if the code were at fault.
            self._note(f"{key}: SKIPPED, {overlapped_runs} of {runs_done} runs overlapped "
                       f"other benchbpf runs; {detail}")
            pytest.skip(f"{key}: cannot decide because other benchbpf runs were going on: "
                        f"{overlapped_runs} of its {runs_done} runs overlapped them "
                        f"(retried {retried} time(s)); run the gate alone. {detail}\n"
                        + "\n".join(history))
        if verdict == _Verdict.UNCLEAR:
            self._note(f"{key}: UNDECIDED {outcome.text()}; {detail}")
            why = (f"the drop is not beyond this host's drift ({host.text()})"
                   if host is not None and not host.p_value < alpha else
                   f"the baseline's spread needs {need} samples per side"
                   + ("" if runner else " (pass a callable so the gate can run more, or "
                      "a longer duration)"))
            pytest.fail(f"{key}: cannot decide: {outcome.text()}; {detail}; {why}"
                        + fp_note + "\n" + "\n".join(history), pytrace=False)
        self._note(f"{key}: ok {outcome.text()}; {detail}"
                   + (f" [{len(diffs)} fingerprint differences]" if diffs else "")
                   + (f" [{overlapped_runs} runs overlapped other benchbpf runs]"
                      if overlapped_runs else ""))
        return decision


#: The gate's method, as its Outcome names it.
GATE_METHOD = "gate: fastest intervals against the baseline's fastest run"
#: The gate's method against a baseline from the history store.
HISTORY_METHOD = "gate: run means against the history store's last runs"


def _outcome(verdict, speed, interval, reference, alpha, max_drop_pct, method=GATE_METHOD):
    """The gate's decision as every comparison states it (analysis.Outcome):
    B/A the run's speed over the baseline's reference, its interval the
    bounds of that speed (each one-sided at 1 - alpha); "slower" for a
    regression (beyond max_drop_pct), "undecided" for a check that cannot
    decide, and for a pass "faster" when even the lower bound is above
    +max_drop_pct, else "same" (within the drop that counts, by the gate's
    rule rather than by an interval within it)."""
    threshold = max_drop_pct / 100.0
    rates = "error rates of the gate: not in the package data (results/gate-2cpu.md)"
    if not (reference > 0 and speed > 0 and len(interval) == 2):
        return Outcome(None, None, None, 1 - 2 * alpha, method, UNDECIDED, False,
                       threshold, None, rates, "no speed to compare")
    ratio, low, high = speed / reference, interval[0] / reference, interval[1] / reference
    if verdict == _Verdict.REGRESSION:
        said, beyond = SLOWER, True
    elif verdict == _Verdict.PASS:
        said, beyond = (FASTER, True) if low > 1 + threshold else (SAME, False)
    else:
        said, beyond = UNDECIDED, False
    return Outcome(ratio, low, high, 1 - 2 * alpha, method, said, beyond, threshold,
                   None, rates)


@pytest.fixture
def benchbpf_gate(request):
    """A Gate bound to --benchbpf-baseline / --benchbpf-compare / --benchbpf-save,
    --benchbpf-history and --benchbpf-baseline-from-history."""
    cfg = request.config
    directory = cfg.getoption("--benchbpf-baseline")
    save = cfg.getoption("--benchbpf-save")
    if directory is None and (save or cfg.getoption("--benchbpf-compare")):
        directory = DEFAULT_BASELINE_DIR
    if directory == DEFAULT_BASELINE_DIR:
        directory = os.path.join(str(cfg.rootdir), DEFAULT_BASELINE_DIR)
    store = cfg.getoption("--benchbpf-history")
    n = cfg.getoption("--benchbpf-baseline-from-history")
    if store is None:
        store = False if n is None else ""
    return Gate(directory, save, request, getattr(cfg, _REPORTS, None),
                history=store or (None if store == "" else False), history_runs=n)
