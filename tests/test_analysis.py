"""Sweeps and comparisons over real runs."""
import pytest

import benchbpf
from benchbpf.results import resultset
from conftest import SHORT, SHORT_SAMPLES, calibration


@pytest.mark.fast
def test_sweep_over_a_common_option():
    sw = benchbpf.sweep("count-local", "producers", [1, 2], **SHORT)
    assert sw.values == (1, 2) and len(sw) == 2
    assert sw[2].params["producers"] == 2
    rows = sw.table()
    assert [r[0] for r in rows] == [1, 2] and all(r[1] > 0 for r in rows)
    assert "count-local over producers" in str(sw)


def test_sweep_checks_every_value_before_running_any():
    before = benchbpf._core.setup_count()
    with pytest.raises(ValueError, match="producers=0 out of range"):
        benchbpf.sweep("count-local", "producers", [1, 2, 0], **SHORT)
    with pytest.raises(ValueError, match="work_per_hit=-1 out of range"):
        benchbpf.sweep("count-local", "work_per_hit", [0, -1], **SHORT)
    assert benchbpf._core.setup_count() == before


def test_sweep_plot_log_axis_and_confidence_intervals():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from benchbpf.analysis import median_ci
    results = tuple(made([v, v + 1, v + 2, v + 3, v + 40]) for v in (10, 20, 30))
    sw = benchbpf.Sweep("count-local", "trig_batch_iters", (1, 10, 1000), results)
    ax = sw.plot()
    assert ax.get_xscale() == "log" and ax.get_ylim()[0] == 0
    assert "median, 95% CI" in ax.get_legend().get_texts()[0].get_text()
    # Bars span the median's confidence interval, not mean +- stdev.
    segs = ax.collections[0].get_segments()
    low, high = median_ci(results[0].rates_mps())
    assert (segs[0][0][1], segs[0][1][1]) == pytest.approx((low, high))
    sw = benchbpf.Sweep("count-local", "producers", (1, 2), results[:2])
    assert sw.plot().get_xscale() == "linear"


def test_result_plot_from_zero_with_warmup_distinct():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    r = benchbpf.run("count-local", warmup=0.4, duration=0.6, interval=0.2)
    ax = r.plot()
    assert ax.get_ylim()[0] == 0
    warm, kept = ax.lines[0], ax.lines[1]
    assert warm.get_label().startswith("warm-up") and len(warm.get_xdata()) == 2
    assert len(kept.get_xdata()) == 3 and min(kept.get_xdata()) > max(warm.get_xdata())


def test_sweep_rejects_empty_values():
    with pytest.raises(ValueError, match="'producers' is empty"):
        benchbpf.sweep("count-local", "producers", [])


def made(rates_mps, name="count-local", **metadata):
    """A Result whose one-second samples have these hit rates, M/s."""
    return benchbpf.Result(name, {"producers": 1}, tuple(
        benchbpf.Sample(interval_ns=1_000_000_000, hits=int(r * 1e6)) for r in rates_mps),
        metadata=metadata)


def runs(*medians, name="count-local", **metadata):
    """One made Result per median, each of three samples around it."""
    return [made([m - 1, m, m + 1], name, **metadata) for m in medians]


@pytest.mark.fast
def test_compare_hand_computed():
    # Run medians 10 20 30 against 31 35 50: medians 20 and 35, ratio 1.75,
    # +75 %; the new runs rank 4..6 of 6, U = 9, exact two-sided p = 2/20.
    # Three runs per side can never reach 0.05: not enough runs.
    c = benchbpf.compare(runs(10, 20, 30), runs(31, 35, 50))
    assert c.base_figures == (10, 20, 30) and c.new_figures == (31, 35, 50)
    assert c.base_median == 20.0 and c.new_median == 35.0
    assert c.ratio == pytest.approx(1.75) and c.change_pct == pytest.approx(75.0)
    assert c.p_value() == pytest.approx(0.1) and c.p_value("greater") == pytest.approx(0.05)
    assert c.verdict == "not enough runs" and not c.significant
    assert str(c).startswith("count-local: hits median 20.000 -> 35.000 M/s (+75.0%): "
                             "B/A -: undecided: not enough runs (needs 4 per side) "
                             "(Mann-Whitney U on runs); 3 -> 3 runs: not enough runs")
    assert c.outcome.verdict == "undecided" and c.outcome.ratio is None
    # Even numbers of runs: the median is the mean of the middle two.
    c = benchbpf.compare(runs(4, 1, 3, 2), runs(1, 2, 2, 9))
    assert (c.base_median, c.new_median, c.ratio) == (2.5, 2.0, pytest.approx(0.8))


