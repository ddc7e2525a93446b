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


def test_sweep_rejects_empty_values():
    with pytest.raises(ValueError, match="'producers' is empty"):
        benchbpf.sweep("count-local", "producers", [])


def test_compare_two_runs():
    a = benchbpf.run("count-local", **SHORT)
    b = benchbpf.run("count-local", **SHORT, producers=2)
    c = benchbpf.compare(a, b)
    assert c.ratio == pytest.approx(c.new_median / c.base_median)
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
    assert len(ax.lines[0].get_xdata()) == len(r.samples)
