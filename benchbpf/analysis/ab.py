"""Did my change make it slower?  Two sides measured in turns.

    >>> import benchbpf
    >>> r = benchbpf.ab("selftest", "selftest --bpf-work 1000")  # slower on any CPU
    >>> print(r)           # B/A, its 95 % interval, the verdict, rounds and time
    >>> r.verdict, r.ratio, r.low, r.high
    >>> print(r.to_markdown())

A side is one benchmark with its options, written as the command line takes
them ("rb-libbpf --rb-sampled"), or as (name, {options}).  A comparison runs
in rounds; each round measures each side once:

- interleaved (default): one side then the other, in a random order, each a
  short run loaded anew;
- duet: both at the same time, each on half of the CPUs, the halves swapped
  every round (processes of their own, so that each side's BPF programs
  tell their producers from the other side's);
- kernels: each side in a guest booting its own kernel, both guests kept
  booted, the runs alternating between them.

A machine moves a figure over minutes (by 10-20 % on the 2-vCPU VM the
manual was measured on).  Sides measured seconds apart in the same round
meet the same phase of it, so the figure is the
ratio B/A within each round; the rounds' median ratio and its confidence
sequence (rule "median", the default; "mean": their geometric mean, the
rule before; _ab_rule) say how B compares with A.  The sequence holds at
every look, so the comparison may stop as soon as the interval decides:

- "same": the interval lies within +-threshold of 1;
- "slower" / "faster": the interval lies beyond the threshold, or, once it
  is as narrow as the precision asks, entirely on one side of 1;
- "undecided": the budget ran out first (the interval says how far it got).

Error rates of the rules on seeded simulated series: simulate() and
simulate_fitted(); replayed on stored rounds: results/ab-power-robust-2cpu.md;
the mean rule's measured live on this kind of machine: results/ab-power-2cpu.md.

This module holds the sides, the rounds and the run loop; the rule itself
(no I/O) is _ab_rule, the simulator _ab_sim, the printing _ab_text, and
the verdict's words and type (Outcome) are every comparison's (_outcome).
"""
import dataclasses
import datetime
import math
import numbers
import os
import random
import shlex
import sys
import time
import warnings
from dataclasses import dataclass
from types import MappingProxyType

from .._callable import callable_module
from ..harness import _precision, _progress, _runner
from .._version import __version__
from . import _ab_rule, _ab_text
from ._ab_rule import ALPHA, MIN_ROUNDS, PRECISION, RULE, RULES, replay
from . import _ab_sim
from ._ab_sim import Contamination, SimulatedRates, simulate, simulate_fitted
# scripts/ab_power.py reads the simulated host's series through ab.
from ._ab_sim import simulated_log_ratios
from ._ab_text import MEASURED_PATH, measured_rates
from ._compare import BenchmarkMismatchWarning, run_speed
from . import _outcome
from ._outcome import FASTER, SAME, SLOWER, THRESHOLD, UNDECIDED, Outcome, verdict_of
from ..results.fingerprint import fingerprint
from ..results.result import JsonFile, Result, _Picklable, _thawed

__all__ = ["ab", "ABResult", "Round", "Side", "simulate", "SimulatedRates", "MODES",
           "VERDICTS", "round_seconds", "measured_rates", "simulated_log_ratios", "RULE",
           "RULES", "replay", "simulate_fitted", "Contamination", "FITTED", "planned_rounds",
           "budget_rounds", "disturbed_why", "share_median", "cpu_share_of", "FAIL_ON"]

#: How the sides of a comparison run: in turns here, both at once, or in guests.
MODES = ("interleaved", "duet", "kernels")
#: What a comparison can conclude, "slower", "faster", "same", "undecided":
#: every comparison's words (analysis.Outcome).
VERDICTS = _outcome.VERDICTS
#: Each mode's contamination fitted to the stored rounds (burst share, burst
#: size, core spread): what simulate_fitted() draws from; the fit is stated
#: in results/ab-power-robust-2cpu.md.
FITTED = _ab_sim.FITTED
#: What `--fail-on` takes, and the status for "cannot tell" (git bisect's
#: "skip": neither good nor bad).
FAIL_ON, SKIP_STATUS = ("slower", "faster"), 125
#: The default wall time, s (the rule's defaults, PRECISION, ALPHA and
#: MIN_ROUNDS, are _ab_rule's; THRESHOLD is every comparison's, _outcome's).
BUDGET_S = 300.0
MIN_PRECISION, MAX_PRECISION = 0.001, 0.5
MIN_THRESHOLD, MAX_THRESHOLD = 0.001, 0.5
#: The most rounds max_rounds may ask for.
MAX_ROUNDS = 1_000_000
#: One run of a side: warm-up ("auto": until steady, run()'s), measured
#: time, s, sampled every INTERVAL_S (fine enough for the auto warm-up to
#: end after 0.35 s where the benchmark is steady from the start).
WARMUP, DURATION_S, INTERVAL_S = "auto", 1.0, 0.05
#: A duet's fixed warm-up, s: both sides' windows must coincide, so neither
#: may end its warm-up on its own.
DUET_WARMUP_S = 0.3
#: What an auto warm-up takes where the benchmark is steady at once, s:
#: sizes the budget's check before anything has run.
NOMINAL_AUTO_WARMUP_S = 0.35
#: What loading, attaching and tearing down add to a run, s, before the
#: first round has shown it: sizes the budget's check and the sequence.
NOMINAL_LOAD_S = 0.3
FORMAT = "benchbpf-ab"
FORMAT_VERSION = 1
#: Options that set how long runs are: the comparison sets them for both sides.
_LENGTH_OPTIONS = ("warmup", "duration", "interval", "precision")


