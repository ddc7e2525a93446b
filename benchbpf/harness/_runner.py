"""Validate options, run a benchmark in the C core, wrap what it measured."""
import dataclasses
import datetime
import difflib
import math
import numbers
import os
import contextvars
import platform
import resource
import time
from types import MappingProxyType

from .. import _core
from ..results import _drift as _host_drift, bpf_timing, stats
from . import _precision, _progress
from ._concurrency import RunMarker
from ._cpuset import parse_cpuset, place_threads
from .._version import __version__
from ..results.fingerprint import _cpu_model, fingerprint
from ..results.result import ProgStats, Result, Sample, hit_step_mps, is_bool

__all__ = ["run", "list_benchmarks", "describe", "COMMON_OPTIONS", "would_run"]

#: Options every benchmark takes, with their defaults (the kernel bench's).
COMMON_OPTIONS = MappingProxyType({
    "warmup": 1,
    "duration": 5,
    "interval": 1.0,
    "producers": 1,
    "consumers": None,  # the benchmark's own default
    "affinity": False,
    "prod_affinity": None,
    "cons_affinity": None,
    "verbose": False,
    "prog_stats": False,
    "precision": None,  # a fixed duration; see run()
})

MAX_SECONDS = 24 * 3600


class ParamInfo:
    """One benchmark-specific parameter, as the C table defines it.

    name: the keyword run() takes; cli: the kernel bench's flag ("" if it
    has none); type: "int", "bool", "choice" or "string"; default: the value
    a run takes when not given (None when required); min, max: the allowed
    range of an int, or of a string's length in characters; choices: a
    choice's values (else None); help: one line.
    choice_help: for a choice, a line describing each choice (or None).
    choice_flags: each choice is its own CLI flag (--rx-pass).
    required: an int or choice with no default, which every run must give.
    choice_needs: for a choice whose values need kernel features of their
    own, the feature each needs ("" none), as choices (else None)."""
    __slots__ = ("name", "cli", "type", "default", "min", "max", "choices", "help",
                 "choice_help", "choice_flags", "required", "choice_needs")

    def __init__(self, d):
        for k in self.__slots__:
            setattr(self, k, d[k])
        if self.required:
            self.default = None
        elif self.type == "bool":
            self.default = bool(self.default)
        elif self.type == "choice":
            self.default = self.choices[self.default]

    @property
    def flag(self):
        """The command line's flag: the kernel bench's, else --name with '-'
        for '_'."""
        return self.cli or "--" + self.name.replace("_", "-")

    @property
    def flags(self):
        """Every flag the command line takes for it: one per choice for a
        mode switch (--rx-pass ...), else its one flag."""
        if self.choice_flags:
            return ["--" + c for c in self.choices]
        return [self.flag]

    def allowed(self):
        """What values are allowed, as errors and ``--help`` state it: "an int
        in lo..hi", "one of 'a', 'b'", "True or False" or "a str of lo..hi
        characters"."""
        if self.type == "bool":
            return "True or False"
        if self.type == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.type == "string":
            return f"a str of {self.min}..{self.max} characters"
        return f"an int in {self.min}..{self.max}"

    def to_core(self, value):
        """Check one value and convert it to the int the C core takes."""
        if self.type == "bool":
            if is_bool(value) or (isinstance(value, int) and value in (0, 1)):
                return int(value)
            raise TypeError(f"{self.name}={value!r}: must be {self.allowed()}")
        if self.type == "choice":
            if not isinstance(value, str):
                raise TypeError(f"{self.name}={value!r}: must be {self.allowed()}")
            if value not in self.choices:
                raise ValueError(f"{self.name}={value!r}: must be {self.allowed()}")
            return self.choices.index(value)
        if self.type == "string":
            if not isinstance(value, str):
                raise TypeError(f"{self.name}={value!r}: must be {self.allowed()}")
            if not self.min <= len(value) <= self.max or "\0" in value:
                raise ValueError(f"{self.name}={value!r}: must be {self.allowed()}"
                                 + (", without NUL" if "\0" in value else ""))
            return value
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{self.name}={value!r}: must be {self.allowed()}, "
                            f"not {type(value).__name__}")
        if not self.min <= value <= self.max:
            raise ValueError(f"{self.name}={value!r} out of range: must be {self.allowed()}")
        return int(value)

    def __repr__(self):
        return f"ParamInfo({self.name!r}, default={self.default!r}, {self.allowed()})"


