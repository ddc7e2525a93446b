"""Immutable results: raw per-interval samples plus the statistics derived from them."""
import html
import json
import math
import statistics
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["Sample", "Result", "FORMAT_VERSION"]

#: Version of the JSON layout written by Result.to_json().
FORMAT_VERSION = 1

_COUNTERS = ("hits", "drops", "false_hits", "important_hits")


def _frozen(mapping):
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Sample:
    """What one sampling interval measured: raw counts and the real interval length."""
    interval_ns: int
    hits: int = 0
    drops: int = 0
    false_hits: int = 0
    important_hits: int = 0
    extra: "MappingProxyType[str, int]" = field(default_factory=lambda: _frozen({}))

    def __post_init__(self):
        if not isinstance(self.extra, MappingProxyType):
            object.__setattr__(self, "extra", _frozen(self.extra))

    @classmethod
    def from_raw(cls, raw, extra_names=()):
        interval_ns, hits, drops, false_hits, important_hits, extra = raw
        return cls(interval_ns, hits, drops, false_hits, important_hits,
                   {n: extra[i] for i, n in enumerate(extra_names)})

    @property
    def interval_s(self):
        return self.interval_ns / 1e9

    def count(self, counter):
        """A raw counter by name: hits, drops, false_hits, important_hits or an extra one."""
        if counter in _COUNTERS:
            return getattr(self, counter)
        if counter == "total_ops":
            return self.hits + self.drops
        try:
            return self.extra[counter]
        except KeyError:
            raise KeyError(f"no counter {counter!r}; have "
                           f"{', '.join(_COUNTERS + ('total_ops',) + tuple(self.extra))}") from None

    def rate_mps(self, counter="hits"):
        """The counter in millions per second of this interval's real length."""
        return self.count(counter) * 1e3 / self.interval_ns if self.interval_ns else 0.0

    @property
    def hits_mps(self):
        return self.rate_mps("hits")

    @property
    def drops_mps(self):
        return self.rate_mps("drops")

    def as_dict(self):
        return {"interval_ns": self.interval_ns, "hits": self.hits, "drops": self.drops,
                "false_hits": self.false_hits, "important_hits": self.important_hits,
                "extra": dict(self.extra)}