def test_one_run_per_side_is_never_significant_however_many_samples():
    # Samples of one run are not independent draws of another run: ten
    # samples each, far apart, are still one run against one.
    c = benchbpf.compare(made(range(100, 110)), made(range(120, 130)))
    assert c.verdict == "not enough runs" and not c.significant
    assert c.base_median == 104.5 and c.new_median == 124.5
    assert "1 -> 1 runs: not enough runs to call it significant (at alpha 0.05 the test " \
        "across runs needs 4 per side)" in str(c)
    # Four runs each, every new one above every baseline one: 2 / C(8, 4).
    c = benchbpf.compare(runs(100, 101, 102, 103), runs(110, 111, 112, 113))
    assert c.p_value() == pytest.approx(2 / 70) and c.verdict == "significant"
    # B/A: the median pairwise ratio; its interval at 4 runs each is the
    # smallest and largest pairwise ratio (the test rejects beyond them).
    o = c.outcome
    assert (o.verdict, o.beyond_threshold) == ("faster", True)
    assert (o.low, o.high) == (pytest.approx(110 / 103), pytest.approx(113 / 100))
    assert "B/A 1.0985 (1.0680..1.1300, 95 %): faster by 6.8..13.0 %, beyond the 2 % " \
        "threshold (Mann-Whitney U on runs)" in str(c)
    c = benchbpf.compare(runs(100, 111, 102, 113), runs(110, 101, 112, 103))
    assert c.verdict == "within noise" and c.outcome.verdict == "undecided"
    # Within noise and within the threshold: the same.
    c = benchbpf.compare(runs(100, 100.5, 101, 101.5), runs(100.2, 100.7, 101.2, 101.7))
    assert c.verdict == "within noise" and c.outcome.verdict == "same", str(c)


def test_runs_taken_apart_in_time_must_also_differ_beyond_the_hosts_drift():
    drift = calibration
    early, later = "2026-12-03T07:00:00+00:00", "2026-12-03T09:00:00+00:00"
    base = runs(100, 101, 102, 103, started=early, host_drift=drift(0.03))
    new = runs(104, 105, 106, 107, started=later, host_drift=drift(0.03))
    # Every new run above every baseline one (p = 2/70), but 4 % apart on a
    # host whose figure moves by 3 %: within its drift.
    c = benchbpf.compare(base, new)
    assert c.test().verdict == "significant" and c.verdict == "within noise"
    assert c.host_test.p_value > 0.05 and c.host_test.base.mean == pytest.approx(101.5)
    assert "taken apart in time, against this host's drift" in str(c)
    assert c.outcome.verdict == "undecided" and c.outcome.note == "not beyond the host's drift"
    assert "(Mann-Whitney U on runs and the host's drift)" in str(c)
    # Runs that found no history have only the calibration's 10 minutes.
    assert c.host_test.young == ("baseline", "new")
    assert "(young history: baseline and new; the host's hours may move more)" in str(c)
    from benchbpf import hostdrift
    watched = {**drift(0.03), "history": hostdrift.History(
        0.03, 40, "then", "later", span_s=2 * 3600.0).as_dict()}
    seen = benchbpf.compare(runs(100, 101, 102, 103, started=early, host_drift=watched), new)
    assert seen.host_test.young == ("new",) and "young history: new;" in str(seen)
    # On a steady host the same runs differ beyond it.
    steady = benchbpf.compare(runs(100, 101, 102, 103, started=early, host_drift=drift(0.001)),
                              runs(104, 105, 106, 107, started=later, host_drift=drift(0.001)))
    assert steady.host_test.p_value < 0.05 and steady.verdict == "significant"
    # Taken in turns, or without a calibration, the runs alone decide.
    turns = benchbpf.compare(base, runs(104, 105, 106, 107, started=early,
                                        host_drift=drift(0.03)))
    assert turns.host_test is None and turns.verdict == "significant"
    plain = benchbpf.compare(runs(100, 101, 102, 103, started=early),
                             runs(104, 105, 106, 107, started=later))
    assert plain.host_test is None and plain.verdict == "significant"
    assert "host" not in str(plain)