@dataclass(frozen=True)
class Side(_Picklable):
    """One side of a comparison: a benchmark, its options and where it runs.

    name: the benchmark; options: run() keywords (its own parameters and
    producers, consumers, affinity...), never the run lengths, which the
    comparison sets; kernel: None to run here, else a kernel spec for a guest
    (benchbpf.vm); text: the side as a command line."""
    name: str
    options: MappingProxyType
    kernel: object = None
    text: str = ""

    def __post_init__(self):
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))
        if not self.text:
            object.__setattr__(self, "text", _side_text(self.name, self.options, self.kernel))

    @classmethod
    def of(cls, spec, label="a"):
        """A Side from what ab() takes: a Side; a command line as the CLI
        takes it, as one str ("rb-libbpf --rb-sampled") or a list of words;
        or (name, {options}).  Raises ValueError/TypeError naming the side
        (label) and what is wrong with it."""
        if isinstance(spec, Side):
            return spec
        if isinstance(spec, str):
            return cls._parsed(shlex.split(spec), label)
        if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str) \
                and hasattr(spec[1], "items"):
            options = dict(spec[1])
            kernel = options.pop("kernel", None)
            _refuse_lengths(label, options)
            return cls(spec[0], options, kernel)
        if isinstance(spec, (list, tuple)) and all(isinstance(w, str) for w in spec):
            return cls._parsed(list(spec), label)
        raise TypeError(f"{label}={spec!r}: a side is a command line (\"rb-libbpf "
                        "--rb-sampled\", or a list of its words), (name, {options}) "
                        "or a benchbpf.ab.Side")

    @classmethod
    def _parsed(cls, words, label):
        from ..harness._cmdline import parse_side
        if not words:
            raise ValueError(f"{label}: empty side: give a benchmark name and its options")
        try:
            name, options, kernel = parse_side(words)
        except SystemExit:
            raise ValueError(f"{label}: cannot parse {shlex.join(words)!r} (see the "
                             "message above)") from None
        except (ValueError, TypeError) as e:
            raise type(e)(f"{label}: {e}") from None
        _refuse_lengths(label, options)
        return cls(name, options, kernel, shlex.join(words))

    def as_dict(self):
        """The side as plain JSON data (from_dict reads it back)."""
        return {"name": self.name, "options": _thawed(self.options), "kernel": self.kernel,
                "text": self.text}

    @classmethod
    def from_dict(cls, d):
        """A Side from as_dict()'s data d."""
        return cls(d["name"], {k: tuple(v) if isinstance(v, list) else v
                               for k, v in d["options"].items()}, d.get("kernel"),
                   d.get("text", ""))


def _side_text(name, options, kernel):
    words = ([f"--kernel {kernel}"] if kernel else []) + [name]
    words += [f"{k}={v!r}" for k, v in options.items()]
    return " ".join(words)


def _refuse_lengths(label, options):
    given = [k for k in _LENGTH_OPTIONS if options.get(k) is not None]
    if given:
        raise ValueError(f"{label}: {given[0]}={options[given[0]]!r} inside a side: a "
                         "comparison runs both sides alike; give warmup=, duration= and "
                         "interval= to ab() itself (-w, -d, --interval before the first side)")


