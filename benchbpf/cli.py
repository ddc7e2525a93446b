"""The benchbpf command: the kernel bench's flags and output, from the C core.

    benchbpf -w2 -d5 -a trig-tp
    benchbpf -l
    benchbpf --rb-sampled -c1 rb-custom --json out.json
"""
import argparse
import os
import sys

from . import _runner
from ._core import BenchmarkError, UnsupportedError
from ._report import progress_line

__all__ = ["main", "build_parser"]


def _family_options():
    """Every benchmark's own options by CLI flag: flag -> [(bench, ParamInfo)]."""
    flags = {}
    for name in _runner.list_benchmarks():
        for p in _runner.describe(name).params.values():
            if p.cli:
                flags.setdefault(p.cli, []).append((name, p))
    return flags


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


def _nonneg_number(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 0")
    return int(v) if v.is_integer() else v


def build_parser(flags=None):
    flags = _family_options() if flags is None else flags
    ap = argparse.ArgumentParser(
        prog="benchbpf",
        description="Run one of the kernel's BPF benchmarks and print its "
                    "per-interval and summary lines, as the kernel's bench does.",
        epilog="examples: benchbpf count-local; benchbpf -p16 -c8 -a count-local; "
               "benchbpf -w2 -d5 -a trig-tp")
    ap.add_argument("bench", nargs="?", help="benchmark name (see -l)")
    ap.add_argument("-l", "--list", action="store_true", help="list available benchmarks")
    ap.add_argument("-d", "--duration", type=_positive_int, default=5, metavar="SEC",
                    help="duration of benchmark, seconds (default 5)")
    ap.add_argument("-w", "--warmup", type=_nonneg_number, default=1, metavar="SEC",
                    help="warm-up period, seconds (default 1)")
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
                    help="print only the summary, no per-interval lines")
    ap.add_argument("--interval", type=float, default=1.0, metavar="SEC",
                    help="sampling interval, seconds (default 1)")
    ap.add_argument("--json", metavar="FILE", help="save the result as JSON")
    group = ap.add_argument_group("benchmark options")
    for flag, users in sorted(flags.items()):
        p = users[0][1]
        benches = ", ".join(sorted({b for b, _ in users}))
        dest = "opt_" + flag.lstrip("-").replace("-", "_")
        if p.type == "bool":
            group.add_argument(flag, dest=dest, action="store_true", default=None,
                               help=f"{p.help} [{benches}]")
        elif p.type == "choice":
            group.add_argument(flag, dest=dest, choices=p.choices, default=None,
                               help=f"{p.help} (default {p.default}) [{benches}]")
        else:
            group.add_argument(flag, dest=dest, type=_c_int, default=None, metavar="NUM",
                               help=f"{p.help} (default {p.default}, {p.min}..{p.max}) "
                                    f"[{benches}]")
    return ap


def _bench_params(args, bench, flags):
    params = {}
    for flag, users in flags.items():
        value = getattr(args, "opt_" + flag.lstrip("-").replace("-", "_"))
        if value is None:
            continue
        mine = [p for b, p in users if b == bench]
        if not mine:
            raise ValueError(f"{flag} does not apply to {bench}")
        params[mine[0].name] = value
    return params


def main(argv=None):
    flags = _family_options()
    ap = build_parser(flags)
    args = ap.parse_args(argv)
    if args.list:
        print("Available benchmarks:")
        for name in _runner.list_benchmarks():
            print(f"- {name}")
        return 0
    if not args.bench:
        ap.print_usage(sys.stderr)
        print("benchbpf: error: benchmark name is not specified", file=sys.stderr)
        return 2
    try:
        params = _bench_params(args, args.bench, flags)
        info = _runner.describe(args.bench)
    except ValueError as e:
        print(f"benchbpf: error: {e}", file=sys.stderr)
        return 2
    producers = args.producers
    interval_ns = int(round(args.interval * 1e9))

    def show(sample, index, warmup):
        print(progress_line(info.report, index, sample, producers, interval_ns), flush=True)

    print(f"Setting up benchmark '{args.bench}'...", flush=True)
    try:
        result = _runner.run(
            args.bench, warmup=args.warmup, duration=args.duration,
            interval=args.interval, producers=args.producers, consumers=args.consumers,
            affinity=args.affinity, prod_affinity=args.prod_affinity,
            cons_affinity=args.cons_affinity, verbose=args.verbose,
            callback=None if args.quiet else show, **params)
    except (ValueError, TypeError) as e:
        print(f"benchbpf: error: {e}", file=sys.stderr)
        return 2
    except (UnsupportedError, PermissionError) as e:
        print(f"benchbpf: {args.bench} cannot run here: {e}", file=sys.stderr)
        return 3
    except BenchmarkError as e:
        print(f"benchbpf: {args.bench} failed: {e}", file=sys.stderr)
        log = getattr(e, "log", "")
        if log and args.verbose:
            print(log, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("benchbpf: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Reader went away (| head): the run was stopped and cleaned up.
        sys.stdout = open(os.devnull, "w")
        return 141
    print(result.summary())
    if args.json:
        result.to_json(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
