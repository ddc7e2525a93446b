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
from .resultset import ResultSet

__all__ = ["Sweep", "sweep", "Comparison", "compare", "plot", "mann_whitney_u",
           "median_ci", "mean_ci", "samples_needed", "BenchmarkMismatchWarning",
           "across_runs", "RunTest", "runs_needed", "min_p_value",
           "configuration_differences", "SIGNIFICANT", "WITHIN_NOISE", "NOT_ENOUGH_RUNS",
           "run_speed", "usable_rates", "fastest", "MIN_PRODUCER_CPU_NS"]


@dataclass(frozen=True)
class Sweep:
    """Results of one benchmark over the values of one parameter."""
    name: str
    param: str
    values: tuple
    results: tuple

    def __iter__(self):
        return iter(zip(self.values, self.results))

    def __len__(self):
        return len(self.values)

    def __getitem__(self, value):
        for v, r in self:
            if v == value:
                return r
        raise KeyError(value)

    def table(self, counter="hits"):
        """Rows of (value, mean, stdev, median) of a counter's rate, M/s."""
        rows = []
        for v, r in self:
            mean, sd = r.stat(counter)
            xs = r.rates_mps(counter)
            rows.append((v, mean, sd, statistics.median(xs) if xs else math.nan))
        return rows

    def __str__(self):
        head = f"{self.param:>16} {'mean M/s':>12} {'stdev':>10} {'median':>12}"
        lines = [f"{self.name} over {self.param}", head]
        lines += [f"{v!s:>16} {m:12.3f} {s:10.3f} {md:12.3f}" for v, m, s, md in self.table()]
        return "\n".join(lines)

    def _repr_html_(self):
        rows = "".join(f"<tr><td>{v}</td><td>{m:.3f}</td><td>{s:.3f}</td><td>{md:.3f}</td></tr>"
                       for v, m, s, md in self.table())
        return (f"<b>{self.name}</b> over <code>{self.param}</code><table><tr><th>"
                f"{self.param}</th><th>mean M/s</th><th>stdev</th><th>median</th></tr>"
                f"{rows}</table>")

    def plot(self, ax=None, counter="hits", confidence=0.95):
        """Median per swept value with its confidence interval (needs matplotlib).

        Error bars are the distribution-free `confidence` interval of each
        run's median (median_ci); a run with too few samples for it shows
        its min..max and the legend says so.  Numeric values spanning two
        decades or more get a logarithmic x axis.  The y axis starts at 0."""
        ax = _axes(ax)
        xs, meds, lo, hi, wide = [], [], [], [], False
        for v, r in self:
            rates = r.rates_mps(counter)
            med = statistics.median(rates) if rates else math.nan
            low, high = median_ci(rates, confidence)
            wide = wide or (len(rates) and (low, high) == (min(rates), max(rates)))
            xs.append(v)
            meds.append(med)
            lo.append(med - low)
            hi.append(high - med)
        label = f"{self.name}: median, {confidence:.0%} CI" + \
            (" (min..max where too few samples)" if wide else "")
        ax.errorbar(xs, meds, yerr=[lo, hi], marker="o", capsize=3, label=label)
        if log_scale_fits(xs):
            ax.set_xscale("log")
        ax.set_ylim(bottom=0)
        ax.set_xlabel(self.param)
        ax.set_ylabel(f"{counter}, M/s")
        ax.set_title(f"{self.name}: {counter} vs {self.param}")
        ax.legend()
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
    if args or ("param" in axes_and_options and "values" in axes_and_options):
        return _sweep_one(name, *args, progress=progress, **axes_and_options)
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


#: Intervals in which the producers ran less CPU time than this are left
#: out of rates per CPU-second: the counters and the CPU-time clocks are
#: read a microsecond or so apart, 0.5 % of this.
MIN_PRODUCER_CPU_NS = 200_000


def _median(xs):
    return statistics.median(xs) if xs else math.nan


