"""Immutable results: raw per-interval samples plus the statistics derived from them."""
import dataclasses
import functools
import json
import math
import os
import statistics
from dataclasses import dataclass, field
from types import MappingProxyType

from . import _drift as _host_drift, _format, _plot, _lines as _report, stats
# Kept importable from here: the report and compare read them as result's.
from ._format import emulation, emulation_note

__all__ = ["Sample", "Result", "ProgStats", "FORMAT_VERSION"]

#: Version of the JSON layout written by Result.to_json().
FORMAT_VERSION = 1

_COUNTERS = ("hits", "drops", "false_hits", "important_hits")

#: The extra counter the harness adds to every sample: CPU time of the
#: producer threads over the interval, ns.
PRODUCER_CPU = "producer_cpu_ns"


#: What the sampler reads of the host per sample (Sample's fields of these names).
HOST_FIELDS = ("late_ns", "steal_ns", "involuntary", "migrations")


def _frozen(mapping):
    return MappingProxyType({k: _frozen_value(v) for k, v in dict(mapping).items()})


def _frozen_value(value):
    """Nested dicts and lists made read-only too (a run's fingerprint has both)."""
    if isinstance(value, (dict, MappingProxyType)):
        return _frozen(value)
    if isinstance(value, list):
        return tuple(_frozen_value(v) for v in value)
    return value


def _thawed(value):
    """The plain dicts and lists a frozen value was made from (for JSON and pickle)."""
    if isinstance(value, (dict, MappingProxyType)):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    return value


def _rebuild(cls, state):
    return cls(**state)



def is_bool(value):
    """True or False, numpy's booleans included (np.False_, as df.col.unique() gives:
    numpy scalars are accepted wherever a plain value is)."""
    t = type(value)
    return isinstance(value, bool) or (t.__module__ == "numpy" and
                                       t.__name__ in ("bool_", "bool"))

class JsonFile:
    """to_json()/from_json() for classes with as_dict()/from_dict()."""

    def to_json(self, path=None, **kw):
        """JSON text; also written to `path` if given."""
        text = json.dumps(self.as_dict(), indent=kw.pop("indent", 2), **kw)
        if path is not None:
            with open(path, "w") as f:
                f.write(text + "\n")
        return text

    @classmethod
    def from_json(cls, text_or_path):
        """Load from `text_or_path`: JSON text (starting with "{") or a file
        path (str or path-like).  Raises ValueError naming the file when it
        is not JSON or not a file of this class, OSError when it cannot be
        read."""
        if isinstance(text_or_path, str) and text_or_path.lstrip().startswith("{"):
            return cls.from_dict(json.loads(text_or_path))
        path = os.fspath(text_or_path)
        with open(path) as f:
            text = f.read()
        # Errors name the file: a message about line 3 of an unnamed text helps nobody.
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON ({e})") from None
        try:
            return cls.from_dict(d)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            detail = f"missing {e}" if isinstance(e, KeyError) else str(e)
            raise ValueError(f"{path}: not a valid {cls.__name__} file: {detail}") from e


class _Picklable:
    """Pickle, deepcopy and multiprocessing support: read-only mappings do not
    pickle, so a dataclass travels as its fields, thawed, and is rebuilt
    (and frozen again) by its constructor."""

    def __reduce__(self):
        state = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            state[f.name] = dict(_thawed(value)) if isinstance(value, MappingProxyType) \
                else value
        return (_rebuild, (type(self), state))


