"""Plots of Results (needs matplotlib, imported only when a plot is drawn).

At the bottom of the package beside result.py, whose plot() draws through
it; it imports nothing of benchbpf.  benchbpf.analysis re-exports plot."""

__all__ = ["plot", "log_scale_fits"]


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def log_scale_fits(xs):
    """True for positive numbers spanning two decades or more: plot them on a log axis."""
    return bool(xs) and all(_is_number(v) for v in xs) and min(xs) > 0 and \
        max(xs) / min(xs) >= 100


def _axes(ax):
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'benchbpf[plot]'") from None
    return plt.figure().gca()


def plot(result, ax=None, counter="hits"):
    """Per-sample rate of one Result over time (needs matplotlib).

    Warm-up samples (not in the statistics) are drawn hollow and grey before
    the kept ones; the dashed line is the kept samples' mean; the y axis
    starts at 0."""
    ax = _axes(ax)
    t = 0.0
    series = {}
    for kind, samples in (("warm-up", result.warmup_samples), ("kept", result.samples)):
        times, xs = [], []
        for s in samples:
            t += s.interval_s
            times.append(t)
            xs.append(s.rate_mps(counter))
        series[kind] = (times, xs)
    wt, wx = series["warm-up"]
    if wt:
        ax.plot(wt, wx, linestyle=":", marker="o", markerfacecolor="none", color="grey",
                label="warm-up (not in statistics)")
    kt, kx = series["kept"]
    ax.plot(kt, kx, marker=".", label=result.name)
    ax.axhline(result.stat(counter)[0], linestyle="--", linewidth=0.8, label="mean")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time, s")
    ax.set_ylabel(f"{counter}, M/s")
    ax.set_title(result.name)
    ax.legend()
    return ax