@dataclass(frozen=True)
class Round(_Picklable):
    """One round: each side measured once.

    index: 0, 1, ...; first: "a" or "b", the side that ran first
    (interleaved, kernels), None when both ran at once (duet); started_s:
    when the round began, s from the comparison's start; a_cpus, b_cpus:
    the CPUs each side had (duet), else None; a_cpu_share_median,
    b_cpu_share_median: each side's median producers' CPU share over the
    comparison's rounds up to this one (set aside or not), which `disturbed`
    judges the side's share by (None: not kept, as before ab kept it; the
    fixed share alone then)."""
    index: int
    a: Result
    b: Result
    first: object = None
    started_s: float = 0.0
    a_cpus: object = None
    b_cpus: object = None
    per_cpu: object = None
    counter: str = "hits"
    a_cpu_share_median: object = None
    b_cpu_share_median: object = None

    @property
    def a_mps(self):
        """Side A's figure this round, M/s: its speed as compare() and the gate
        judge a run (analysis.run_speed of `counter`: the fastest half of its
        rates per CPU-second of the producers, or per second with
        per_cpu=False)."""
        return run_speed(self.a, self.counter, per_cpu=self.per_cpu)

    @property
    def b_mps(self):
        """Side B's figure this round, M/s (as a_mps)."""
        return run_speed(self.b, self.counter, per_cpu=self.per_cpu)

    @property
    def ratio(self):
        """B's figure over A's this round."""
        return self.b_mps / self.a_mps if self.a_mps > 0 else math.nan

    @property
    def disturbed(self):
        """Why the host disturbed this round, a tuple of
        _ab_rule.DISTURBANCES ("steal", "preemption", "late sample") that
        either side's run showed; empty when neither was (or the runs were
        recorded before they said).  A side was preempted when switched out
        involuntarily with its producers' CPU share below the fixed
        _ab_rule.DISTURBED_CPU_SHARE or _ab_rule.DISTURBED_SHARE_DROP below
        its own median so far."""
        why = set(_ab_rule.disturbances_of(self.a, self.a_cpu_share_median)) | \
            set(_ab_rule.disturbances_of(self.b, self.b_cpu_share_median))
        return tuple(w for w in _ab_rule.DISTURBANCES if w in why)

    def as_dict(self):
        """The round as plain JSON data, both Results whole (from_dict reads it back)."""
        return {"index": self.index, "first": self.first, "started_s": self.started_s,
                "a_cpus": list(self.a_cpus) if self.a_cpus is not None else None,
                "b_cpus": list(self.b_cpus) if self.b_cpus is not None else None,
                "per_cpu": self.per_cpu, "counter": self.counter,
                "a_cpu_share_median": self.a_cpu_share_median,
                "b_cpu_share_median": self.b_cpu_share_median,
                # Derived, for readers of the file; from_dict recomputes it.
                "disturbed": list(self.disturbed),
                "a": self.a.as_dict(), "b": self.b.as_dict()}

    @classmethod
    def from_dict(cls, d):
        """A Round from as_dict()'s data d."""
        return cls(d["index"], Result.from_dict(d["a"]), Result.from_dict(d["b"]),
                   d.get("first"), d.get("started_s", 0.0),
                   tuple(d["a_cpus"]) if d.get("a_cpus") is not None else None,
                   tuple(d["b_cpus"]) if d.get("b_cpus") is not None else None,
                   d.get("per_cpu"), d.get("counter", "hits"),
                   d.get("a_cpu_share_median"), d.get("b_cpu_share_median"))


#: ABResult's measured when not given: read from the package data.
_READ = "read"


