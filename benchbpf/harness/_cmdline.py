"""The command line of one benchmark run, as the kernel bench's flags: the
parser, its flags per benchmark and the checks main() makes before running.

Below the commands that read such lines (cli's main, `benchbpf ab`'s sides,
the kernel scripts' checks), so that each of them parses alike."""
import argparse
import functools
import re

from . import _precision, _runner

__all__ = ["build_parser", "check_command", "parse_side", "EXAMPLES", "add_history_option",
           "DEFAULT_STORE"]


def _family_options():
    """Every benchmark's own options by CLI flag: flag -> [(bench, ParamInfo)]."""
    flags = {}
    for name in _runner.list_benchmarks():
        for p in _runner.describe(name).params.values():
            for flag in p.flags:
                flags.setdefault(flag, []).append((name, p))
    return flags


#: A BPF-timed run ends once every producer has its batches; without -d it
#: may take this long, as the kernel bench's (which sets 600 s for them).
BPF_TIMED_DURATION = 600


#: Benchmark options that the kernel bench also takes as a short flag in its
#: common options (-s sets what only its trigger programs read).
SHORT_FLAGS = {"--stacktrace": "-s"}


#: Common option -> CLI flag, for error messages.
COMMON_FLAGS = {
    "warmup": "-w", "duration": "-d", "producers": "-p", "consumers": "-c",
    "affinity": "-a", "prod_affinity": "--prod-affinity",
    "cons_affinity": "--cons-affinity", "interval": "--interval", "verbose": "-v",
    "budget": "--budget",
}


def _in_flag_terms(message, info=None):
    """Rewrite `name=value` of options in an error message as `flag value`."""
    names = dict(COMMON_FLAGS)
    if info is not None:
        # a mode switch's value is its flag: left as name=value
        names.update({k: p.flag for k, p in info.params.items() if not p.choice_flags})
    pattern = r"\b(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) \
        + r")=(\S+?)(?=[:,;)]|\s|$)"
    message = re.sub(pattern, lambda m: f"{names[m.group(1)]} {m.group(2)}", message)
    # --precision is in percent, run()'s precision a fraction.
    return re.sub(r"\bprecision=([0-9.eE+-]+)(?=[:,;)]|\s|$)",
                  lambda m: f"--precision {float(m.group(1)) * 100:g}", message)


def _c_int(text):
    """An integer as the kernel bench's strtol(text, NULL, 0) reads flags like
    --map_flags: decimal, or hexadecimal with 0x."""
    try:
        return int(text, 0)
    except ValueError:
        return int(text, 10)   # leading zeros; anything else raises for argparse


def _positive_int(text):
    try:
        v = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
    return v


