"""Plots of Results (needs matplotlib, imported only when a plot is drawn).

At the bottom of the package beside result.py, whose plot() draws through
it; it imports nothing of benchbpf.  benchbpf.analysis re-exports plot."""

__all__ = ["plot", "log_scale_fits", "legend_outside", "mark_min_max", "MIN_MAX_LABEL"]


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def log_scale_fits(xs):
    """True for positive numbers spanning two decades or more: plot them on a log axis."""
    return bool(xs) and all(_is_number(v) for v in xs) and min(xs) > 0 and \
        max(xs) / min(xs) >= 100


def _figure(**kw):
    """A new figure whose layout keeps a legend outside the axes inside the figure."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'benchbpf[plot]'") from None
    return plt.figure(layout="constrained", **kw)


def _axes(ax):
    if ax is not None:
        return ax
    return _figure().gca()


#: What mark_min_max() says in the legend.
MIN_MAX_LABEL = "min..max bars: too few samples for a CI"


def legend_outside(ax, **kw):
    """The legend right of the axes, where it covers no point; a figure made by
    benchbpf lays itself out around it (for axes of your own, save with
    bbox_inches="tight")."""
    if "handles" not in kw:     # the lines first, the min..max note last
        pairs = list(zip(*ax.get_legend_handles_labels()))
        pairs.sort(key=lambda hl: hl[1] == MIN_MAX_LABEL)
        kw["handles"] = [h for h, _ in pairs]
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0,
                     fontsize="small", **kw)


def mark_min_max(ax, points):
    """Ring the (x, y) points whose bars are min..max, not a confidence interval
    (too few samples for one), with a legend entry saying so."""
    if points:
        shown = any(c.get_label() == MIN_MAX_LABEL for c in ax.collections)
        ax.scatter([x for x, _ in points], [y for _, y in points], s=120,
                   facecolors="none", edgecolors="black", zorder=3,
                   label="_nolegend_" if shown else MIN_MAX_LABEL)


def plot(result, ax=None, counter="hits"):
    """Plot the `counter`'s per-sample rate of one `result`, M/s, over time,
    s, on `ax` (a matplotlib Axes; a new figure's if None); returns the
    Axes.  Needs matplotlib (ImportError saying how to install it).

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
    legend_outside(ax)
    return ax
