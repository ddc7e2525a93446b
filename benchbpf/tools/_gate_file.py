"""The pytest gate's baseline and its file, apart from the plugin (which
needs pytest) so that `benchbpf show` reads baselines with the gate's own
reader: what is saved is what is shown."""
import json
import math

from ..analysis._compare import median_ci
# The gate's speed of a run, shared with compare(): usable rates (per producer
# CPU-second where recorded), the fastest of them, their median.
from ..analysis._compare import _median, _per_cpu, fastest as _top, run_speed, usable_rates as _rates
from ..results.result import Result, Sample

__all__ = ["BASELINE_FORMAT", "BASELINE_VERSION", "Baseline", "NotComparable", "rounded"]

#: The format of a baseline file as the gate saves it: what the comparison
#: needs of each run (its fastest rates, its speed, its mean and span for
#: the host test) and the first run without samples (what it was a run of,
#: the machine's fingerprint), not every sample of every run (1.4 MB for a
#: 1-second check at interval=0.001).
BASELINE_FORMAT = "benchbpf-gate-baseline"
BASELINE_VERSION = 1


class NotComparable(ValueError):
    """The baseline is no baseline for this check: args[0], the lines
    saying what differs."""


def rounded(x):
    # Six significant digits: 1e-6 relative, far below any change that counts.
    return float(f"{x:.6g}") if math.isfinite(x) else None


def stand_in(run, summary):
    """A Result of one sample with a saved run's mean hit rate over its
    span, its start and host drift: what analysis.host_test reads of a
    baseline of several runs (their means, when and how long they ran)."""
    span_s = summary["span_s"] or 0.0
    samples = () if not span_s else (Sample(interval_ns=max(1, round(span_s * 1e9)),
                                            hits=round((summary["mean_mps"] or 0.0)
                                                       * span_s * 1e6)),)
    meta = {k: summary[k] for k in ("started", "host_drift") if summary.get(k) is not None}
    return Result(name=run.name, params={}, samples=samples, metadata=meta)