class BenchmarkInfo:
    """What a benchmark is and which parameters it takes.

    name, family ("ringbuf", "trigger"...), report (the kind of its
    summary line: "hits_drops", "ops", "bpf_timing"...), help (one line),
    extra (the names of its Sample.extra counters), default_consumers,
    max_consumers (0: takes none), max_producers, needs_bpf (loads BPF
    programs: needs privileges), always_pinned (threads pinned whatever
    `affinity` says), needs (the kernel features it cannot run without,
    names of features(); a choice parameter may add one, its
    choice_needs), params (ParamInfo by name, read-only)."""

    def __init__(self, d):
        self.name = d["name"]
        self.family = d["family"]
        self.report = d["report"]
        self.help = d["help"]
        self.extra = tuple(d["extra"])
        self.default_consumers = d["default_consumers"]
        self.max_consumers = d["max_consumers"]
        self.max_producers = d["max_producers"]
        self.needs_bpf = d["needs_bpf"]
        self.needs = tuple(d["needs"])
        # The kernel bench requires -a: threads are pinned whatever `affinity` says.
        self.always_pinned = d["always_pinned"]
        # Its programs count every process's events: a duet refuses it.
        self.sees_other_processes = d["sees_other_processes"]
        self.params = MappingProxyType({p["name"]: ParamInfo(p) for p in d["params"]})

    def __repr__(self):
        return f"<BenchmarkInfo {self.name} ({self.family}): {self.help}>"


_CATALOG = None


def _catalog():
    global _CATALOG
    if _CATALOG is None:
        _CATALOG = MappingProxyType(
            {d["name"]: BenchmarkInfo(d) for d in _core.benchmarks()})
    return _CATALOG


def list_benchmarks(family=None):
    """Names of all benchmarks, in registry order, a list; with `family`
    (e.g. "ringbuf", BenchmarkInfo.family) only that family's (none for an
    unknown family)."""
    return [n for n, b in _catalog().items() if family is None or b.family == family]


def describe(name):
    """The BenchmarkInfo of benchmark `name`: its family, report kind,
    parameters (ParamInfo by name) and thread limits.  ValueError for an
    unknown name (suggesting close ones), TypeError for a name that is not
    a str."""
    return _lookup(name)


def _lookup(name):
    if not isinstance(name, str):
        raise TypeError(f"benchmark name must be a str, not {type(name).__name__}")
    try:
        return _catalog()[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_catalog()), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else \
            "; benchbpf.list_benchmarks() lists them"
        raise ValueError(f"unknown benchmark {name!r}{hint}") from None


def _seconds(name, value, minimum, allow_zero):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}={value!r}: must be a number of seconds")
    given = value
    try:
        value = float(value)
    except OverflowError:   # an int too big for a float
        value = math.inf
    low_ok = value >= 0 if allow_zero else value > 0
    if not math.isfinite(value) or not low_ok or value > MAX_SECONDS or \
            (value and value < minimum):
        # Between 0 and one interval is not allowed either: say so.
        lo = f"0 or {minimum:g}" if allow_zero and minimum else f"{minimum:g}"
        raise ValueError(f"{name}={given!r} out of range: seconds in {lo}..{MAX_SECONDS}")
    return value


def _warmup_seconds(value):
    """warmup= as float seconds: any length from 0 (_warmup_shape fits it to
    the sampling interval)."""
    return _seconds("warmup", value, 0, allow_zero=True)


def _duration_seconds(value, interval):
    """duration= as float seconds: a whole number of sampling intervals of
    `interval` s, at least one, as the kernel bench counts its samples."""
    rule = (f"(interval={interval:g}): duration must be a whole number of sampling "
            f"intervals, at least one: seconds in {interval:g}..{MAX_SECONDS}")
    try:
        seconds = _seconds("duration", value, interval, allow_zero=False)
    except ValueError:
        if isinstance(value, numbers.Real) and 0 <= value < interval:
            raise ValueError(f"duration={value!r} is shorter than one sampling interval "
                             f"{rule}") from None
        raise
    n = seconds / interval
    if abs(n - round(n)) > 1e-6 * max(1.0, n):
        raise ValueError(f"duration={value!r} is not a whole number of intervals {rule}")
    return seconds


