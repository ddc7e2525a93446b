"""ab's sequential rules, with no I/O: from the rounds' log ratios B/A, the
interval of B/A (a confidence sequence: it holds at every look), the verdict
(_outcome.verdict_of) and when to stop.  ab() runs one after every round,
simulate() over simulated series, and a stored series replayed through it
gives the verdict it gave.

Three rules (RULES), each an interval for an effect it names:

- "mean": the normal-mixture boundary on the mean log ratio, scaled by the
  rounds' standard deviation (stats.sequence_mean_ci).  Asymptotic: the
  deviation is estimated from the same rounds, and a few bursts inflate it.
- "median": a confidence sequence for the median log ratio (Howard and
  Ramdas 2022): every m whose signs of x - m a beta-binomial mixture
  martingale does not reject.  Its test of m = 0 is the sequential sign test.
- "huber": a betting confidence sequence on a clipped score of x - m, its
  scale taken from earlier rounds only: linear in the core, a burst counts at
  most one unit.

"median" and "huber" hold in finite samples whenever x - m is, given the
rounds before, as likely above as below 0 at the true shift m.  ab's design
gives that: each round runs its sides in a random order, so for identical
sides (or a change that scales B) swapping A and B is swapping the order,
whatever bursts and drift do to both alike.  results/ab-power-robust-2cpu.md
replays all three."""
import bisect
import math
import statistics

from ..results import stats
from ._outcome import SAME, verdict_of

#: Defaults: the interval's width asked for (a fraction of the ratio) and
#: the chance of a false alarm; the change that matters is every
#: comparison's (_outcome.THRESHOLD).
PRECISION, ALPHA = 0.01, 0.05
#: No verdict before this many rounds: the interval stands on the rounds'
#: spread, which a handful of rounds do not show (real rounds that happened
#: to agree called identical sides different after 4; results/ab-power-2cpu.md).
MIN_ROUNDS = 8
#: The rules by name, and the method each states in an Outcome.
METHODS = {"huber": "betting sequence on clipped rounds",
           "median": "confidence sequence on rounds' median",
           "mean": "confidence sequence on rounds"}
#: The rules' names.
RULES = tuple(METHODS)
#: The rule ab() uses unless told (chosen on the stored rounds and seeded
#: simulations: results/ab-power-robust-2cpu.md).
RULE = "median"
#: The method of the mean rule (older results name it).
METHOD = METHODS["mean"]

#: "huber": each round's score is clip((x - m) / s, -1, 1), s = HUBER_C
#: robust standard deviations (1.4826 MAD) of the rounds before it, at
#: least HUBER_FLOOR; HUBER_START until HUBER_WARM rounds have been seen.
HUBER_C, HUBER_FLOOR, HUBER_START, HUBER_WARM = 2.0, 0.002, 0.05, 4
#: "huber": the most it stakes on a round (a fraction of its wealth).
#: Each round's stake is the same for every m and fixed before the round
#: (predictable plug-in, Waudby-Smith and Ramdas 2023: shrinking as
#: sqrt(log(2/alpha) / (v t log t)), v the scores' spread so far), which
#: keeps each side's wealth monotone in m, so that the sequence is one
#: interval.
HUBER_MAX_BET = 0.8
#: Where the intervals of "huber" are looked for, in log ratio (B/A within
#: e^-1..e^1), and how finely.
_SPAN, _TOLERANCE = 1.0, 1e-5


def check_rule(rule, flag="rule"):
    """rule, if it names one of RULES; else ValueError naming `flag`."""
    if rule not in METHODS:
        raise ValueError(f"{flag}={rule!r}: must be one of {', '.join(RULES)}")
    return rule


def interval(log_ratios, alpha, planned_rounds, rule=RULE):
    """(ratio, low, high) of B/A from the rounds' log ratios by `rule`, or
    Nones while the rounds cannot bound it.  planned_rounds: where the
    boundary is narrowest (any choice fixed before the rounds keeps the
    guarantee)."""
    seq = sequence(rule, alpha, planned_rounds)
    for x in log_ratios:
        seq.add(x)
    return seq.interval()


def sequence(rule, alpha, planned_rounds):
    """An empty sequence of `rule`: add(x) takes a round's log ratio,
    interval() gives (ratio, low, high) of B/A, or Nones.  Fed round by
    round it gives what interval() gives of the same rounds, without
    recomputing what earlier rounds fixed."""
    check_rule(rule)
    return _KINDS[rule](alpha, planned_rounds)


