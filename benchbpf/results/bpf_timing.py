"""BPF-side timing: the statistics of BPF-timed batches, as the kernel bench's
bench_bpf_timing computes and prints them, for every BPF-timed family
(bpf-nop, xdp-lb, ...).

A BPF-timed benchmark's program times batches of ``batch_iters`` operations
with ``bpf_ktime_get_ns()``; ``batch_iters`` is calibrated before the run so
that a batch takes about 10 ms, and the run ends once every producer has 200
batches (or at ``duration``, whichever comes first).  In the Result each
timed batch is one sample: ``Sample.interval_ns`` is the batch's BPF-timed
length and ``Sample.hits`` its operations, so ``Sample.rate_mps()`` is the
batch's M ops/s and ``ns_per_op(result)`` the batches' ns/op.

``result.metadata["bpf_timing"]`` holds:

- ``batch_iters``, ``target_samples`` (producers x 200) and ``stopped_by``
  (``"samples"`` or ``"duration"``);
- ``calibration``: the seed batch (100 iterations), the median batches of N
  and 2N iterations, their ratio and its error against 2 (``ratio_2n_n``,
  ``proportionality_error_pct``), and ``warning``: upstream's warning text when
  the error is past 5 % (None otherwise); the CLI prints it on stderr;
  ``fixed``: True when the benchmark prescribes ``batch_iters`` and nothing
  was calibrated (xdp-lb's tcp-v4-lru-warmup, as upstream);
- ``raw`` and ``iqr``: ``TimingStats`` of every batch, and of the batches the
  IQR filter keeps (Q1 - 1.5 IQR .. Q3 + 1.5 IQR, as upstream, from 8
  batches on), side by side: the filtered figures never replace the raw ones.

``summary_line(result)`` is upstream's human line (filtered figures, as it
prints them), ``machine_line(result, scenario)`` its ``RESULT scenario=...``
line.
"""
import math
from dataclasses import asdict, dataclass

from . import _lines as _report

__all__ = ["TimingStats", "SERIES_NS", "SERIES_CPU", "SERIES_CALIBRATION",
           "PROPORTIONALITY_TOL_PCT", "TARGET_SAMPLES", "ns_per_op", "iqr_filter",
           "timing_stats", "stats", "calibration", "shape", "summary_line", "machine_line",
           "warning"]

#: Series the C core (csrc/bpf_timing_user.c) hands over: each batch's
#: BPF-timed length, ns.
SERIES_NS = "bpf_timing.batch_ns"
#: The CPU each batch ran on.
SERIES_CPU = "bpf_timing.batch_cpu"
#: The calibration: seed iterations and ns, batch_iters, the N and 2N
#: batches' ns, whether defaulted, the target samples, whether fixed.
SERIES_CALIBRATION = "bpf_timing.calibration"
#: A 2N/N ratio further than this from 2 is warned about (upstream's 5 %).
PROPORTIONALITY_TOL_PCT = 5.0
#: Batches per producer after which a run ends (upstream's 200).
TARGET_SAMPLES = 200


@dataclass(frozen=True)
class TimingStats:
    """Statistics of batches in ns/op, computed as upstream's compute_stats():
    median = sorted[n // 2], p99 = sorted[int(n * 0.99)], stdev with n - 1,
    cv = stdev / mean in %."""
    samples: int
    median_ns: float
    p99_ns: float
    mean_ns: float
    stdev_ns: float
    cv_pct: float
    min_ns: float
    max_ns: float
    removed: int = 0        # batches the filter left out (iqr only)

    def as_dict(self):
        """The fields as a plain dict (for JSON)."""
        return asdict(self)


