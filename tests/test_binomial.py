"""stats.clopper_pearson, the one binomial interval the package and the
measurement scripts (false-alarm and coverage rates) use."""
import math

import pytest

from benchbpf.results.stats import clopper_pearson

pytestmark = pytest.mark.fast


@pytest.mark.parametrize("k, n, low, high", [
    # Published exact intervals (and scipy's beta quantiles) at 95 %.
    (0, 60, 0.0, 0.0596),
    (1, 10, 0.0025, 0.4450),
    (5, 10, 0.1871, 0.8129),
    (3, 1000, 0.000619, 0.008742),
])
def test_known_values(k, n, low, high):
    lo, hi = clopper_pearson(k, n)
    assert lo == pytest.approx(low, abs=5e-5 if low > 0.001 else 5e-7)
    assert hi == pytest.approx(high, abs=5e-5 if high > 0.001 else 5e-7)


def test_edges_have_their_closed_forms():
    # k = 0: (1 - high)^n = tail; k = n: low^n = tail.
    for n, conf in ((1, 0.95), (7, 0.9), (60, 0.99), (5000, 0.95)):
        tail = (1 - conf) / 2
        assert clopper_pearson(0, n, conf) == (0.0, pytest.approx(1 - tail ** (1 / n)))
        assert clopper_pearson(n, n, conf) == (pytest.approx(tail ** (1 / n)), 1.0)


def test_symmetric_and_nested():
    for k, n in ((2, 9), (17, 40), (250, 700)):
        lo, hi = clopper_pearson(k, n)
        mlo, mhi = clopper_pearson(n - k, n)
        assert lo == pytest.approx(1 - mhi) and hi == pytest.approx(1 - mlo)
        assert lo < k / n < hi
        narrow = clopper_pearson(k, n, 0.8)
        assert lo < narrow[0] < narrow[1] < hi


@pytest.mark.parametrize("args, message", [
    ((-1, 10), r"k=-1 out of range: successes must be in 0..n \(10\)"),
    ((11, 10), r"k=11 out of range"),
    ((0, 0), r"n=0 out of range: trials must be >= 1"),
    ((1, 10, 1.0), r"confidence=1.0 out of range: 0 < confidence < 1"),
    ((1, 10, math.nan), r"confidence=nan out of range"),
])
def test_bad_input_named(args, message):
    with pytest.raises(ValueError, match=message):
        clopper_pearson(*args)


def test_non_int_counts_refused():
    with pytest.raises(TypeError, match=r"k=1.5: must be an int"):
        clopper_pearson(1.5, 10)
    with pytest.raises(TypeError, match=r"n=True: must be an int"):
        clopper_pearson(0, True)