def _per_cpu(samples):
    """Whether every sample carries its producers' CPU time."""
    return bool(samples) and all(s.producer_cpu_ns is not None for s in samples)


def usable_rates(result, counter="hits", per_cpu=None):
    """Per-sample rates of the kept samples, in M/s.

    per_cpu (default: when the samples carry it): per CPU-second of the
    producer threads, counting only intervals in which they ran at least
    MIN_PRODUCER_CPU_NS (over a few microseconds of CPU the rate is noise);
    else per second of the interval.  Either way without catch-up samples:
    intervals shorter than half the sampling period (a late wake-up followed
    by back-to-back samples) carry a few hits over a tiny time."""
    period_ns = float(result.params.get("interval", 0) or 0) * 1e9
    kept = [s for s in result.samples if s.interval_ns >= period_ns / 2]
    if per_cpu is None:
        per_cpu = _per_cpu(result.samples)
    if not per_cpu:
        return [s.rate_mps(counter) for s in kept]
    return [s.rate_per_cpu_mps(counter) for s in kept
            if s.producer_cpu_ns and s.producer_cpu_ns >= MIN_PRODUCER_CPU_NS]


def fastest(xs, top_pct):
    """The fastest top_pct percent of xs (at least one)."""
    xs = sorted(xs)
    k = max(1, math.ceil(len(xs) * top_pct / 100.0))
    return xs[-k:] if xs else []


def run_speed(result, counter="hits", per_cpu=None, top_pct=50):
    """One figure for a run, as the gate and compare() judge it: the median
    of the fastest top_pct percent of its usable rates (usable_rates), M/s;
    NaN without a usable interval."""
    return _median(fastest(usable_rates(result, counter, per_cpu), top_pct))


class BenchmarkMismatchWarning(UserWarning):
    """Two Results of different benchmarks were compared."""


#: Verdicts of a test across runs (across_runs, Comparison.verdict).
SIGNIFICANT, WITHIN_NOISE, NOT_ENOUGH_RUNS = "significant", "within noise", "not enough runs"

#: Options that say how long a run measured, not what or how finely:
#: compare() pairs runs whatever these were.  The sampling interval is not
#: one of them: it sets what one sample (and so a run's median) is.
_LENGTH_OPTIONS = ("warmup", "duration")


def min_p_value(n1, n2, alternative="two-sided"):
    """The smallest p-value an exact Mann-Whitney U test of n1 against n2
    values can give: every ordering is equally likely under no change, and
    the most extreme one has probability 1 / C(n1 + n2, n1) (doubled for a
    two-sided test)."""
    if n1 < 1 or n2 < 1:
        return 1.0
    p = 1.0 / math.comb(n1 + n2, n1)
    return min(1.0, 2.0 * p) if alternative == "two-sided" else p


def runs_needed(alpha=0.05, alternative="two-sided"):
    """Runs per side with which the exact test across runs can reach alpha at
    all (4 at 0.05 two-sided: 2 / C(8, 4) = 0.029)."""
    n = 1
    while min_p_value(n, n, alternative) >= alpha:
        n += 1
    return n


def _exact_rank_p(xs, ys, alternative):
    """Exact permutation p-value of the rank sum of xs among xs + ys, ties
    given their average rank: the same ordering convention as
    mann_whitney_u, exact with ties too (by counting rank sums)."""
    n1 = len(xs)
    ranks = _ranks(list(xs) + list(ys))
    twice = [int(round(2 * r)) for r in ranks]   # average ranks are halves
    observed = sum(twice[:n1])
    # ways[k][s]: subsets of k values whose doubled ranks sum to s.
    ways = [dict() for _ in range(n1 + 1)]
    ways[0][0] = 1
    for w in twice:
        for k in range(min(n1, len(twice)), 0, -1):
            for s, c in ways[k - 1].items():
                ways[k][s + w] = ways[k].get(s + w, 0) + c
    total = sum(ways[n1].values())
    p_le = sum(c for s, c in ways[n1].items() if s <= observed) / total
    p_ge = sum(c for s, c in ways[n1].items() if s >= observed) / total
    if alternative == "less":
        return p_le
    if alternative == "greater":
        return p_ge
    return min(1.0, 2.0 * min(p_le, p_ge))


