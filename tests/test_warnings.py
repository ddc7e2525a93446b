"""Instability warnings of one run (Result.warnings) and runs that disagree
beyond their spread (stats.run_states): the logic on made-up samples, and
its output on real runs of the CLI and the library."""
import json
import math
import pickle
import random
import re
import statistics
import subprocess
import sys

import pytest

import benchbpf
from benchbpf.tools import report
from benchbpf.results import stats
from benchbpf.analysis import run_agreement, run_mean_se
from benchbpf.results.result import Result, Sample
from benchbpf.results.resultset import ResultSet

from conftest import SHORT


def made(rates_mps, interval=1.0, name="count-local", report_kind=None, producers=1,
         **params):
    """A Result whose samples have these hit rates (M/s), one per interval."""
    ns = int(interval * 1e9)
    samples = [Sample(ns, hits=int(round(x * 1e6 * interval))) for x in rates_mps]
    meta = {"report": report_kind} if report_kind else {}
    return Result(name=name, params={"interval": interval, "producers": producers, **params},
                  samples=samples, metadata=meta)


def kinds(r):
    """Which checks fired: cv, far, drift, few."""
    out = set()
    for w in r.warnings:
        if "coefficient of variation" in w:
            out.add("cv")
        elif "far from the median" in w:
            out.add("far")
        elif "drifts" in w:
            out.add("drift")
        elif "too few" in w:
            out.add("few")
        else:
            raise AssertionError(f"unknown warning {w!r}")
    return out


STEADY = [10.0, 10.05, 9.97, 10.02, 9.99, 10.01, 10.03, 9.98, 10.0, 10.02]


def test_steady_samples_warn_of_nothing():
    r = made(STEADY)
    assert r.warnings == ()
    assert str(r) == r.summary() and "WARNING" not in repr(r)


def test_too_few_samples():
    for rates in ([10.0, 12.0], [10.0], []):
        r = made(rates)
        assert kinds(r) == {"few"}, r.warnings
        assert f"{len(rates)} sample" in r.warnings[0] and "at least 3" in r.warnings[0]
    assert made([10.0, 10.0, 10.0]).warnings == ()


def test_coefficient_of_variation_over_ten_percent():
    r = made([8.0, 12.0] * 5)             # stdev 2.1 of mean 10: 21 %
    assert kinds(r) == {"cv"}, r.warnings
    w = r.warnings[0]
    assert w.startswith("hits: ") and "21.1%" in w and "over 10%" in w
    assert made([9.5, 10.5] * 5).warnings == ()    # 5.3 %: below the threshold
    r = made([9.0495, 10.9505] * 5)      # 10.02 %: shown so, never as "10.0%"
    w = next(w for w in r.warnings if "coefficient" in w)
    assert re.search(r"variation 10\.0\d%", w), w


def test_a_sample_far_from_the_median():
    r = made([10.0] * 19 + [8.5])         # 15 % off, CV only 3.4 %
    assert kinds(r) == {"far"}, r.warnings
    assert r.warnings[0].startswith("hits: 1 of 20 samples far from the median 10 M/s")
    assert "15%" in r.warnings[0] and "10% of the median" in r.warnings[0]
    assert made([10.0] * 19 + [9.2]).warnings == ()      # 8 % off: within the floor
    r = made([10.0] * 17 + [6.0, 14.0, 5.0])
    assert "far" in kinds(r) and "3 of 20 samples" in \
        next(w for w in r.warnings if "far" in w)


def test_far_is_relative_to_the_runs_own_spread():
    # A noisy run (robust stdev ~ 1.5 M/s): a sample 2.5 M/s off is not far.
    rng = random.Random(7)
    xs = [10.0 + rng.gauss(0, 1.5) for _ in range(40)]
    xs[20] = statistics.median(xs) + 2.5
    assert "far" not in kinds(made(xs))


