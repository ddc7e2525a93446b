"""Sweeps, comparisons and plots over Results."""
import functools
import html
import itertools
import math
import statistics
import warnings
from dataclasses import dataclass

from . import _progress, _runner
from .result import Result
from .resultset import ResultSet, format_table, format_table_html, table_rows

__all__ = ["Sweep", "sweep", "Comparison", "compare", "plot", "mann_whitney_u",
           "median_ci", "mean_ci", "samples_needed", "BenchmarkMismatchWarning"]


@dataclass(frozen=True, repr=False)
class Sweep:
    """Results of one benchmark over the values of one parameter.

    As a ResultSet, it iterates over its Results and prints a table of Rows;
    items() gives (value, Result) pairs and sw[value] the Result of one value."""
    name: str
    param: str
    values: tuple
    results: tuple

    def __iter__(self):
        return iter(self.results)

    def items(self):
        """(value, Result) pairs, in run order."""
        return list(zip(self.values, self.results))

    def __len__(self):
        return len(self.values)

    def __getitem__(self, value):
        for v, r in self.items():
            if v == value:
                return r
        raise KeyError(value)

    def table(self, counter="hits"):
        """A Row per value (label: the value): median, mean, stdev, drops, latency,
        and the control and adjusted latencies where runs have a control."""
        return table_rows(self.items(), counter)

    def __str__(self):
        return format_table(f"{self.name} over {self.param}", self.param, self.table())

    def __repr__(self):
        return f"<Sweep of {len(self)} results: {self.name}, axes=[{self.param!r}]>"

    def _repr_html_(self):
        return format_table_html(f"{self.name} over {self.param}", self.param, self.table())

    def plot(self, ax=None, counter="hits", confidence=0.95):
        """Median per swept value with its confidence interval (needs matplotlib).

        Error bars are the distribution-free `confidence` interval of each
        run's median (median_ci); a run with too few samples for it shows
        its min..max and the legend says so.  Numeric values spanning two
        decades or more get a logarithmic x axis.  The y axis starts at 0."""
        ax = _axes(ax)
        xs, meds, lo, hi, wide = [], [], [], [], []
        for v, r in self.items():
            rates = r.rates_mps(counter)
            med = statistics.median(rates) if rates else math.nan
            low, high = median_ci(rates, confidence)
            wide.append(bool(rates) and (low, high) == (min(rates), max(rates)))
            xs.append(v)
            meds.append(med)
            lo.append(med - low)
            hi.append(high - med)
        ax.errorbar(xs, meds, yerr=[lo, hi], marker="o", capsize=3,
                    label=f"{self.name}: median, {confidence:.0%} CI")
        mark_min_max(ax, [(x, m) for x, m, w in zip(xs, meds, wide) if w])
        if log_scale_fits(xs):
            ax.set_xscale("log")
        ax.set_ylim(bottom=0)
        ax.set_xlabel(self.param)
        ax.set_ylabel(f"{counter}, M/s")
        ax.set_title(f"{self.name}: {counter} vs {self.param}")
        legend_outside(ax)
        return ax

    def to_resultset(self):
        """The Results as a ResultSet with this sweep's parameter as its one axis."""
        grid = {self.param: list(self.values)}
        return ResultSet(self.results, axes=(self.param,),
                         metadata={"benchmark": self.name, "grid": grid})

    def to_dataframe(self):
        """One row per run (needs pandas): see ResultSet.to_dataframe."""
        return self.to_resultset().to_dataframe()


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def log_scale_fits(xs):
    """True for positive numbers spanning two decades or more: plot them on a log axis."""
    return bool(xs) and all(_is_number(v) for v in xs) and min(xs) > 0 and \
        max(xs) / min(xs) >= 100


#: Options that take a sequence (a CPU set) as one value: a list or tuple of
#: them is an axis only when its items are themselves CPU sets or None.
_SEQUENCE_OPTIONS = ("prod_affinity", "cons_affinity")