@dataclass(frozen=True)
class Sample(_Picklable):
    """What one sampling interval measured: raw counts and the real interval length."""
    interval_ns: int
    hits: int = 0
    drops: int = 0
    false_hits: int = 0
    important_hits: int = 0
    extra: "MappingProxyType[str, int]" = field(default_factory=lambda: _frozen({}))
    #: The sampler woke half an interval or more after this sample's deadline:
    #: the sample covers that longer time (its rates are still per second of it).
    late: bool = False
    #: What the host did in this interval, as the sampler read it right after
    #: the counters (0 in files recorded before it was read): how late the
    #: sampler woke after its deadline, ns; CPU time the hypervisor stole
    #: from the run's CPUs (every CPU where its threads are not pinned), ns
    #: summed over them; involuntary context switches and migrations of the
    #: run's worker threads, summed (Result.disturbances says whether this
    #: kernel exposes migrations).
    late_ns: int = 0
    steal_ns: int = 0
    involuntary: int = 0
    migrations: int = 0

    def __post_init__(self):
        if not isinstance(self.extra, MappingProxyType):
            object.__setattr__(self, "extra", _frozen(self.extra))

    @classmethod
    def from_raw(cls, raw, extra_names=()):
        """A Sample from the C core's tuple `raw` (interval_ns, hits, drops,
        false_hits, important_hits, extra counters, late[, producer CPU ns[,
        (late_ns, steal_ns, involuntary, migrations)]]); `extra_names` names
        the extra counters in order (BenchmarkInfo.extra)."""
        interval_ns, hits, drops, false_hits, important_hits, extra, late = raw[:7]
        named = {n: extra[i] for i, n in enumerate(extra_names)}
        if len(raw) > 7:
            named[PRODUCER_CPU] = raw[7]
        host = dict(zip(HOST_FIELDS, raw[8])) if len(raw) > 8 else {}
        return cls(interval_ns, hits, drops, false_hits, important_hits, named, bool(late),
                   **host)

    @property
    def interval_s(self):
        """The interval's real length, s."""
        return self.interval_ns / 1e9

    def count(self, counter):
        """A raw count by `counter` name: hits, drops, false_hits,
        important_hits, total_ops (hits + drops) or an extra one.  KeyError
        listing the names there are for any other."""
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
        """The `counter` (as count() names it) in millions per second of this
        interval's real length, M/s (0.0 for an interval of 0 ns)."""
        return self.count(counter) * 1e3 / self.interval_ns if self.interval_ns else 0.0

    @property
    def producer_cpu_ns(self):
        """CPU time the producer threads ran in this interval, summed, ns
        (None in samples recorded without it)."""
        return self.extra.get(PRODUCER_CPU)

    def rate_per_cpu_mps(self, counter="hits"):
        """The `counter` in millions per CPU-second of the producer threads:
        unlike rate_mps, the same whether or not other threads shared their
        CPUs.  None without producer CPU time or when the producers did not
        run at all."""
        cpu = self.producer_cpu_ns
        return self.count(counter) * 1e3 / cpu if cpu else None

    @property
    def hits_mps(self):
        """Hits in this interval, M/s."""
        return self.rate_mps("hits")

    @property
    def drops_mps(self):
        """Drops in this interval, M/s."""
        return self.rate_mps("drops")

    def as_dict(self):
        """The sample as a plain dict of its fields (for JSON); "late" only
        when true."""
        d = {"interval_ns": self.interval_ns, "hits": self.hits, "drops": self.drops,
             "false_hits": self.false_hits, "important_hits": self.important_hits,
             "extra": dict(self.extra)}
        if self.late:   # only then: files without late samples stay as they were
            d["late"] = True
        # Likewise the host's fields: only those that are not 0.
        d.update({k: getattr(self, k) for k in HOST_FIELDS if getattr(self, k)})
        return d


@dataclass(frozen=True)
class ProgStats:
    """The kernel's own accounting of one BPF program a run loaded (prog_stats=True).

    run_cnt and run_time_ns cover the measured window: from the end of warm-up
    (from load when there is no warm-up) to the last sample, read right after
    the benchmark's own counters at both ends, so run_cnt compares with hits
    summed over Result.samples.  run_time_ns is what the kernel timed around
    each run (the program body and its entry), not the cost of firing it.
    """
    name: str
    type: str
    run_cnt: int
    run_time_ns: int

    @property
    def ns_per_run(self):
        """Mean time per run, ns (NaN if the program did not run)."""
        return self.run_time_ns / self.run_cnt if self.run_cnt else math.nan

    def as_dict(self):
        """The fields as a plain dict (for JSON)."""
        return {"name": self.name, "type": self.type, "run_cnt": self.run_cnt,
                "run_time_ns": self.run_time_ns}

    def __str__(self):
        return (f"prog {self.name} ({self.type}): run_cnt {self.run_cnt}, "
                f"run_time_ns {self.run_time_ns}, {self.ns_per_run:.3f} ns/run")


