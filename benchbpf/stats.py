"""Statistics over per-sample rates: the median's and the mean's confidence
intervals, the Mann-Whitney U test, and how many samples a test needs.

At the bottom of the package with the Results they describe: it imports
nothing of benchbpf.  benchbpf.analysis re-exports every public name."""
import functools
import math
import statistics

__all__ = ["mann_whitney_u", "median_ci", "mean_ci", "samples_needed"]


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