def _is_axis(key, value):
    if not isinstance(value, (list, tuple, range)):
        return False
    if key in _SEQUENCE_OPTIONS:
        return all(v is None or isinstance(v, (list, tuple, range, str)) for v in value)
    return True


def _label(combo):
    return ", ".join(f"{k}={v!r}" for k, v in combo.items())


def sweep(name, *args, progress=None, **axes_and_options):
    """Run benchmark `name` over a grid of parameter values.

    ``sweep("rb-libbpf", producers=[1, 2, 4], rb_sampled=[False, True],
    duration=3)`` runs all 6 combinations: every list or tuple is an axis,
    every other value a fixed option.  Combinations run in
    itertools.product order over the axes in keyword order (the last axis
    changes fastest).  prod_affinity and cons_affinity take a CPU set as one
    value, so a list of ints there is that set; they are an axis only when
    given as a list of CPU sets or None: ``prod_affinity=[[0], [1], None]``.
    Returns a ResultSet whose `axes` are the axis names, in keyword order.

    The one-parameter form ``sweep(name, param, values, **options)`` returns
    a Sweep, as before.

    Every combination is checked (benchbpf.check: name, type and range of
    each option, and the benchmark's own checks of combinations) before the
    first run starts, so a bad value in the last one wastes no runs.

    progress: True shows a progress bar on stderr (tqdm.auto, also in
    Jupyter; without tqdm one line per run), False none; None (default) shows
    it when stderr is a terminal or in a Jupyter kernel."""
    if args or "param" in axes_and_options or "values" in axes_and_options:
        given = dict(zip(("param", "values"), args))
        for key in ("param", "values"):
            if key in axes_and_options:
                if key in given:
                    raise TypeError(f"sweep() got {key} both by position and by keyword")
                given[key] = axes_and_options.pop(key)
        if len(args) > 2:
            raise TypeError(f"sweep(name, param, values, **options) takes at most two "
                            f"arguments after the name, got {len(args)}: {args!r}")
        missing = [k for k in ("param", "values") if k not in given]
        if missing:
            what = repr(given["param"]) if "param" in given else "the parameter"
            raise TypeError(
                f"sweep({name!r}, {', '.join(repr(a) for a in args)}): missing "
                f"{' and '.join(missing)}: give the values to take for {what}, as "
                f"sweep({name!r}, 'producers', [1, 2, 4]) or sweep({name!r}, "
                "producers=[1, 2, 4])")
        return _sweep_one(name, given["param"], given["values"], progress=progress,
                          **axes_and_options)
    axes = {k: tuple(v) for k, v in axes_and_options.items() if _is_axis(k, v)}
    fixed = {k: v for k, v in axes_and_options.items() if k not in axes}
    for k, values in axes.items():
        if not values:
            raise ValueError(f"axis {k!r} is empty: give at least one value")
    combos = [dict(zip(axes, values)) for values in itertools.product(*axes.values())]
    for combo in combos:
        _runner.check(name, **fixed, **combo)
    results = []
    with _progress.session(name, len(combos), progress):
        for combo in combos:
            results.append(_progress.run(name, label=_label(combo), **fixed, **combo))
    grid = {k: list(v) for k, v in axes.items()}
    return ResultSet(results, axes=tuple(axes), metadata={"benchmark": name, "grid": grid})


def _sweep_one(name, param, values, progress=None, **options):
    if not isinstance(param, str):
        raise TypeError(f"param={param!r}: the name of the parameter to sweep, a str")
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"values={values!r}: a list of values for {param!r}")
    values = tuple(values)
    if not values:
        raise ValueError(f"values for {param!r} is empty: give at least one value")
    for v in values:
        _runner.check(name, **{**options, param: v})
    with _progress.session(name, len(values), progress):
        results = tuple(_progress.run(name, label=f"{param}={v!r}", **{**options, param: v})
                        for v in values)
    return Sweep(name, param, values, results)