def test_the_test_across_runs_never_exceeds_alpha():
    """Under no change every ordering of the runs is equally likely: the
    share of orderings called significant is the test's false-alarm rate.
    It stays at or under alpha for every size, ties included."""
    import itertools
    from benchbpf.analysis import across_runs, runs_needed
    for n1 in range(1, 7):
        for n2 in range(1, 7):
            for alpha in (0.05, 0.01):
                for alternative in ("two-sided", "less"):
                    values = list(range(n1 + n2))
                    flagged = total = 0
                    for pick in itertools.combinations(values, n1):
                        rest = [v for v in values if v not in pick]
                        flagged += across_runs(pick, rest, alpha, alternative).significant
                        total += 1
                    assert flagged / total <= alpha, (n1, n2, alpha, alternative)
    # Ties (quantised run medians): still never above alpha.
    values = [1, 1, 2, 2, 2, 3, 4, 4, 5, 5]
    flagged = total = 0
    for pick in itertools.combinations(range(10), 5):
        xs = [values[i] for i in pick]
        ys = [values[i] for i in range(10) if i not in pick]
        flagged += across_runs(xs, ys, 0.05).significant
        total += 1
    assert flagged / total <= 0.05
    assert runs_needed(0.05) == 4 and runs_needed(0.01, "less") == 5


@pytest.mark.fast
def test_mann_whitney_u_hand_computed():
    from benchbpf.analysis import mann_whitney_u, median_ci, samples_needed
    assert mann_whitney_u([1, 2, 3], [4, 5, 6], "less") == (0.0, pytest.approx(0.05))
    # With ties: average ranks 1.5 1.5 3.5 5.5 for xs, U = 2; normal
    # approximation with tie and continuity corrections.
    u, p = mann_whitney_u([1, 1, 2, 3], [2, 3, 4, 4])
    assert u == 2.0 and p == pytest.approx(0.10375, abs=1e-4)
    assert median_ci(range(1, 21)) == (6, 15)
    assert samples_needed(0.05, 0.2) == 5           # the exact test's own floor at 1 %
    assert samples_needed(0.3, 0.15) == 147


@pytest.mark.fast
def test_compare_refuses_different_benchmarks():
    with pytest.raises(ValueError, match="base is count-global and new is rb-libbpf") as e:
        benchbpf.compare(made([1, 2], "count-global"), made([3, 4], "rb-libbpf"))
    # The flag it names exists on the command line.
    assert "different_benchmarks=True (command line: --different-benchmarks)" in str(e.value)
    from benchbpf.tools.cli import _compare_parser
    assert _compare_parser().parse_args(["a", "b", "--different-benchmarks"]) \
        .different_benchmarks
    with pytest.warns(benchbpf.analysis.BenchmarkMismatchWarning):
        c = benchbpf.compare(made([1, 2], "count-global"), made([3, 4], "rb-libbpf"),
                             different_benchmarks=True)
    assert "DIFFERENT BENCHMARKS" in str(c)
    # One family, one report: the same figure, compared as it is.
    rb = made([3, 4], "rb-libbpf", family="ringbuf", report="hits_drops")
    pb = made([1, 2], "pb-libbpf", family="ringbuf", report="hits_drops")
    assert "DIFFERENT" not in str(benchbpf.compare(pb, rb))


def test_compare_refuses_other_parameters_trigger_and_interval_naming_each():
    a = benchbpf.run("count-local", **SHORT)
    b = benchbpf.run("count-local", **{**SHORT, "interval": 0.1}, work_per_hit=10)
    with pytest.raises(ValueError) as e:
        benchbpf.compare(a, b)
    text = str(e.value)
    assert "parameter interval: baseline 0.2, new 0.1" in text
    assert "parameter work_per_hit: baseline 0, new 10" in text
    assert "different_params=True (command line: --different-params)" in text
    c = benchbpf.compare(a, b, different_params=True)
    assert "configuration differs (accepted):\n  parameter interval" in str(c)
    assert len(c.differences) == 2
    # Warm-up and duration only say how long it ran: compared as they are.
    d = benchbpf.run("count-local", **{**SHORT, "duration": 0.4})
    assert not benchbpf.compare(a, d).differences
    # Another trigger (as recorded in the run's metadata) is another setup.
    other = made([1, 2, 3], trigger="raw_tp/sys_enter")
    with pytest.raises(ValueError, match="trigger: baseline None, new 'raw_tp/sys_enter'"):
        benchbpf.compare(made([1, 2, 3]), other)
    # The runs of one side must be one configuration.
    with pytest.raises(ValueError, match="base holds runs of different configurations"):
        benchbpf.compare([a, b], [a])