def test_counts_in_coarse_steps_are_not_far_by_one_step():
    # bpf-hashmap-lookup at 0.1 s reads 20 or 30 M/s: one step is no outlier,
    # but the spread is named, with its cause.
    r = made([20.0, 30.0, 20.0, 20.0, 30.0, 20.0], interval=0.1)
    assert r.coarse_step_mps() == pytest.approx(10.0)
    assert kinds(r) == {"cv"}, r.warnings
    assert "steps of 10 M/s" in r.warnings[0]


def test_one_step_is_not_far_whatever_the_rounding():
    # local storage at 0.1 s: 0.2, 0.3 or 0.4 M/s, 0.4 - 0.3 a hair over 0.1.
    r = made([0.3, 0.4, 0.3, 0.3, 0.2, 0.3] * 3, interval=0.1)
    assert r.step_mps() == pytest.approx(0.1)
    assert "far" not in kinds(r), r.warnings


def test_bpf_timed_batches_are_judged_as_the_summary_states_them():
    # 30 batches of 2 ns/op and one of 50 that the IQR filter leaves out,
    # as the summary line does: nothing to warn of.
    batches = [Sample(interval_ns=2 * 1000, hits=1000)] * 30 + \
        [Sample(interval_ns=50 * 1000, hits=1000)]
    r = Result(name="bpf-nop", params={}, samples=batches, metadata={"report": "bpf_timing"})
    assert r.warnings == ()
    noisy = [Sample(interval_ns=ns * 1000, hits=1000) for ns in (2, 3) * 10]
    r = Result(name="bpf-nop", params={}, samples=noisy, metadata={"report": "bpf_timing"})
    assert r.warnings and r.warnings[0].startswith("batch ns/op: coefficient of variation")
    assert "2.5 ns/op" in r.warnings[0]


def test_drift_over_the_run():
    xs = [10.0 - 0.2 * i + (0.01 if i % 2 else -0.01) for i in range(10)]   # 10 -> 8.2
    r = made(xs)
    assert kinds(r) == {"drift"}, r.warnings
    m = re.search(r"drifts ([-+]\d+\.\d)% over the run", r.warnings[0])
    assert m and float(m.group(1)) == pytest.approx(-100 * 1.8 / statistics.median(xs), abs=0.2)
    assert "0.01" in r.warnings[0] and "10%" in r.warnings[0]
    # Half the change: under the 10 % floor, however clean the trend.
    assert made([10.0 - 0.1 * i for i in range(10)]).warnings == ()
    # As large a change but no trend (a swing in the middle): not a drift.
    assert "drift" not in kinds(made([10.0, 10.0, 10.0, 8.2, 8.2, 10.0, 10.0, 10.0]))


def test_drift_is_not_judged_across_producers_of_bpf_timed_batches():
    xs = [10.0 - 0.2 * i for i in range(10)]
    assert "drift" in kinds(made(xs, report_kind="bpf_timing", producers=1))
    assert "drift" not in kinds(made(xs, report_kind="bpf_timing", producers=2))


def test_false_hits_warn_on_the_false_positive_percentage():
    steady = [Sample(200_000_000, hits=970, drops=30, false_hits=30)] * 5
    r = Result(name="bloom-false-positive", params={}, samples=steady,
               metadata={"report": "false_hits"})
    assert r.warnings == ()
    noisy = steady[:4] + [Sample(200_000_000, hits=900, drops=100, false_hits=100)]
    r = Result(name="bloom-false-positive", params={}, samples=noisy,
               metadata={"report": "false_hits"})
    assert r.warnings and all(w.startswith("false positives: ") for w in r.warnings)
    assert any("%" in w and "far from the median" in w for w in r.warnings)


def test_repr_and_str_end_with_a_warning_line_each():
    r = made([8.0, 12.0] * 5)
    lines = str(r).splitlines()
    assert lines[0] == r.summary()
    assert lines[1:] == [f"WARNING: {w}" for w in r.warnings]
    rep = repr(r).splitlines()
    assert rep[0].startswith("<Result count-local: ") and rep[0].endswith(">")
    assert rep[1:] == [f"WARNING: {w}" for w in r.warnings]
    assert "WARNING: hits: coefficient of variation" in r._repr_html_()


