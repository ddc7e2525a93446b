"""benchbpf.harness.stopping.warmup_end: the auto warm-up's rule replayed
on a series of rates, as the run machinery applies it sample by sample."""
import math

import pytest

from benchbpf.harness import stopping

pytestmark = pytest.mark.fast


def test_steady_rates_end_after_the_floor():
    # 0.1 s samples: windows of 3, a floor of 6 samples; the sampler takes one
    # more warm-up sample after the request.
    floor = max(2 * stopping.AUTO_WARMUP_WINDOW_SAMPLES,
                math.ceil(stopping.AUTO_WARMUP_FLOOR_S / 0.1 - 1e-9))
    assert stopping.warmup_end([5.0] * 20, 0.1) == floor + 1


def test_a_ramp_ends_once_the_windows_agree():
    ramp = [1.0 * 1.1 ** i for i in range(12)] + [1.1 ** 12] * 12
    end = stopping.warmup_end(ramp, 0.1)
    assert end is not None and end > 12
    # A rate that keeps climbing 10 % a sample never looks steady.
    assert stopping.warmup_end([1.1 ** i for i in range(40)], 0.1) is None


def test_same_as_the_controller_the_runs_use():
    rates = [3.0, 4.0, 4.5, 4.9, 5.0, 5.1, 5.0, 4.9, 5.0, 5.1, 5.0, 5.0]
    ctl = stopping.WarmupController(0.05, "end")
    said = [i for i, r in enumerate(rates) if ctl(i, r) == "end"]
    assert len(said) == 1 and stopping.warmup_end(rates, 0.05) == ctl.measured_from


def test_bad_interval_named():
    with pytest.raises(ValueError, match=r"interval_s=0 out of range: must be > 0"):
        stopping.warmup_end([1.0], 0)