class Baseline:
    """The runs a baseline was recorded from and what the gate compares
    with: each run's speed (the median of its fastest top_pct percent of
    per-interval rates) with its lower (1 - alpha) confidence bound, and the
    reference: the highest of those bounds.  The fastest run, because on a
    shared machine (a virtual one above all) a CPU runs slower for seconds
    at a time, whatever runs on it, and the code is as fast as its fastest
    undisturbed run; its lower bound, so that a run that was fast by chance
    does not raise the bar.

    Baseline(runs, counter, top_pct, per_cpu, alpha): runs, the Results;
    counter, the rate compared; per_cpu, rates per CPU-second of the
    producers (default: when every run recorded their CPU time); alpha, the
    bound's error rate.  ValueError without runs."""

    def __init__(self, runs, counter="hits", top_pct=10, per_cpu=None, alpha=0.01):
        if not runs:
            raise ValueError("a baseline needs at least one run")
        self.runs = tuple(runs)
        if per_cpu is None:
            per_cpu = all(_per_cpu(r.samples) for r in self.runs)
        self.per_cpu = per_cpu
        self.tops = [_top(_rates(r, counter, per_cpu), top_pct) for r in self.runs]
        #: The fastest top_pct percent of every run, together.
        self.pooled_top = [x for t in self.tops for x in t]
        all_rates = [x for r in self.runs for x in _rates(r, counter, per_cpu)]
        #: The median of every usable rate of the runs, and how many there are.
        self.all_median, self.n_rates = _median(all_rates), len(all_rates)
        #: One speed per run loaded, a precision run's runs each their own
        #: (as compare() counts them): what the decision across runs takes.
        self.speeds = [run_speed(u, counter, per_cpu, top_pct)
                       for r in self.runs for u in r.runs()]
        self._bounds(alpha)
        #: The runs analysis.host_test reads (the runs themselves, or
        #: stand-ins for a saved baseline's).
        self.host_runs = self.runs
        self.counter, self.top_pct, self.alpha = counter, top_pct, alpha
        self._summaries = None

    def _bounds(self, alpha):
        """lower_bounds, reference and spread_pct from tops and speeds."""
        self.lower_bounds = [median_ci(t, 1.0 - 2.0 * alpha)[0] for t in self.tops]
        # A run without a usable interval (its producers hardly ran) has no speed.
        known = [b for b in self.lower_bounds if not math.isnan(b)]
        self.reference = max(known) if known else math.nan
        #: Range of the runs' speeds, percent of the reference.
        speeds = [x for x in self.speeds if not math.isnan(x)]
        self.spread_pct = (max(speeds) - min(speeds)) / self.reference * 100.0 \
            if self.reference > 0 else math.nan

    def as_dict(self):
        """The baseline as the gate saves it (BASELINE_FORMAT): per run its
        fastest top_pct percent of usable rates (6 significant digits), its
        speeds, usable samples, their median, its mean hit rate, start,
        span and host drift; the first run without its samples; and the
        reference, bounds and spread, for readers of the file."""
        first = self.first.as_dict()
        first["samples"], first["warmup_samples"] = [], []
        runs = self._summaries
        if runs is None:
            runs = []
            for r, tops in zip(self.runs, self.tops):
                rates = _rates(r, self.counter, self.per_cpu)
                runs.append({
                    "started": r.metadata.get("started"),
                    "fastest_mps": [rounded(x) for x in tops],
                    "speeds_mps": [rounded(run_speed(u, self.counter, self.per_cpu,
                                                     self.top_pct)) for u in r.runs()],
                    "samples": len(rates), "median_mps": rounded(_median(rates)),
                    "mean_mps": rounded(r.mean) if r.samples else None,
                    "span_s": r._span_s() if r.samples else 0.0,
                    # Frozen in the Result (mapping proxies): plain JSON here.
                    "host_drift": json.loads(json.dumps(r.metadata.get("host_drift"),
                                                        default=dict))})
        return {"format": BASELINE_FORMAT, "version": BASELINE_VERSION,
                "counter": self.counter, "top_pct": self.top_pct, "per_cpu": self.per_cpu,
                "alpha": self.alpha, "reference_mps": rounded(self.reference),
                "speeds_mps": [rounded(x) for x in self.speeds],
                "lower_bounds_mps": [rounded(x) for x in self.lower_bounds],
                "spread_pct": rounded(self.spread_pct), "first": first, "runs": runs}

    @classmethod
    def from_dict(cls, d, counter="hits", top_pct=10, alpha=0.01):
        """The Baseline that as_dict() gave `d`, for a check of `counter`
        comparing the fastest `top_pct` percent at `alpha`.  The file keeps
        only the rates its own counter and share select: a check asking
        for others is a ValueError saying what differs (one line each in
        its args[0])."""
        why = [f"{what}: baseline {d.get(k)!r}, this check {v!r}"
               for what, k, v in (("counter", "counter", counter),
                                  ("fastest share (top_pct)", "top_pct", top_pct))
               if d.get(k) != v]
        if why:
            raise NotComparable(why)
        self = cls.__new__(cls)
        first = Result.from_dict(d["first"])
        summaries = list(d["runs"])
        self.runs = tuple(stand_in(first, s) for s in summaries)
        self.first_run = first
        self.per_cpu = bool(d["per_cpu"])
        self.tops = [[x for x in s["fastest_mps"] if x is not None] for s in summaries]
        self.pooled_top = [x for t in self.tops for x in t]
        self.speeds = [math.nan if x is None else x for s in summaries
                       for x in s["speeds_mps"]]
        n = sum(s["samples"] for s in summaries)
        self.n_rates = n
        # The median of the runs' medians: each run's samples are not kept.
        medians = [s["median_mps"] for s in summaries if s["median_mps"] is not None]
        self.all_median = _median(medians)
        self._bounds(alpha)
        self.host_runs = self.runs
        self.counter, self.top_pct, self.alpha = counter, top_pct, alpha
        self._summaries = summaries
        return self

    @property
    def first(self):
        """The first run of the baseline, a Result (of a saved baseline,
        without its samples: what it was a run of, and where)."""
        return getattr(self, "first_run", None) or self.runs[0]

    def describe(self):
        """The baseline in words: the reference (M/s), how many runs it is
        the fastest of, and the runs' speeds and their spread (%)."""
        n = len(self.runs)
        speeds = [x for x in self.speeds if not math.isnan(x)] or [math.nan]
        loaded = "" if len(self.speeds) == n else f" of {len(self.speeds)} loads"
        return (f"{self.reference:.3f} M/s (fastest of {n} run{'s' if n > 1 else ''}, lower "
                f"bound; run speeds{loaded} {min(speeds):.3f}..{max(speeds):.3f}, spread "
                f"{self.spread_pct:.1f}%)")
