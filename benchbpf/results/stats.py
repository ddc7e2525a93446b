"""Statistics over per-sample rates: the median's and the mean's confidence
intervals, the Mann-Whitney U test, how many samples a test needs, the
instability warnings of one run and whether repeated runs agree, and the
binomial interval of a proportion (clopper_pearson).

At the bottom of the package with the Results they describe: it imports
nothing of benchbpf.  benchbpf.analysis re-exports the names comparisons use."""
import functools
import math
import numbers
import statistics
from dataclasses import dataclass

__all__ = ["mann_whitney_u", "median_ci", "mean_ci", "samples_needed", "across_runs",
           "RunTest", "runs_needed", "min_p_value", "SIGNIFICANT", "WITHIN_NOISE",
           "NOT_ENOUGH_RUNS", "instability", "run_states", "RunStates", "chi2_sf",
           "MeanInterval", "series_mean_ci", "runs_mean_ci", "count_step_mps", "welch_p",
           "sequence_mean_ci", "clopper_pearson"]


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


def _binomial_cdf(k, n, p):
    """P(X <= k) for X binomial with n trials of probability p, summed in
    logs so that large n neither overflows nor underflows."""
    if k < 0 or p >= 1.0:
        return 0.0 if k < n else 1.0
    if k >= n or p <= 0.0:
        return 1.0
    log_p, log_q, top = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    return min(1.0, sum(math.exp(top - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                                 + i * log_p + (n - i) * log_q) for i in range(k + 1)))


def clopper_pearson(k, n, confidence=0.95):
    """Clopper-Pearson ("exact") confidence interval of a proportion seen as
    k successes in n trials: (low, high), each in 0..1.  low is the p at
    which k or more successes have probability (1 - confidence) / 2 (0 when
    k is 0), high the p at which k or fewer have it (1 when k is n): at
    least `confidence` coverage whatever the true proportion, e.g. 0 false
    alarms in 60 trials bound the rate below 5.96 % at 95 %."""
    for name, value in (("k", k), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name}={value!r}: must be an int")
    if n < 1:
        raise ValueError(f"n={n!r} out of range: trials must be >= 1")
    if not 0 <= k <= n:
        raise ValueError(f"k={k!r} out of range: successes must be in 0..n ({n})")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence={confidence!r} out of range: 0 < confidence < 1")
    tail = (1.0 - confidence) / 2.0
    # P(X >= k) and P(X > k) rise with p: the bounds are where they cross
    # tail and 1 - tail.
    low = 0.0 if k == 0 else _inverse(lambda p: 1.0 - _binomial_cdf(k - 1, n, p),
                                      tail, 0.0, 1.0)
    high = 1.0 if k == n else _inverse(lambda p: 1.0 - _binomial_cdf(k, n, p),
                                       1.0 - tail, 0.0, 1.0)
    return (low, high)


def _t_cdf(t, df, steps=2000):
    """CDF of Student's t distribution with df degrees of freedom at t >= 0:
    the density integrated by Simpson's rule."""
    scale = math.exp(math.lgamma((df + 1) / 2.0) - math.lgamma(df / 2.0)) / \
        math.sqrt(df * math.pi)
    h = t / steps
    f = [scale * (1.0 + (i * h) ** 2 / df) ** (-(df + 1) / 2.0) for i in range(steps + 1)]
    return 0.5 + h / 3.0 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))


@functools.lru_cache(maxsize=None)
def _t_quantile(p, df):
    """p-quantile (p > 0.5) of Student's t distribution with df degrees of
    freedom: bisection on its CDF."""
    return _inverse(lambda t: _t_cdf(t, df), p, 0.0, 1000.0, steps=60)


def welch_df(se_a, df_a, se_b, df_b):
    """Welch-Satterthwaite degrees of freedom of the sum of two estimates
    with standard errors se_a, se_b on df_a, df_b (each at least 1)."""
    se = math.hypot(se_a, se_b)
    return se ** 4 / (se_a ** 4 / max(1.0, df_a) + se_b ** 4 / max(1.0, df_b))