@dataclass(frozen=True)
class ABResult(JsonFile, _Picklable):
    """What ab() found: B against A over rounds taken in turns.

    a, b: the Sides; mode: "interleaved", "duet" or "kernels"; rounds: the
    Rounds, in order; stopped_by: "decided", "precision", "budget",
    "max_rounds" or "interrupted"; wall_s: the comparison's wall time, s;
    threshold, precision, alpha, budget_s, planned_rounds, seed: how it was
    asked for; metadata: where and how it ran (fingerprint, kernel, run
    lengths); measured: the error rates measured for this mode, one
    entry per setting (measured_rates, read once when the result is made;
    None where not measured; the outcome states the one that applies,
    measured on the machine in metadata where one was);
    rule: the sequential rule that made the interval (one of RULES; "mean"
    for comparisons saved before rules had names);
    set_aside_disturbed: whether rounds the host disturbed were set aside
    and replaced (Round.disturbed); set_aside: those Rounds, kept for the
    record, in no figure.  The figures (ratio, low, high, verdict: the
    outcome) are computed from the rounds, so a saved and reloaded
    comparison states the same."""
    a: Side
    b: Side
    mode: str
    rounds: tuple
    stopped_by: str
    wall_s: float
    threshold: float = THRESHOLD
    precision: float = PRECISION
    alpha: float = ALPHA
    budget_s: float = BUDGET_S
    planned_rounds: int = 50
    seed: int = 0
    metadata: MappingProxyType = dataclasses.field(default_factory=dict)
    measured: object = _READ
    rule: str = "mean"
    set_aside_disturbed: bool = False
    set_aside: tuple = ()

    def __post_init__(self):
        _ab_rule.check_rule(self.rule)
        object.__setattr__(self, "rounds", tuple(self.rounds))
        object.__setattr__(self, "set_aside", tuple(self.set_aside))
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))
        if self.measured is _READ:
            object.__setattr__(self, "measured", measured_rates(self.mode))

    # ---- the figures ----
    @property
    def ratios(self):
        """B/A of each round, in order."""
        return tuple(r.ratio for r in self.rounds)

    @property
    def _interval(self):
        logs = [math.log(x) for x in self.ratios if x > 0 and math.isfinite(x)]
        return _ab_rule.interval(logs, self.alpha, self.planned_rounds, self.rule)

    @property
    def ratio(self):
        """B/A as the rule reads it: the geometric mean of the rounds'
        ratios ("mean"), their median ("median"), the middle of the interval
        ("huber"); None while the rule has no interval."""
        return self._interval[0]

    @property
    def low(self):
        """Lower end of B/A's confidence sequence at 1 - alpha (or None)."""
        return self._interval[1]

    @property
    def high(self):
        """Upper end of B/A's confidence sequence at 1 - alpha (or None)."""
        return self._interval[2]

    @property
    def change_pct(self):
        """(B/A - 1) in %, with its interval: (change, low, high), or Nones."""
        r, lo, hi = self._interval
        if r is None:
            return None, None, None
        return (r - 1) * 100, (lo - 1) * 100, (hi - 1) * 100

    @property
    def outcome(self):
        """What the rounds conclude, as every comparison states it (an
        Outcome): B/A, its confidence sequence at 1 - alpha, the verdict
        against the threshold and the rates measured for this mode."""
        r, lo, hi = self._interval
        verdict, beyond = verdict_of(lo, hi, self.threshold)
        asked = (self.rule, self.alpha, self.budget_s, {self.a.name, self.b.name},
                 self.metadata)
        return Outcome(r, lo, hi, 1 - self.alpha, _ab_rule.METHODS[self.rule], verdict, beyond,
                       self.threshold, _ab_text.applicable(self.measured, *asked),
                       _ab_text.rates_text(self.mode, self.measured, *asked),
                       "" if r is not None else
                       f"{len(self.rounds)} rounds, too few for an interval")

    @property
    def verdict(self):
        """"slower", "faster", "same" or "undecided": what B is against A."""
        return verdict_of(self.low, self.high, self.threshold)[0]

    @property
    def beyond_threshold(self):
        """True when the whole interval lies beyond +-threshold."""
        return verdict_of(self.low, self.high, self.threshold)[1]

    def exit_status(self, fail_on=None):
        """What `benchbpf ab --fail-on` exits with, for CI and `git bisect
        run`: 1 when B is `fail_on` (FAIL_ON: "slower", the default, or
        "faster") than A beyond the threshold; SKIP_STATUS, 125 (bisect's
        "skip"), when undecided, or when the interval lies on that side of 1
        but reaches within the threshold; 0 otherwise (the same within the
        threshold, or the other way)."""
        fail_on = FAIL_ON[0] if fail_on is None else fail_on
        if fail_on not in FAIL_ON:
            raise ValueError(f"fail_on={fail_on!r}: must be one of {', '.join(FAIL_ON)}")
        if self.verdict == fail_on:
            return 1 if self.beyond_threshold else SKIP_STATUS
        return SKIP_STATUS if self.verdict == UNDECIDED else 0

    @property
    def disturbances(self):
        """How many of the rounds the host disturbed, as a dict: "rounds"
        (disturbed ones among those in the figures), "of" (those rounds),
        "reasons" (each of _ab_rule.DISTURBANCES -> the rounds that showed
        it), "set_aside" (disturbed rounds set aside and replaced)."""
        per_round = [r.disturbed for r in self.rounds]
        return {"rounds": sum(1 for why in per_round if why), "of": len(per_round),
                "reasons": {w: sum(1 for why in per_round if w in why)
                            for w in _ab_rule.DISTURBANCES},
                "set_aside": len(self.set_aside)}

    @property
    def relative_half_width(self):
        """The interval's half width over the ratio (0.01: +-1 %), inf without one."""
        r, lo, hi = self._interval
        return math.inf if r is None else (hi - lo) / 2 / r

    @property
    def measured_s(self):
        """Seconds measured: each side's measured time summed over the rounds;
        in a duet both sides measure at once, so once per round."""
        per_round = [_measured_s(r.a) + _measured_s(r.b) for r in self.rounds]
        if self.mode == "duet":
            per_round = [max(_measured_s(r.a), _measured_s(r.b)) for r in self.rounds]
        return sum(per_round)

    @property
    def measured_fraction(self):
        """measured_s over the wall time."""
        return self.measured_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def emulated(self):
        """True when a side ran in an emulated guest: the verdict is then about
        emulation, never about speed."""
        return any(r.a.emulated or r.b.emulated for r in self.rounds)

    def a_mps(self):
        """Side A's figures, M/s, one per round."""
        return tuple(r.a_mps for r in self.rounds)

    def b_mps(self):
        """Side B's figures, M/s, one per round."""
        return tuple(r.b_mps for r in self.rounds)

    # ---- text (_ab_text) ----
    def __str__(self):
        """One line: the sides, B/A and its interval, the verdict, rounds and time."""
        return _ab_text.line(self)

    def __repr__(self):
        return f"<ABResult {self}>"

    def to_markdown(self):
        """A table fit for a commit message: both sides' median figures, B/A,
        its interval, the verdict, the rounds and the time, then how it was
        measured."""
        return _ab_text.markdown(self)

    def _repr_markdown_(self):
        return self.to_markdown()

    # ---- serialisation ----
    def as_dict(self):
        """The comparison as plain dicts and lists, the layout to_json() writes."""
        return {"format": FORMAT, "version": FORMAT_VERSION,
                "a": self.a.as_dict(), "b": self.b.as_dict(), "mode": self.mode,
                "rounds": [r.as_dict() for r in self.rounds],
                "stopped_by": self.stopped_by, "wall_s": self.wall_s,
                "threshold": self.threshold, "precision": self.precision,
                "alpha": self.alpha, "budget_s": self.budget_s,
                "planned_rounds": self.planned_rounds, "seed": self.seed,
                "rule": self.rule, "metadata": _thawed(self.metadata),
                "set_aside_disturbed": self.set_aside_disturbed,
                "set_aside": [r.as_dict() for r in self.set_aside],
                # Derived, for readers of the file; from_dict recomputes them.
                "ratio": self.ratio, "low": self.low, "high": self.high,
                "verdict": self.verdict, "disturbed": self.disturbances}

    @classmethod
    def from_dict(cls, d):
        """The ABResult that as_dict() gave `d`.  ValueError when d is not a
        benchbpf A/B comparison or of another format version."""
        if d.get("format") != FORMAT:
            raise ValueError("not a benchbpf A/B comparison")
        if d.get("version") != FORMAT_VERSION:
            raise ValueError(f"A/B format version {d.get('version')!r} not supported "
                             f"(this benchbpf reads version {FORMAT_VERSION})")
        return cls(Side.from_dict(d["a"]), Side.from_dict(d["b"]), d["mode"],
                   tuple(Round.from_dict(r) for r in d["rounds"]), d["stopped_by"],
                   d["wall_s"], d["threshold"], d["precision"], d["alpha"], d["budget_s"],
                   d["planned_rounds"], d["seed"], d.get("metadata", {}),
                   rule=d.get("rule", "mean"),
                   set_aside_disturbed=d.get("set_aside_disturbed", False),
                   set_aside=tuple(Round.from_dict(r) for r in d.get("set_aside", ())))

    def save(self, path):
        """Write the comparison as JSON to path (ABResult.from_json reads it)."""
        self.to_json(path)


