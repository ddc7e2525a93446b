"""ab's sequential rule, with no I/O: from the rounds' log ratios B/A, the
interval of B/A (a confidence sequence: it holds at every look), the verdict
(_outcome.verdict_of) and when to stop.  ab() runs it after every round,
simulate() over simulated series, and a stored series replayed through it
gives the verdict it gave."""
import math

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
#: The method, as an Outcome names it.
METHOD = "confidence sequence on rounds"


def interval(log_ratios, alpha, planned_rounds):
    """(ratio, low, high) of B/A from the rounds' log ratios, or Nones
    (stats.sequence_mean_ci at 1 - alpha, sized for planned_rounds)."""
    ci = stats.sequence_mean_ci(log_ratios, alpha, planned_rounds)
    if ci is None:
        return None, None, None
    return math.exp(ci.mean), math.exp(ci.low), math.exp(ci.high)


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