def test_warnings_survive_json_and_pickle(tmp_path):
    r = made([10.0] * 5 + [6.0] + [10.0] * 4 + [10.0 - 0.3 * i for i in range(8)])
    assert r.warnings
    path = tmp_path / "r.json"
    r.to_json(path)
    assert Result.from_json(path).warnings == r.warnings
    assert "warnings" not in json.loads(path.read_text())   # derived, not stored
    assert pickle.loads(pickle.dumps(r)).warnings == r.warnings
    rs = ResultSet([r, made(STEADY)])
    assert [x.warnings for x in ResultSet.from_json(rs.to_json())] == [r.warnings, ()]


def test_dataframe_has_a_warnings_column():
    pytest.importorskip("pandas")
    noisy = made([8.0, 12.0] * 5)
    df = ResultSet([noisy, made(STEADY)]).to_dataframe()
    assert list(df["warnings"]) == [noisy.warnings, ()]
    assert list(df[df.warnings.str.len() > 0].index) == [0]


def test_report_marks_the_rows_that_warn():
    noisy = made([8.0, 12.0] * 5)
    page = report.to_html(ResultSet([noisy, made(STEADY, name="count-global")]))
    assert "<th>warnings</th>" in page
    assert report._e(noisy.warnings[0]) in page
    assert "1 run(s) warn of instability" in page


# ---------------------------------------------------------------- run_states

def test_chi2_sf_known_values():
    assert stats.chi2_sf(3.841458820694124, 1) == pytest.approx(0.05, rel=1e-9)
    assert stats.chi2_sf(9.487729036781154, 4) == pytest.approx(0.05, rel=1e-9)
    assert stats.chi2_sf(23.209251158954356, 10) == pytest.approx(0.01, rel=1e-9)
    assert stats.chi2_sf(0.0, 3) == 1.0 and stats.chi2_sf(math.inf, 3) == 0.0
    with pytest.raises(ValueError, match="df=0"):
        stats.chi2_sf(1.0, 0)


def test_runs_that_agree_within_their_spread():
    s = stats.run_states([10.0, 10.1, 9.95, 10.02, 10.06], [0.05] * 5)
    assert not s and not s.disagree and s.states == () and s.text() == ""
    assert s.p_value > 0.01


def test_two_separated_groups_are_named_as_states():
    s = stats.run_states([4.0, 11.5, 4.2, 11.9, 4.1], [0.1] * 5)
    assert s.disagree and s.p_value < 1e-9
    assert s.states == ((4.1, 3), (11.7, 2))
    assert s.text().endswith("bistable? states at 4.1 and 11.7 M/s, 3 and 2 runs")
    assert s.text().startswith("runs disagree beyond their spread")


def test_a_continuous_spread_disagrees_without_states():
    s = stats.run_states([4.0, 6.0, 8.0, 10.0, 12.0], [0.1] * 5)
    assert s.disagree and s.states == ()
    assert "unstable between runs" in s.text() and "4..12 M/s" in s.text()


def test_a_small_disagreement_is_not_reported():
    # Q is significant (errors of 0.01 on a 2 % spread), but under min_change.
    s = stats.run_states([10.0, 10.2, 10.1, 9.95], [0.01] * 4)
    assert s.p_value < 1e-9 and not s.disagree
    assert stats.run_states([10.0, 10.2, 10.1, 9.95], [0.01] * 4, min_change=0.01).disagree


def test_runs_without_a_spread_cannot_be_judged():
    assert not stats.run_states([4.0], [0.1])
    s = stats.run_states([4.0, 12.0], [math.nan, math.nan])
    assert math.isnan(s.p_value) and not s.disagree
    # NaN figures are left out; a zero spread weighs as a tiny one.
    s = stats.run_states([4.0, math.nan, 12.0, 12.1, 4.05], [0.0, 0.1, 0.1, 0.1, 0.0])
    assert s.values == (4.0, 12.0, 12.1, 4.05) and s.disagree
    assert s.states == ((4.025, 2), (12.05, 2))