def _host_watch(note):
    """The sampler's note on what it read of the host ("steal_cpus=2
    migrations=se.nr_migrations cost_ns_per_sample=9000") as a dict, or None."""
    if not note:
        return None
    fields = dict(word.split("=", 1) for word in str(note).split() if "=" in word)
    return {"steal_cpus": max(1, int(fields.get("steal_cpus", 1))),
            "migrations": fields.get("migrations") not in (None, "unavailable"),
            "cost_ns_per_sample": int(fields.get("cost_ns_per_sample", 0))}


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


def check_emulation(base, new, allow_emulated=False):
    """Refuse (ValueError) to compare a figure from an emulated guest with
    one from real CPUs, unless allow_emulated: the emulator's speed, not the
    kernel's, would make the difference."""
    a, b = emulation(base), emulation(new)
    if a == b or allow_emulated:
        return
    where = {None: "on real CPUs"}
    raise ValueError(
        f"base ran {where.get(a, f'in a {a}-emulated guest')} and new "
        f"{where.get(b, f'in a {b}-emulated guest')}: emulated timings are not "
        "performance figures; pass allow_emulated=True (benchbpf compare "
        "--allow-emulated) to compare them anyway")


#: Within-run blocks last at least this long, s: the standard error of a
#: run's mean is taken over block means (Result.mean_se), since
#: neighbouring samples share the host's phase and their own spread
#: understates the mean's.
BLOCK_S = 1.0


def hit_step_mps(runs):
    """The step of one of these runs' mean hit rate, M/s (stats.count_step_mps)."""
    return stats.count_step_mps(([s.hits for s in r.samples], r.duration_s) for r in runs)