def _positive_number(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
    return int(v) if v.is_integer() else v


def _nonneg_number(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 0")
    return int(v) if v.is_integer() else v


def _warmup(text):
    if text == "auto":
        return text
    try:
        return _nonneg_number(text)
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(f"{e} (seconds, or 'auto')") from None


def _precision_pct(text):
    """--precision PCT, in percent, as run()'s fraction; the range is run()'s."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    lo, hi = _precision.MIN_PRECISION * 100, _precision.MAX_PRECISION * 100
    if not lo <= v <= hi:
        raise argparse.ArgumentTypeError(f"{text!r} out of range: a percentage in {lo:g}..{hi:g}")
    return v / 100


#: The --help epilog's examples; the test suite runs each of them.
EXAMPLES = (
    "benchbpf count-local",
    "benchbpf -p2 -a count-local",
    "benchbpf -w2 -d5 -a trig-tp",
    "benchbpf -c1 --rb-sampled --rb-sample-rate 100 rb-custom",
    "benchbpf rb-libbpf --help",
)


class _Parser(argparse.ArgumentParser):
    """One line and a pointer to --help on a bad flag, not the usage block."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message}\nTry `{self.prog} --help' for more "
                     "information.\n")


class _DefaultStore:
    """--history given without a value."""

    def __repr__(self):
        return "the default store"


#: args.history of a bare --history: the default store, as benchbpf.history
#: resolves it (the tools layer maps it to None; this layer cannot import it).
DEFAULT_STORE = _DefaultStore()


def add_history_option(parser):
    """--history [PATH|URL], as every command that measures takes it: the
    run, report and ab record what they measured into the history store."""
    parser.add_argument(
        "--history", nargs="?", const=DEFAULT_STORE, default=None, metavar="PATH|URL",
        help="also record what is measured into the history store (`benchbpf history "
             "show` reads it): an SQLite file or a postgresql:// URL; without a value "
             "the default store, $BENCHBPF_HISTORY, else history.sqlite in the user's "
             "data directory.  A store that is not a benchbpf store (corrupt, another "
             "program's, a newer schema) is refused before anything runs; one that "
             "cannot take the write (read-only, server down) costs only the record: "
             "the run is printed and saved, with a warning, and the exit status is 4")


def build_parser(flags=None, add_help=True):
    """The argparse parser of `benchbpf [options] NAME`: the kernel bench's
    common flags and every benchmark's own (flags: _family_options(), by
    default read from the registry); add_help=False leaves -h to the caller."""
    flags = _family_options() if flags is None else flags
    ap = _Parser(
        prog="benchbpf", add_help=add_help,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run one of the kernel's BPF benchmarks and print its "
                    "per-interval and summary lines, as the kernel's bench does.",
        epilog="examples:\n" + "\n".join("  " + e for e in EXAMPLES)
        + "\n\nEach benchmark's own options (--rb-sampled, --nr_entries...): "
          "`benchbpf NAME --help`.")
    ap.add_argument("bench", nargs="?", metavar="NAME", help="benchmark name (see -l); "
                    "`benchbpf NAME --help` describes one benchmark and its options")
    ap.add_argument("-V", "--version", action="store_true",
                    help="print benchbpf's and libbpf's versions")
    ap.add_argument("-l", "--list", action="store_true",
                    help="list available benchmarks ('!' marks what this kernel cannot run)")
    ap.add_argument("--list-scenarios", action="store_true",
                    help="list the scenarios of a benchmark that has them (xdp-lb) and exit")
    ap.add_argument("--machine-readable", action="store_true",
                    help="BPF-timed benchmarks: print only the 'RESULT scenario=...' line "
                         "(implies -q)")
    ap.add_argument("-d", "--duration", type=_positive_number, default=None, metavar="SEC",
                    help="duration of benchmark, seconds: whole sampling intervals, at "
                         "least one (default 5; BPF-timed benchmarks end at their batches, "
                         f"after at most {BPF_TIMED_DURATION} s)")
    ap.add_argument("-w", "--warmup", type=_warmup, default=None, metavar="SEC",
                    help="warm-up period, seconds, any length >= 0 (default 1), or "
                         "'auto': until the "
                         "benchmark is steady (0.5 to 5 s; the default with --precision)")
    ap.add_argument("--precision", type=_precision_pct, default=None, metavar="PCT",
                    help="repeat short runs (0.5 s, each loaded anew) until the 95%% "
                         "interval of the mean hit rate over them is within PCT %% of it "
                         "(0.01..50); -d then bounds the time measured in all (default "
                         "60); samples every 0.1 s unless --interval is given")
    ap.add_argument("-p", "--producers", type=_positive_int, default=1, metavar="NUM",
                    help="number of producer threads")
    ap.add_argument("-c", "--consumers", type=int, default=None, metavar="NUM",
                    help="number of consumer threads (default: the benchmark's)")
    ap.add_argument("-a", "--affinity", action="store_true",
                    help="set consumer/producer thread affinity")
    ap.add_argument("--prod-affinity", metavar="CPUSET",
                    help="set of CPUs for producer threads; implies --affinity")
    ap.add_argument("--cons-affinity", metavar="CPUSET",
                    help="set of CPUs for consumer threads; implies --affinity")
    ap.add_argument("-v", "--verbose", action="store_true", help="verbose debug output")
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="be more quiet: no 'Setting up' and 'started' lines")
    ap.add_argument("--interval", type=float, default=None, metavar="SEC",
                    help="sampling interval, seconds (default 1; 0.1 with --precision "
                         "or -w auto)")
    ap.add_argument("--json", metavar="FILE", help="save the result as JSON")
    ap.add_argument("--repeat", type=_positive_int, default=1, metavar="N",
                    help="run the benchmark N times, one after another (default 1); "
                         "--json then saves the N runs as a result set, for "
                         "`benchbpf compare`")
    ap.add_argument("--budget", type=_positive_number, default=None, metavar="SEC",
                    help="wall time after which no more runs start, with --precision or "
                         "--repeat: a precision run stops \"by budget\", --repeat runs fewer")
    ap.add_argument("--kernel", action="append", metavar="K",
                    help="run in a VM booting kernel K instead (repeat for several): a "
                         "vmlinuz path with its modules beside it, a Debian kernel version "
                         "(6.12, 6.1, 6.1.0-57: fetched into ~/.cache/benchbpf), or 'host'; "
                         "with -l, list what that kernel can run")
    add_history_option(ap)
    ap.add_argument("--prog-stats", action="store_true",
                    help="turn the kernel's BPF run-time statistics on for the run and "
                         "print each program's run count and time after the summary "
                         "(adds two clock reads per program run)")
    # Parsed here for every benchmark, but described by `benchbpf NAME
    # --help`, each with its own benchmark: --help stays one screen.
    group = ap.add_argument_group("benchmark options")
    hidden = argparse.SUPPRESS
    for flag, users in sorted(flags.items()):
        p = users[0][1]
        dest = _dest(flag, p)
        names = (SHORT_FLAGS[flag], flag) if flag in SHORT_FLAGS else (flag,)
        if p.choice_flags:
            # one dest for all of a switch's flags: the last one given wins,
            # as in the kernel bench
            group.add_argument(flag, dest=dest, action="store_const", const=flag[2:],
                               default=None, help=hidden)
        elif p.type == "bool":
            group.add_argument(*names, dest=dest, action="store_true", default=None,
                               help=hidden)
        elif p.type == "choice":
            choices = sorted({c for _, q in users for c in q.choices})
            group.add_argument(flag, dest=dest, choices=choices, default=None,
                               metavar="NAME" if p.choice_help else None, help=hidden)
        elif p.type == "string":
            group.add_argument(flag, dest=dest, default=None, metavar="TEXT", help=hidden)
        else:
            group.add_argument(flag, dest=dest, type=_c_int, default=None, metavar="NUM",
                               help=hidden)
    return ap