def _warmup_shape(warmup, interval_ns):
    """(warm-up samples, the first one's length in ns or 0 for a whole
    interval) of a warm-up of `warmup` s: whole intervals, the first
    shortened by what is left over, so that measuring starts `warmup` s
    after sampling does, and the measured samples are whole intervals."""
    warmup_ns = round(warmup * 1e9)
    samples = -(-warmup_ns // interval_ns)
    first_ns = warmup_ns - (samples - 1) * interval_ns if samples else 0
    return samples, 0 if first_ns == interval_ns else first_ns


def _count(name, value, lo, hi, why=""):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}={value!r}: must be an int, not {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{name}={value!r} out of range: allowed {lo}..{hi}{why}")
    return int(value)


def _online_cpus():
    return os.cpu_count() or 1


def _has_bpf_privilege():
    # Effective capabilities, not the uid: root in a container with its
    # capabilities dropped cannot load programs either.
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    caps = int(line.split()[1], 16)
                    sys_admin, perfmon, bpf = 1 << 21, 1 << 38, 1 << 39
                    return bool(caps & sys_admin) or bool(caps & bpf and caps & perfmon)
    except OSError:
        pass
    return os.geteuid() == 0


def _check_precision_options(info, opts):
    """precision= and warmup="auto": their values, and the benchmarks whose
    figure they cannot follow sample by sample.  Fills in the warm-up's
    default: 1 s, "auto" with precision."""
    precision = _precision.check_precision(opts.get("precision"))
    if opts["warmup"] is None:
        opts["warmup"] = _precision.AUTO if precision is not None else 1
    _precision.check_warmup_text(opts["warmup"])
    auto = _precision.is_auto(opts["warmup"])
    if (precision is not None or auto) and info.report in ("bpf_timing", "false_hits"):
        what = "precision" if precision is not None else "warmup"
        value = opts.get("precision") if precision is not None else opts["warmup"]
        why = ("its figure comes from BPF-timed batches, which end the run when "
               "there are enough of them" if info.report == "bpf_timing" else
               "its figure is a false-positive percentage, not a rate per interval")
        raise ValueError(f"{what}={value!r}: not for {info.name}: {why}")
    return precision, auto


def _check_precision_duration(opts, interval, duration):
    if opts["prog_stats"]:
        raise ValueError(f"prog_stats=True: not with precision={opts['precision']!r} "
                         "(a precision run loads its programs anew for each of its runs)")
    least = _precision.MIN_RUNS * _precision.run_samples(interval) * interval
    if duration < least - 1e-9:
        raise ValueError(f"duration={opts['duration']!r} out of range with "
                         f"precision={opts['precision']!r}: at least {least:g} s "
                         f"({_precision.MIN_RUNS} runs of "
                         f"{_precision.run_samples(interval)} samples of {interval:g} s)")


def _build_env(info, opts):
    precision, auto_warmup = _check_precision_options(info, opts)
    if opts["interval"] is None:
        opts["interval"] = _precision.default_interval(precision, opts["warmup"])
    if opts["duration"] is None:
        opts["duration"] = _precision.DURATION_S if precision is not None else 5
    interval = _seconds("interval", opts["interval"], 0.001, allow_zero=False)
    interval_ns = int(round(interval * 1e9))
    if auto_warmup:
        # Whole intervals: the auto warm-up's windows count samples.
        warmup_samples = math.ceil(max(interval, _precision.AUTO_WARMUP_CAP_S) / interval
                                   - 1e-9)
        first_sample_ns = 0
    else:
        warmup_samples, first_sample_ns = _warmup_shape(_warmup_seconds(opts["warmup"]),
                                                        interval_ns)
    duration = _duration_seconds(opts["duration"], interval)
    producers = _count("producers", opts["producers"], 1, info.max_producers,
                       f" for {info.name}")
    consumers = opts["consumers"]
    if consumers is None:
        consumers = info.default_consumers
    if info.max_consumers == 0 and not isinstance(consumers, bool) and \
            isinstance(consumers, numbers.Integral) and consumers > 0:
        raise ValueError(f"consumers={consumers!r}: {info.name} takes no consumer "
                         "(allowed 0..0)")
    consumers = _count("consumers", consumers, 0, info.max_consumers, f" for {info.name}")
    if not is_bool(opts["affinity"]):
        raise TypeError(f"affinity={opts['affinity']!r}: must be True or False")
    if not is_bool(opts["verbose"]):
        raise TypeError(f"verbose={opts['verbose']!r}: must be True or False")
    _check_prog_stats(info, opts["prog_stats"])
    if precision is not None:
        _check_precision_duration(opts, interval, duration)
    nr_cpus = _online_cpus()
    env = {
        "interval_ns": interval_ns,
        "warmup_samples": warmup_samples,
        "first_sample_ns": first_sample_ns,
        "duration_samples": round(duration / interval),
        "producers": producers,
        "consumers": consumers,
        "affinity": bool(opts["affinity"]),
        "verbose": bool(opts["verbose"]),
        "prog_stats": bool(opts["prog_stats"]),
    }
    if env["warmup_samples"] + env["duration_samples"] > _core.MAX_SAMPLES:
        raise ValueError(
            f"warmup={opts['warmup']!r} + duration={opts['duration']!r} at "
            f"interval={opts['interval']!r} is {env['warmup_samples'] + env['duration_samples']} "
            f"samples: at most {_core.MAX_SAMPLES} (use a longer interval)")
    if info.always_pinned:
        env["affinity"] = True
    for key in ("prod_affinity", "cons_affinity"):
        cpus = parse_cpuset(opts[key], key, nr_cpus)
        if cpus is None:
            continue
        bad = [c for c in cpus if c >= nr_cpus]
        if bad:
            raise ValueError(f"{key}={opts[key]!r} names CPU {bad[0]}: "
                             f"this machine has CPUs 0..{nr_cpus - 1}")
        env[key] = list(cpus)
        env["affinity"] = True
    if env["affinity"]:
        # Refuses a set too small for its threads, as the core would.
        place_threads(consumers, producers, nr_cpus, env.get("cons_affinity"),
                      env.get("prod_affinity"), given=opts)
    return env


def _plain_number(value):
    """The int or float a validated number stands for: numpy scalars and
    Fractions would not survive Result.to_json()."""
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(value)


def _plain_param(info, value):
    """A benchmark parameter as Result.params keeps it: bool, str or int."""
    if info.type == "bool":
        return bool(value)
    if info.type in ("choice", "string"):
        return str(value)
    return int(value)


def _run_metadata(env, raw):
    return {
        # The nominal sampling interval; Sample.late marks samples that ran
        # half an interval or more longer (Result.late_samples counts them).
        "interval_ns": env["interval_ns"],
        # Where threads were pinned (None: not pinned), in thread order.
        "consumer_cpus": raw.get("consumer_cpus"),
        "producer_cpus": raw.get("producer_cpus"),
    }


def _bpf_timed(raw, env, samples, nwarm):
    """A BPF-timed run (bpf_timing.shape): each timed batch becomes a sample
    (interval_ns its BPF-timed length, hits its operations), in place of the
    per-interval samples, which only carried the batches read each interval.
    Returns (how many leading samples are warm-up, extra metadata)."""
    shaped = bpf_timing.shape(raw["series"], raw["notes"], env["producers"])
    if shaped is None:
        return nwarm, {}
    batches, meta = shaped
    samples[:] = [Sample(interval_ns=ns, hits=ops, extra={"cpu": cpu})
                  for ns, ops, cpu in batches]
    return 0, {"bpf_timing": meta}


def _check_prog_stats(info, value):
    if not is_bool(value):
        raise TypeError(f"prog_stats={value!r}: must be True or False")
    if value and not info.needs_bpf:
        raise ValueError(f"prog_stats=True: {info.name} loads no BPF program, there is "
                         "nothing to account (allowed only on benchmarks that load BPF)")


def _prog_stats(raw):
    """ProgStats records from the core's tuples, and the metadata they need."""
    if raw.get("prog_stats") is None:
        return (), {}
    progs = tuple(ProgStats(*t) for t in raw["prog_stats"])
    # How far apart, at worst, hit counters and program counters were read.
    return progs, {"prog_stats_boundary_ns": raw["prog_stats_boundary_ns"]}


def _rlimit(value):
    return "unlimited" if value in (-1, resource.RLIM_INFINITY) else value


def _metadata(info, raw, started, concurrent):
    return {
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu_model": _cpu_model(),
        "nr_cpus": _online_cpus(),
        "benchbpf_version": __version__,
        "libbpf_version": _core.libbpf_version(),
        "python_version": platform.python_version(),
        "started": started,
        "trigger": raw["trigger"] or None,
        "family": info.family,
        "report": info.report,
        # True when this run found tracefs unmounted and mounted it.
        "tracefs_mounted": raw["tracefs_mounted"],
        # As the run saw it, and before the core raised it at import.
        "rlimit_memlock": _rlimit(resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]),
        "rlimit_memlock_at_import": _rlimit(_core.MEMLOCK_AT_IMPORT)
        if _core.MEMLOCK_AT_IMPORT >= -1 else None,
        # Other benchbpf processes running meanwhile (None: could not tell).
        "concurrent_runs": concurrent,
    }


