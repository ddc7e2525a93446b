"""pytest plugin: regression gates on benchbpf Results.

    def test_count_local(benchbpf_gate):
        benchbpf_gate.check("count-local",
                            lambda: benchbpf.run("count-local", duration=1, interval=0.001),
                            max_drop_pct=15)

`pytest --benchbpf-baseline DIR --benchbpf-save` records baselines as
DIR/<key>.json; `pytest --benchbpf-baseline DIR` compares against them.
Without DIR both use ``.benchbpf-baselines`` in pytest's rootdir.

A check compares the fastest `top_pct` percent (default 10) of each side's
per-interval rates, and fails only when their median is more than
max_drop_pct below the baseline's AND a one-sided Mann-Whitney U test over
them says the new samples are lower (p < alpha, default 0.01).  On a shared
machine a producer loses whole intervals to other processes, so the lower
samples measure the load and the fastest ones the code: sample often
(interval=0.001 gives 1000 samples a second) so that many intervals run
undisturbed; top_pct=100 compares plain medians.

Given a callable rather than a Result, the gate calls it again when the
answer is unclear (fewer samples than the baseline's spread needs, or a drop
that is not significant yet: samples are pooled) and when a run shows a
regression (a fresh run 2 s later must confirm it, so a burst of load does
not fail the gate on its own; a run that overlapped another benchbpf run is
measured again).  A failure names both medians, the change, the p-value, the
baseline's file and date, and what differs in the machine.

A baseline of another benchmark, other parameters or another trigger is
refused, saying what differs.  Without --benchbpf-baseline nothing is
compared: each check is listed as NOT CHECKED in the terminal summary.
"""
import math
import os
import re
import statistics
import time
import warnings

import pytest

from .analysis import mann_whitney_u, samples_needed
from .fingerprint import machine_differences
from .result import Result

__all__ = ["Gate", "GateWarning", "DEFAULT_BASELINE_DIR", "TIMING_PARAMS"]

#: Where baselines go when --benchbpf-baseline / --benchbpf-save name no directory.
DEFAULT_BASELINE_DIR = ".benchbpf-baselines"

#: Parameters that may differ between a baseline and a run: how long and
#: how often it sampled, not what it measured.
TIMING_PARAMS = ("warmup", "duration", "interval")

_REPORTS = "benchbpf_reports"


class GateWarning(UserWarning):
    """The baseline was taken on a machine that differs (kernel, CPU, mitigations...)."""


def pytest_addoption(parser):
    group = parser.getgroup("benchbpf", "BPF benchmark regression gates")
    group.addoption("--benchbpf-baseline", metavar="DIR", nargs="?", default=None,
                    const=DEFAULT_BASELINE_DIR,
                    help="compare against the baselines in DIR (<key>.json); default "
                         f"DIR: {DEFAULT_BASELINE_DIR} in the rootdir")
    group.addoption("--benchbpf-save", action="store_true", default=False,
                    help="save this run's results as baselines (to --benchbpf-baseline, "
                         f"else {DEFAULT_BASELINE_DIR} in the rootdir)")


def pytest_configure(config):
    setattr(config, _REPORTS, [])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    reports = getattr(config, _REPORTS, None)
    if not reports:
        return
    terminalreporter.section("benchbpf gate")
    for line in reports:
        terminalreporter.write_line(line)


class _Verdict:
    PASS, REGRESSION, UNCLEAR = "pass", "regression", "unclear"


def _median(xs):
    return statistics.median(xs) if xs else math.nan


def _rates(result, counter):
    """Per-sample rates, without catch-up samples: intervals shorter than half
    the sampling period (a late wake-up followed by back-to-back samples)
    carry a few hits over a tiny time and would give absurd rates."""
    period_ns = float(result.params.get("interval", 0) or 0) * 1e9
    return [s.rate_mps(counter) for s in result.samples
            if s.interval_ns >= period_ns / 2]


def _top(xs, top_pct):
    """The fastest top_pct percent of xs (at least one)."""
    xs = sorted(xs)
    k = max(1, math.ceil(len(xs) * top_pct / 100.0))
    return xs[-k:] if xs else []


def _rel_spread(xs):
    """Robust relative spread of samples: interquartile range / 1.349 / median."""
    if len(xs) < 4:
        return math.nan
    q = statistics.quantiles(xs, n=4)
    med = statistics.median(xs)
    return (q[2] - q[0]) / 1.349 / med if med > 0 else math.nan