class _Mean:
    def __init__(self, alpha, planned_rounds):
        self.alpha, self.planned, self.xs = alpha, planned_rounds, []

    def add(self, x):
        self.xs.append(x)

    def interval(self):
        ci = stats.sequence_mean_ci(self.xs, self.alpha, self.planned)
        if ci is None:
            return None, None, None
        return math.exp(ci.mean), math.exp(ci.low), math.exp(ci.high)


def _mixture_strength(alpha, planned_rounds):
    """a of the Beta(a, a) mixture over the coin's bias: its variance is the
    normal mixture's tuned to planned_rounds (stats' Robbins boundary), so
    the median's boundary is narrowest where the mean's is."""
    log_term = -2.0 * math.log(alpha)
    r = (log_term + math.log(log_term + 1.0)) / max(1, planned_rounds)
    return max(0.5, (1.0 / r - 1.0) / 2.0)


class _Median:
    def __init__(self, alpha, planned_rounds):
        self.log_bound = math.log(1.0 / alpha)
        self.a = _mixture_strength(alpha, planned_rounds)
        self.sorted = []

    def add(self, x):
        bisect.insort(self.sorted, x)

    def _log_factor(self, k, n):
        # Beta(a, a)-binomial mixture against a fair coin: k of n above m.
        a = self.a
        return (math.lgamma(k + a) + math.lgamma(n - k + a) - math.lgamma(n + 2 * a)
                - 2 * math.lgamma(a) + math.lgamma(2 * a) + n * math.log(2.0))

    def interval(self):
        xs, n = self.sorted, len(self.sorted)
        kept = [k for k in range(n + 1) if self._log_factor(k, n) < self.log_bound]
        if not kept:
            return None, None, None
        # m is kept while the count above it, k(m), is; k falls as m rises.
        lo_index, hi_index = n - kept[-1], n - kept[0] + 1
        if lo_index < 1 or hi_index > n:
            return None, None, None
        return (math.exp(statistics.median(xs)), math.exp(xs[lo_index - 1]),
                math.exp(xs[hi_index - 1]))


class _Huber:
    def __init__(self, alpha, planned_rounds):
        # Each side of the interval at alpha / 2.
        self.log_bound = math.log(2.0 / alpha)
        self.xs, self.scales, self.bets, self.sorted = [], [], [], []

    def _scale(self):
        if len(self.sorted) < HUBER_WARM:
            return HUBER_START
        mid = statistics.median(self.sorted)
        mad = statistics.median(abs(v - mid) for v in self.sorted)
        return max(HUBER_FLOOR, HUBER_C * 1.4826 * mad)

    def _bet(self):
        t = len(self.xs) + 1
        mid = statistics.median(self.sorted) if self.sorted else 0.0
        spread = (0.25 + sum(_clip((x - mid) / s) ** 2 for x, s in zip(self.xs, self.scales))) / t
        return min(HUBER_MAX_BET, math.sqrt(2.0 * self.log_bound / (spread * t * math.log(t + 1))))

    def add(self, x):
        # The scale and the stake are fixed before the round is seen.
        self.scales.append(self._scale())
        self.bets.append(self._bet())
        self.xs.append(x)
        bisect.insort(self.sorted, x)

    def _log_wealth(self, m, side):
        """log of the wealth of betting that rounds lie above m (side 1) or
        below it (side -1)."""
        return sum(math.log1p(side * lam * _clip((x - m) / s))
                   for x, s, lam in zip(self.xs, self.scales, self.bets))

    def _end(self, side):
        """The last m the bet on `side` does not reject, from below (side 1:
        its wealth falls as m rises) or from above; None when it rejects
        nothing within the span."""
        inside, outside = (_SPAN, -_SPAN) if side == 1 else (-_SPAN, _SPAN)
        if self._log_wealth(outside, side) < self.log_bound:
            return None
        if self._log_wealth(inside, side) >= self.log_bound:
            return inside
        while abs(inside - outside) > _TOLERANCE:
            mid = (inside + outside) / 2
            if self._log_wealth(mid, side) >= self.log_bound:
                outside = mid
            else:
                inside = mid
        return inside

    def interval(self):
        low, high = self._end(1), self._end(-1)
        if low is None or high is None:
            return None, None, None
        if low > high:      # every shift rejected: the rounds are not symmetric
            low = high = (low + high) / 2
        return math.exp((low + high) / 2), math.exp(low), math.exp(high)