def _t_upper_tail(t, df):
    """P(T >= t) for Student's t with df degrees of freedom, any t."""
    if abs(t) > 1000:
        return 0.0 if t > 0 else 1.0
    upper = 1.0 - _t_cdf(abs(t), df)
    return upper if t >= 0 else 1.0 - upper


def welch_p(diff, se_a, df_a, se_b, df_b, alternative="two-sided"):
    """p-value of a difference `diff` (b - a) between two estimates with
    standard errors se_a and se_b on df_a and df_b degrees of freedom:
    Student's t at the Welch-Satterthwaite degrees of freedom.
    alternative: "two-sided", or "less" (b below a).  1.0 when neither has
    an error (nothing to tell a difference from)."""
    if alternative not in ("two-sided", "less"):
        raise ValueError(f"alternative={alternative!r}: 'two-sided' or 'less'")
    se = math.hypot(se_a, se_b)
    if not se > 0:
        return 1.0
    df = welch_df(se_a, df_a, se_b, df_b)
    if alternative == "less":
        p = _t_upper_tail(-diff / se, df)
    else:
        p = 2.0 * _t_upper_tail(abs(diff) / se, df)
    return max(0.0, min(1.0, p))


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


@dataclass(frozen=True)
class MeanInterval:
    """The confidence interval of a mean: over runs (runs_mean_ci, basis
    "runs") or over one run's autocorrelated samples (series_mean_ci, basis
    "samples").

    effective_n: the number of independent values it stands on (groups of
    runs; or samples / tau); tau: for samples, the integrated
    autocorrelation time in samples (1 for independent samples), nan for
    runs."""
    mean: float
    low: float
    high: float
    confidence: float
    effective_n: float
    basis: str
    tau: float = math.nan

    @property
    def half_width(self):
        """Half the interval's width, in the mean's unit (M/s for rates)."""
        return (self.high - self.low) / 2.0

    @property
    def relative_half_width(self):
        """Half the interval's width over the mean (0.01: +-1 %); inf at a zero mean."""
        return self.half_width / abs(self.mean) if self.mean else math.inf

    @property
    def standard_error(self):
        """The standard error the interval stands on: its half width over
        Student's t at its degrees of freedom (effective_n - 1, at least 1)."""
        return self.half_width / _t_quantile(0.5 + self.confidence / 2,
                                             max(1.0, self.effective_n - 1))


def _autocorrelation_time(xs, mean):
    """Geyer's initial monotone sequence estimate of the integrated
    autocorrelation time: autocovariances summed in adjacent pairs while
    the pairs stay positive, each pair no larger than the one before.
    At least 1 (negatively correlated samples are not counted as worth
    more than independent ones)."""
    n = len(xs)
    d = [x - mean for x in xs]
    gamma0 = sum(v * v for v in d) / n
    if gamma0 <= 0:
        return 1.0

    def gamma(k):
        return sum(d[i] * d[i + k] for i in range(n - k)) / n
    total, prev, m = -gamma0, math.inf, 0
    while 2 * m + 1 < n:
        pair = (gamma0 if m == 0 else gamma(2 * m)) + gamma(2 * m + 1)
        if pair <= 0:
            break
        pair = min(pair, prev)
        total += 2 * pair
        prev, m = pair, m + 1
    return max(1.0, total / gamma0)


def series_mean_ci(values, confidence=0.95):
    """Confidence interval of the mean of a time series whose values are
    autocorrelated (interval samples: host phases last seconds): the
    variance of the mean is stdev**2 * tau / n, tau the integrated
    autocorrelation time (Geyer's initial monotone sequence).  Student's t
    takes half the effective samples as degrees of freedom: tau is itself
    estimated from the series, and too short an estimate is what makes an
    interval too narrow (seeded AR(1) coverage at phi 0..0.8 rose from
    0.87-0.96 to 0.88-0.97 with it).  A MeanInterval; None under 4 values.  Coverage of seeded series and of real runs:
    results/precision-2cpu.md."""
    xs = [float(v) for v in values]
    n = len(xs)
    if n < 4:
        return None
    mean = statistics.fmean(xs)
    tau = _autocorrelation_time(xs, mean)
    n_eff = n / tau
    sd = statistics.stdev(xs)
    df = max(1, int(n_eff / 2) - 1)
    half = _t_quantile(0.5 + confidence / 2.0, df) * sd * math.sqrt(tau / n)
    return MeanInterval(mean, mean - half, mean + half, confidence, n_eff, "samples", tau)