def iqr_filter(values):
    """The values (sorted) the kernel bench's IQR filter keeps: all of them
    under 8, else those within Q1 - 1.5 IQR .. Q3 + 1.5 IQR, with Q1 =
    sorted[n // 4] and Q3 = sorted[3n // 4]."""
    xs = sorted(values)
    n = len(xs)
    if n < 8:
        return xs
    q1, q3 = xs[n // 4], xs[3 * n // 4]
    lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    return [x for x in xs if lo <= x <= hi]


def timing_stats(values, removed=0):
    """TimingStats of ns/op `values` (None for none); `removed`: how many
    batches a filter left out, recorded as is."""
    xs = sorted(values)
    n = len(xs)
    if not n:
        return None
    mean = math.fsum(xs) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    p99 = xs[min(int(n * 99 / 100.0), n - 1)]
    return TimingStats(samples=n, median_ns=xs[n // 2], p99_ns=p99, mean_ns=mean,
                       stdev_ns=sd, cv_pct=sd / mean * 100 if mean > 0 else 0.0,
                       min_ns=xs[0], max_ns=xs[-1], removed=removed)


def ns_per_op(result):
    """Each batch's ns/op in a BPF-timed `result`, in the order the batches
    were read (batches without operations left out), a tuple."""
    return tuple(s.interval_ns / s.hits for s in result.samples if s.hits)


def stats(result, filtered=True):
    """TimingStats of a BPF-timed result: IQR-filtered (upstream's printed
    figures) or, filtered=False, of every batch."""
    values = ns_per_op(result)
    if not filtered:
        return timing_stats(values)
    kept = iqr_filter(values)
    return timing_stats(kept, removed=len(values) - len(kept))


def calibration(result):
    """The calibration dict of a BPF-timed `result`'s
    metadata["bpf_timing"] (KeyError for a result that is not BPF-timed)."""
    return result.metadata["bpf_timing"]["calibration"]


def warning(ratio):
    """Upstream's proportionality warning for a 2N/N `ratio` (the N and 2N
    batches' times): a str when the ratio is further from 2 than
    PROPORTIONALITY_TOL_PCT percent of 2, else None (None for no ratio)."""
    if ratio is None:
        return None
    err = abs(ratio - 2.0) / 2.0 * 100.0
    if err <= PROPORTIONALITY_TOL_PCT:
        return None
    return (f"WARNING: proportionality check failed (2N/N ratio={ratio:.3f}, "
            f"expected=2.000, error={err:.1f}%)\n  System noise may be affecting results.")


def shape(series, notes, producers):
    """(batches, metadata) of a BPF-timed run from what the core handed
    over, its `series` and `notes`: the batches as (interval_ns, hits, cpu)
    and metadata["bpf_timing"]; None when the run is not BPF-timed (no
    SERIES_NS).  `producers` is not used."""
    if SERIES_NS not in series:
        return None
    seed_iters, seed_ns, iters, n_ns, n2_ns, defaulted, target, fixed = \
        series[SERIES_CALIBRATION]
    iters = int(iters)
    ratio = n2_ns / n_ns if n_ns and n2_ns else None
    batches = tuple((int(ns), iters, int(cpu))
                    for ns, cpu in zip(series[SERIES_NS], series[SERIES_CPU]))
    values = [ns / iters for ns, _, _ in batches]
    kept = iqr_filter(values)
    raw, iqr = timing_stats(values), timing_stats(kept, removed=len(values) - len(kept))
    meta = {
        "batch_iters": iters,
        "target_samples": int(target),
        "stopped_by": notes.get("bpf_timing_stopped_by"),
        "calibration": {
            "seed_iters": int(seed_iters), "seed_ns": int(seed_ns),
            "seed_ns_per_op": seed_ns / seed_iters if seed_ns else None,
            "defaulted": bool(defaulted),
            # batch_iters prescribed by the benchmark: no calibration ran
            "fixed": bool(fixed),
            "n_iters": iters, "n_ns": int(n_ns), "2n_ns": int(n2_ns),
            "ratio_2n_n": ratio,
            "proportionality_error_pct": abs(ratio - 2.0) / 2.0 * 100.0 if ratio else None,
            "warning": warning(ratio),
        },
        "raw": raw.as_dict() if raw else None,
        "iqr": iqr.as_dict() if iqr else None,
    }
    return batches, meta


def _name(result, name):
    """What upstream's lines name: the scenario of a benchmark that has
    scenarios (xdp-lb), else the benchmark."""
    return name or result.params.get("scenario") or result.name


def summary_line(result, name=None):
    """Upstream's human line for a BPF-timed `result`: 'NAME: median X
    ns/op, stddev Y, p99 Z (N samples)' of the IQR-filtered batches; NAME
    is `name`, else the scenario or the benchmark.  "No timing samples
    collected." without batches."""
    name = _name(result, name)
    s = stats(result)
    if s is None:
        return "No timing samples collected."
    return (f"{name}: median {s.median_ns:.2f} ns/op, stddev {s.stdev_ns:.2f}, "
            f"p99 {s.p99_ns:.2f} ({s.samples} samples)")


def machine_line(result, scenario=None):
    """Upstream's machine-readable line for a BPF-timed `result`: 'RESULT
    scenario=... samples=... median=...' of the IQR-filtered batches in
    ns/op; the scenario named is `scenario`, else the result's scenario or
    benchmark.  "No timing samples collected." without batches."""
    s = stats(result)
    if s is None:
        return "No timing samples collected."
    return (f"RESULT scenario={_name(result, scenario)} samples={s.samples} "
            f"median={s.median_ns:.2f} stddev={s.stdev_ns:.2f} cv={s.cv_pct:.2f} "
            f"min={s.min_ns:.2f} p99={s.p99_ns:.2f} max={s.max_ns:.2f}")


_report.register("bpf_timing", summary=summary_line,
                 progress=lambda index, sample, producers, interval_ns: None)