class Gate:
    """Compares Results against saved baselines, one key per gate."""

    #: At most this many runs of a callable per check.
    max_runs = 6
    #: Pause before the run that confirms a regression, seconds.
    confirm_delay_s = 2.0

    def __init__(self, directory, save, request, reports=None):
        self.directory = directory
        self.save = save
        self.request = request
        self.reports = reports if reports is not None else []

    def _path(self, key):
        if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", key):
            raise ValueError(f"key={key!r}: use letters, digits, '_', '.', '-'")
        return os.path.join(self.directory, key + ".json")

    def _note(self, line):
        self.reports.append(line)
        self.request.node.user_properties.append(("benchbpf", line))

    @staticmethod
    def mismatch(base, result, allow=()):
        """What makes `base` no baseline for `result`: a list of lines, empty if none."""
        why = []
        if base.name != result.name:
            why.append(f"benchmark: baseline {base.name}, this run {result.name}")
        for k in sorted(set(base.params) | set(result.params)):
            if k in TIMING_PARAMS or k in allow:
                continue
            a, b = base.params.get(k, "<absent>"), result.params.get(k, "<absent>")
            if a != b:
                why.append(f"parameter {k}: baseline {a!r}, this run {b!r}")
        ta, tb = base.metadata.get("trigger"), result.metadata.get("trigger")
        if ta != tb:
            why.append(f"trigger: baseline {ta!r}, this run {tb!r}")
        return why

    def required_samples(self, base, max_drop_pct, counter="hits", alpha=0.01, top_pct=10):
        """Samples a run needs to tell a max_drop_pct drop from the baseline's
        spread (see analysis.samples_needed), counting every sample of which
        the fastest top_pct percent are compared."""
        spread = _rel_spread(_top(_rates(base, counter), top_pct))
        if not math.isfinite(spread):
            spread = 0.5    # too few baseline samples to tell: assume a wide one
        n = samples_needed(spread, max_drop_pct / 100.0, alpha=alpha)
        return math.ceil(n * 100.0 / top_pct)

    def check(self, key, result, max_drop_pct=20.0, counter="hits", alpha=0.01,
              top_pct=10, allow_param_changes=()):
        """Fail the test if `result` regressed against baseline `key`.

        result: a benchbpf.Result, or a callable returning one (then the gate
            runs it again when the answer is unclear or to confirm a
            regression; prefer it).
        max_drop_pct: the smallest drop of the median that counts, percent.
        alpha: level of the one-sided Mann-Whitney U test (new < baseline).
        top_pct: compare the fastest top_pct percent of each side's
            per-interval rates (100: all of them).  When other processes
            share the CPUs, a producer loses whole intervals to them and the
            lower samples measure the load, not the code; the fastest
            intervals are the ones it ran through.  Sample often (a short
            `interval`) so that many intervals run undisturbed.
        allow_param_changes: parameters that may differ from the baseline's
            (what the comparison is about, e.g. a tuning knob).
        Returns a dict describing the decision (None when saving or when no
        baseline directory was given)."""
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
            r = runner() if runner else result
            if not isinstance(r, Result):
                raise TypeError(f"the callable returned {type(r).__name__}, not a "
                                "benchbpf.Result")
            return r

        if self.directory is None:
            r = get()
            self._note(f"{key}: NOT CHECKED, no --benchbpf-baseline "
                       f"({r.name} median {r.median:.3f} M/s)")
            return None
        if self.save:
            r = get()
            os.makedirs(self.directory, exist_ok=True)
            r.to_json(path)
            self._note(f"{key}: saved baseline {path} ({r.name} median {r.median:.3f} M/s)")
            return None
        if not os.path.exists(path):
            pytest.fail(f"no baseline {path}: record one with --benchbpf-save")
        base = Result.from_json(path)
        when = base.metadata.get("started", "unknown date")
        base_all = _rates(base, counter)
        base_xs = _top(base_all, top_pct)
        need = self.required_samples(base, max_drop_pct, counter, alpha, top_pct)

        def decide(pool):
            xs = _top(pool, top_pct)
            change = (_median(xs) / _median(base_xs) - 1.0) * 100.0 \
                if _median(base_xs) > 0 else math.inf
            p = mann_whitney_u(xs, base_xs, "less")[1]
            if change >= -max_drop_pct:
                verdict = _Verdict.PASS
            elif p < alpha:
                verdict = _Verdict.REGRESSION
            else:
                verdict = _Verdict.UNCLEAR
            return verdict, change, p

        pool, runs, regressions, history = [], 0, 0, []
        first = None
        while True:
            r = get()
            runs += 1
            if first is None:
                first = r
                why = self.mismatch(base, r, allow_param_changes)
                if why:
                    pytest.fail(f"{key}: baseline {path} ({when}) does not match this run; "
                                "refusing to compare:\n  " + "\n  ".join(why),
                                pytrace=False)
            before = list(pool)
            pool.extend(_rates(r, counter))
            verdict, change, p = decide(pool)
            if len(pool) < need:
                verdict = _Verdict.UNCLEAR
            overlapped = r.metadata.get("concurrent_runs") or 0
            note = ""
            if verdict == _Verdict.REGRESSION and overlapped and runner is not None \
                    and runs < self.max_runs:
                # Another benchbpf run shared the CPUs: its drop may be
                # that run's doing.  Measure again instead of counting it.
                verdict, note = _Verdict.UNCLEAR, f" (overlapped {overlapped} other " \
                    "benchbpf run(s): not counted, measuring again)"
                pool = before
            history.append(f"run {runs}: {len(pool)} samples, median {_median(pool):.3f} "
                           f"M/s, top {top_pct:g}% median {_median(_top(pool, top_pct)):.3f} "
                           f"M/s, {change:+.1f}%, p={p:.2g} -> {verdict}{note}")
            if verdict == _Verdict.REGRESSION:
                regressions += 1
                if runner is None or regressions >= 2:
                    break
                # Confirm with a fresh, independent run, a little later: a
                # burst of load from other processes rarely lasts through both.
                pool = []
                time.sleep(self.confirm_delay_s)
            elif verdict == _Verdict.PASS:
                break
            if runner is None or runs >= self.max_runs:
                break

        diffs = machine_differences(base.metadata.get("fingerprint"),
                                    first.metadata.get("fingerprint"))
        which = "median" if top_pct == 100 else f"median of the fastest {top_pct:g}%"
        detail = (f"{first.name} {counter} {which} {_median(_top(pool, top_pct)):.3f} M/s "
                  f"vs baseline {_median(base_xs):.3f} M/s ({change:+.1f}%, limit "
                  f"-{max_drop_pct:g}%), one-sided Mann-Whitney U p={p:.2g} (alpha "
                  f"{alpha:g}); all-sample medians {_median(pool):.3f} vs "
                  f"{_median(base_all):.3f} M/s, {len(pool)} vs {len(base_all)} samples; "
                  f"baseline {path} recorded {when}")
        fp_note = ""
        if diffs:
            fp_note = "\nthe machine differs from the baseline's:\n  " + "\n  ".join(diffs)
            warnings.warn(f"{key}: baseline {path} was taken on a different machine: "
                          + "; ".join(diffs), GateWarning, stacklevel=2)
        decision = {"key": key, "verdict": verdict, "change_pct": change, "p_value": p,
                    "samples": len(pool), "needed_samples": need, "runs": runs,
                    "history": tuple(history), "fingerprint_differences": tuple(diffs)}
        if verdict == _Verdict.REGRESSION:
            self._note(f"{key}: REGRESSION {detail}")
            pytest.fail(f"{key}: regression: {detail}"
                        + (f"\nconfirmed by {regressions} independent runs"
                           if regressions > 1 else "")
                        + fp_note + "\n" + "\n".join(history), pytrace=False)
        if verdict == _Verdict.UNCLEAR:
            self._note(f"{key}: UNDECIDED {detail}")
            pytest.fail(f"{key}: cannot decide: {detail}; the baseline's spread needs "
                        f"{need} samples per side"
                        + ("" if runner else " (pass a callable so the gate can run "
                           "more, or a longer duration)")
                        + fp_note + "\n" + "\n".join(history), pytrace=False)
        self._note(f"{key}: ok {detail}" + (f" [{len(diffs)} fingerprint differences]"
                                             if diffs else ""))
        return decision


@pytest.fixture
def benchbpf_gate(request):
    """A Gate bound to --benchbpf-baseline / --benchbpf-save."""
    cfg = request.config
    directory = cfg.getoption("--benchbpf-baseline")
    save = cfg.getoption("--benchbpf-save")
    if directory is None and save:
        directory = DEFAULT_BASELINE_DIR
    if directory == DEFAULT_BASELINE_DIR:
        directory = os.path.join(str(cfg.rootdir), DEFAULT_BASELINE_DIR)
    return Gate(directory, save, request, getattr(cfg, _REPORTS, None))