#: Runs that began within this many seconds of each other count as one in
#: runs_mean_ci: runs in a row share the host's phase (2-12 s here) and agree
#: with each other more than with the next phase (results/precision-2cpu.md).
RUN_GROUP_S = 5.0


def runs_mean_ci(run_means, run_starts_s=None, group_s=RUN_GROUP_S, confidence=0.95,
                 step_mps=0.0):
    """The interval of the mean of runs' figures, in the order they ran.
    Runs in a row share the host's phase, so they are first grouped: each
    group the runs that began within group_s seconds of its first
    (run_starts_s: each run's start, s; without them each run is a group).
    Student's t over the groups' means, groups - 1 degrees of freedom; the
    mean is the runs' mean.  step_mps: the step of one run's mean
    (count_step_mps); the half width is never under what rounding to it
    alone leaves (each run's two readings off by up to a step, sd
    step / sqrt(6), over all runs), so runs that all read the same stepped
    figure do not state an exact one.  A MeanInterval (basis "runs",
    effective_n the number of groups); None under 2 groups."""
    means = [float(m) for m in run_means]
    if run_starts_s is None:
        run_starts_s, group_s = range(len(means)), 0.0
    groups, first = [], None
    for m, t in zip(means, run_starts_s):
        if first is None or t - first >= group_s:
            groups.append([])
            first = t
        groups[-1].append(m)
    if len(groups) < 2:
        return None
    low, high = mean_ci([statistics.fmean(g) for g in groups], confidence)
    mean, half = statistics.fmean(means), (high - low) / 2.0
    if step_mps > 0:
        rounding = step_mps / math.sqrt(6.0 * len(means))
        half = max(half, _t_quantile(0.5 + confidence / 2.0, len(groups) - 1) * rounding)
    return MeanInterval(mean, mean - half, mean + half, confidence, len(groups), "runs")


def _mixture_half_width(sd, n, alpha, planned_n):
    """Half width of the two-sided normal-mixture boundary (Robbins) over n
    values of standard deviation sd, its mixture tuned to be narrowest at
    planned_n values: sd * sqrt(2 (n r + 1) / (n^2 r) * log(sqrt(n r + 1) / alpha))."""
    log_term = -2.0 * math.log(alpha)
    r = (log_term + math.log(log_term + 1.0)) / planned_n
    return sd * math.sqrt(2.0 * (n * r + 1.0) / (n * n * r)
                          * math.log(math.sqrt(n * r + 1.0) / alpha))


def sequence_mean_ci(values, alpha=0.05, planned_n=50):
    """A confidence sequence for the mean of independent values seen one at
    a time: the interval may be looked at after every value, and the chance
    that it ever misses the mean, at any of those looks, is about alpha,
    where an interval made for one fixed number of values and consulted
    again and again misses far more often.

    The normal-mixture boundary with the values' own standard deviation
    (an asymptotic confidence sequence), widened twice where the values
    are few or follow each other: by t(n-1) / z, as Student's t widens a
    fixed-n interval (the standard deviation of a handful of values is
    itself uncertain, and an early look is where a sequence most often
    errs), and by the square root of their integrated autocorrelation time
    (values that drift together for a while are worth fewer independent
    ones; at least 1).  planned_n: where the boundary is narrowest (the
    number of values the caller expects to have; any fixed choice made
    before the values keeps the guarantee).  A MeanInterval with basis
    "sequence", confidence 1 - alpha and tau the autocorrelation time;
    None under 3 values.  Error rates on seeded series with slow phases,
    drifting rounds and heavy tails: benchbpf.ab.simulate() and
    results/ab-power-2cpu.md."""
    xs = [float(v) for v in values]
    n = len(xs)
    if n < 3:
        return None
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} out of range: 0 < alpha < 1")
    mean = statistics.fmean(xs)
    tau = _autocorrelation_time(xs, mean)
    z = _normal_quantile(1.0 - alpha / 2.0)
    sd = statistics.stdev(xs) * _t_quantile(1.0 - alpha / 2.0, n - 1) / z * math.sqrt(tau)
    half = _mixture_half_width(sd, n, alpha, max(1, planned_n))
    return MeanInterval(mean, mean - half, mean + half, 1.0 - alpha, n / tau, "sequence", tau)