def _prepare(name, opts, params):
    """Check the common options and the benchmark's own parameters (name,
    type, range) and convert them for the core: (info, env, core_params,
    params as Result.params shows them)."""
    info = _lookup(name)
    env = _build_env(info, opts)
    core_params, shown_params = {}, {}
    for key, value in params.items():
        p = info.params.get(key)
        if p is None:
            known = ", ".join(info.params) or "none besides the common options"
            raise TypeError(f"{name} got an unexpected parameter {key!r}; "
                            f"its parameters: {known}")
        core_params[key] = p.to_core(value)
    for key, p in info.params.items():
        if p.required and key not in params:
            raise ValueError(f"{name} needs {key}: {p.allowed()}")
        shown_params[key] = _plain_param(p, params.get(key, p.default))
    return info, env, core_params, shown_params


def _split_options(options):
    """run()'s keywords as (common options, callback, the benchmark's own
    parameters).  Interval, duration and warmup are None when not given:
    their defaults depend on precision."""
    params = dict(options)
    common = {k: params.pop(k, None if k in ("interval", "duration", "warmup") else d)
              for k, d in COMMON_OPTIONS.items()}
    return common, params.pop("callback", None), params


def check(name, **options):
    """Every check ``run(name, **options)`` makes before loading anything, without
    running: the common options, each parameter's name, type and range, and
    the benchmark's own checks of combinations (the C core's validation).
    Raises as run() would; returns None."""
    common, _, params = _split_options(options)
    info, env, core_params, _ = _prepare(name, common, params)
    _core.validate(name, env, core_params)


