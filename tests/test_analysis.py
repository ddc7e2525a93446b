"""Sweeps and comparisons over real runs."""
import pytest

import benchbpf
from conftest import SHORT


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


def test_compare_hand_computed():
    # medians 20 and 35: ratio 1.75, +75 %; ranks of new are 4..6 of 6, U = 9,
    # exact two-sided p = 2/20.
    c = benchbpf.compare(made([10, 20, 30]), made([31, 35, 50]))
    assert c.base_median == 20.0 and c.new_median == 35.0
    assert c.ratio == pytest.approx(1.75) and c.change_pct == pytest.approx(75.0)
    assert c.p_value() == pytest.approx(0.1) and c.p_value("greater") == pytest.approx(0.05)
    assert not c.significant
    assert "count-local vs count-local: hits median 35.000 vs 20.000 M/s (+75.0%" in str(c)
    # Even-length sets: the median is the mean of the middle two.
    c = benchbpf.compare(made([4, 1, 3, 2]), made([1, 2, 2, 9]))
    assert (c.base_median, c.new_median, c.ratio) == (2.5, 2.0, pytest.approx(0.8))


def test_two_samples_each_are_never_significant():
    # Two samples per side never separate at 5 %: the smallest exact
    # two-sided p is 2 / C(4, 2) = 1/3, however far apart they are.
    c = benchbpf.compare(made([100, 101]), made([105, 106]))
    assert c.p_value() == pytest.approx(1 / 3) and not c.significant
    c = benchbpf.compare(made(range(100, 110)), made(range(120, 130)))
    assert c.p_value() == pytest.approx(2 / 184756) and c.significant


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


def test_compare_refuses_different_benchmarks():
    with pytest.raises(ValueError, match="base is count-global and new is rb-libbpf"):
        benchbpf.compare(made([1, 2], "count-global"), made([3, 4], "rb-libbpf"))
    with pytest.warns(benchbpf.analysis.BenchmarkMismatchWarning):
        c = benchbpf.compare(made([1, 2], "count-global"), made([3, 4], "rb-libbpf"),
                             different_benchmarks=True)
    assert "DIFFERENT BENCHMARKS" in str(c)
    # One family, one report: the same figure, compared as it is.
    rb = made([3, 4], "rb-libbpf", family="ringbuf", report="hits_drops")
    pb = made([1, 2], "pb-libbpf", family="ringbuf", report="hits_drops")
    assert "DIFFERENT" not in str(benchbpf.compare(pb, rb))


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
    b = benchbpf.run("count-local", **SHORT, producers=2)
    c = benchbpf.compare(a, b)
    assert not c.fingerprint_differences
    assert "count-local vs count-local" in str(c)
    with pytest.raises(TypeError, match="base must be a benchbpf.Result"):
        benchbpf.compare("x", b)
    with pytest.raises(KeyError, match="no counter 'nope'"):
        benchbpf.compare(a, b, counter="nope")


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