def count_step_mps(runs):
    """The step of one run's mean rate, M/s, for a counter that moves in
    steps (a loop of 10000 local storage gets counts 10000 per call): the
    greatest common divisor of all counts over the shortest run's seconds.
    runs: (counts, seconds) of each run.  Negligible for counters that move
    by one; 0.0 when nothing was counted."""
    step, shortest = 0, math.inf
    for counts, seconds in runs:
        for c in counts:
            step = math.gcd(step, int(c))
        if seconds > 0:
            shortest = min(shortest, seconds)
    return step / shortest / 1e6 if step and math.isfinite(shortest) else 0.0


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


#: Verdicts of a test across runs (across_runs, Comparison.verdict).
SIGNIFICANT, WITHIN_NOISE, NOT_ENOUGH_RUNS = "significant", "within noise", "not enough runs"

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
        """True when the verdict is SIGNIFICANT."""
        return self.verdict == SIGNIFICANT

    @property
    def runs_needed(self):
        """The fewest runs a side needs for this test to be able to reach
        alpha (runs_needed(alpha, alternative))."""
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


# ---------------------------------------------------------------- instability

#: Thresholds of instability(), one per warning (see its docstring).
MIN_SAMPLES = 3
MAX_CV = 0.10
FAR_MADS = 5.0
FAR_FRACTION = 0.10
DRIFT_FRACTION = 0.10
DRIFT_ALPHA = 0.01

#: 1 / Phi^-1(3/4): the median absolute deviation times this estimates the
#: standard deviation of normal data.
_MAD_TO_SD = 1.4826


def _slope(times, values):
    """Least-squares slope of values against times and the t statistic of
    its test against zero (inf for a perfect fit, nan when undefined)."""
    n = len(values)
    mt, mv = statistics.fmean(times), statistics.fmean(values)
    sxx = sum((t - mt) ** 2 for t in times)
    if n < 3 or sxx <= 0:
        return math.nan, math.nan
    b = sum((t - mt) * (v - mv) for t, v in zip(times, values)) / sxx
    resid = sum((v - mv - b * (t - mt)) ** 2 for t, v in zip(times, values))
    se = math.sqrt(resid / (n - 2) / sxx)
    if se == 0:
        return b, (math.inf if b else 0.0)
    return b, b / se