def _ranks(values):
    """1-based ranks of values, ties given their average rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def mann_whitney_u(xs, ys, alternative="two-sided"):
    """Mann-Whitney U test of two independent samples: (U of xs, p-value).

    U counts the pairs (x, y) with x > y (ties count one half).  alternative
    "less": xs tend to be smaller than ys; "greater": larger; "two-sided":
    either.  The p-value is exact (from the distribution of U over every
    ordering) when there are no ties and len(xs) * len(ys) <= 2500, else from
    the normal approximation with tie and continuity corrections."""
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(f"alternative={alternative!r}: 'two-sided', 'less' or 'greater'")
    xs, ys = list(xs), list(ys)
    n1, n2 = len(xs), len(ys)
    if not n1 or not n2:
        raise ValueError(f"Mann-Whitney U needs samples on both sides, got {n1} and {n2}")
    ranks = _ranks(xs + ys)
    u = sum(ranks[:n1]) - n1 * (n1 + 1) / 2.0
    tied = len(set(xs + ys)) < n1 + n2
    if not tied and n1 * n2 <= 2500:
        dist = _u_distribution(n1, n2)
        total = sum(dist)
        k = int(round(u))
        p_le = sum(dist[:k + 1]) / total
        p_ge = sum(dist[k:]) / total
    else:
        n = n1 + n2
        counts = {}
        for v in xs + ys:
            counts[v] = counts.get(v, 0) + 1
        tie_term = sum(t ** 3 - t for t in counts.values()) / (n * (n - 1))
        sd = math.sqrt(n1 * n2 / 12.0 * ((n + 1) - tie_term))
        mu = n1 * n2 / 2.0
        if sd == 0:
            return u, 1.0
        p_le = _normal_cdf((u - mu + 0.5) / sd)
        p_ge = 1.0 - _normal_cdf((u - mu - 0.5) / sd)
    if alternative == "less":
        p = p_le
    elif alternative == "greater":
        p = p_ge
    else:
        p = 2.0 * min(p_le, p_ge)
    return u, min(1.0, p)


def _u_distribution(n1, n2):
    """Number of orderings of n1 x's and n2 y's (all distinct) for each U = 0..n1*n2."""
    # f[a][b] = distribution for a x's and b y's; built up over a, b.
    f = [[None] * (n2 + 1) for _ in range(n1 + 1)]
    for a in range(n1 + 1):
        for b in range(n2 + 1):
            if a == 0 or b == 0:
                f[a][b] = [1]
                continue
            # The largest value is an x (it beats all b y's: U += b) or a y.
            with_x, with_y = f[a - 1][b], f[a][b - 1]
            row = [0] * (a * b + 1)
            for u, c in enumerate(with_x):
                row[u + b] += c
            for u, c in enumerate(with_y):
                row[u] += c
            f[a][b] = row
    return f[n1][n2]


def _normal_cdf(z):
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def _inverse(cdf, p, lo, hi, steps=100):
    """The x in lo..hi where the increasing cdf reaches p, by bisection."""
    for _ in range(steps):
        mid = (lo + hi) / 2.0
        if cdf(mid) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def _normal_quantile(p):
    """Inverse of the standard normal CDF (plenty for sizing runs)."""
    return _inverse(_normal_cdf, p, -10.0, 10.0)


def median_ci(values, confidence=0.95):
    """Distribution-free confidence interval of the median: (low, high)
    order statistics from the binomial distribution of the values below
    it.  With too few values for the confidence asked, (min, max)."""
    xs = sorted(values)
    n = len(xs)
    if not n:
        return (math.nan, math.nan)
    tail = (1.0 - confidence) / 2.0
    # Largest k with P(Binomial(n, 1/2) < k) <= tail: the interval is xs[k-1], xs[n-k].
    cum, k = 0.0, 0
    for i in range(n + 1):
        nxt = cum + math.comb(n, i) / 2.0 ** n
        if nxt > tail:
            break
        cum, k = nxt, i + 1
    if k == 0:
        return (xs[0], xs[-1])
    return (xs[k - 1], xs[n - k])


@functools.lru_cache(maxsize=None)
def _t_quantile(p, df):
    """p-quantile (p > 0.5) of Student's t distribution with df degrees of
    freedom: bisection on its CDF, the density integrated by Simpson's rule."""
    scale = math.exp(math.lgamma((df + 1) / 2.0) - math.lgamma(df / 2.0)) / \
        math.sqrt(df * math.pi)

    def cdf(t, steps=2000):
        h = t / steps
        f = [scale * (1.0 + (i * h) ** 2 / df) ** (-(df + 1) / 2.0) for i in range(steps + 1)]
        return 0.5 + h / 3.0 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))
    return _inverse(cdf, p, 0.0, 1000.0, steps=60)