def run(name, *, warmup=None, duration=None, interval=None, producers=1, consumers=None,
        affinity=False, prod_affinity=None, cons_affinity=None, verbose=False,
        prog_stats=False, precision=None, budget=None, callback=None, **params):
    """Run benchmark `name` and return its Result.

    Common options (seconds may be fractional; CPU sets are lists of ints or
    strings like "0,2-4"): warmup, duration, interval (sampling period,
    default 1 s), producers, consumers, affinity, prod_affinity,
    cons_affinity, verbose.  warmup is any length of 0 s or more (its first
    sample takes what is not a whole interval); duration must be a whole
    number of intervals, at least one (ValueError stating the rule).
    Every other keyword is one of the benchmark's own parameters, named
    as the kernel bench's flag with '-' written '_'
    (rb_sampled, trig_batch_iters...).

    precision=0.01 runs the benchmark again and again, 0.5 s measured each
    time, up to four such runs in a row per load (one per load for the ring
    buffers, whose figure moves with each load), until the 95 % interval of the mean hit
    rate over those runs (Result.mean_ci_mps) is within 1 % of it; at
    least 5 runs, and at most `duration` seconds measured in all (default
    60 s with precision, else 5 s), or budget seconds of wall time (none by
    default; only with precision).  Result.stopped_by says which ended it
    ("precision", "duration" or "budget"), Result.runs() gives the runs.
    warmup="auto" (the default with precision, else 1 s) ends each warm-up
    when the benchmark is steady (two windows of 0.15 s and at least three
    samples agree), after 0.3 s and six samples at the least and 5 s at
    the most.  Both sample every 0.1 s unless `interval` is given.  The
    manual's statistics page says why the unit is the run and how well it
    covers.

    callback(sample, index, warmup) is called as each sample arrives.

    prog_stats=True turns the kernel's BPF run-time statistics on for the
    run (BPF_ENABLE_STATS, through a descriptor closed when the run ends,
    also on failure or Ctrl-C; the kernel.bpf_stats_enabled sysctl is left
    as it is) and fills Result.prog_stats with each loaded program's
    run_cnt, run_time_ns and ns_per_run over the measured window: from the
    end of warm-up (from load without warm-up) to the last sample, read just
    after the hit counters, so run_cnt compares with hits summed over
    Result.samples; metadata["prog_stats_boundary_ns"] says how far apart
    the two readings were at worst.  While on, the statistics apply to every
    BPF program on the machine.  Off by default: the kernel then reads the
    clock twice per program run, which can cost more than a short program
    itself and so lowers the hit rate (the manual's "Program cost" has the
    figures and the machine they were measured on).
    ValueError on benchmarks that load no BPF program.
    """
    budget = check_budget(budget)
    plan = _plan(name, dict(warmup=warmup, duration=duration, interval=interval,
                            producers=producers, consumers=consumers, affinity=affinity,
                            prod_affinity=prod_affinity, cons_affinity=cons_affinity,
                            verbose=verbose, prog_stats=prog_stats, precision=precision),
                 params, callback)
    if plan.precision is None:
        if budget is not None:
            raise ValueError(f"budget={budget!r}: a time budget bounds repeated runs; give "
                             "precision= too, or leave budget out")
        return _run_once(plan.info, plan.env, plan.core_params, plan.params, callback,
                         plan.auto_warmup, calls_below_run=1)
    series = _PreciseSeries(plan)
    began = time.monotonic()
    while series.stopped_by is None:
        series.step(calls_below_run=1)
        if series.stopped_by is None and \
                next_would_overrun(budget, time.monotonic() - began, len(series.loads)):
            series.stop("budget")
    return _with_history(series.result())