def instability(values, times=None, figure="hits", unit="M/s", step=0.0):
    """Warnings about one run's per-sample values of a figure, as short
    strings that name the figure and the threshold crossed; () when none.

    values: the figure of each kept sample, in time order (e.g. hit rates,
    M/s); times: each sample's time (e.g. its end, s), None to skip the
    drift check (samples not in one time line); step: the resolution of
    the values (Result.step_mps), 0 if fine.  The checks, as pyperf makes
    its own:

    - too few samples: under MIN_SAMPLES (3) nothing else can be judged;
    - coefficient of variation (stdev / mean) over MAX_CV (10 %): pyperf's
      threshold; steady benchmarks on a shared 2-vCPU AMD EPYC VM (load
      2-3) had a median CV of 4-6 % over five 1 s samples
      (results/warnings-2cpu.md);
    - samples far from the median: further than FAR_MADS (5) robust
      standard deviations (1.4826 x the median absolute deviation) and
      than FAR_FRACTION (10 %) of the median and than one step.  The
      median absolute deviation hardly moves with the far samples
      themselves, as a stdev would; the 10 % floor
      keeps a run whose samples are nearly equal (MAD near 0) from calling
      an ordinary 1 % sample far; the step floor keeps counts that move in
      whole batches from doing so;
    - drift: the least-squares slope of the values against time changes
      the figure by more than DRIFT_FRACTION (10 %) of the mean over the
      run, and differs from zero at DRIFT_ALPHA (0.01, Student's t on n - 2
      degrees of freedom).  Samples are autocorrelated, so the test alone
      would call slow host phases significant: the 10 % floor says the
      drift matters.  A drift means warm-up ended too early or the
      machine's load changed during the run."""
    xs = [float(v) for v in values]
    n = len(xs)
    if n < MIN_SAMPLES:
        return (f"{figure}: {n} sample{'' if n == 1 else 's'}, too few to judge "
                f"stability (at least {MIN_SAMPLES})",)
    out = []
    mean, med = statistics.fmean(xs), statistics.median(xs)
    if not mean > 0 or not med > 0:
        return ()
    sd = statistics.stdev(xs)
    if sd / mean > MAX_CV:
        coarse = (f"; the samples move in steps of {step:.3g} {unit}, a longer interval "
                  "is finer") if step and step > 0.01 * med else ""
        # Two decimals where one would show the threshold itself ("10.0%").
        cv = f"{sd / mean:.1%}" if f"{sd / mean:.1%}" != f"{MAX_CV:.1%}" else f"{sd / mean:.2%}"
        out.append(f"{figure}: coefficient of variation {cv} (stdev "
                   f"{sd:.3g} of mean {mean:.3g} {unit}; over {MAX_CV:.0%}){coarse}")
    robust = _MAD_TO_SD * statistics.median(abs(x - med) for x in xs)
    limit = max(FAR_MADS * robust, FAR_FRACTION * med, step)
    # The margin keeps rounding (0.4 - 0.3 > 0.1) from making one step far.
    far = [x for x in xs if abs(x - med) > limit * (1 + 1e-9)]
    if far:
        out.append(f"{figure}: {len(far)} of {n} samples far from the median "
                   f"{med:.3g} {unit} (up to {max(abs(x - med) for x in far) / med:.0%} "
                   f"off; beyond \u00b1{limit:.3g} {unit}, the widest of {FAR_MADS:g} "
                   f"robust stdevs, {FAR_FRACTION:.0%} of the median and one step)")
    if times is not None:
        ts = [float(t) for t in times]
        b, t_stat = _slope(ts, xs)
        change = b * (max(ts) - min(ts)) / mean if b == b else math.nan
        if abs(change) > DRIFT_FRACTION and abs(t_stat) > \
                _t_quantile(1.0 - DRIFT_ALPHA / 2.0, n - 2):
            out.append(f"{figure}: drifts {change:+.1%} over the run (slope against time, "
                       f"t test p < {DRIFT_ALPHA:g}; beyond \u00b1{DRIFT_FRACTION:.0%}): "
                       "warm-up too short, or the load changed")
    return tuple(out)


# ---------------------------------------------------------------- runs' agreement

def chi2_sf(x, df):
    """P(X > x) for X chi-square with df degrees of freedom: the regularised
    upper incomplete gamma function Q(df/2, x/2), by its series below a + 1
    and its continued fraction above."""
    if df <= 0:
        raise ValueError(f"df={df!r}: must be > 0")
    if x <= 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    a, z = df / 2.0, x / 2.0
    log_front = a * math.log(z) - z - math.lgamma(a)
    if z < a + 1.0:
        term = total = 1.0 / a
        k = a
        for _ in range(10000):
            k += 1.0
            term *= z / k
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    # Lentz's method for the continued fraction of Q(a, z).
    tiny = 1e-300
    b = z + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return min(1.0, h * math.exp(log_front))


#: run_states(): runs each state needs, and how many times the wider
#: state's own range the gap between them must be.
STATE_RUNS = 2
STATE_GAP = 3.0