def mean_ci(values, confidence=0.95):
    """Student's t confidence interval of the mean: (low, high); (nan, nan)
    with fewer than two values."""
    xs = list(values)
    n = len(xs)
    if n < 2:
        return (math.nan, math.nan)
    mean = statistics.fmean(xs)
    half = _t_quantile(0.5 + confidence / 2.0, n - 1) * statistics.stdev(xs) / math.sqrt(n)
    return (mean - half, mean + half)


def samples_needed(rel_spread, min_change, alpha=0.01, power=0.95):
    """Samples per side for a one-sided Mann-Whitney U test at level alpha to
    detect a relative change of min_change (0.2 = 20 %) with the given power,
    when the per-sample relative spread (stdev / median) is rel_spread.

    The normal-theory size 2 * ((z_alpha + z_power) * spread / change)^2,
    divided by the test's worst-case efficiency against the t test (0.864),
    and never fewer than the exact test needs to reach alpha at all."""
    if min_change <= 0:
        raise ValueError(f"min_change={min_change!r}: must be > 0")
    z = _normal_quantile(1.0 - alpha) + _normal_quantile(power)
    n = math.ceil(2.0 * (z * rel_spread / min_change) ** 2 / 0.864)
    floor = 1
    while 1.0 / math.comb(2 * floor, floor) > alpha:
        floor += 1
    return max(n, floor)


class BenchmarkMismatchWarning(UserWarning):
    """Two Results of different benchmarks were compared."""


