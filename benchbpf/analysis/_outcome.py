"""What a comparison concludes, in one type and one vocabulary.

compare() (Comparison.outcome), report.compare_sets(), the pytest gate and
ab() (ABResult.outcome) each decide with a statistic of their own (a test
across unpaired runs, a gate's bounds on the fastest intervals, a
confidence sequence on paired rounds), and each states its conclusion as an
Outcome: B/A with its interval and confidence, the method that made it,
the verdict in the words below, whether it lies beyond a threshold, and the
error rates measured for that method where they were."""
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["Outcome", "verdict_of", "SLOWER", "FASTER", "SAME", "UNDECIDED", "VERDICTS",
           "THRESHOLD"]

#: What a comparison can conclude: B slower or faster than A, the same
#: within the threshold, or undecided.
SLOWER, FASTER, SAME, UNDECIDED = "slower", "faster", "same", "undecided"
#: Every verdict, in that order.
VERDICTS = (SLOWER, FASTER, SAME, UNDECIDED)
#: The change that matters unless a comparison is told otherwise: 2 %.
THRESHOLD = 0.02


def verdict_of(low, high, threshold):
    """What an interval (low, high) of B/A says against +-threshold (a
    fraction: 0.02 = 2 %): (verdict, beyond).  "same" when it lies within
    the threshold; "slower"/"faster" when it lies entirely below/above 1,
    beyond True when also beyond the threshold; else "undecided" (and so
    without an interval, low None)."""
    if low is None:
        return UNDECIDED, False
    if 1 - threshold <= low and high <= 1 + threshold:
        return SAME, False
    if high < 1:
        return SLOWER, high < 1 - threshold
    if low > 1:
        return FASTER, low > 1 + threshold
    return UNDECIDED, False


@dataclass(frozen=True)
class Outcome:
    """One comparison's conclusion.

    ratio: B/A (None when there is no interval yet); low, high: its
    interval at `confidence` (a fraction, 0.95); method: the statistic that
    made it ("Mann-Whitney U on runs", "confidence sequence on rounds",
    ...); verdict: one of VERDICTS; beyond_threshold: the interval (or for
    the gate, its bound) lies beyond +-threshold; threshold: the change that
    matters, a fraction; rates: what was measured of the method's error
    rates, as this comparison was asked (a mapping, None where nothing was
    measured so); rates_text: those rates in
    words; note: why there is no interval, when there is none."""
    ratio: object
    low: object
    high: object
    confidence: float
    method: str
    verdict: str
    beyond_threshold: bool
    threshold: float
    rates: object = None
    rates_text: str = ""
    note: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict={self.verdict!r}: must be one of {', '.join(VERDICTS)}")
        if self.rates is not None:
            object.__setattr__(self, "rates", MappingProxyType(dict(self.rates)))

    @property
    def change_pct(self):
        """(B/A - 1) in %, with its interval: (change, low, high), or Nones."""
        if self.ratio is None:
            return None, None, None
        return tuple((x - 1) * 100 for x in (self.ratio, self.low, self.high))

    def verdict_text(self):
        """The verdict in words, with how far the interval reaches."""
        pct, lo, hi = self.change_pct
        t = f"{self.threshold * 100:g} %"
        beyond = f", beyond the {t} threshold" if self.beyond_threshold else ""
        if pct is None:
            return f"{UNDECIDED}: {self.note}" if self.note else UNDECIDED
        if self.verdict == SAME:
            return f"{SAME} within \u00b1{t}"
        if self.verdict == SLOWER:
            return f"{SLOWER} by {-hi:.1f}..{-lo:.1f} %{beyond}"
        if self.verdict == FASTER:
            return f"{FASTER} by {lo:.1f}..{hi:.1f} %{beyond}"
        return f"{UNDECIDED} against \u00b1{t}" + (f" ({self.note})" if self.note else "")

    def figure_text(self):
        """B/A and its interval: "B/A 0.9512 (0.9301..0.9730, 95 %)", or "B/A -"."""
        if self.ratio is None:
            return "B/A -"
        return (f"B/A {self.ratio:.4f} ({self.low:.4f}..{self.high:.4f}, "
                f"{self.confidence * 100:g} %)")

    def text(self):
        """The conclusion in one shape for every comparison: B/A, its
        interval, the verdict, the method."""
        return f"{self.figure_text()}: {self.verdict_text()} ({self.method})"

    def __str__(self):
        return self.text()

    def as_dict(self):
        """The outcome as plain JSON data."""
        return {"ratio": self.ratio, "low": self.low, "high": self.high,
                "confidence": self.confidence, "method": self.method,
                "verdict": self.verdict, "beyond_threshold": self.beyond_threshold,
                "threshold": self.threshold,
                "rates": dict(self.rates) if self.rates is not None else None,
                "rates_text": self.rates_text, "note": self.note}