@dataclass(frozen=True)
class Result(JsonFile, _Picklable):
    """One benchmark run.

    Statistics (`mean`, `stdev`, `median`, `percentile(p)`) are over the kept
    samples' hit rates in M/s, each normalised by its real interval length;
    `stat(counter)` gives the same for any other counter.

    `control`, when set, is the Result of a matching run without the measured
    operation (the benchmark's own overhead, e.g. local storage runs with
    ``adjust_overhead=True``): `control_latency_ns` is its time per hit and
    `adjusted_latency_ns` this run's minus it.
    """
    name: str
    params: "MappingProxyType"
    samples: tuple
    warmup_samples: tuple = ()
    metadata: "MappingProxyType" = field(default_factory=lambda: _frozen({}))
    #: ProgStats of each program the run loaded, in load order; () unless
    #: the run was asked for prog_stats.
    prog_stats: tuple = ()
    #: The matching control run (adjust_overhead=True), or None.
    control: "Result | None" = None
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
        if self.control is not None and not isinstance(self.control, Result):
            raise TypeError(f"control={self.control!r}: must be a Result or None")
        object.__setattr__(self, "prog_stats", tuple(
            p if isinstance(p, ProgStats) else ProgStats(**p) for p in self.prog_stats))

    def program(self, name):
        """The ProgStats of the program called `name`; KeyError listing the
        programs there are if none is."""
        for p in self.prog_stats:
            if p.name == name:
                return p
        have = ", ".join(p.name for p in self.prog_stats) or \
            "none: run with prog_stats=True"
        raise KeyError(f"no program {name!r} in {self.name}'s prog_stats; have {have}")

    # ---- statistics ----
    def rates_mps(self, counter="hits"):
        """Per-sample rates of a `counter` (as Sample.count names it) over the
        kept samples, M/s, a tuple."""
        return tuple(s.rate_mps(counter) for s in self.samples)

    def count_step(self, counter="hits"):
        """The step in which the `counter` moved: the greatest common divisor of its
        counts over the kept samples (0 without counts).  Benchmarks that count
        a whole batch per event move in big steps: local storage gets 10000 per
        getpgid(), bpf-hashmap-lookup nr_loops (1000000) per getpgid(), as the
        kernel bench counts them."""
        return functools.reduce(math.gcd, (int(s.count(counter)) for s in self.samples), 0)

    def step_mps(self, counter="hits"):
        """The resolution of the `counter`'s per-sample rates, M/s: count_step()
        per sampling interval (0.0 when it has no step).  A sample can only
        read 0, 1, 2... steps, so medians and percentiles move by this much:
        at a 0.1 s interval, 0.1 M/s for the local storage benchmarks and 10
        M/s for bpf-hashmap-lookup (whose summary line, timed in BPF, is
        finer).  Shown by repr() and the report where it exceeds 1 % of the
        median."""
        step = self.count_step(counter)
        interval_ns = self.metadata.get("interval_ns") or (
            statistics.fmean(s.interval_ns for s in self.samples) if self.samples else 0)
        return step * 1e3 / interval_ns if step and interval_ns else 0.0

    def coarse_step_mps(self, counter="hits"):
        """step_mps(counter) where it is coarse (over 1 % of the median rate),
        M/s, else None."""
        step = self.step_mps(counter)
        xs = self.rates_mps(counter)
        med = statistics.median(xs) if xs else 0.0
        return step if step and (med <= 0 or step > 0.01 * med) else None

    def stat(self, counter="hits"):
        """(mean, stdev) of a `counter`'s per-sample rate, M/s; stdev is the
        sample stdev (0.0 with one sample); (nan, nan) without samples."""
        xs = self.rates_mps(counter)
        if not xs:
            return (math.nan, math.nan)
        return (statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0)

    @property
    def mean(self):
        """Mean hit rate over the kept samples, M/s (NaN without samples)."""
        return self.stat("hits")[0]

    @property
    def stdev(self):
        """Sample standard deviation of the hit rates, M/s."""
        return self.stat("hits")[1]

    @property
    def median(self):
        """Median hit rate over the kept samples, M/s (NaN without samples)."""
        xs = self.rates_mps("hits")
        return statistics.median(xs) if xs else math.nan

    def percentile(self, p, counter="hits"):
        """The `p`-th percentile (0..100) of the `counter`'s per-sample rates,
        M/s, interpolated between closest ranks as numpy's default.
        ValueError for p out of range, statistics.StatisticsError without
        samples."""
        return _percentile(self.rates_mps(counter), p)

    @property
    def throughput_mps(self):
        """Mean hits, millions per second."""
        return self.mean

    @property
    def throughput_mbps(self):
        """Payload moved per second, MB/s (10**6 bytes): mean hits * params['record_size'].

        Only for benchmarks that move records (ring and perf buffers):
        ValueError for a benchmark without a record_size parameter."""
        size = self.params.get("record_size")
        if size is None:
            raise ValueError(f"{self.name} moves no records: throughput_mbps needs "
                             "a record_size parameter")
        return self.mean * size

    @property
    def producers(self):
        """The number of producer threads the run had (1 if not recorded)."""
        return self.params.get("producers", 1)

    @property
    def per_producer_mps(self):
        """Mean hit rate per producer thread, M/s."""
        return self.mean / self.producers

    @property
    def drops_mps(self):
        """Mean drop rate over the kept samples, M/s."""
        return self.stat("drops")[0]

    @property
    def total_ops_mps(self):
        """Mean rate of hits plus drops, M/s."""
        return self.stat("total_ops")[0]

    @property
    def latency_ns(self):
        """Mean time one producer spends per hit, ns: 1000 / (M hits/s per
        producer), the latency of the kernel bench's ops summary line.  With
        one producer it is also 1000 / mean."""
        m = self.per_producer_mps
        return 1e3 / m if m > 0 else math.inf

    @property
    def control_latency_ns(self):
        """Time per hit of the control run (no measured operation), ns; None
        without a control run."""
        return None if self.control is None else self.control.latency_ns

    @property
    def adjusted_latency_ns(self):
        """Time per hit less the control run's: the measured operation's own
        cost, ns; None without a control run."""
        if self.control is None:
            return None
        return self.latency_ns - self.control.latency_ns

    @property
    def total_hits(self):
        """Hits counted over the kept samples."""
        return sum(s.hits for s in self.samples)

    @property
    def total_drops(self):
        """Drops counted over the kept samples."""
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
        false_hits, total = _report.false_hits_totals(self.samples)
        return false_hits / total * 100 if total else math.nan

    @property
    def duration_s(self):
        """Real time the kept samples cover, s."""
        return sum(s.interval_ns for s in self.samples) / 1e9

    @property
    def late_samples(self):
        """How many kept samples the sampler took half an interval or more late.

        Each covers a longer time than the nominal interval
        (metadata["interval_ns"]); its rates are per second of that time, but
        it weighs as one sample in mean, stdev, median and percentiles."""
        return sum(1 for s in self.samples if s.late)

    @property
    def disturbances(self):
        """What the host did to the kept samples, summed, as a read-only dict;
        None for a run recorded before the sampler read it.

        steal_ns: CPU time the hypervisor stole from the run's CPUs, ns;
        steal_pct: that as a share of the time those CPUs had (duration_s
        times the CPUs counted: the pinned ones, else all), %; involuntary:
        involuntary context switches of the worker threads; migrations:
        their migrations between CPUs (None where this kernel does not say);
        cpu_share: the share of the measured time the producer threads ran
        (their CPU time over duration_s times producers; None without it);
        late_samples, max_late_ns: samples the sampler took half an interval
        or more late, and the latest wake-up after a deadline, ns;
        watch_ns_per_sample: the sampler's CPU time for reading all this,
        ns a sample."""
        watch = _host_watch(self.metadata.get("host_watch"))
        if watch is None:
            return None
        steal = sum(s.steal_ns for s in self.samples)
        wall_ns = sum(s.interval_ns for s in self.samples)
        cpu_ns = wall_ns * watch["steal_cpus"]
        ran = [s.producer_cpu_ns for s in self.samples]
        return MappingProxyType({
            "steal_ns": steal, "steal_pct": 100 * steal / cpu_ns if cpu_ns else 0.0,
            "involuntary": sum(s.involuntary for s in self.samples),
            "migrations": sum(s.migrations for s in self.samples)
            if watch["migrations"] else None,
            "cpu_share": sum(ran) / (wall_ns * self.producers)
            if ran and None not in ran and wall_ns else None,
            "late_samples": self.late_samples,
            "max_late_ns": max((s.late_ns for s in self.samples), default=0),
            "watch_ns_per_sample": watch["cost_ns_per_sample"]})

    def without_late_samples(self):
        """This Result without its late samples, to see what they did to the statistics."""
        kept = tuple(s for s in self.samples if not s.late)
        if not kept:
            raise ValueError(f"every one of the {len(self.samples)} samples is late")
        return Result(name=self.name, params=self.params, samples=kept,
                      warmup_samples=self.warmup_samples,
                      metadata={**self.metadata,
                                "late_samples_removed": len(self.samples) - len(kept)})

    # ---- precision ----
    def runs(self):
        """The runs this Result is made of: a precision run's (each loaded
        anew, in order, as Results of their own), else (self,)."""
        counts = self.metadata.get("precision_runs")
        if not counts:
            return (self,)
        warm = self.metadata.get("precision_warmups") or (0,) * len(counts)
        meta = {k: v for k, v in self.metadata.items()
                if k not in ("precision_runs", "precision_warmups", "precision_run_starts_s",
                             "stopped_by")}
        params = {k: v for k, v in self.params.items() if k != "precision"}
        out, at, wat = [], 0, 0
        for n, w in zip(counts, warm):
            out.append(Result(name=self.name, params=params, samples=self.samples[at:at + n],
                              warmup_samples=self.warmup_samples[wat:wat + w],
                              metadata=meta))
            at, wat = at + n, wat + w
        return tuple(out)

    @property
    def mean_ci_mps(self):
        """The 95 % confidence interval of the mean hit rate, M/s, a
        stats.MeanInterval (low, high, effective_n, basis).  A precision
        run's is over its runs, each loaded anew, grouped by 5 s of start
        time (stats.runs_mean_ci, never narrower than a stepped counter's
        rounding): it describes how those runs varied,
        placement included; on a host whose speed moves within a minute it
        understates the uncertainty (results/precision-2cpu.md): host_ci_mps
        adds the machine's measured drift.  Any other
        run's is over its own samples, allowing for their autocorrelation
        (stats.series_mean_ci): how well this run knows its own figure, not
        what another load would measure.  None when too few runs (2 groups)
        or samples (4)."""
        runs = self.runs()
        if len(runs) > 1:
            return stats.runs_mean_ci([r.mean for r in runs],
                                      self.metadata.get("precision_run_starts_s"),
                                      step_mps=hit_step_mps(runs))
        return stats.series_mean_ci(self.rates_mps("hits"))

    @property
    def host_drift(self):
        """The machine's host drift this run was taken with (hostdrift.calibrate()
        on this machine and kernel before it), or None."""
        d = self.metadata.get("host_drift")
        return _host_drift.HostDrift.from_dict(d) if d else None

    @property
    def host_ci_mps(self):
        """mean_ci_mps widened by the machine's host drift over this run's
        span (hostdrift), or by how this benchmark's earlier precision runs
        on the machine differed (host_drift.history), whichever is wider:
        the 95 % interval of the figure this machine gives over hours, not
        only in this run's minute.  None without a calibration, or without
        mean_ci_mps."""
        drift = self.host_drift
        if drift is None:
            return None
        return drift.widen(self.mean_ci_mps, self._span_s())

    @property
    def precision_reached(self):
        """Half the width of mean_ci_mps over its mean (0.01: +-1 %), or None."""
        ci = self.mean_ci_mps
        return ci.relative_half_width if ci is not None else None

    @property
    def stopped_by(self):
        """What ended a precision run: "precision" when its interval got
        within it, "duration" when its time ran out first, "budget" when the
        study or sweep it was part of ran out of time; None for a run of
        fixed duration."""
        return self.metadata.get("stopped_by")

    @property
    def warmup_s(self):
        """How long warm-up lasted, s, over all runs of a precision run."""
        return sum(s.interval_ns for s in self.warmup_samples) / 1e9

    def mean_se(self, counter="hits"):
        """(mean rate of the `counter`, its standard error), M/s, from within this run: the
        standard error over means of consecutive blocks of samples, each
        BLOCK_S (1 s) long, or shorter to make at least three blocks (a quick
        run's nine 0.1 s samples: three blocks of three); NaN error with
        fewer than two samples."""
        xs = self.rates_mps(counter)
        if not xs:
            return math.nan, math.nan
        mean = statistics.fmean(xs)
        interval = float(self.params.get("interval", 0) or 0) or \
            (self.duration_s / len(xs))
        size = max(1, min(math.ceil(BLOCK_S / interval - 1e-9) if interval > 0 else 1,
                          len(xs) // 3))
        blocks = [statistics.fmean(xs[i:i + size])
                  for i in range(0, len(xs) - size + 1, size)]
        if len(blocks) < 2:
            return mean, math.nan
        return mean, statistics.stdev(blocks) / math.sqrt(len(blocks))

    def _span_s(self):
        """Wall time from a precision run's first run (or this run) to the end
        of its last."""
        starts = self.metadata.get("precision_run_starts_s")
        last = self.runs()[-1]
        return (starts[-1] if starts else 0.0) + last.warmup_s + last.duration_s

    # ---- instability ----
    def _stability_series(self):
        """(values, times, figure, unit, step) that warnings are computed on:
        each kept sample's hit rate (M/s) at its end time (s); for a
        false-hits report its false positive percentage; for BPF-timed
        batches their ns/op, the batches the summary's IQR filter keeps.
        BPF-timed batches of several producers are not one time line: no
        drift check."""
        if self.report == "false_hits":
            kept = [(s, _report.false_hits_totals((s,))) for s in self.samples]
            kept = [(s, fh / total * 100) for s, (fh, total) in kept if total]
            values, figure, unit, step = [v for _, v in kept], "false positives", "%", 0.0
            samples = [s for s, _ in kept]
        elif self.report == "bpf_timing":
            # What the summary states: ns/op of the batches upstream's IQR
            # filter keeps, in the order they were read.
            from . import bpf_timing
            per_op = [(s, s.interval_ns / s.hits) for s in self.samples if s.hits]
            fenced = bpf_timing.iqr_filter([v for _, v in per_op])
            kept = [(s, v) for s, v in per_op if fenced and fenced[0] <= v <= fenced[-1]]
            samples, values = [s for s, _ in kept], [v for _, v in kept]
            figure, unit, step = "batch ns/op", "ns/op", 0.0
        else:
            samples, values = self.samples, self.rates_mps("hits")
            figure, unit, step = "hits", "M/s", self.coarse_step_mps() or 0.0
        times, end = [], 0
        for s in samples:
            end += s.interval_ns
            times.append(end / 1e9)
        if self.report == "bpf_timing" and self.producers > 1:
            times = None
        return values, times, figure, unit, step

    @property
    def warnings(self):
        """Instability warnings of this run's figure, computed from its kept
        samples each time (so a saved and reloaded Result gives the same):
        a tuple of short strings naming the figure and the threshold crossed,
        () when none, on the figure _stability_series() gives (hit rates,
        a false-positive percentage or BPF-timed ns/op).  The checks and
        their thresholds are stats.instability's:
        too few samples (< 3), coefficient of variation over 10 %, samples
        far from the median, a drift over the run; and for a precision run,
        no host drift calibration, or a host interval on a young history
        (HostDrift.young_history)."""
        series = self._stability_series()
        found = stats.instability(*series)
        runs = self.runs()
        if len(runs) > 2:
            pairs = [r.mean_se() for r in runs]
            agreement = stats.run_states([m for m, _ in pairs], [e for _, e in pairs])
            if agreement:
                found += (f"{series[2]}: {agreement.text()}",)
        host = _format.host_interval_warning(self)
        if host:
            found += (f"{series[2]}: {host}",)
        return found

    # ---- presentation ----
    @property
    def report(self):
        """The benchmark's report kind, which picks its summary line:
        "hits_drops", "ops", "false_hits", "bpf_timing"... (BenchmarkInfo.report)."""
        return self.metadata.get("report", "hits_drops")

    @property
    def emulated(self):
        """True when measured in an emulated guest (benchbpf.vm under TCG):
        counts are real, rates are not performance figures."""
        return emulation(self) is not None

    def summary(self):
        """The kernel bench's final summary line for this benchmark's report kind."""
        return _format.summary(self)

    def __str__(self):
        """The summary line, then a "WARNING: ..." line per instability warning."""
        return _format.text(self)

    def plot(self, ax=None, counter="hits"):
        """Plot the `counter`'s per-sample rate, M/s, over time, s, on `ax` (a
        matplotlib Axes; a new figure's if None) and return the Axes.  Needs
        matplotlib (ImportError saying so)."""
        return _plot.plot(self, ax=ax, counter=counter)

    def _repr_html_(self):
        return _format.html_table(self)

    def __repr__(self):
        return _format.repr_text(self)

    # ---- serialisation ----
    def as_dict(self):
        """The run as plain dicts and lists, the layout to_json() writes
        ("format": "benchbpf-result", "version": FORMAT_VERSION); with a
        control run, its dict and the derived "overhead" ns/op too."""
        d = {
            "format": "benchbpf-result",
            "version": FORMAT_VERSION,
            "name": self.name,
            "params": {k: list(v) if isinstance(v, tuple) else v
                       for k, v in self.params.items()},
            "samples": [s.as_dict() for s in self.samples],
            "warmup_samples": [s.as_dict() for s in self.warmup_samples],
            "metadata": _thawed(self.metadata),
            "prog_stats": [p.as_dict() for p in self.prog_stats],
            "series": {k: list(v) for k, v in self.series.items()},
        }
        if self.control is not None:
            d["control"] = self.control.as_dict()
            # Derived, for readers of the file; from_dict recomputes them.
            d["overhead"] = {"raw_ns_per_op": self.latency_ns,
                             "control_ns_per_op": self.control_latency_ns,
                             "adjusted_ns_per_op": self.adjusted_latency_ns}
        return d


    @classmethod
    def from_dict(cls, d):
        """The Result that as_dict() gave `d`.  ValueError when d is not a
        benchbpf result or of another format version."""
        if d.get("format") != "benchbpf-result":
            raise ValueError("not a benchbpf result")
        if d.get("version") != FORMAT_VERSION:
            raise ValueError(f"result format version {d.get('version')!r} not supported "
                             f"(this benchbpf reads version {FORMAT_VERSION})")
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in d["params"].items()}
        return cls(name=d["name"], params=params,
                   samples=tuple(Sample(**s) for s in d["samples"]),
                   warmup_samples=tuple(Sample(**s) for s in d.get("warmup_samples", ())),
                   metadata={k: tuple(v) if isinstance(v, list) else v
                             for k, v in d.get("metadata", {}).items()},
                   prog_stats=tuple(ProgStats(**p) for p in d.get("prog_stats", ())),
                   control=cls.from_dict(d["control"]) if d.get("control") else None,
                   series=d.get("series", {}))