def test_one_run_apart_is_not_a_state():
    s = stats.run_states([10.0, 10.1, 7.0, 10.05, 9.95], [0.05] * 5)
    assert s.disagree and s.states == ()
    # Nor are groups whose gap is under three times their own range.
    s = stats.run_states([4.0, 5.0, 7.5, 8.5, 9.0], [0.05] * 5)
    assert s.disagree and s.states == ()


def test_states_are_rarely_found_in_one_distribution_and_found_in_two():
    # The rates the run_states docstring states, by simulation: false states
    # in sets of 5 runs of one normal figure, found states when 2 to 3 runs
    # sit 10 standard deviations above the others.
    rng = random.Random(23)
    false = sum(bool(stats.run_states([100 + rng.gauss(0, 5) for _ in range(5)],
                                      [0.01] * 5).states) for _ in range(5000))
    assert 0.02 < false / 5000 < 0.045, false
    found = tried = 0
    while tried < 2000:
        up = [rng.random() < 0.5 for _ in range(5)]
        if not 2 <= sum(up) <= 3:
            continue
        tried += 1
        found += bool(stats.run_states([100 + 10 * 5 * u + rng.gauss(0, 5) for u in up],
                                       [0.01] * 5).states)
    assert 0.75 < found / 2000 < 0.87, found


def test_run_states_checks_its_arguments():
    with pytest.raises(ValueError, match="alpha=1.5"):
        stats.run_states([1.0, 2.0], [0.1, 0.1], alpha=1.5)
    with pytest.raises(ValueError, match="min_change=-1"):
        stats.run_states([1.0, 2.0], [0.1, 0.1], min_change=-1)
    with pytest.raises(ValueError, match="differ in length"):
        stats.run_states([1.0, 2.0], [0.1])


def test_cochran_q_is_calibrated_on_runs_that_agree():
    # Runs drawn around one figure with their stated errors: Q's test at
    # alpha 0.01 (no min_change) flags about 1 % of sets of 5 runs.
    rng = random.Random(19)
    flagged = 0
    for _ in range(4000):
        ses = [rng.uniform(0.05, 0.3) for _ in range(5)]
        xs = [10.0 + rng.gauss(0, se) for se in ses]
        flagged += stats.run_states(xs, ses, alpha=0.01, min_change=0.0).disagree
    assert 0.005 < flagged / 4000 < 0.02, flagged


def test_run_mean_se_uses_blocks_of_a_second():
    # 20 samples of 0.1 s: blocks of 6 (1 s would leave fewer than 3 blocks),
    # the last 2 samples in none; the mean is over every sample.
    r = made([10.0] * 6 + [11.0] * 6 + [12.0] * 6 + [13.0] * 2, interval=0.1)
    mean, se = run_mean_se(r)
    assert mean == pytest.approx(11.2)
    assert se == pytest.approx(1.0 / math.sqrt(3))
    # 1 s samples: blocks of one sample, the plain standard error.
    r = made([10.0, 11.0, 12.0, 13.0, 14.0], interval=1.0)
    assert run_mean_se(r)[1] == pytest.approx(math.sqrt(2.5 / 5))
    assert math.isnan(run_mean_se(made([10.0], interval=1.0))[1])