def test_compare_marks_runs_that_overlapped_other_benchbpf_runs():
    c = benchbpf.compare(runs(10, 11, 12, 13, concurrent_runs=1),
                         runs(10, 11, 12, 13) + runs(12, concurrent_runs=2))
    assert c.overlapped == (4, 1)
    assert "[OVERLAPPED other benchbpf runs: baseline 4 of 4, new 1 of 5 runs]" in str(c)
    assert "OVERLAPPED" in c._repr_html_()
    assert "OVERLAPPED" not in str(benchbpf.compare(runs(1, 2), runs(1, 2)))


def test_compare_lists_fingerprint_differences_and_has_html():
    fp = {"kernel_release": "6.1", "cpu_vulnerabilities": {"mds": "Vulnerable"}}
    a = made([1, 2, 3], fingerprint=fp)
    b = made([1, 2, 3], fingerprint={**fp, "kernel_release": "6.18",
                                     "cpu_vulnerabilities": {"mds": "Mitigation: VERW"}})
    c = benchbpf.compare(a, b)
    assert c.fingerprint_differences == [
        "kernel_release: '6.1' -> '6.18'",
        "cpu_vulnerabilities/mds: 'Vulnerable' -> 'Mitigation: VERW'"]
    assert "fingerprint differences:\n  kernel_release" in str(c)
    page = c._repr_html_()
    assert "<table>" in page and "+0.0%" in page and "kernel_release" in page


def test_compare_two_runs():
    a = benchbpf.run("count-local", **SHORT)
    b = benchbpf.run("count-local", **SHORT)
    c = benchbpf.compare(a, b)
    assert not c.fingerprint_differences
    assert str(c).startswith("count-local: hits median ")
    with pytest.raises(TypeError, match="base must be a benchbpf.Result"):
        benchbpf.compare("x", b)
    with pytest.raises(KeyError, match="no counter 'nope'"):
        benchbpf.compare(a, b, counter="nope")


def test_compare_repeated_runs():
    a = [benchbpf.run("count-local", **SHORT) for _ in range(4)]
    b = benchbpf.ResultSet([benchbpf.run("count-local", **SHORT) for _ in range(4)])
    c = benchbpf.compare(a, b)
    assert len(c.base_runs) == len(c.new_runs) == 4
    assert c.verdict in ("significant", "within noise")
    # Real runs record their producers' CPU time: decided on the gate's speeds.
    assert c.per_cpu and "4 -> 4 runs, Mann-Whitney U across runs on per producer " \
        "CPU-second, median of the fastest 50% (" in str(c)
    from benchbpf.analysis import run_speed
    assert c.base_figures == tuple(run_speed(r) for r in a)
    assert 0 < c.p_value() <= 1
    # Or on the medians it prints.
    c = benchbpf.compare(a, b, per_cpu=False)
    assert c.base_figures == tuple(r.median for r in a) and not c.per_cpu
    with pytest.raises(ValueError, match="per_cpu=True: some runs were recorded without"):
        benchbpf.compare(made([1, 2, 3]), made([1, 2, 3]), per_cpu=True)


def test_plot_draws_samples():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    r = benchbpf.run("count-local", **SHORT)
    ax = r.plot()
    assert len(ax.lines[-2].get_xdata()) == len(r.samples)


def test_sweep_checks_combinations_only_the_core_knows_before_running_any():
    # Each value is in rb_sample_rate's own range; with rb_sampled and the
    # default 512 KiB ring, the last one could never wake the consumer, which
    # only the benchmark's own validation in the core knows.
    before = benchbpf._core.setup_count()
    with pytest.raises(ValueError, match="rb_sample_rate"):
        benchbpf.sweep("rb-libbpf", "rb_sample_rate", [100, 70000], rb_sampled=True,
                       **SHORT)
    assert benchbpf._core.setup_count() == before
    # The same check stands alone, and passes what run() would run.
    with pytest.raises(ValueError, match="rb_sample_rate"):
        benchbpf.check("rb-libbpf", rb_sampled=True, rb_sample_rate=70000)
    assert benchbpf.check("rb-libbpf", rb_sampled=True, rb_sample_rate=100) is None
    assert benchbpf._core.setup_count() == before


# ---- grid sweeps, tables, plots and progress ----

TINY = dict(warmup=0, duration=0.2, interval=0.2)


class FakeTerminal(__import__("io").StringIO):
    def isatty(self):
        return True