def _clip(v):
    return -1.0 if v < -1.0 else 1.0 if v > 1.0 else v


_KINDS = {"mean": _Mean, "median": _Median, "huber": _Huber}


def decided(n, ratio, low, high, threshold, precision, min_rounds=MIN_ROUNDS):
    """The reason to stop after n rounds, or None: "decided" when the
    interval lies within or beyond the threshold, "precision" when it is as
    narrow as asked; never before min_rounds rounds."""
    if low is None or n < min_rounds:
        return None
    verdict, beyond = verdict_of(low, high, threshold)
    if verdict == SAME or beyond:
        return "decided"
    if (high - low) / 2 / ratio <= precision:
        return "precision"
    return None


def replay(log_ratios, rule, alpha, planned_rounds, threshold, precision,
           min_rounds=MIN_ROUNDS):
    """A series of rounds fed to `rule` as ab() feeds them, stopping where
    it would stop (decided) or at the series' end: (verdict, beyond,
    rounds used, (ratio, low, high)).  rule: a name in RULES, or a callable
    (alpha, planned_rounds) -> a sequence (add(x), interval())."""
    seq = rule(alpha, planned_rounds) if callable(rule) else sequence(rule, alpha,
                                                                       planned_rounds)
    k, figures = 0, (None, None, None)
    for k, x in enumerate(log_ratios, 1):
        seq.add(x)
        figures = seq.interval()
        if decided(k, *figures, threshold, precision, min_rounds):
            break
    return (*verdict_of(figures[1], figures[2], threshold), k, figures)


# ---------------------------------------------------------------- disturbed rounds

#: When a side's run counts as disturbed by the host (Result.disturbances;
#: results/ab-power-robust-2cpu.md, "Disturbed rounds" and "A per-side
#: disturbed-share rule"):
#: - "steal": the hypervisor took more than this share of the run's CPUs, %;
#: - "preemption": the producers were switched out involuntarily (not
#:   blocked of their own accord) and ran less than DISTURBED_CPU_SHARE of
#:   the measured time, or more than DISTURBED_SHARE_DROP below their own
#:   side's median share over the comparison's rounds so far.  Involuntary
#:   switches alone do not tell: the scheduler switches busy threads 20-600
#:   times a second whether or not a CPU hog shares their CPU; the time
#:   they lose does.  The fixed share alone missed a quarter of the rounds
#:   bursts covered, and no fixed share fits every benchmark (quiet
#:   rb-libbpf producers run about 0.95 of the time); a side's own median
#:   does;
#: - "late sample": the sampler woke half an interval or more late.
DISTURBED_STEAL_PCT = 2.0
DISTURBED_CPU_SHARE = 0.9
DISTURBED_SHARE_DROP = 0.02
#: The reasons, in the order they are stated.
DISTURBANCES = ("steal", "preemption", "late sample")


def disturbances_of(result, share_median=None):
    """Why the host disturbed one run (a Result), as a tuple of DISTURBANCES
    (empty: not disturbed, or recorded before runs said); share_median: its
    side's median producers' CPU share so far (share_median()), or None."""
    return disturbed_why(result.disturbances, share_median=share_median)


def cpu_share_of(d):
    """A run's producers' CPU share from its recorded figures
    (Result.disturbances, or None), None where it has none."""
    return None if d is None else d["cpu_share"]


def share_median(shares):
    """The reference the per-side rule judges a run by: the median of a
    side's producers' CPU shares over the rounds so far, this one included
    (None where none is known)."""
    known = [s for s in shares if s is not None]
    return statistics.median(known) if known else None


def disturbed_why(d, cpu_share=DISTURBED_CPU_SHARE, share_median=None,
                  share_drop=DISTURBED_SHARE_DROP):
    """disturbances_of() from a run's recorded figures (Result.disturbances,
    or None), with the fixed preemption threshold at cpu_share, and the
    per-side one share_drop below share_median (None: the fixed one alone,
    as for rounds recorded before ab kept it)."""
    if d is None:
        return ()
    why = set()
    if d["steal_pct"] > DISTURBED_STEAL_PCT:
        why.add("steal")
    share = d["cpu_share"]
    if share is not None and d["involuntary"] > 0 and (
            share < cpu_share
            or (share_median is not None and share < share_median * (1 - share_drop))):
        why.add("preemption")
    if d["late_samples"]:
        why.add("late sample")
    return tuple(w for w in DISTURBANCES if w in why)