@dataclass(frozen=True)
class RunTest:
    """A test across runs: one figure per run on each side.

    p_value: the exact Mann-Whitney U (rank-sum) test of the new runs'
    figures against the baseline runs' (permutation distribution, ties
    included); alternative "less": new is lower, "greater": higher.
    verdict: NOT_ENOUGH_RUNS when even the most extreme ordering of this
    many runs could not reach alpha; else SIGNIFICANT when p < alpha, else
    WITHIN_NOISE."""
    base: tuple
    new: tuple
    alpha: float
    alternative: str
    p_value: float
    verdict: str

    @property
    def significant(self):
        return self.verdict == SIGNIFICANT

    @property
    def runs_needed(self):
        return runs_needed(self.alpha, self.alternative)


#: Above this many runs in all the rank-sum distribution is approximated.
_EXACT_RUNS = 60


def across_runs(base, new, alpha=0.05, alternative="two-sided"):
    """The decision compare() and the pytest gate share: does the new runs'
    figure differ from the baseline runs'?  base, new: one figure per run
    (a run's median, or the gate's speed).  Runs, not samples, are the unit:
    samples of one run follow each other and share its conditions (the CPU
    it got, the host's phase), so they are not independent draws of what
    another run would measure, and a test over them calls run-to-run noise
    significant.  Separate runs are independent; under no change their
    figures are exchangeable and the exact test is calibrated.  NaN
    figures (runs with no usable sample) are left out."""
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(f"alternative={alternative!r}: 'two-sided', 'less' or 'greater'")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} out of range: 0 < alpha < 1")
    xs = tuple(x for x in base if not math.isnan(x))
    ys = tuple(y for y in new if not math.isnan(y))
    if not xs or not ys:
        return RunTest(xs, ys, alpha, alternative, math.nan, NOT_ENOUGH_RUNS)
    if len(xs) + len(ys) <= _EXACT_RUNS:
        p = _exact_rank_p(ys, xs, alternative)
    else:
        p = mann_whitney_u(ys, xs, alternative)[1]
    if min_p_value(len(xs), len(ys), alternative) >= alpha:
        verdict = NOT_ENOUGH_RUNS
    else:
        verdict = SIGNIFICANT if p < alpha else WITHIN_NOISE
    return RunTest(xs, ys, alpha, alternative, p, verdict)


def configuration_differences(base, new, ignore=_LENGTH_OPTIONS, labels=("baseline", "new")):
    """What makes two Results runs of different configurations, one line
    each: benchmark, parameters (but those in `ignore`), trigger.  Between
    two benchmarks only the parameters both have count, and not the trigger."""
    why = []
    a_name, b_name = labels
    if base.name != new.name:
        why.append(f"benchmark: {a_name} {base.name}, {b_name} {new.name}")
    keys = set(base.params) | set(new.params) if base.name == new.name else \
        set(base.params) & set(new.params)
    for k in sorted(keys):
        if k in ignore:
            continue
        a, b = base.params.get(k, "<absent>"), new.params.get(k, "<absent>")
        if a != b:
            why.append(f"parameter {k}: {a_name} {a!r}, {b_name} {b!r}")
    ta, tb = base.metadata.get("trigger"), new.metadata.get("trigger")
    if ta != tb and base.name == new.name:   # another benchmark has its own trigger
        why.append(f"trigger: {a_name} {ta!r}, {b_name} {tb!r}")
    return why


def _overlapped(runs):
    """How many of `runs` overlapped another benchbpf run."""
    return sum(1 for r in runs if (r.metadata.get("concurrent_runs") or 0) >= 1)