def _measured_s(result):
    return sum(s.interval_ns for s in result.samples) / 1e9


# ---------------------------------------------------------------- checks

def _fraction(name, value, lo, hi, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}={value!r}: must be {what} in {lo:g}..{hi:g}")
    if not lo <= float(value) <= hi:
        raise ValueError(f"{name}={value!r} out of range: {what} in {lo:g}..{hi:g}")
    return float(value)


def round_seconds(mode, warmup, duration):
    """Nominal wall time of one round, s, before any has run: each side's
    warmup (NOMINAL_AUTO_WARMUP_S for "auto"), duration and NOMINAL_LOAD_S,
    once per side in turns, once for both at once when mode is "duet"."""
    warm = NOMINAL_AUTO_WARMUP_S if _precision.is_auto(warmup) else warmup
    run_s = warm + duration + NOMINAL_LOAD_S
    return run_s if mode == "duet" else 2 * run_s


def planned_rounds(nominal, budget, max_rounds=None):
    """The rounds a comparison plans for, where its interval is narrowest:
    those that fit the budget at `nominal` s a round (round_seconds), at
    most max_rounds, within 10..1000.  Fixed before any round, so it keeps
    the rule's guarantee; a stored comparison replays with it."""
    planned = max(10, min(1000, int((budget or max_rounds * nominal) / nominal)))
    return planned if max_rounds is None else min(planned, max_rounds)


def budget_rounds(round_ends_s, budget):
    """How many of a comparison's rounds, ending at round_ends_s (s from its
    start, in order), one with `budget` s would take: ab's own budget check
    on their times (no round starts that would end past the budget, judged
    by the rounds' average so far); all of them when the check never stops
    it.  The rounds do not depend on the rule, so a comparison run to a
    long budget holds the one of every shorter budget."""
    budget = _runner.check_budget(budget)
    for done, spent in enumerate(round_ends_s, 1):
        if _runner.next_would_overrun(budget, spent, done):
            return done
    return len(round_ends_s)


def disturbed_why(disturbances, cpu_share=None, share_median=None, share_drop=None):
    """Why the host disturbed a run, from what it recorded (a Result's
    disturbances, as a dict, or None): a tuple of "steal", "preemption",
    "late sample" (empty: not disturbed), by the rule each Round's
    `disturbed` follows.  cpu_share: the producers' CPU share below which a
    run that was switched out counts as preempted (None: ab's own);
    share_median: its side's median share over the rounds so far, this one
    included (share_median(); None: the fixed share alone); share_drop: how
    far below that median it counts as preempted (None: ab's own).  A replay
    of stored runs may try other thresholds."""
    return _ab_rule.disturbed_why(
        disturbances, _ab_rule.DISTURBED_CPU_SHARE if cpu_share is None else cpu_share,
        share_median,
        _ab_rule.DISTURBED_SHARE_DROP if share_drop is None else share_drop)


def share_median(shares):
    """A side's median producers' CPU share over shares (one per round so
    far, None where a run has none), the reference disturbed_why() judges
    a run by; None where none is known."""
    return _ab_rule.share_median(shares)