def test_grid_sweep_runs_every_combination_into_a_table():
    pandas = pytest.importorskip("pandas")
    import platform
    from benchbpf.analysis import median_ci
    rs = benchbpf.sweep("count-global", producers=[1, 2], work_per_hit=(0, 50),
                        progress=False, **SHORT)
    assert isinstance(rs, benchbpf.ResultSet) and rs.axes == ("producers", "work_per_hit")
    assert [(r.params["producers"], r.params["work_per_hit"]) for r in rs] == \
        [(1, 0), (1, 50), (2, 0), (2, 50)]
    df = rs.to_dataframe()
    assert df.shape[0] == 4
    assert list(df.columns[:2]) == ["name", "warmup"]
    for col in ("producers", "work_per_hit", "duration", "mean", "stdev", "median", "ci_low",
                "ci_high", "samples", "drops_mps", "latency_ns", "trigger", "kernel",
                "started"):
        assert col in df.columns, col
    assert list(df["producers"]) == [1, 1, 2, 2] and list(df["work_per_hit"]) == [0, 50, 0, 50]
    assert (df["name"] == "count-global").all() and (df["samples"] == SHORT_SAMPLES).all()
    assert list(df["median"]) == [r.median for r in rs]
    assert list(df["mean"]) == pytest.approx([r.mean for r in rs])
    assert list(zip(df["ci_low"], df["ci_high"])) == [median_ci(r.rates_mps()) for r in rs]
    assert ((df["ci_low"] <= df["median"]) & (df["median"] <= df["ci_high"])).all()
    assert (df["drops_mps"] == 0).all() and (df["latency_ns"] > 0).all()
    assert (df["kernel"] == platform.release()).all() and df["trigger"].isna().all()
    # The known cost per hit shows in every row pair.
    assert df["median"][1] < df["median"][0] and df["median"][3] < df["median"][2]
    assert isinstance(df, pandas.DataFrame)


def test_grid_sweep_cpu_sets_are_one_value_unless_a_list_of_sets():
    rs = benchbpf.sweep("count-global", producers=[1], prod_affinity=[0], progress=False,
                        **TINY)
    assert rs.axes == ("producers",) and rs[0].params["prod_affinity"] == (0,)
    # A list of CPU sets is an axis, each set checked before any run.
    before = benchbpf._core.setup_count()
    with pytest.raises(ValueError, match="prod_affinity=.99. names CPU 99"):
        benchbpf.sweep("count-global", prod_affinity=[[0], "0", None, [99]], **TINY)
    assert benchbpf._core.setup_count() == before


def test_grid_sweep_checks_every_combination_before_the_first_run(monkeypatch):
    calls = []
    monkeypatch.setattr(benchbpf.harness._runner, "run", lambda *a, **k: calls.append(a))
    before = benchbpf._core.setup_count()
    with pytest.raises(ValueError, match="work_per_hit=-1 out of range"):
        benchbpf.sweep("count-global", producers=[1, 2], work_per_hit=[0, -1], **SHORT)
    with pytest.raises(ValueError, match="producers=0 out of range: allowed 1"):
        benchbpf.sweep("count-global", work_per_hit=[0, 1], producers=[2, 0], **SHORT)
    # Only the benchmark's own check in the core knows this combination.
    with pytest.raises(ValueError, match="rb_sample_rate"):
        benchbpf.sweep("rb-libbpf", rb_sampled=[True], rb_sample_rate=[100, 70000], **SHORT)
    with pytest.raises(ValueError, match="axis 'producers' is empty"):
        benchbpf.sweep("count-global", producers=[], **SHORT)
    assert calls == [] and benchbpf._core.setup_count() == before
    # The one-parameter form, also by keyword, still gives a Sweep.
    monkeypatch.undo()
    sw = benchbpf.sweep("count-global", param="producers", values=[1], progress=False, **TINY)
    assert isinstance(sw, benchbpf.Sweep) and sw.values == (1,)


def test_progress_on_a_terminal_and_off(monkeypatch):
    pytest.importorskip("tqdm")
    import sys
    term = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", term)
    benchbpf.sweep("count-global", producers=[1, 2], **TINY)
    shown = term.getvalue()
    assert "count-global" in shown and "2/2" in shown and "producers=2" in shown, shown
    for progress, stderr in ((False, FakeTerminal()), (None, __import__("io").StringIO())):
        monkeypatch.setattr(sys, "stderr", stderr)
        benchbpf.sweep("count-global", producers=[1, 2], progress=progress, **TINY)
        assert stderr.getvalue() == ""