def next_would_overrun(budget, spent_s, done):
    """Whether one more step, as long as the average of the `done` steps
    that took `spent_s` seconds, would end past `budget` s (None: no
    budget; before any step: never)."""
    return budget is not None and done > 0 and spent_s + spent_s / done > budget


def check_budget(budget):
    """None, or budget as float seconds of wall time; raises naming its range."""
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, numbers.Real) \
            or not 0 < budget <= MAX_SECONDS:
        raise ValueError(f"budget={budget!r} out of range: seconds of wall time, "
                         f"more than 0 and at most {MAX_SECONDS}, or None")
    return float(budget)


def _with_history(result):
    """A precision run taken with a host drift calibration: the calibration
    gains how this benchmark's earlier precision runs on the machine
    differed (_host_drift.History, when there are enough), and the run
    joins that history for the next."""
    drift = result.metadata.get("host_drift")
    ci = result.mean_ci_mps
    if not drift or ci is None:
        return result
    machine, now = result.metadata.get("fingerprint"), time.time()
    key = _host_drift.history_key(result.name, result.params)
    history = _host_drift.history_of(_host_drift.read_history(key, machine, now))
    _host_drift.remember(key, machine, now, ci.mean, _host_drift.standard_error(ci))
    if history is None:
        return result
    return dataclasses.replace(result, metadata={
        **result.metadata, "host_drift": {**drift, "history": history.as_dict()}})


class _Plan:
    """A run checked and converted for the core, not started."""

    def __init__(self, info, env, core_params, params, callback, auto_warmup, precision,
                 duration_s):
        self.info, self.env, self.core_params, self.params = info, env, core_params, params
        self.callback, self.auto_warmup = callback, auto_warmup
        self.precision, self.duration_s = precision, duration_s


# Set by would_run(): run() reports what it was asked and stops there.
_ONLY_ASK = contextvars.ContextVar("benchbpf_only_ask", default=False)


class _Asked(Exception):
    def __init__(self, name, params):
        super().__init__(name)
        self.name, self.params = name, params


def would_run(call):
    """(benchmark name, its own parameters) that call() asks run() for
    first, found without checking or loading anything: run() stops as it is
    entered.  (None, None) when call() runs nothing.  For tools that map a
    family's functions to benchmarks (the manual's reference does)."""
    token = _ONLY_ASK.set(True)
    try:
        call()
    except _Asked as e:
        return e.name, e.params
    finally:
        _ONLY_ASK.reset(token)
    return None, None


def _plan(name, opts, params, callback):
    """run()'s checks, before anything loads: a _Plan."""
    if _ONLY_ASK.get():
        raise _Asked(name, params)
    info, env, core_params, shown_params = _prepare(name, opts, params)
    precision = _precision.check_precision(opts["precision"])
    if callback is not None and not callable(callback):
        raise TypeError(f"callback={callback!r}: must be callable or None")
    if info.needs_bpf and not _has_bpf_privilege():
        raise PermissionError(
            f"{name} loads BPF programs: run as root or with CAP_BPF and "
            "CAP_PERFMON (e.g. sudo, or setcap cap_bpf,cap_perfmon+ep on the interpreter)")
    warmup = opts["warmup"]
    common = {
        "warmup": warmup if _precision.is_auto(warmup) else _plain_number(warmup),
        "duration": _plain_number(opts["duration"]),
        "interval": _plain_number(opts["interval"]),
        "producers": env["producers"], "consumers": env["consumers"],
        "affinity": env["affinity"],
        "prod_affinity": tuple(env.get("prod_affinity", ())) or None,
        "cons_affinity": tuple(env.get("cons_affinity", ())) or None,
        "prog_stats": env["prog_stats"],
    }
    if precision is not None:
        common["precision"] = precision
    return _Plan(info, env, core_params, {**common, **shown_params}, callback,
                 _precision.is_auto(warmup), precision, float(opts["duration"]))