def cpu_share_of(disturbances):
    """A run's producers' CPU share from what it recorded (a Result's
    disturbances, as a dict, or None): what share_median() takes, None
    where the run has none."""
    return _ab_rule.cpu_share_of(disturbances)


def _check_options(mode, precision, threshold, alpha, budget, max_rounds, warmup,
                   duration, interval, min_rounds=MIN_ROUNDS):
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}: must be one of {', '.join(MODES)}")
    precision = _fraction("precision", precision, MIN_PRECISION, MAX_PRECISION,
                          "a fraction of the ratio (0.01 = 1 %)")
    threshold = _fraction("threshold", threshold, MIN_THRESHOLD, MAX_THRESHOLD,
                          "a fraction of the ratio (0.02 = 2 %)")
    alpha = _fraction("alpha", alpha, 0.001, 0.5, "a probability")
    interval = _runner._seconds("interval", interval, 0.001, allow_zero=False)
    if _precision.is_auto(warmup):
        warmup = DUET_WARMUP_S if mode == "duet" else _precision.AUTO
    else:
        _precision.check_warmup_text(warmup)
        warmup = _runner._warmup_seconds(warmup)
    duration = _runner._duration_seconds(duration, interval)
    nominal = round_seconds(mode, warmup, duration)
    budget = _runner.check_budget(budget)
    if budget is not None:
        if budget < MIN_ROUNDS * nominal:
            raise ValueError(
                f"budget={budget!r} out of range: too short for {MIN_ROUNDS} rounds of "
                f"about {nominal:g} s ({mode}: warm-up {warmup} s + {duration:g} s "
                f"measured + about {NOMINAL_LOAD_S:g} s to load, per side): at least "
                f"{MIN_ROUNDS * nominal:g} s")
    if max_rounds is not None:
        max_rounds = _runner._count("max_rounds", max_rounds, MIN_ROUNDS, MAX_ROUNDS,
                                    ", or None")
    _runner._count("min_rounds", min_rounds, MIN_ROUNDS, max_rounds or MAX_ROUNDS,
                   " (max_rounds)" if max_rounds else "")
    if budget is None and max_rounds is None:
        raise ValueError("budget=None and max_rounds=None: give at least one, or the "
                         "comparison of two sides the same within noise never ends")
    return precision, threshold, alpha, budget, max_rounds, warmup, duration, nominal


def _run_options(side, warmup, duration, interval):
    return {**side.options, "warmup": warmup, "duration": duration, "interval": interval}


def _check_sides(a, b, different_benchmarks, mode, warmup, duration, interval):
    """Every check before anything loads: each side's benchmark and options
    (benchbpf.check), that they measure the same figure, and what the mode
    needs of them."""
    for label, side in (("a", a), ("b", b)):
        try:
            info = _runner.describe(side.name)
        except ValueError as e:
            raise ValueError(f"{label}: {e}") from None
        if info.report in ("bpf_timing", "false_hits"):
            raise ValueError(f"{label}: {side.name}: not for an A/B comparison: its figure "
                             + ("comes from BPF-timed batches, not a rate per interval"
                                if info.report == "bpf_timing" else
                                "is a false-positive percentage, not a rate per interval"))
        if side.options.get("prog_stats"):
            raise ValueError(f"{label}: prog_stats=True slows the programs it accounts: "
                             "not in an A/B comparison")
        try:
            _runner.check(side.name, **_run_options(side, warmup, duration, interval))
        except (ValueError, TypeError) as e:
            raise type(e)(f"{label}: {e}") from None
    if a.name != b.name and not different_benchmarks:
        raise ValueError(f"a is {a.name} and b is {b.name}: different benchmarks measure "
                         "different things; say different_benchmarks=True "
                         "(--different-benchmarks) if comparing them is the point")
    if mode == "duet" and a.name != b.name:
        warnings.warn(
            f"a duet of {a.name} and {b.name}: each side's calls also run the other "
            "side's programs, and sides of different benchmarks pay different costs for "
            "them (selftest against strncmp-helper read B/A 0.85 in a duet, 1.06 "
            "interleaved: results/duet-cross-2cpu.md); compare them interleaved",
            BenchmarkMismatchWarning, stacklevel=3)
    kernels = (a.kernel is not None, b.kernel is not None)
    if mode == "kernels":
        if not all(kernels):
            which = "a" if not kernels[0] else "b"
            raise ValueError(f"{which}: no kernel: in a comparison of kernels each side "
                             "names its kernel (--kernel K NAME -- --kernel K2 NAME)")
        if "host" in (a.kernel, b.kernel):
            raise ValueError("a side on the host against a side in a guest: the guest's "
                             "figures are of its virtual CPUs (and here emulated), not "
                             "comparable with the host's; give both sides a guest kernel")
        from ..guests import vm
        for label, side in (("a", a), ("b", b)):
            try:
                vm.resolve_kernel(side.kernel, fetch=False)
            except (ValueError, TypeError) as e:
                raise type(e)(f"{label}: {e}") from None
    elif any(kernels):
        raise ValueError(f"{'a' if kernels[0] else 'b'}: --kernel {(a if kernels[0] else b).kernel}"
                         ": sides in guests need mode='kernels' (given for both sides, "
                         "as --kernel K1 NAME -- --kernel K2 NAME)")