def test_progress_without_tqdm_is_a_line_per_run(monkeypatch, capsys):
    import sys
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    benchbpf.sweep("count-global", producers=[1, 2], work_per_hit=[3], progress=True, **TINY)
    assert capsys.readouterr().err.splitlines() == [
        "count-global [1/2] producers=1, work_per_hit=3",
        "count-global [2/2] producers=2, work_per_hit=3"]
    # A study of sweeps is one bar too, counted as its runs are known.
    try:
        benchbpf.ringbuf_study("multi_producer", producer_counts=(1, 2), progress=True, **TINY)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert capsys.readouterr().err.splitlines() == [
        "ringbuf study multi_producer [1/2] producers=1",
        "ringbuf study multi_producer [2/2] producers=2"]


def test_progress_default_follows_terminal_and_jupyter(monkeypatch):
    import io
    import sys
    import types
    from benchbpf.harness import _progress
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert not _progress.wanted(None) and _progress.wanted(True)
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: types.SimpleNamespace(kernel=object())
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    assert _progress.wanted(None) and not _progress.wanted(False)
    with pytest.raises(TypeError, match="progress='yes'"):
        _progress.wanted("yes")


def grid_of_made(values=(1, 10, 1000), hues=(0, 1)):
    """A ResultSet over nr x hue from made-up samples, no runs."""
    results = []
    for h in hues:
        for v in values:
            r = made([v + h, v + h + 1, v + h + 2, v + h + 3, v + h + 40])
            results.append(benchbpf.Result(r.name, {"nr": v, "hue": h}, r.samples))
    return benchbpf.ResultSet(results, axes=("hue", "nr"))


def test_resultset_plot_lines_bars_and_axes():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from benchbpf.analysis import mean_ci, median_ci
    rs = grid_of_made()
    ax = rs.plot(x="nr")
    assert len(ax.containers) == 2 and ax.get_xscale() == "log" and ax.get_ylim()[0] == 0
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("hue=0: median, 95% CI") and labels[1].startswith("hue=1")
    assert ax.get_ylabel() == "hits median, M/s" and ax.get_xlabel() == "nr"
    segs = ax.containers[0].lines[2][0].get_segments()
    assert (segs[0][0][1], segs[0][1][1]) == pytest.approx(median_ci(rs[0].rates_mps()))
    ax = rs.plot(x="hue", y="mean", hue="nr")
    assert len(ax.containers) == 3 and ax.get_xscale() == "linear"
    assert "mean, 95% CI (t)" in ax.get_legend().get_texts()[0].get_text()
    segs = ax.containers[0].lines[2][0].get_segments()
    assert (segs[0][0][1], segs[0][1][1]) == pytest.approx(mean_ci(rs[0].rates_mps()))
    with pytest.raises(ValueError, match="x='nope'"):
        rs.plot(x="nope")