def _plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Comparison:
    """How the `new_runs` differ from the `base_runs` on one counter.

    What it prints: base_median and new_median, the medians of the runs'
    median rates (M/s, per second, as the report shows them), and
    change_pct from baseline to new.

    What it decides on: each run's speed (run_speed, the gate's figure):
    with per_cpu (default when every run recorded its producers' CPU time)
    the median of the fastest top_pct percent of its rates per CPU-second
    of the producer threads, which does not drop when the producers share
    their CPUs with other processes, the main source of run-to-run noise on
    a busy machine; without, each run's median rate.  The verdict is a test
    across runs of those figures (across_runs: exact two-sided Mann-Whitney
    U): "significant" (p < alpha), "within noise", or "not enough runs" when
    there are too few runs per side for any ordering to reach alpha (one
    run each can never be significant; four each can at alpha 0.05).
    `differences` lists the configuration differences the caller accepted
    (different_params=True); `fingerprint_differences` what differs between
    the machines."""
    base_runs: tuple
    new_runs: tuple
    counter: str = "hits"
    alpha: float = 0.05
    differences: tuple = ()
    per_cpu: bool = False
    top_pct: float = 50

    @property
    def base(self):
        """The first baseline run."""
        return self.base_runs[0]

    @property
    def new(self):
        """The first new run."""
        return self.new_runs[0]

    def _medians(self, runs):
        return tuple(_median(r.rates_mps(self.counter)) for r in runs)

    def _figures(self, runs):
        if not self.per_cpu:
            return self._medians(runs)
        return tuple(run_speed(r, self.counter, True, self.top_pct) for r in runs)

    @property
    def base_figures(self):
        """Each baseline run's figure the verdict is on, M/s."""
        return self._figures(self.base_runs)

    @property
    def new_figures(self):
        """Each new run's figure the verdict is on, M/s."""
        return self._figures(self.new_runs)

    @property
    def base_median(self):
        """Median of the baseline runs' median rates, M/s."""
        return _median_of(self._medians(self.base_runs))

    @property
    def new_median(self):
        """Median of the new runs' median rates, M/s."""
        return _median_of(self._medians(self.new_runs))

    @property
    def ratio(self):
        """new median / base median."""
        b = self.base_median
        return self.new_median / b if b else math.inf

    @property
    def change_pct(self):
        return (self.ratio - 1.0) * 100.0

    @property
    def figure_change_pct(self):
        """Change of the median figure the verdict is on, percent."""
        b = _median_of(self.base_figures)
        return (_median_of(self.new_figures) / b - 1.0) * 100.0 if b else math.inf

    def figure_text(self):
        """What the verdict is on, in words."""
        if not self.per_cpu:
            return "run medians"
        which = "median" if self.top_pct == 100 else f"median of the fastest {self.top_pct:g}%"
        return f"per producer CPU-second, {which}"

    def test(self, alternative="two-sided"):
        """The test across runs (a RunTest)."""
        return across_runs(self.base_figures, self.new_figures, self.alpha, alternative)

    def p_value(self, alternative="two-sided"):
        """p-value of the test across runs (new vs base figures).
        alternative "less": new is slower; "greater": faster."""
        return self.test(alternative).p_value

    @property
    def verdict(self):
        """"significant", "within noise" or "not enough runs"."""
        return self.test().verdict

    @property
    def significant(self):
        """True only when the test across runs gives p < alpha."""
        return self.verdict == SIGNIFICANT

    @property
    def overlapped(self):
        """(baseline runs, new runs) that overlapped another benchbpf run."""
        return _overlapped(self.base_runs), _overlapped(self.new_runs)

    @property
    def fingerprint_differences(self):
        """What differed between the two runs' machines, one line each."""
        from .fingerprint import differences
        return differences(self.base.metadata.get("fingerprint"),
                           self.new.metadata.get("fingerprint"))

    def verdict_text(self):
        """The verdict with its test, p-value and runs, in words."""
        t = self.test()
        runs = f"{len(self.base_runs)} -> {len(self.new_runs)} runs"
        if t.verdict == NOT_ENOUGH_RUNS:
            return (f"{runs}: not enough runs to call it significant (at alpha "
                    f"{self.alpha:g} the test across runs needs {t.runs_needed} per side)")
        on = "" if not self.per_cpu else \
            f" on {self.figure_text()} ({self.figure_change_pct:+.1f}%)"
        return f"{runs}, Mann-Whitney U across runs{on} p={t.p_value:.2g}: {t.verdict}"

    def overlap_text(self):
        """A mark for runs taken while another benchbpf run was going, or ""."""
        b, n = self.overlapped
        if not b and not n:
            return ""
        return (f"[OVERLAPPED other benchbpf runs: baseline {b} of {len(self.base_runs)}, "
                f"new {n} of {len(self.new_runs)} runs]")

    def __str__(self):
        names = self.base.name if self.base.name == self.new.name else \
            f"{self.base.name} -> {self.new.name}"
        if self.new.metadata.get("family", self.new.name) != \
                self.base.metadata.get("family", self.base.name):
            names += " (DIFFERENT BENCHMARKS)"
        head = (f"{names}: {self.counter} median {self.base_median:.3f} -> "
                f"{self.new_median:.3f} M/s ({self.change_pct:+.1f}%), "
                f"{self.verdict_text()}")
        mark = self.overlap_text()
        if mark:
            head += " " + mark
        if self.differences:
            head += "\nconfiguration differs (accepted):\n" + \
                "\n".join("  " + d for d in self.differences)
        diffs = self.fingerprint_differences
        if diffs:
            head += "\nfingerprint differences:\n" + "\n".join("  " + d for d in diffs)
        return head

    def _repr_html_(self):
        def row(label, runs, figures):
            rates = [x for r in runs for x in r.rates_mps(self.counter)]
            over = _overlapped(runs)
            return (f"<tr><td>{label}</td><td>{html.escape(runs[0].name)}</td>"
                    f"<td>{_median_of(self._medians(runs)):.3f}</td><td>{len(runs)}</td>"
                    f"<td>{html.escape(', '.join(f'{x:.3f}' for x in figures))}</td>"
                    f"<td>{len(rates)}</td><td>{over or ''}</td>"
                    f"<td>{html.escape(str(runs[0].metadata.get('started', '?')))}</td></tr>")
        diffs = self.fingerprint_differences
        diff_html = ("<br><b>fingerprint differences</b><ul>"
                     + "".join(f"<li><code>{html.escape(d)}</code></li>" for d in diffs)
                     + "</ul>") if diffs else ""
        conf_html = ("<br><b>configuration differs (accepted)</b><ul>"
                     + "".join(f"<li><code>{html.escape(d)}</code></li>"
                               for d in self.differences) + "</ul>") if self.differences else ""
        return (f"<div><b>{html.escape(self.counter)}</b>: baseline &rarr; new "
                f"{self.change_pct:+.1f}% (ratio {self.ratio:.3f}), "
                f"<b>{html.escape(self.verdict_text())}</b> {html.escape(self.overlap_text())}"
                f"<table><tr><th></th><th>benchmark</th><th>median of run medians, M/s</th>"
                f"<th>runs</th><th>{html.escape(self.figure_text())}</th><th>samples</th>"
                f"<th>overlapped runs</th>"
                f"<th>started</th></tr>"
                f"{row('baseline', self.base_runs, self.base_figures)}"
                f"{row('new', self.new_runs, self.new_figures)}</table>"
                f"{conf_html}{diff_html}</div>")