class _PreciseSeries:
    """A precision run taken a few short runs at a time: each step() loads the
    benchmark anew and measures up to _precision.windows_per_load() runs of
    run_samples() samples in a row (one run per load where a fresh load is
    what tells runs apart), until their mean is known within the precision
    or the next run would measure past the duration (stopped_by says which;
    stop() ends it for another reason).  result(): one Result of all their
    samples, whose metadata says where each run's samples are."""

    def __init__(self, plan):
        self.plan = plan
        interval_s = plan.env["interval_ns"] / 1e9
        self._run_samples = _precision.run_samples(interval_s)
        self._run_s = self._run_samples * interval_s
        self._windows = _precision.windows_per_load(plan.info.family)
        self.runs, self._means, self._starts, self.loads = [], [], [], []
        self._step_mps = 0.0
        self._measured_s, self._delivered, self._began = 0.0, 0, None
        self.stopped_by = None

    def step(self, calls_below_run):
        """One load: its runs join the series, then the stop is decided."""
        plan, offset = self.plan, self._delivered
        if self._began is None:
            self._began = time.monotonic()
        load_start = time.monotonic() - self._began
        # The last load measures only what the duration has left.
        left = int((plan.duration_s - self._measured_s) / self._run_s + 1e-9)
        windows = max(1, min(self._windows, left))
        env = dict(plan.env, duration_samples=self._run_samples * windows)

        def shifted(sample, index, warmup):
            plan.callback(sample, offset + index, warmup)
        r = _run_once(plan.info, env, plan.core_params, plan.params,
                      shifted if plan.callback else None, plan.auto_warmup,
                      calls_below_run=calls_below_run + 1)
        self._delivered += len(r.warmup_samples) + len(r.samples)
        self.loads.append(windows)
        start_ns = sum(x.interval_ns for x in r.warmup_samples)
        for k in range(windows):
            chunk = r.samples[k * self._run_samples:(k + 1) * self._run_samples]
            run = dataclasses.replace(r, samples=chunk,
                                      warmup_samples=r.warmup_samples if k == 0 else (),
                                      series=r.series if k == 0 else {})
            self.runs.append(run)
            self._means.append(run.mean_se())
            self._starts.append(load_start + start_ns / 1e9)
            start_ns += sum(x.interval_ns for x in chunk)
            # Nominal lengths: real ones run a little over, and would end a
            # duration of five runs after four.
            self._measured_s += self._run_s
        # Once per load, not per look: interleaving sorts on the interval.
        self._step_mps = hit_step_mps(self.runs)
        self.stopped_by = _precision.stop_reason(
            self._means, self._starts, self._measured_s, self._run_s, self.plan.duration_s,
            self.plan.precision, self._step_mps)

    def relative_half_width(self):
        """The interval's half width over its mean so far (inf before it has one)."""
        ci = stats.runs_mean_ci([m for m, _ in self._means], self._starts,
                                step_mps=self._step_mps)
        return math.inf if ci is None else ci.relative_half_width

    def stop(self, reason):
        self.stopped_by = reason

    def result(self):
        runs = self.runs
        first = runs[0]
        metadata = {
            **first.metadata,
            "stopped_by": self.stopped_by,
            # Each run's samples, in order: Result.runs() splits them again.
            "precision_runs": tuple(len(r.samples) for r in runs),
            "precision_warmups": tuple(len(r.warmup_samples) for r in runs),
            # When each run began, s from the first: the interval groups them.
            "precision_run_starts_s": tuple(round(t, 3) for t in self._starts),
            # How many runs each load measured, in order.
            "precision_loads": tuple(self.loads),
            "concurrent_runs": max((r.metadata.get("concurrent_runs") or 0 for r in runs),
                                   default=0),
        }
        if self.plan.auto_warmup:
            metadata["warmup_ended_by"] = tuple(r.metadata["warmup_ended_by"] for r in runs)
        series = {}
        for r in runs:
            for k, v in r.series.items():
                series[k] = series.get(k, ()) + tuple(v)
        return Result(name=first.name, params=self.plan.params,
                      samples=tuple(s for r in runs for s in r.samples),
                      warmup_samples=tuple(s for r in runs for s in r.warmup_samples),
                      metadata=metadata, series=series)


