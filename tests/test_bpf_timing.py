"""BPF-side timing statistics (benchbpf/bpf_timing.py): upstream's IQR filter,
median, p99, stdev and cv, its lines, and the shape of a BPF-timed Result."""
import math

import pytest

from benchbpf.results import bpf_timing
from benchbpf.results.result import Result, Sample

pytestmark = pytest.mark.fast


def timed_result(ns_per_op, iters=1000, name="bpf-nop"):
    samples = [Sample(interval_ns=round(v * iters), hits=iters, extra={"cpu": 0})
               for v in ns_per_op]
    return Result(name=name, params={}, samples=samples, metadata={"report": "bpf_timing"})


def test_iqr_filter_keeps_everything_under_eight():
    xs = [1, 2, 3, 1000, 5, 6, 7]
    assert bpf_timing.iqr_filter(xs) == sorted(xs)


def test_iqr_filter_drops_outliers_on_both_sides():
    xs = [10.0] * 20 + [10.5, 9.5, 100.0, 0.1]
    kept = bpf_timing.iqr_filter(xs)
    assert 100.0 not in kept and 0.1 not in kept
    assert kept == [10.0] * 20          # IQR 0: only the quartiles' value stays


def test_iqr_filter_bounds_are_upstreams_quartiles():
    # n = 8: Q1 = xs[2] = 3, Q3 = xs[6] = 7, IQR 4: keep -3 .. 13.
    xs = [1, 2, 3, 4, 5, 6, 7, 13]
    assert bpf_timing.iqr_filter(xs) == xs
    assert bpf_timing.iqr_filter(xs[:-1] + [13.5]) == xs[:-1]


def test_stats_as_upstream_computes_them():
    xs = list(range(1, 101))                    # 1 .. 100
    s = bpf_timing.timing_stats(xs)
    assert s.samples == 100
    assert s.median_ns == 51                    # sorted[n / 2]
    assert s.p99_ns == 100                      # sorted[(int)(n * 99 / 100.0)]
    assert s.min_ns == 1 and s.max_ns == 100
    assert s.mean_ns == pytest.approx(50.5)
    assert s.stdev_ns == pytest.approx(math.sqrt(sum((x - 50.5) ** 2 for x in xs) / 99))
    assert s.cv_pct == pytest.approx(s.stdev_ns / 50.5 * 100)
    assert bpf_timing.timing_stats([]) is None
    assert bpf_timing.timing_stats([3.0]).stdev_ns == 0


def test_lines_and_filtered_beside_raw():
    r = timed_result([2.0] * 30 + [50.0])
    raw, iqr = bpf_timing.stats(r, filtered=False), bpf_timing.stats(r)
    assert raw.samples == 31 and raw.max_ns == 50.0
    assert iqr.samples == 30 and iqr.removed == 1 and iqr.max_ns == 2.0
    assert r.summary() == "bpf-nop: median 2.00 ns/op, stddev 0.00, p99 2.00 (30 samples)"
    assert bpf_timing.machine_line(r, "tcp-v4") == (
        "RESULT scenario=tcp-v4 samples=30 median=2.00 stddev=0.00 cv=0.00 min=2.00 "
        "p99=2.00 max=2.00")
    assert timed_result([]).summary() == "No timing samples collected."


def test_proportionality_warning_past_five_percent():
    assert bpf_timing.warning(2.0) is None
    assert bpf_timing.warning(2.09) is None
    assert bpf_timing.warning(1.89) is not None
    w = bpf_timing.warning(1.7)
    assert w.startswith("WARNING: proportionality check failed (2N/N ratio=1.700, "
                        "expected=2.000, error=15.0%)")
    assert bpf_timing.warning(None) is None


def test_shape_makes_each_batch_a_sample():
    series = {bpf_timing.SERIES_NS: (1000.0, 3000.0), bpf_timing.SERIES_CPU: (0.0, 1.0),
              bpf_timing.SERIES_CALIBRATION: (100, 250, 500, 1000, 2090, 0, 400, 0)}
    batches, meta = bpf_timing.shape(series, {"bpf_timing_stopped_by": "samples"}, 2)
    assert batches == ((1000, 500, 0), (3000, 500, 1))
    assert meta["batch_iters"] == 500 and meta["target_samples"] == 400
    assert meta["stopped_by"] == "samples"
    cal = meta["calibration"]
    assert cal["ratio_2n_n"] == pytest.approx(2.09)
    assert cal["proportionality_error_pct"] == pytest.approx(4.5)
    assert cal["warning"] is None and not cal["fixed"]
    assert meta["raw"]["samples"] == 2 and meta["raw"]["median_ns"] == 6.0
    # A batch size the benchmark prescribes: no calibration, no warning.
    series[bpf_timing.SERIES_CALIBRATION] = (100, 0, 6500, 0, 0, 0, 200, 1)
    _, meta = bpf_timing.shape(series, {}, 1)
    assert meta["calibration"]["fixed"] and meta["calibration"]["warning"] is None
    assert bpf_timing.shape({}, {}, 1) is None