@dataclass(frozen=True)
class RunStates:
    """Whether repeated runs' figures agree with each other within their own
    spreads, and the states they fall into when they do not (run_states).

    values, spreads: the runs' figures and standard errors used (NaNs left
    out); p_value: Cochran's Q test of one common figure (NaN when fewer
    than two runs have a spread); disagree: p_value < alpha and the figures
    span more than min_change of their median; states: ((centre, runs),
    (centre, runs)), low first, when the figures fall into two well
    separated groups, else ()."""
    values: tuple
    spreads: tuple
    p_value: float
    disagree: bool
    states: tuple
    alpha: float
    min_change: float
    unit: str = "M/s"

    def __bool__(self):
        return self.disagree

    def text(self):
        """One line saying how the runs disagree; "" when they agree."""
        if not self.disagree:
            return ""
        p = "p<1e-9" if self.p_value < 1e-9 else f"p={self.p_value:.2g}"
        head = (f"runs disagree beyond their spread (Cochran's Q {p}, "
                f"figures {min(self.values):.4g}..{max(self.values):.4g} {self.unit})")
        if not self.states:
            return head + ": unstable between runs"
        (lo, n_lo), (hi, n_hi) = self.states
        return (f"{head}: bistable? states at {lo:.4g} and {hi:.4g} {self.unit}, "
                f"{n_lo} and {n_hi} run{'' if n_lo + n_hi == 1 else 's'}")

    __str__ = text


def run_states(values, spreads, alpha=0.01, min_change=0.05, unit="M/s"):
    """Do repeated runs disagree beyond what their own within-run spread
    explains?  values: one figure per run (e.g. its mean rate); spreads:
    each figure's standard error from within its run (NaN where the run
    cannot give one).  Returns a RunStates.

    The test is Cochran's Q: sum of ((value - weighted mean) / spread)^2,
    weights 1 / spread^2, chi-square with runs - 1 degrees of freedom when
    every run measures one figure with its stated error.  Within-run errors
    are too small when samples are autocorrelated, so a significant Q alone
    would flag most benchmarks on a busy machine: the runs disagree only
    when, besides p < alpha, the figures span more than min_change (5 %)
    of their median.

    States: the sorted figures split at their widest gap that leaves at
    least STATE_RUNS (2) runs on each side; the two groups are states when
    that gap is at least STATE_GAP (3) times the wider group's own range and
    over min_change of the median, e.g. ring buffer runs at 4.1 and 11.8
    M/s.  One run apart from the others is a disturbed run, not a state.
    Figures of one normal distribution split so in 3.2 % of sets of 5 runs
    and 0.1 % of sets of 8; two states 10 of their own standard deviations
    apart are found in 81 % of sets of 5 runs (2 or more in each; both by
    simulation, tests/test_warnings.py)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} out of range: 0 < alpha < 1")
    if not min_change >= 0:
        raise ValueError(f"min_change={min_change!r} out of range: >= 0")
    values, spreads = list(values), list(spreads)
    if len(values) != len(spreads):
        raise ValueError(f"run_states: values and spreads differ in length "
                         f"({len(values)} and {len(spreads)})")
    pairs = [(float(v), float(s)) for v, s in zip(values, spreads)
             if not math.isnan(float(v))]
    vs = tuple(v for v, _ in pairs)
    judged = [(v, s) for v, s in pairs if not math.isnan(s)]
    p = math.nan
    if len(judged) >= 2:
        # A zero spread (every sample equal) weighs as a tiny one.
        floor = max(1e-12, 1e-12 * max(abs(v) for v, _ in judged))
        ws = [1.0 / max(s, floor) ** 2 for _, s in judged]
        centre = sum(w * v for w, (v, _) in zip(ws, judged)) / sum(ws)
        q = sum(w * (v - centre) ** 2 for w, (v, _) in zip(ws, judged))
        p = chi2_sf(q, len(judged) - 1)
    med = statistics.median(vs) if vs else math.nan
    wide = bool(vs) and med > 0 and (max(vs) - min(vs)) > min_change * med
    disagree = bool(p < alpha and wide)
    states = ()
    if disagree and len(vs) >= 2 * STATE_RUNS:
        xs = sorted(vs)
        gap, cut = max((xs[i] - xs[i - 1], i)
                       for i in range(STATE_RUNS, len(xs) - STATE_RUNS + 1))
        low, high = xs[:cut], xs[cut:]
        spread = max(low[-1] - low[0], high[-1] - high[0])
        if gap >= STATE_GAP * spread and gap > min_change * med:
            states = ((statistics.median(low), len(low)), (statistics.median(high), len(high)))
    return RunStates(vs, tuple(s for _, s in pairs), p, disagree, states, alpha, min_change,
                     unit)