def run_interleaved(calls, budget_s=None):
    """Precision runs of many benchmarks, one short run of each in turn, so
    that the runs of each spread over the whole time and none waits for
    another to finish: [Result] of calls [(label, name, options)], in order.
    Every call is checked before the first loads.  After each pass, the
    next goes to the ones not yet stopped, the widest interval first.
    budget_s: no run starts that would end past this many seconds of wall
    time (next_would_overrun, over the runs taken so far); the unfinished
    then stop "by budget" with the runs they have."""
    budget_s = check_budget(budget_s)
    series, labels = [], []
    for label, name, options in calls:
        opts, callback, params = _split_options(options)
        if opts["precision"] is None:
            raise ValueError(f"{label}: precision=None among runs with a precision: "
                             "give every run a precision, or none")
        plan = _plan(name, opts, params, callback)
        _core.validate(name, plan.env, plan.core_params)
        series.append(_PreciseSeries(plan))
        labels.append(label)
    began = time.monotonic()
    results = [None] * len(series)
    pending = list(range(len(series)))
    done = 0
    while pending:
        for i in pending:
            # Every one has a run before the budget counts: no Result is empty.
            if series[i].runs and next_would_overrun(budget_s, time.monotonic() - began,
                                                     done):
                series[i].stop("budget")
            else:
                with _progress.step(f"{labels[i]} run {len(series[i].runs) + 1}"):
                    series[i].step(calls_below_run=1)
                done += 1
            if series[i].stopped_by is not None:
                # Kept should Ctrl-C come later.
                results[i] = _progress.finished(_with_history(series[i].result()))
        pending = sorted((i for i in pending if series[i].stopped_by is None),
                         key=lambda i: -series[i].relative_half_width())
    return results


def run_gated(name, options, gate, companions=()):
    """run(name, **options) for one side of a duet (benchbpf._duet): once
    loaded, the core writes a byte to gate[0] and waits for the time to
    start at on gate[1] (bench.h, ready_fd and go_fd).  companions: the pids
    of runs meant to run alongside, which are not counted as concurrent
    runs.  A fixed warm-up only: the sides' windows must coincide."""
    opts, callback, params = _split_options(options)
    if _precision.is_auto(opts["warmup"]) or opts["precision"] is not None:
        raise ValueError("a duet's sides take a fixed warm-up and no precision: their "
                         "measured windows must coincide")
    plan = _plan(name, opts, params, callback)
    env = dict(plan.env, ready_fd=gate[0], go_fd=gate[1])
    return _run_once(plan.info, env, plan.core_params, plan.params, callback, False,
                     calls_below_run=1, companions=companions)


def _run_once(info, env, core_params, params, callback, auto_warmup, calls_below_run,
              companions=()):
    """One load of the benchmark, sampled until its duration: a Result.
    calls_below_run: how deep below run() this is, for warnings to point
    at run()'s caller.  companions: pids of runs meant to run alongside
    (a duet's other side), not counted as concurrent."""
    name = info.name
    extra_names = info.extra
    interval_s = env["interval_ns"] / 1e9
    warmup = _precision.WarmupController(interval_s, _core.END_WARMUP) \
        if auto_warmup else None

    def on_sample(index, raw_sample, in_warmup):
        sample = Sample.from_raw(raw_sample, extra_names)
        request = warmup(index, sample.hits_mps) if warmup is not None else None
        if callback is not None:
            callback(sample, index, in_warmup)
        return request

    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    machine = fingerprint()
    drift = _host_drift.load(fingerprint=machine)
    with RunMarker(name, stacklevel=4 + calls_below_run, companions=companions) as marker:
        raw = _core.run(name, env, core_params,
                        on_sample if callback or warmup else None)
    samples = [Sample.from_raw(t, extra_names) for t in raw["samples"]]
    # The core's count: an early end of warm-up is where the sampler took it.
    nwarm, timing_meta = _bpf_timed(raw, env, samples, raw["warmup_samples"])
    if warmup is not None:
        timing_meta["warmup_ended_by"] = "steady" if warmup.measured_from is not None \
            else "cap"
    progs, progs_meta = _prog_stats(raw)
    return Result(
        name=name,
        params=params,
        samples=tuple(samples[nwarm:]),
        warmup_samples=tuple(samples[:nwarm]),
        metadata={**_metadata(info, raw, started, marker.count),
                  **_run_metadata(env, raw), **progs_meta, **raw["notes"], **timing_meta,
                  "fingerprint": machine,
                  **({"host_drift": drift.as_dict()} if drift is not None else {})},
        prog_stats=progs,
        series=raw["series"],
    )