@dataclass(frozen=True)
class Comparison:
    """How `new` differs from `base` on one counter's per-sample rates.

    `p_value` is the two-sided Mann-Whitney U test over the per-interval
    rates; `significant` means p_value < alpha.  `fingerprint_differences`
    lists what differs between the machines (kernel, command line, CPU
    mitigations, JIT settings, versions...) when the runs were taken."""
    base: Result
    new: Result
    counter: str = "hits"
    alpha: float = 0.05

    @property
    def base_median(self):
        return statistics.median(self.base.rates_mps(self.counter))

    @property
    def new_median(self):
        return statistics.median(self.new.rates_mps(self.counter))

    @property
    def ratio(self):
        """new median / base median."""
        b = self.base_median
        return self.new_median / b if b else math.inf

    @property
    def change_pct(self):
        return (self.ratio - 1.0) * 100.0

    def p_value(self, alternative="two-sided"):
        """Mann-Whitney U p-value of new vs base per-sample rates.
        alternative "less": new is slower; "greater": faster."""
        return mann_whitney_u(self.new.rates_mps(self.counter),
                              self.base.rates_mps(self.counter), alternative)[1]

    @property
    def significant(self):
        """True if the two-sided Mann-Whitney U p-value is below alpha."""
        return self.p_value() < self.alpha

    @property
    def fingerprint_differences(self):
        """What differed between the two runs' machines, one line each."""
        from .fingerprint import differences
        return differences(self.base.metadata.get("fingerprint"),
                           self.new.metadata.get("fingerprint"))

    def _verdict(self):
        return "significant" if self.significant else "within noise"

    def __str__(self):
        names = f"{self.new.name} vs {self.base.name}"
        if self.new.metadata.get("family", self.new.name) != \
                self.base.metadata.get("family", self.base.name):
            names += " (DIFFERENT BENCHMARKS)"
        head = (f"{names}: {self.counter} median "
                f"{self.new_median:.3f} vs {self.base_median:.3f} M/s "
                f"({self.change_pct:+.1f}%, Mann-Whitney U p={self.p_value():.2g}, "
                f"{self._verdict()})")
        diffs = self.fingerprint_differences
        if diffs:
            head += "\nfingerprint differences:\n" + "\n".join("  " + d for d in diffs)
        return head

    def _repr_html_(self):
        def row(label, r):
            mean, sd = r.stat(self.counter)
            xs = r.rates_mps(self.counter)
            return (f"<tr><td>{label}</td><td>{html.escape(r.name)}</td>"
                    f"<td>{statistics.median(xs):.3f}</td><td>{mean:.3f}</td>"
                    f"<td>{sd:.3f}</td><td>{len(xs)}</td>"
                    f"<td>{html.escape(str(r.metadata.get('started', '?')))}</td></tr>")
        diffs = self.fingerprint_differences
        diff_html = ("<br><b>fingerprint differences</b><ul>"
                     + "".join(f"<li><code>{html.escape(d)}</code></li>" for d in diffs)
                     + "</ul>") if diffs else ""
        return (f"<div><b>{html.escape(self.counter)}</b>: "
                f"{self.change_pct:+.1f}% (ratio {self.ratio:.3f}), Mann-Whitney U "
                f"p={self.p_value():.2g}, <b>{self._verdict()}</b>"
                f"<table><tr><th></th><th>benchmark</th><th>median M/s</th>"
                f"<th>mean</th><th>stdev</th><th>samples</th><th>started</th></tr>"
                f"{row('base', self.base)}{row('new', self.new)}</table>{diff_html}</div>")


def compare(base, new, counter="hits", alpha=0.05, different_benchmarks=False):
    """Compare two Results (e.g. before/after a kernel change).

    Two benchmarks of one family with the same report (rb-libbpf and
    pb-libbpf: records read per second) compare as they are.  Results of
    benchmarks that measure different things (count-global and rb-libbpf)
    are refused (ValueError) unless different_benchmarks=True, and then
    compared with a BenchmarkMismatchWarning."""
    for label, r in (("base", base), ("new", new)):
        if not isinstance(r, Result):
            raise TypeError(f"{label} must be a benchbpf.Result, not {type(r).__name__}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} out of range: 0 < alpha < 1")
    family = base.metadata.get("family")
    alike = base.name == new.name or (family is not None and family == new.metadata.get(
        "family") and base.report == new.report)
    if not alike:
        if not different_benchmarks:
            raise ValueError(f"base is {base.name} and new is {new.name}: these "
                             "benchmarks measure different things; pass "
                             "different_benchmarks=True to compare them anyway")
        warnings.warn(f"comparing different benchmarks: {new.name} vs {base.name}",
                      BenchmarkMismatchWarning, stacklevel=2)
    base.rates_mps(counter)  # KeyError naming the counters if unknown
    return Comparison(base, new, counter, alpha)


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


#: What mark_min_max() says in the legend.
MIN_MAX_LABEL = "min..max bars: too few samples for a CI"


def mark_min_max(ax, points):
    """Ring the (x, y) points whose bars are min..max, not a confidence interval
    (too few samples for one), with a legend entry saying so."""
    if points:
        shown = any(c.get_label() == MIN_MAX_LABEL for c in ax.collections)
        ax.scatter([x for x, _ in points], [y for _, y in points], s=120,
                   facecolors="none", edgecolors="black", zorder=3,
                   label="_nolegend_" if shown else MIN_MAX_LABEL)


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
    legend_outside(ax)
    return ax