def _percentile(values, p):
    """Linear interpolation between closest ranks (numpy's default)."""
    if not 0 <= p <= 100:
        raise ValueError(f"p={p!r} out of range: a percentile in 0..100")
    if not values:
        raise statistics.StatisticsError("percentile of no samples")
    xs = sorted(values)
    pos = (len(xs) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass(frozen=True)
class Result:
    """One benchmark run.

    Statistics (`mean`, `stdev`, `median`, `percentile(p)`) are over the kept
    samples' hit rates in M/s, each normalised by its real interval length;
    `stat(counter)` gives the same for any other counter.
    """
    name: str
    params: "MappingProxyType"
    samples: tuple
    warmup_samples: tuple = ()
    metadata: "MappingProxyType" = field(default_factory=lambda: _frozen({}))
    #: What a benchmark measured beside the per-interval samples, by name:
    #: tuples of numbers (e.g. "cpu01.time_ns", its BPF-timed runs on CPU 1).
    series: "MappingProxyType" = field(default_factory=lambda: _frozen({}))

    def __post_init__(self):
        object.__setattr__(self, "series", _frozen(
            {k: tuple(v) for k, v in dict(self.series).items()}))
        object.__setattr__(self, "params", _frozen(self.params))
        object.__setattr__(self, "metadata", _frozen(self.metadata))
        object.__setattr__(self, "samples", tuple(self.samples))
        object.__setattr__(self, "warmup_samples", tuple(self.warmup_samples))

    # ---- statistics ----
    def rates_mps(self, counter="hits"):
        """Per-sample rates of a counter, M/s."""
        return tuple(s.rate_mps(counter) for s in self.samples)

    def stat(self, counter="hits"):
        """(mean, stdev) of a counter's per-sample rate, M/s; stdev is the sample stdev."""
        xs = self.rates_mps(counter)
        if not xs:
            return (math.nan, math.nan)
        return (statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0)

    @property
    def mean(self):
        return self.stat("hits")[0]

    @property
    def stdev(self):
        return self.stat("hits")[1]

    @property
    def median(self):
        xs = self.rates_mps("hits")
        return statistics.median(xs) if xs else math.nan

    def percentile(self, p, counter="hits"):
        return _percentile(self.rates_mps(counter), p)

    @property
    def throughput_mps(self):
        """Mean hits, millions per second."""
        return self.mean

    @property
    def throughput_mbps(self):
        """Payload moved per second, MB/s (10**6 bytes): mean hits * params['record_size'].

        Only for benchmarks that move records (ring and perf buffers)."""
        size = self.params.get("record_size")
        if size is None:
            raise ValueError(f"{self.name} moves no records: throughput_mbps needs "
                             "a record_size parameter")
        return self.mean * size

    @property
    def producers(self):
        return self.params.get("producers", 1)

    @property
    def per_producer_mps(self):
        return self.mean / self.producers

    @property
    def drops_mps(self):
        return self.stat("drops")[0]

    @property
    def total_ops_mps(self):
        return self.stat("total_ops")[0]

    @property
    def latency_ns(self):
        """Mean time per hit, ns (1000 / M hits per second)."""
        m = self.mean
        return 1e3 / m if m > 0 else math.inf

    @property
    def total_hits(self):
        return sum(s.hits for s in self.samples)

    @property
    def total_drops(self):
        return sum(s.drops for s in self.samples)

    @property
    def false_positive_pct(self):
        """False hits as a percentage of all operations, over every kept
        sample: the kernel bench's bloom-false-positive figure.

        Computed as the kernel bench does, 100 * false_hits / (hits +
        false_hits + drops); there each false hit is also a drop, so this is
        false positives / (lookups + false positives).  NaN when nothing was
        counted.  Only for benchmarks that count false hits (report kind
        "false_hits")."""
        if self.report != "false_hits":
            raise ValueError(f"{self.name} counts no false hits: false_positive_pct is "
                             "for benchmarks whose report is 'false_hits' "
                             "(bloom-false-positive)")
        from ._report import false_hits_totals
        false_hits, total = false_hits_totals(self.samples)
        return false_hits / total * 100 if total else math.nan

    @property
    def duration_s(self):
        return sum(s.interval_ns for s in self.samples) / 1e9

    # ---- presentation ----
    @property
    def report(self):
        return self.metadata.get("report", "hits_drops")

    def summary(self):
        """The kernel bench's final summary line for this benchmark's report kind."""
        from ._report import summary_line
        return summary_line(self)

    def __str__(self):
        return self.summary()

    def plot(self, ax=None, counter="hits"):
        """Per-sample rate over time (needs matplotlib)."""
        from .analysis import plot
        return plot(self, ax=ax, counter=counter)

    def _repr_html_(self):
        rows = "".join(
            f"<tr><td>{i}</td><td>{s.interval_ns / 1e6:.1f}</td>"
            f"<td>{s.hits_mps:.3f}</td><td>{s.drops_mps:.3f}</td></tr>"
            for i, s in enumerate(self.samples))
        params = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return (f"<div><b>{html.escape(self.name)}</b> "
                f"<code>{html.escape(params)}</code><br>"
                f"<pre>{html.escape(self.summary())}</pre>"
                f"<details><summary>{len(self.samples)} samples "
                f"({self.metadata.get('kernel', '?')}, {self.metadata.get('cpu_model', '?')})"
                f"</summary><table><tr><th>#</th><th>interval ms</th><th>hits M/s</th>"
                f"<th>drops M/s</th></tr>{rows}</table></details></div>")

    def __repr__(self):
        return (f"<Result {self.name}: {self.mean:.3f} \u00b1 {self.stdev:.3f} M/s "
                f"over {len(self.samples)} samples>")

    # ---- serialisation ----
    def as_dict(self):
        return {
            "format": "benchbpf-result",
            "version": FORMAT_VERSION,
            "name": self.name,
            "params": {k: list(v) if isinstance(v, tuple) else v
                       for k, v in self.params.items()},
            "samples": [s.as_dict() for s in self.samples],
            "warmup_samples": [s.as_dict() for s in self.warmup_samples],
            "metadata": dict(self.metadata),
            "series": {k: list(v) for k, v in self.series.items()},
        }

    def to_json(self, path=None, **kw):
        """JSON text; also written to `path` if given."""
        text = json.dumps(self.as_dict(), indent=kw.pop("indent", 2), **kw)
        if path is not None:
            with open(path, "w") as f:
                f.write(text + "\n")
        return text

    @classmethod
    def from_dict(cls, d):
        if d.get("format") != "benchbpf-result":
            raise ValueError("not a benchbpf result")
        if d.get("version") != FORMAT_VERSION:
            raise ValueError(f"result format version {d.get('version')!r} not supported "
                             f"(this benchbpf reads version {FORMAT_VERSION})")
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in d["params"].items()}
        return cls(name=d["name"], params=params,
                   samples=tuple(Sample(**s) for s in d["samples"]),
                   warmup_samples=tuple(Sample(**s) for s in d.get("warmup_samples", ())),
                   metadata=d.get("metadata", {}),
                   series=d.get("series", {}))

    @classmethod
    def from_json(cls, text_or_path):
        """Load from JSON text or a file path."""
        text = text_or_path
        if not text.lstrip().startswith("{"):
            with open(text_or_path) as f:
                text = f.read()
        return cls.from_dict(json.loads(text))