# ---------------------------------------------------------------- runners

class _Interleaved:
    """Rounds of one run of each side in this process, in a random order."""

    def __init__(self, a, b, warmup, duration, interval, rng):
        self.sides = {"a": a, "b": b}
        self.warmup, self.duration, self.interval = warmup, duration, interval
        self.rng = rng

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def round(self, index):
        """Each side once, in a random order: (A's Result, B's Result, the
        side that ran first, None, None)."""
        order = ["a", "b"]
        self.rng.shuffle(order)
        got = {}
        for key in order:
            side = self.sides[key]
            got[key] = _runner.run(side.name, **_run_options(side, self.warmup, self.duration,
                                                               self.interval))
        return got["a"], got["b"], order[0], None, None


def _runner_for(mode, a, b, warmup, duration, interval, rng, log):
    """What runs the rounds: a context manager whose round(index) returns
    (A's Result, B's Result, the side that ran first or None, A's CPUs, B's
    CPUs)."""
    if mode == "interleaved":
        return _Interleaved(a, b, warmup, duration, interval, rng)
    if mode == "duet":
        from ._duet import Duet
        return Duet(a, b, warmup, duration, interval, rng)
    from ..guests.vm import GuestPair
    return GuestPair(a, b, warmup, duration, interval, rng, say=log)


def _metadata(mode, warmup, duration, interval):
    machine = fingerprint()
    return {"kernel": machine["kernel_release"], "nr_cpus": machine["nr_cpus"],
            "cpu_model": machine["cpu_model"], "benchbpf_version": __version__,
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"),
            "warmup": warmup, "duration": duration, "interval": interval,
            "fingerprint": machine}