def test_resultset_plot_renders_to_a_file(tmp_path):
    """The figure a notebook shows, written out: a PNG of the requested size
    whose pixels are not all one colour (the lines were drawn)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.image
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(4, 3), dpi=50)
    grid_of_made().plot(x="nr", ax=ax)
    path = tmp_path / "grid.png"
    fig.savefig(path)
    plt.close(fig)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = matplotlib.image.imread(path)
    assert pixels.shape[:2] == (150, 200)
    assert pixels.reshape(-1, pixels.shape[-1]).std(axis=0).max() > 0.05


@pytest.mark.fast
def test_mean_ci_hand_computed():
    from benchbpf.analysis import mean_ci
    # t(0.975, 2) = 4.3027: 2 +- 4.3027 * 1 / sqrt(3)
    assert mean_ci([1, 2, 3]) == pytest.approx((2 - 2.4841, 2 + 2.4841), abs=1e-3)
    import math
    assert all(math.isnan(b) for b in mean_ci([5.0]))


def test_grid_sweep_saved_and_loaded(tmp_path):
    rs = benchbpf.sweep("count-global", producers=[1, 2], progress=False, **TINY)
    path = tmp_path / "grid.json"
    rs.save(path)
    back = benchbpf.ResultSet.load(path)
    assert back == rs and back.axes == ("producers",)
    assert dict(back.metadata["grid"]) == {"producers": (1, 2)}
    pandas = pytest.importorskip("pandas")
    pandas.testing.assert_frame_equal(back.to_dataframe(), rs.to_dataframe())


def test_sweep_to_dataframe():
    pytest.importorskip("pandas")
    results = tuple(made([v, v + 1]) for v in (10, 20))
    sw = benchbpf.Sweep("count-local", "producers", (1, 2), results)
    assert sw.to_resultset().axes == ("producers",)
    df = sw.to_dataframe()
    assert list(df["median"]) == [10.5, 20.5] and list(df["samples"]) == [2, 2]


def test_missing_pandas_says_what_to_install(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install benchbpf\[analysis\]"):
        grid_of_made().to_dataframe()


def test_runs_without_pandas_and_tqdm():
    import os
    import subprocess
    import sys
    code = ("import sys; sys.modules['pandas'] = sys.modules['tqdm'] = None\n"
            "import benchbpf\n"
            "rs = benchbpf.sweep('count-global', producers=[1, 2], progress=True, "
            "warmup=0, duration=0.2, interval=0.2)\n"
            "print(len(rs), rs[1].params['producers'], rs[1].mean > 0)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(benchbpf.__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [root, os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "2", "True"]
    assert "count-global [2/2] producers=2" in out.stderr


def test_sweep_without_values_names_what_is_missing():
    before = benchbpf._core.setup_count()
    with pytest.raises(TypeError, match=r"sweep\('rb-libbpf', 'producers'\): missing "
                                        r"values: give the values to take for 'producers'"):
        benchbpf.sweep("rb-libbpf", "producers")
    with pytest.raises(TypeError, match="values=4: a list of values for 'producers'"):
        benchbpf.sweep("rb-libbpf", "producers", 4)
    with pytest.raises(TypeError, match="missing param"):
        benchbpf.sweep("rb-libbpf", values=[1, 2])
    assert benchbpf._core.setup_count() == before


def test_where_refuses_a_parameter_no_result_has():
    rs = benchbpf.sweep("count-local", producers=[1, 2], **SHORT)
    assert [r.params["producers"] for r in rs.where(producers=2)] == [2]
    assert len(rs.where(producers=3)) == 0          # a known parameter, no such value
    with pytest.raises(ValueError, match=r"'nosuch' is not a parameter of these results; "
                                         r"parameters: .*producers.*work_per_hit"):
        rs.where(nosuch=1)


def _interrupt_during_run(at_run, samples_per_run):
    """A callback for run(callback=): SIGINT (Ctrl-C, delivered by the kernel to this
    process from another thread) while run number `at_run` (from 1) is sampling."""
    import os
    import signal
    import threading
    seen = {"samples": 0}

    def callback(sample, index, warmup):
        seen["samples"] += 1
        if seen["samples"] == (at_run - 1) * samples_per_run + 1:
            threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT)).start()
    return callback


def test_ctrl_c_during_a_sweep_keeps_the_finished_runs(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    opts = dict(warmup=0, duration=0.6, interval=0.2)
    with pytest.raises(KeyboardInterrupt) as info:
        benchbpf.sweep("count-local", producers=[1, 2], work_per_hit=[0, 10],
                       callback=_interrupt_during_run(3, 3), progress=False, **opts)
    e = info.value
    assert isinstance(e, benchbpf.Interrupted)
    partial = e.partial
    assert len(partial) == 2 and partial.metadata["incomplete"] is True
    assert (partial.metadata["finished_runs"], partial.metadata["planned_runs"]) == (2, 4)
    assert [(r.params["producers"], r.params["work_per_hit"]) for r in partial] == \
        [(1, 0), (1, 10)]
    assert all(len(r.samples) == 3 and r.mean > 0 for r in partial)
    assert e.path.startswith(str(tmp_path)) and benchbpf.ResultSet.load(e.path) == partial
    err = capsys.readouterr().err
    assert f"interrupted after 2 of 4 runs; the finished runs are saved to {e.path}" in err
    # The one-parameter form and the studies go through the same session.
    with pytest.raises(benchbpf.Interrupted) as info:
        benchbpf.sweep("count-local", "producers", [1, 2, 1],
                       callback=_interrupt_during_run(2, 3), progress=False, **opts)
    assert len(info.value.partial) == 1 and info.value.partial.metadata["incomplete"]
    # Interrupted before anything finished: nothing saved, said so.
    with pytest.raises(benchbpf.Interrupted) as info:
        benchbpf.sweep("count-local", "producers", [1, 2],
                       callback=_interrupt_during_run(1, 3), progress=False, **opts)
    assert len(info.value.partial) == 0 and info.value.path is None
    assert "interrupted before any run finished" in capsys.readouterr().err


def test_tables_of_runs_share_one_vocabulary():
    from benchbpf.results.resultset import Row
    sw = benchbpf.sweep("count-local", "producers", [1, 2], **SHORT)
    rs = benchbpf.sweep("count-local", producers=[1, 2], **SHORT)
    study = benchbpf.ringbuf.Study("demo", {"one": sw.results[0], "two": sw.results[1]})
    for table in (sw.table(), rs.table(), study.table()):
        assert all(type(row) is Row for row in table)
        assert [row.median for row in table] == [row[1] for row in table]
        assert all(row.median > 0 and row.mean > 0 and row.control_latency_ns is None
                   for row in table)
    assert [row.label for row in sw.table()] == [row.label for row in rs.table()] == [1, 2]
    assert [row.label for row in study.table()] == ["one", "two"]
    # The same printout (a title, a header, a row per run) and the same iteration.
    for runs in (sw, rs):
        lines = str(runs).splitlines()
        assert lines[0] == "count-local over producers"
        # A row per run, then a line per warning of theirs (a short run may have some).
        assert lines[4:] == [f"WARNING: {w}" for w in resultset.warnings_of(runs.items())]
        assert lines[1].split()[:3] == ["producers", "median", "hits"]
    assert str(study).splitlines()[1].split()[:2] == ["median", "hits"]
    assert all(isinstance(r, benchbpf.Result) for r in sw) and list(sw) == list(sw.results)
    assert all(isinstance(r, benchbpf.Result) for r in rs)
    assert [v for v, _ in sw.items()] == [v for v, _ in rs.items()] == [1, 2]
    assert repr(sw) == "<Sweep of 2 results: count-local, axes=['producers']>"
    assert repr(rs) == "<ResultSet of 2 results: count-local, axes=['producers']>"


def _inside(inner, outer):
    return outer.x0 - 1 <= inner.x0 and inner.x1 <= outer.x1 + 1 and \
        outer.y0 - 1 <= inner.y0 and inner.y1 <= outer.y1 + 1


def _rendered(ax, path):
    """Save the figure as a PNG, as a user would, and return its renderer."""
    fig = ax.figure
    fig.savefig(path)
    assert path.stat().st_size > 0
    return fig.canvas.get_renderer()


def test_plots_keep_legends_inside_the_figure_and_ring_min_max_points(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from benchbpf.results._plot import MIN_MAX_LABEL
    # 3 samples per run: too few for a 95 % interval, so every bar is min..max.
    sw = benchbpf.sweep("count-local", "producers", [1, 2], **SHORT)
    rs = benchbpf.sweep("count-local", producers=[1, 2], work_per_hit=[0, 10], **SHORT)
    for name, ax in (("sweep", sw.plot()), ("grid", rs.plot(x="producers"))):
        renderer = _rendered(ax, tmp_path / f"{name}.png")
        legend = ax.get_legend()
        box = legend.get_window_extent(renderer)
        assert _inside(box, ax.figure.bbox), (name, box, ax.figure.bbox)
        # Beside the axes, not over the points.
        assert box.x0 >= ax.get_window_extent(renderer).x1, name
        labels = [t.get_text() for t in legend.get_texts()]
        assert labels.count(MIN_MAX_LABEL) == 1, labels
        plt.close(ax.figure)
    # Drops beside hits: one panel each.
    axes = rs.plot(x="producers", y=["median", "drops_mps"])
    assert [a.get_ylabel() for a in axes] == ["hits median, M/s", "drops, M/s"]
    renderer = _rendered(axes[0], tmp_path / "grid2.png")
    for a in axes:
        assert _inside(a.get_legend().get_window_extent(renderer), a.figure.bbox)
    plt.close(axes[0].figure)
    with pytest.raises(ValueError, match="leave ax=None"):
        rs.plot(y=["median", "drops_mps"], ax=axes[0])


def test_study_bars_spanning_decades_use_a_log_scale(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from benchbpf import Result, Sample

    def result(name, mps):
        # Nine samples: enough for a 95 % interval of the median narrower than min..max.
        return Result(name=name, params={}, samples=[
            Sample(10**9, int(mps * 1e6 * (1 + k / 100))) for k in range(9)])
    study = benchbpf.ringbuf.Study("demo", {"rb-libbpf": result("rb-libbpf", 18.0),
                                            "pb-libbpf": result("pb-libbpf", 0.14)})
    ax = study.plot()
    _rendered(ax, tmp_path / "study.png")
    assert ax.get_yscale() == "log"
    low, high = ax.get_ylim()
    assert 0 < low < 0.14 and high > 18
    assert ax.get_legend() is None               # no min..max bar to explain
    plt.close(ax.figure)
    near = benchbpf.ringbuf.Study("near", {"a": result("a", 10.0), "b": result("b", 5.0)})
    ax = near.plot()
    assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0
    plt.close(ax.figure)