def _default(p):
    """A parameter's default as help shows it: "required" for one without."""
    return "required" if p.required else f"default {p.default}"


def _dest(flag, p):
    """argparse dest of a flag: one per mode switch (the last one given wins),
    else the flag itself, spelled as given, since --value_size (bloom) and
    --value-size (htab-mem) are different flags of different benchmarks, as in
    the kernel bench."""
    if p.choice_flags:
        return "opt_switch_" + p.name
    return "opt" + flag


def _bench_params(args, bench, flags):
    params = {}
    for flag, users in flags.items():
        value = getattr(args, _dest(flag, users[0][1]))
        if value is None:
            continue
        mine = [p for b, p in users if b == bench]
        if not mine:
            shown = "--" + value if users[0][1].choice_flags else flag
            raise ValueError(f"{shown} does not apply to {bench} "
                             f"(`benchbpf {bench} --help` lists its options)")
        params[mine[0].name] = value
    return params


def _consumer_error(consumers, info, params):
    """-c outside what the benchmark really takes, said in flag terms."""
    if consumers is None:
        return None
    if info.max_consumers == 0:
        if consumers != 0:
            return f"-c {consumers}: {info.name} takes no consumer thread"
        return None
    lo = 0 if info.default_consumers == 0 or params.get("rb_bench_producer") else 1
    if not lo <= consumers <= info.max_consumers:
        extra = " (0 with --rb-bench-producer)" if "rb_bench_producer" in info.params \
            and lo == 1 else ""
        rng = f"{lo}..{info.max_consumers}" if lo != info.max_consumers else f"{lo}"
        return f"-c {consumers}: {info.name} takes {rng} consumer thread(s){extra}"
    return None