def ab(a, b, *, mode="interleaved", rule=RULE, precision=PRECISION, threshold=THRESHOLD,
       alpha=ALPHA, budget=BUDGET_S, max_rounds=None, min_rounds=MIN_ROUNDS, warmup=WARMUP,
       duration=DURATION_S, interval=INTERVAL_S, seed=None, different_benchmarks=False,
       per_cpu=None, counter="hits", progress=None, on_round=None, log=None,
       set_aside_disturbed=False):
    """Compare side B with side A, in rounds taken in turns: an ABResult.

    a, b: the sides, each a command line as the CLI takes it
    ("rb-libbpf --rb-sampled", or a list of its words), (name, {options}) or
    a Side.  mode: "interleaved" (default: in this process, one side then
    the other in a random order each round), "duet" (both at once, each on
    half of the CPUs, swapped every round; refused where the CPUs are too
    few for both sides' threads, or where a side's programs count other
    processes' events) or "kernels" (each side in a guest booting its
    kernel: --kernel in each side).  rule: the sequential rule that makes
    the interval, one of RULES (default RULE; "mean" is the rule before,
    on the rounds' mean; results/ab-power-robust-2cpu.md).

    Stops when the interval of B/A decides against threshold (default 0.02:
    +-2 %; "same" within it, "slower"/"faster" beyond it), when it is as
    narrow as precision (default 0.01: +-1 %), after max_rounds rounds, or
    when budget seconds of wall time (default 300) would be passed by
    another round; then it says "undecided" unless the interval already
    lies on one side of 1.  Neither the threshold nor the precision stops
    it before min_rounds rounds (default 8); min_rounds=max_rounds takes a
    fixed number of rounds, to measure an effect at length.  alpha: the
    chance of a false alarm the interval allows over all its looks
    (default 0.05).  warmup, duration, interval:
    each run's warm-up and measured time and its sampling period, s
    (default "auto": until steady, as run()'s, in a duet a fixed 0.3 s;
    1.0; 0.05).  seed: the order of the sides within rounds (default: a
    random seed, recorded).  different_benchmarks: allow sides of two
    benchmarks (rb-libbpf against pb-libbpf).  per_cpu: each run's figure
    is its speed as compare() judges it (analysis.run_speed), per
    CPU-second of the producers where the samples carry it (None, the
    default), which time the producers lost to other processes does not
    move; False: per second.  counter: the figure's counter ("hits"; or
    "total_ops", hits + drops, as the kernel's scripts sum the hashmap
    benchmarks with a bloom filter).  progress: as sweep()'s.
    on_round(round, result_so_far): called after each round.  log: called
    with a line at each step of booting guests (mode "kernels"), or None.
    set_aside_disturbed: a round the host disturbed (Round.disturbed:
    steal, preemption, a late sample) is set aside (ABResult.set_aside) and
    another taken in its place (default False: every round counts, and the
    verdict says how many were disturbed: with bursts taking both CPUs, the
    median rule found a 5 % slowdown less often with them set aside, as it
    already out-votes them; results/ab-power-robust-2cpu.md, stage 4).
    Set-aside rounds take from the budget; max_rounds of them end the
    comparison too.

    Everything is checked before anything loads; ValueError/TypeError name
    the side and option at fault.  Ctrl-C raises benchbpf.Interrupted whose
    .partial is the ABResult of the rounds that finished."""
    _ab_rule.check_rule(rule)
    precision, threshold, alpha, budget, max_rounds, warmup, duration, nominal = _check_options(
        mode, precision, threshold, alpha, budget, max_rounds, warmup, duration, interval,
        min_rounds)
    a, b = Side.of(a, "a"), Side.of(b, "b")
    if (a.kernel is not None or b.kernel is not None) and mode == "interleaved":
        mode = "kernels"
    _check_sides(a, b, different_benchmarks, mode, warmup, duration, interval)
    if per_cpu not in (None, True, False):
        raise TypeError(f"per_cpu={per_cpu!r}: must be None, True or False")
    if counter not in ("hits", "total_ops"):
        raise ValueError(f"counter={counter!r}: must be 'hits' or 'total_ops'")
    for key, fn in (("on_round", on_round), ("log", log)):
        if fn is not None and not callable(fn):
            raise TypeError(f"{key}={fn!r}: must be callable or None")
    if not isinstance(set_aside_disturbed, bool):
        raise TypeError(f"set_aside_disturbed={set_aside_disturbed!r}: must be True or False")
    if seed is None:
        seed = int.from_bytes(os.urandom(4), "little")
    elif isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed={seed!r}: must be an int or None")
    planned = planned_rounds(nominal, budget, max_rounds)
    rng = random.Random(seed)
    settings = dict(threshold=threshold, precision=precision, alpha=alpha,
                    budget_s=float(budget) if budget is not None else math.inf,
                    planned_rounds=planned, seed=int(seed),
                    metadata=_metadata(mode, warmup, duration, interval),
                    measured=measured_rates(mode), rule=rule,
                    set_aside_disturbed=set_aside_disturbed)
    rounds, set_aside, began = [], [], time.monotonic()
    # Each side's producers' CPU shares over every round taken, set aside or
    # not: a side is judged preempted against its own (Round.disturbed).
    shares = ([], [])

    def result(stopped_by):
        return ABResult(a, b, mode, tuple(rounds), stopped_by,
                        round(time.monotonic() - began, 3), **settings,
                        set_aside=tuple(set_aside))

    runner = _runner_for(mode, a, b, warmup, duration, interval, rng, log)
    desc = f"ab {a.name}"
    stopped_by = None
    try:
        with _progress.session(desc, 0, progress), runner:
            while stopped_by is None:
                taken = len(rounds) + len(set_aside)
                with _progress.step(f"round {taken + 1}"):
                    started_s = round(time.monotonic() - began, 3)
                    ra, rb, first, a_cpus, b_cpus = runner.round(taken)
                    for side, r in zip(shares, (ra, rb)):
                        side.append(_ab_rule.cpu_share_of(r.disturbances))
                    rnd = Round(taken, ra, rb, first, started_s, a_cpus, b_cpus, per_cpu,
                                counter, *map(_ab_rule.share_median, shares))
                _check_figures(rnd)
                (set_aside if set_aside_disturbed and rnd.disturbed else rounds).append(rnd)
                so_far = result(None)
                stopped_by = _ab_rule.decided(len(rounds), so_far.ratio, so_far.low,
                                              so_far.high, threshold, precision, min_rounds)
                if stopped_by is None and max_rounds is not None and \
                        max_rounds <= max(len(rounds), len(set_aside)):
                    stopped_by = "max_rounds"
                if stopped_by is None and _runner.next_would_overrun(
                        budget, time.monotonic() - began, taken + 1):
                    stopped_by = "budget"
                if on_round is not None:
                    on_round(rnd, so_far)
    except _progress.Interrupted as e:
        raise _interrupted(result("interrupted"), desc) from e.__cause__
    except KeyboardInterrupt:
        raise _interrupted(result("interrupted"), desc) from None
    return result(stopped_by)


def _check_figures(rnd):
    for key, r, figure in (("a", rnd.a, rnd.a_mps), ("b", rnd.b, rnd.b_mps)):
        if not r.samples or not figure > 0:
            from .._core import BenchmarkError
            raise BenchmarkError(f"side {key.upper()} ({r.name}) measured no hits in round "
                                 f"{rnd.index + 1}: there is no figure to compare")


def _interrupted(partial, desc):
    path = _progress.save_partial(partial, desc) if partial.rounds else None
    where = f"saved to {path} (benchbpf.ABResult.from_json), and in the exception's " \
            ".partial" if path else "in the exception's .partial"
    message = (f"{desc}: interrupted after {len(partial.rounds)} rounds; they are {where}"
               if partial.rounds else f"{desc}: interrupted before any round finished")
    print(f"benchbpf: {message}", file=sys.stderr, flush=True)
    return _progress.Interrupted(message, partial, path)


# benchbpf.ab is this module and, called, ab().
callable_module(__name__, "ab")