def _median_of(xs):
    return _median([x for x in xs if not math.isnan(x)])


def _runs(label, side):
    """One side of a comparison as a tuple of Results of one configuration."""
    if isinstance(side, Result):
        return (side,)
    if isinstance(side, (str, bytes)) or not hasattr(side, "__iter__"):
        raise TypeError(f"{label} must be a benchbpf.Result or a sequence of them "
                        f"(a ResultSet, list or tuple), not {type(side).__name__}")
    runs = tuple(side)
    for r in runs:
        if not isinstance(r, Result):
            raise TypeError(f"{label} must be a benchbpf.Result or a sequence of them, "
                            f"but holds a {type(r).__name__}")
    if not runs:
        raise ValueError(f"{label} holds no run")
    for r in runs[1:]:
        why = configuration_differences(runs[0], r, labels=("its first run", "another"))
        if why:
            raise ValueError(f"{label} holds runs of different configurations ("
                             + "; ".join(why) + "): compare one configuration per side "
                             "(ResultSet.where)")
    return runs


#: The command-line flags of compare()'s keywords, for messages both read.
_FLAGS = {"different_benchmarks": "--different-benchmarks",
          "different_params": "--different-params"}


def compare(base, new, counter="hits", alpha=0.05, different_benchmarks=False,
            different_params=False, per_cpu=None, top_pct=50):
    """Compare a baseline with new runs (e.g. before/after a kernel change).

    base, new: a Result, or several Results of one configuration (a
    ResultSet, list or tuple: repetitions, `benchbpf NAME --repeat N`).
    Each run counts as one figure, its median; the verdict is a test across
    runs (see Comparison), so a single run per side gives medians and the
    change but the verdict "not enough runs", never "significant".

    Two benchmarks of one family with the same report (rb-libbpf and
    pb-libbpf: records read per second) compare as they are.  Results of
    benchmarks that measure different things (count-global and rb-libbpf)
    are refused (ValueError) unless different_benchmarks=True, and then
    compared with a BenchmarkMismatchWarning.  Runs whose parameters,
    trigger or sampling interval differ are refused (ValueError naming each
    difference) unless different_params=True says that the difference is
    the point; the Comparison then lists them.  Warm-up and duration may
    differ.

    per_cpu: decide on each run's speed per producer CPU-second (the median
    of its fastest top_pct percent of intervals, as the gate does); default
    when every run recorded its producers' CPU time.  False: decide on the
    runs' median rates per second, the figures printed."""
    base_runs, new_runs = _runs("base", base), _runs("new", new)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} out of range: 0 < alpha < 1")
    b, n = base_runs[0], new_runs[0]
    family = b.metadata.get("family")
    alike = b.name == n.name or (family is not None and family == n.metadata.get(
        "family") and b.report == n.report)
    if not alike:
        if not different_benchmarks:
            raise ValueError(f"base is {b.name} and new is {n.name}: these "
                             "benchmarks measure different things; pass "
                             "different_benchmarks=True (command line: "
                             f"{_FLAGS['different_benchmarks']}) to compare them anyway")
        warnings.warn(f"comparing different benchmarks: {b.name} -> {n.name}",
                      BenchmarkMismatchWarning, stacklevel=2)
    why = [d for d in configuration_differences(b, n) if not d.startswith("benchmark:")]
    if why and not different_params:
        raise ValueError(f"{b.name}: the baseline and the new runs differ in\n  "
                         + "\n  ".join(why) + "\nrefusing to compare; pass "
                         "different_params=True (command line: "
                         f"{_FLAGS['different_params']}) if that difference is the point")
    b.rates_mps(counter)  # KeyError naming the counters if unknown
    if isinstance(top_pct, bool) or not isinstance(top_pct, (int, float)) \
            or not 0 < top_pct <= 100:
        raise ValueError(f"top_pct={top_pct!r} out of range: 0 < pct <= 100")
    recorded = all(_per_cpu(r.samples) for r in base_runs + new_runs)
    if per_cpu is None:
        per_cpu = recorded
    elif per_cpu and not recorded:
        raise ValueError("per_cpu=True: some runs were recorded without their producers' "
                         "CPU time (an earlier benchbpf); pass per_cpu=False")
    return Comparison(base_runs, new_runs, counter, alpha, tuple(why), bool(per_cpu), top_pct)


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