def test_run_agreement_and_the_report_name_bistable_runs():
    lows = [made([4.0 + 0.01 * i, 4.1, 4.05, 3.95, 4.0]) for i in range(3)]
    highs = [made([11.8 + 0.01 * i, 11.7, 11.9, 11.75, 11.85]) for i in range(2)]
    runs = [lows[0], highs[0], lows[1], lows[2], highs[1]]
    s = run_agreement(runs)
    assert s.disagree and [n for _, n in s.states] == [3, 2]
    assert s.states[0][0] == pytest.approx(4.02, abs=0.01)
    assert s.states[1][0] == pytest.approx(11.805, abs=0.01)
    page = report.to_html(ResultSet(runs))
    assert "Runs that disagree" in page and "bistable? states at" in page
    assert not run_agreement([made(STEADY), made(STEADY)])
    lines, _, _ = report.compare_sets(ResultSet(runs), ResultSet(lows), per_cpu=False)
    assert any(l.strip().startswith("baseline: runs disagree") for l in lines), lines
    assert not any(l.strip().startswith("new: runs disagree") for l in lines), lines
    text = str(benchbpf.compare(runs, lows, per_cpu=False))
    assert "\nbaseline: runs disagree" in text and "\nnew: " not in text


# ---------------------------------------------------------------- real runs

ITER_OR_SUMMARY = re.compile(
    r"^(Iter +\d+ \( *-?\d+\.\d{3}us\): hits +\d+\.\d{3}M/s \( *\d+\.\d{3}M/prod\), "
    r"drops +\d+\.\d{3}M/s, total operations +\d+\.\d{3}M/s"
    r"|Summary: hits +\d+\.\d{3} \u00b1 +\d+\.\d{3}M/s \( *\d+\.\d{3}M/prod\), "
    r"drops +\d+\.\d{3} \u00b1 +\d+\.\d{3}M/s, total operations +\d+\.\d{3} \u00b1 "
    r"+\d+\.\d{3}M/s)$")


def test_a_real_run_has_warnings_as_strings():
    r = benchbpf.run("count-local", **SHORT)
    assert isinstance(r.warnings, tuple) and all(isinstance(w, str) for w in r.warnings)
    assert str(r).splitlines() == [r.summary()] + [f"WARNING: {w}" for w in r.warnings]


def test_cli_warnings_go_to_stderr_and_stdout_keeps_the_kernel_format(tmp_path):
    path = tmp_path / "r.json"
    out = subprocess.run([sys.executable, "-m", "benchbpf", "-q", "-w0.2", "-d1",
                          "--interval", "0.2", "count-local", "--json", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines and all(ITER_OR_SUMMARY.match(l) for l in lines), lines
    saved = Result.from_json(path)
    # What stderr warned of is what the saved samples give.
    warned = [l for l in out.stderr.splitlines() if l.startswith("WARNING: ")]
    assert warned == [f"WARNING: {w}" for w in saved.warnings], out.stderr


def test_cli_repeat_says_whether_the_runs_agree(tmp_path):
    path = tmp_path / "rs.json"
    out = subprocess.run([sys.executable, "-m", "benchbpf", "-q", "-w0.2", "-d0.6",
                          "--interval", "0.2", "--repeat", "2", "count-local",
                          "--json", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1].startswith("Runs: 2, hits median of run medians")
    rs = ResultSet.load(path)
    agreement = run_agreement(rs)
    said = [l for l in out.stderr.splitlines() if "runs disagree" in l]
    assert said == ([f"WARNING: {agreement.text()}"] if agreement else []), out.stderr
    assert "runs disagree" not in out.stdout


def test_tables_of_runs_name_each_runs_warnings():
    steady, noisy = made([10.0] * 8), made([8.0, 12.0] * 5)
    assert steady.warnings == () and noisy.warnings
    expected = [f"WARNING: noisy: {w}" for w in noisy.warnings]
    study = benchbpf.ringbuf.Study("demo", {"steady": steady, "noisy": noisy})
    rs = benchbpf.ResultSet([steady, noisy])
    for text in (str(study),):
        lines = text.splitlines()
        assert lines[-len(expected):] == expected and len(lines) == 4 + len(expected)
    assert [ln for ln in str(rs).splitlines() if ln.startswith("WARNING")] == \
        [f"WARNING: count-local: {w}" for w in noisy.warnings]
    page = study._repr_html_()
    assert page.index("</table>") < page.index("WARNING: noisy: hits: coefficient of variation")