def _run_kwargs(args, info, params):
    """run()'s keywords for a parsed command line."""
    return dict(warmup=args.warmup, duration=_duration(args, info), interval=args.interval,
                producers=args.producers, consumers=args.consumers,
                affinity=args.affinity, prod_affinity=args.prod_affinity,
                cons_affinity=args.cons_affinity, verbose=args.verbose,
                prog_stats=args.prog_stats, precision=args.precision, **params)


@functools.lru_cache(maxsize=1)
def _checking_parser():
    # check_command() may check thousands of command lines (a kernel script's).
    return build_parser()


def check_command(argv):
    """Check argv, a `benchbpf NAME ...` command line, as main() does before running it
    (flags, their benchmark, -c, and benchbpf.check() of every value), without
    running: returns (name, run keywords); raises ValueError/TypeError naming the
    flag, or SystemExit(2) for what argparse refuses."""
    flags = _family_options()
    args = _checking_parser().parse_args(list(argv))
    if not args.bench:
        raise ValueError("benchmark name is not specified")
    info = _runner.describe(args.bench)
    params = _bench_params(args, args.bench, flags)
    why = _consumer_error(args.consumers, info, params)
    if why:
        raise ValueError(why)
    kwargs = _run_kwargs(args, info, params)
    try:
        _runner.check(args.bench, **kwargs)
    except (ValueError, TypeError) as e:
        raise type(e)(_in_flag_terms(str(e), info)) from None
    return args.bench, kwargs


#: What a side of `benchbpf ab` may not set: the comparison sets it for both.
_SIDE_REFUSED = (("warmup", "-w"), ("duration", "-d"), ("interval", "--interval"),
                 ("precision", "--precision"), ("json", "--json"),
                 ("machine_readable", "--machine-readable"), ("list", "-l"),
                 ("list_scenarios", "--list-scenarios"), ("version", "-V"),
                 ("prog_stats", "--prog-stats"), ("history", "--history"))


def parse_side(argv):
    """One side of `benchbpf ab`: a `[--kernel K] NAME [options]` command line as
    the benchmark takes it, without run lengths.  Returns (name, run() keywords
    besides the lengths, kernel spec or None); raises ValueError naming the
    flag at fault, SystemExit(2) for what argparse refuses."""
    flags = _family_options()
    args = _checking_parser().parse_args(list(argv))
    if not args.bench:
        raise ValueError("benchmark name is not specified")
    for dest, flag in _SIDE_REFUSED:
        if getattr(args, dest) not in (None, False):
            raise ValueError(f"{flag} inside a side: the comparison sets it for both sides "
                             "(give -w, -d, --interval before the first side)")
    if args.repeat != 1:
        raise ValueError("--repeat inside a side: a comparison repeats both sides in rounds")
    if args.kernel and len(args.kernel) > 1:
        raise ValueError(f"--kernel given {len(args.kernel)} times in one side: a side runs "
                         "on one kernel")
    info = _runner.describe(args.bench)
    params = _bench_params(args, args.bench, flags)
    why = _consumer_error(args.consumers, info, params)
    if why:
        raise ValueError(why)
    options = dict(params)
    if args.producers != 1:
        options["producers"] = args.producers
    for key in ("consumers", "prod_affinity", "cons_affinity"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    if args.affinity:
        options["affinity"] = True
    return args.bench, options, (args.kernel[0] if args.kernel else None)


def _interval(args):
    if args.interval is not None:
        return args.interval
    return _precision.default_interval(args.precision, args.warmup)


def _duration(args, info):
    """-d, or its default: 5 s, or for BPF-timed benchmarks long enough for
    their batches, as the kernel bench's runs end at them."""
    if args.duration is not None or args.precision is not None:
        return args.duration    # None with --precision: run()'s bound
    return BPF_TIMED_DURATION if info.report == "bpf_timing" else 5
