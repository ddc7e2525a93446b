"""The benchbpf command: the kernel bench's flags and output, from the C core.

    benchbpf -w2 -d5 -a trig-tp
    benchbpf -l
    benchbpf --rb-sampled -c1 rb-custom --json out.json
    benchbpf report --quick -o report.html --json report.json
    benchbpf compare before.json after.json
    benchbpf show out.json
"""
import argparse
import os
import signal
import statistics
import sys
import time
import warnings

from ..harness import _runner
from ..analysis import hostdrift
from . import report, show, system
from . import history as _history
from ..harness._cmdline import (_bench_params, _consumer_error, _default, _family_options,
                                _in_flag_terms, _interval, _nonneg_number,
                                _Parser, _positive_int, _positive_number, _run_kwargs,
                                _warmup, check_command)
from ..harness._cmdline import build_parser as _run_parser
from ..harness._cmdline import DEFAULT_STORE, add_history_option
from ..history import HistoryError, HistoryUnavailable
# The command's public grammar, read through cli by the manual's extension.
from ..harness._cmdline import COMMON_FLAGS, SHORT_FLAGS
from ..analysis._compare import run_agreement
from .._core import BenchmarkError, UnsupportedError
from ..results._lines import progress_line

__all__ = ["main", "build_parser", "check_command"]


def _bench_help(info):
    """What `benchbpf NAME --help` prints."""
    lines = [f"benchbpf {info.name}: {info.help}", "",
             f"family {info.family}, report {info.report}, "
             + (f"{info.default_consumers} consumer(s) by default, at most "
                f"{info.max_consumers}" if info.max_consumers else "no consumer thread"),
             "", "options of this benchmark:"]
    if not info.params:
        lines.append("  none besides the common options")
    for p in info.params.values():
        if p.choice_flags:
            lines.append(f"  {' | '.join(p.flags)}")
            lines.append(f"  {'':24s} {p.help} (default --{p.default})")
        elif p.type == "bool":
            lines.append(f"  {p.flag:24s} {p.help} (default off)")
        elif p.type == "choice" and p.choice_help:
            lines.append(f"  {p.flag + ' NAME':24s} {p.help} "
                         + f"({_default(p)})")
            lines += [f"      {c:<20s}  {h}" for c, h in zip(p.choices, p.choice_help)]
        elif p.type == "choice":
            lines.append(f"  {p.flag + ' ' + '|'.join(p.choices):24s} {p.help} "
                         + f"({_default(p)})")
        elif p.type == "string":
            lines.append(f"  {p.flag + ' TEXT':24s} {p.help} (default {p.default}, "
                         f"{p.min}..{p.max} characters)")
        else:
            lines.append(f"  {p.flag + ' NUM':24s} {p.help} ({_default(p)}, "
                         f"{p.min}..{p.max})")
    lines += ["", "common options: -w SEC (default 1), -d SEC (default 5), -p NUM, -c NUM, "
              "-a, --prod-affinity CPUSET, --cons-affinity CPUSET, --interval SEC, -q, -v, "
              "--json FILE (see `benchbpf --help`)"]
    return "\n".join(lines)


def _list(out):
    """-l: every benchmark with its description; '!' marks those this kernel
    cannot run, with the missing feature."""
    from ..harness.features import features, missing_features
    try:
        probed = features()
    except Exception as e:  # no privilege or no probes: list without marks
        probed, note = None, f"(cannot probe this kernel: {e}; no marks)"
    else:
        note = "('!': this kernel cannot run it)"
    print(f"Available benchmarks: {note}", file=out)
    for name in _runner.list_benchmarks():
        info = _runner.describe(name)
        missing = missing_features(name, probed) if probed is not None else ()
        mark = "!" if missing else "-"
        why = f"  [cannot run: no {', '.join(missing)}]" if missing else ""
        print(f"{mark} {name:28s} {info.help}{why}", file=out)


def _list_scenarios(bench):
    """--list-scenarios: as the kernel bench's, the scenarios of `bench`, or
    of every benchmark that has some when none is named."""
    names = [bench] if bench else [n for n in _runner.list_benchmarks()
                                   if "scenario" in _runner.describe(n).params]
    if bench and bench not in _runner.list_benchmarks():
        return _fail(2, f"unknown benchmark {bench!r} (`benchbpf -l` lists them)")
    for name in names:
        p = _runner.describe(name).params.get("scenario")
        if p is None:
            return _fail(2, f"--list-scenarios: {name} has no scenarios")
        print("Available scenarios:")
        for choice, text in zip(p.choices, p.choice_help or ("",) * len(p.choices)):
            print(f"  {choice:<20s}  {text}")
    return 0


def _check_json_path(path, flag="--json"):
    """Refuse an output path (--json, -o) that could not be written to, before running:
    the file is really opened for writing (created and removed again if it did not
    exist; an existing file is opened to append, so its contents stay), since
    permission bits say nothing of /proc, read-only mounts or full directories."""
    if not path:
        return f"{flag} {path!r}: empty path"
    target = os.path.abspath(path)
    if os.path.isdir(target):
        return f"{flag} {path}: is a directory"
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        return f"{flag} {path}: directory {parent} does not exist"
    existed = os.path.lexists(target)
    try:
        fd = os.open(target, os.O_WRONLY | (os.O_APPEND if existed else
                                            os.O_CREAT | os.O_EXCL), 0o644)
    except OSError as e:
        return f"{flag} {path}: cannot write: {e.strerror}"
    try:
        os.write(fd, b"")   # a zero-byte write: refused by files like /proc's
    except OSError as e:
        return f"{flag} {path}: cannot write: {e.strerror}"
    finally:
        os.close(fd)
    if not existed:
        try:
            os.unlink(target)
        except OSError as e:
            return f"{flag} {path}: cannot remove the test file: {e.strerror}"
    return None


class Terminated(BaseException):
    """SIGTERM arrived: stop the run as Ctrl-C does."""


def _on_sigterm(signum, frame):
    raise Terminated()


#: The exit status of each way a run ends early (main's docstring lists
#: them): the first class an exception is an instance of (UnsupportedError
#: is a BenchmarkError, so comes before it).  HistoryError: the run ended
#: well and is printed and saved, but --history's store did not take it (4,
#: which no other ending uses, so a CI job can tell it from a failed run).
_EXIT_STATUS = ((ValueError, 2), (TypeError, 2), (UnsupportedError, 3), (PermissionError, 3),
                (BenchmarkError, 1), (KeyboardInterrupt, 130), (Terminated, 143),
                (BrokenPipeError, 141), (HistoryError, 4))
#: What a run may raise that is the user's (2), this kernel's (3) or the run's (1).
_RUN_ERRORS = (ValueError, TypeError, UnsupportedError, PermissionError, BenchmarkError)


def _exit_status(exc):
    """The exit status exception exc ends the command with (_EXIT_STATUS)."""
    return next(status for cls, status in _EXIT_STATUS if isinstance(exc, cls))


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"benchbpf: warning: {message}", file=sys.stderr, flush=True)


def _history_store(args):
    """The store --history names: None, the default store, for a bare --history."""
    return None if args.history is DEFAULT_STORE else args.history


def _check_history(args):
    """Before anything loads: None, or the exit status (2) of refusing the
    store --history names because it is not one benchbpf can use (corrupt,
    another program's, a newer schema, a bad URL).  One that cannot take a
    write now (read-only, server down) is warned of and the run goes ahead:
    the write is tried again when it ends."""
    if args.history is None:
        return None
    from .. import history
    try:
        history.check(_history_store(args))
    except HistoryUnavailable as e:
        print(f"benchbpf: warning: {e}; the run goes ahead and recording it is tried "
              "when it ends", file=sys.stderr, flush=True)
    except HistoryError as e:
        return _fail(2, f"--history: {e}")
    return None


def _record_history(args, what):
    """After a command measured `what` (a Result, ResultSet or ABResult):
    record it into the store --history names.  0, or 4 when the store did
    not take it, said in a warning naming the store and why; the run is
    printed and saved all the same."""
    if args.history is None or what is None:
        return 0
    from .. import history
    try:
        with history.Store(_history_store(args)) as store:
            n = history.record(what, store, strict=True)
            where = store.where
    except HistoryError as e:
        kept = f"printed and saved to {args.json}" if getattr(args, "json", None) else "printed"
        print(f"benchbpf: warning: {e}; not recorded, the run is kept ({kept})",
              file=sys.stderr, flush=True)
        return _exit_status(e)
    if not getattr(args, "quiet", False):
        print(f"benchbpf: recorded {n} run{'s' if n != 1 else ''} in history store {where}",
              file=sys.stderr, flush=True)
    return 0


def _report_parser():
    ap = _Parser(prog="benchbpf report",
                 description="Run every benchmark this kernel supports (each with its "
                             "defaults, as `benchbpf NAME`) and write one self-contained "
                             "HTML page: the machine's fingerprint, a table of every "
                             "result, a plot per family, and what could not run here.")
    ap.add_argument("--quick", action="store_true",
                    help="short runs (warm-up {warmup} s, {duration} s in samples of "
                         "{interval} s) and cheaper set-up where a default is costly"
                         .format(**report.QUICK))
    ap.add_argument("--only", metavar="PATTERN",
                    help="only benchmarks matching this glob, or comma list of globs "
                         "(e.g. 'trig-*,rb-libbpf')")
    ap.add_argument("-o", "--output", metavar="FILE", help="write the HTML report here")
    ap.add_argument("--json", metavar="FILE",
                    help="save the run as a ResultSet (benchbpf.ResultSet.load reads it)")
    ap.add_argument("--no-prog-stats", action="store_true",
                    help="leave the kernel's BPF run-time statistics off: no program "
                         "cost column, and no clock reads added to each program run")
    ap.add_argument("--repeat", type=_positive_int, default=1, metavar="N",
                    help="run every benchmark N times, round the suite (default 1); "
                         "`benchbpf compare` tests across the runs, and needs 4 per side "
                         "to call a change significant at alpha 0.05")
    ap.add_argument("--budget", type=_positive_number, default=None, metavar="SEC",
                    help="with --repeat: wall time after which no new pass round the suite "
                         "starts")
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="no progress line per benchmark on stderr")
    add_history_option(ap)
    return ap


def _report_main(argv):
    args = _report_parser().parse_args(argv)
    if args.output is None and args.json is None:
        return _fail(2, "report needs -o FILE (HTML) and/or --json FILE")
    outputs = [(flag, path) for flag, path in (("-o", args.output), ("--json", args.json))
               if path is not None]
    for flag, path in outputs:
        why = _check_json_path(path, flag)
        if why:
            return _fail(2, why)
    if len(outputs) == 2 and os.path.abspath(args.output) == os.path.abspath(args.json):
        return _fail(2, f"-o {args.output} and --json {args.json} are the same file")
    prog_stats = not args.no_prog_stats
    try:
        report.plan(args.quick, args.only, prog_stats)
    except ValueError as e:
        return _fail(2, str(e))
    refused = _check_history(args)
    if refused is not None:
        return refused

    def progress(line):
        print(line, file=sys.stderr, flush=True)

    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            rs = report.run_suite(args.quick, args.only, None if args.quiet else progress,
                                  prog_stats, repeat=args.repeat, budget=args.budget)
    except KeyboardInterrupt as e:
        status = _exit_status(e)
        partial = getattr(e, "partial", None)
        if partial is None or not (len(partial) or partial.unsupported):
            return _fail(status, "interrupted: nothing finished, nothing written", prefix="")
        # What finished is kept: written where asked, marked incomplete.
        try:
            _write_report(args, partial)
        except OSError as err:
            return _fail(status, f"interrupted; writing the partial report: {err.filename}: "
                                 f"{err.strerror} (it is also in {e.path})", prefix="")
        meta = partial.metadata
        return _fail(status, f"interrupted after {meta['finished_runs']} of "
                             f"{meta['planned_runs']} benchmarks: wrote what finished, marked "
                             f"incomplete, to {' and '.join(p for _, p in outputs)}", prefix="")
    except Terminated as e:
        return _fail(_exit_status(e), "terminated (SIGTERM): runs stopped and cleaned up, "
                                      "nothing written", prefix="")
    finally:
        signal.signal(signal.SIGTERM, previous)
    recorded = _record_history(args, rs)
    try:
        _write_report(args, rs)
    except OSError as e:
        return _fail(1, f"{e.filename}: {e.strerror}")
    failed = rs.metadata.get("failed") or ()
    if not args.quiet:
        where = " and ".join(p for _, p in outputs)
        print(f"benchbpf report: {len(rs)} ran, {len(rs.unsupported)} unsupported, "
              f"{len(failed)} failed, {rs.metadata['report']['elapsed_s']:.0f} s; "
              f"wrote {where}", file=sys.stderr)
    return 1 if failed else recorded


def _write_report(args, rs):
    if args.json is not None:
        rs.save(args.json)
    if args.output is not None:
        page = report.to_html(rs)
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(page)


def _compare_parser():
    ap = _Parser(prog="benchbpf compare",
                 description="Compare a baseline with new runs: two suite reports "
                             "(report --json), benchmark by benchmark, or two results "
                             "(benchbpf NAME --json, one run or --repeat N runs).  Each "
                             "run counts as one figure (its speed per producer CPU-second, "
                             "else its median); the verdict is an "
                             "exact Mann-Whitney U test across runs: 'significant', "
                             "'within noise', or 'not enough runs' (fewer than 4 runs "
                             "per side at alpha 0.05).  Runs whose parameters, trigger "
                             "or interval differ are refused unless --different-params.")
    ap.add_argument("base", metavar="A.json", help="the baseline")
    ap.add_argument("new", metavar="B.json", help="the runs to compare with it")
    ap.add_argument("--alpha", type=float, default=0.05,
                    help="significance level (default 0.05)")
    ap.add_argument("--fail-on-regression", type=_nonneg_number, metavar="PCT",
                    help="exit 1 if any significant drop is larger than PCT percent, "
                         "naming each; exit 2 if too few runs to decide")
    ap.add_argument("--different-params", action="store_true",
                    help="compare runs whose parameters, trigger or interval differ "
                         "(the difference is the point); the differences are listed")
    ap.add_argument("--different-benchmarks", action="store_true",
                    help="compare results of benchmarks that measure different things")
    ap.add_argument("--per-second", action="store_true",
                    help="decide on the runs' median rates per second (the figures "
                         "printed) instead of their speeds per producer CPU-second")
    ap.add_argument("--allow-emulated", action="store_true",
                    help="compare figures from a TCG-emulated guest (benchbpf --kernel "
                         "without KVM) with real ones anyway")
    return ap


def _compare_main(argv):
    args = _compare_parser().parse_args(argv)
    if not 0 < args.alpha < 1:
        return _fail(2, f"--alpha {args.alpha:g}: must be between 0 and 1")
    try:
        base, new = report.load(args.base), report.load(args.new)
    except (OSError, ValueError, KeyError, TypeError) as e:
        return _fail(2, str(e))
    options = dict(different_params=args.different_params,
                   different_benchmarks=args.different_benchmarks,
                   per_cpu=False if args.per_second else None,
                   allow_emulated=args.allow_emulated)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            if isinstance(base, report.ResultSet) or isinstance(new, report.ResultSet):
                # A single result is a set of one run (e.g. an old baseline
                # against `benchbpf NAME --repeat N --json`).
                lines, regressions, undecided = report.compare_sets(
                    _as_set(base), _as_set(new), args.alpha, args.fail_on_regression,
                    **options)
            else:
                lines, regressions, undecided = report.compare_results(
                    base, new, args.alpha, args.fail_on_regression, **options)
    except ValueError as e:
        return _fail(2, str(e))
    try:
        print("\n".join(lines))
    except BrokenPipeError as e:
        sys.stdout = open(os.devnull, "w")
        return _exit_status(e)
    if regressions:
        print(f"benchbpf compare: {len(regressions)} regression(s) beyond "
              f"-{args.fail_on_regression:g}%:", file=sys.stderr)
        for line in regressions:
            print("  " + line, file=sys.stderr)
        return 1
    if undecided:
        print(f"benchbpf compare: --fail-on-regression {args.fail_on_regression:g} cannot "
              "decide: too few runs for the test across runs (record several: "
              "`benchbpf NAME --repeat N --json`, `benchbpf report --repeat N`):",
              file=sys.stderr)
        for line in undecided:
            print("  " + line, file=sys.stderr)
        return 2
    return 0


def _as_set(x):
    return x if isinstance(x, report.ResultSet) else report.ResultSet([x])


def _pct(flag, lo, hi):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{text} out of range: percent in {lo:g}..{hi:g}")
        return value / 100.0
    return parse


def _ab_parser():
    from ..analysis import ab
    ap = _Parser(
        prog="benchbpf ab", usage="benchbpf ab [options] A [A's options] -- B [B's options]",
        description="Did B make it slower?  Runs side A and side B in rounds, each round "
                    "each side once (in a random order, or both at once with --duet), "
                    "until the 95% interval of B/A decides against the threshold, is as "
                    "narrow as the precision, or the budget runs out.  A side is a "
                    "benchmark with its options as `benchbpf NAME ...` takes them; "
                    "`--kernel K NAME` runs it in a guest booting kernel K (both sides "
                    "then name a kernel).",
        epilog="examples:\n"
               "  benchbpf ab selftest -- selftest --bpf-work 1000\n"
               "  benchbpf ab rb-libbpf -- rb-libbpf --rb-sampled\n"
               "  benchbpf ab --duet --budget 120 selftest -- selftest --bpf-work 100\n"
               "  benchbpf ab --different-benchmarks bpf-loop -- bpf-for\n"
               "  benchbpf ab --kernel 6.1 count-local -- --kernel 6.12 count-local\n"
               "  git bisect run benchbpf ab --fail-on slower count-local -- count-local\n"
               "\nexit status:\n"
               "  0    decided or undecided; with --fail-on: B the same within the "
               "threshold, or\n       the other way\n"
               "  1    a run failed; with --fail-on: B slower (faster) beyond the "
               "threshold\n"
               "  2    bad arguments\n"
               "  3    this kernel cannot run a side\n"
               f"  {ab.SKIP_STATUS}  with --fail-on (git bisect's skip): undecided, B slower "
               "(faster) but\n       not surely beyond the threshold, or a side cannot "
               "run or failed\n"
               "  130  Ctrl-C (the finished rounds are saved)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duet", action="store_true",
                    help="run both sides at once, each on half of the CPUs, swapped every "
                         "round (refused where the CPUs are too few for both sides' threads)")
    ap.add_argument("--rule", choices=ab.RULES, default=ab.RULE,
                    help=f"the sequential rule (default {ab.RULE}; mean: the rule before; "
                         "results/ab-power-robust-2cpu.md)")
    ap.add_argument("--set-aside-disturbed", action="store_true",
                    help="set aside each round the host disturbed (steal, preemption, a "
                         "late sample) and take another in its place (default: every round "
                         "counts; the verdict says how many were disturbed)")
    ap.add_argument("--fail-on", choices=ab.FAIL_ON, default=None,
                    help="for CI and git bisect run: exit 1 when B is slower (faster) than A "
                         "beyond the threshold, 0 when not, 125 when undecided or a side "
                         "cannot run")
    ap.add_argument("--precision", type=_pct("--precision", ab.MIN_PRECISION * 100,
                                             ab.MAX_PRECISION * 100),
                    default=ab.PRECISION, metavar="PCT",
                    help=f"stop once B/A is known within PCT %% (default "
                         f"{ab.PRECISION * 100:g})")
    ap.add_argument("--threshold", type=_pct("--threshold", ab.MIN_THRESHOLD * 100,
                                             ab.MAX_THRESHOLD * 100),
                    default=ab.THRESHOLD, metavar="PCT",
                    help=f"the change that matters: stop once B/A lies within or beyond "
                         f"+-PCT %% (default {ab.THRESHOLD * 100:g})")
    ap.add_argument("--alpha", type=float, default=ab.ALPHA,
                    help=f"chance of a false alarm over all looks (default {ab.ALPHA:g})")
    ap.add_argument("--budget", type=_positive_number, default=ab.BUDGET_S, metavar="SEC",
                    help=f"wall time after which no round starts (default {ab.BUDGET_S:g})")
    ap.add_argument("--max-rounds", type=_positive_int, default=None, metavar="N",
                    help="stop after N rounds")
    ap.add_argument("--min-rounds", type=_positive_int, default=ab.MIN_ROUNDS, metavar="N",
                    help=f"no verdict before N rounds (default {ab.MIN_ROUNDS}); with "
                         "--max-rounds N, a fixed N rounds")
    ap.add_argument("-w", "--warmup", type=_warmup, default=ab.WARMUP, metavar="SEC",
                    help="warm-up of each run, s, any length >= 0, or 'auto': until the "
                         "benchmark is "
                         f"steady (default; a duet's is a fixed {ab.DUET_WARMUP_S:g} s)")
    ap.add_argument("-d", "--duration", type=_positive_number, default=ab.DURATION_S,
                    metavar="SEC", help="measured time of each run, s: whole sampling intervals, "
                                        f"at least one (default {ab.DURATION_S:g})")
    ap.add_argument("--interval", type=_positive_number, default=ab.INTERVAL_S, metavar="SEC",
                    help=f"sampling interval (default {ab.INTERVAL_S:g})")
    ap.add_argument("--seed", type=int, default=None,
                    help="seed of the sides' order within rounds (default: random, recorded)")
    ap.add_argument("--different-benchmarks", action="store_true",
                    help="allow sides of two different benchmarks")
    ap.add_argument("--per-second", action="store_true",
                    help="each run's figure per second, not per CPU-second of its producers")
    ap.add_argument("--counter", choices=("hits", "total_ops"), default="hits",
                    help="the counter compared (default hits; total_ops: hits + drops)")
    ap.add_argument("--json", metavar="FILE", help="save the comparison (all rounds) as JSON")
    ap.add_argument("--markdown", action="store_true",
                    help="also print the comparison as a Markdown table (for a commit message)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no line per round on stderr")
    add_history_option(ap)
    return ap


def split_ab_argv(argv):
    """`benchbpf ab`'s words as (ab's own, side A's, side B's): ab's options
    come first, side A from its first word that is not one of them, side B
    after `--`."""
    ap = _ab_parser()
    takes_value = {s for a in ap._actions if a.nargs is None and a.option_strings
                   for s in a.option_strings}
    # --history [PATH]: the next word is its value unless it begins side A.
    may_take = {s for a in ap._actions if a.nargs == "?" for s in a.option_strings}
    own = set(takes_value) | {s for a in ap._actions for s in a.option_strings}
    names = _runner.list_benchmarks()
    i = 0
    while i < len(argv) and argv[i].split("=", 1)[0] in own and argv[i] != "--":
        word, after = argv[i], argv[i + 1] if i + 1 < len(argv) else "-"
        bare = after.startswith("-") or after in names
        i += 2 if word in takes_value or (word in may_take and not bare) else 1
    rest = argv[i:]
    if "--" not in rest:
        return argv[:i], rest, None
    cut = rest.index("--")
    return argv[:i], rest[:cut], rest[cut + 1:]


def _ab_main(argv):
    from ..analysis import ab
    ap = _ab_parser()
    if any(a in ("-h", "--help") for a in argv[:1]) or argv in ([], ["-h"], ["--help"]):
        ap.print_help()
        return 0
    own, side_a, side_b = split_ab_argv(argv)
    args = ap.parse_args(own)
    if not side_a:
        return _fail(2, "ab: side A is missing: benchbpf ab [options] A ... -- B ...")
    if side_b is None:
        return _fail(2, f"ab: no `--` after side A ({' '.join(side_a)}): benchbpf ab "
                        "[options] A ... -- B ...")
    if not side_b:
        return _fail(2, "ab: side B is missing after `--`")
    if args.json is not None:
        why = _check_json_path(args.json)
        if why:
            return _fail(2, why)
    refused = _check_history(args)
    if refused is not None:
        return refused

    def show(rnd, so_far):
        if args.quiet:
            return
        first = f", {rnd.first.upper()} first" if rnd.first else \
            f", A on CPU {','.join(map(str, rnd.a_cpus))}" if rnd.a_cpus else ""
        interval = f"{so_far.ratio:.4f} ({so_far.low:.4f}..{so_far.high:.4f})" \
            if so_far.ratio is not None else "-"
        host = f" [disturbed: {', '.join(rnd.disturbed)}]" if rnd.disturbed else ""
        print(f"round {rnd.index + 1}{first}: A {rnd.a_mps:.3f} M/s, B {rnd.b_mps:.3f} M/s, "
              f"B/A {rnd.ratio:.4f}{host}; so far {interval}", file=sys.stderr, flush=True)

    def attempt():
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            return ab.ab(side_a, side_b, mode="duet" if args.duet else "interleaved",
                         rule=args.rule, precision=args.precision, threshold=args.threshold,
                         alpha=args.alpha, budget=args.budget, max_rounds=args.max_rounds,
                         min_rounds=args.min_rounds,
                         warmup=args.warmup, duration=args.duration, interval=args.interval,
                         seed=args.seed, different_benchmarks=args.different_benchmarks,
                         per_cpu=False if args.per_second else None, counter=args.counter,
                         progress=False, on_round=show,
                         set_aside_disturbed=args.set_aside_disturbed,
                         log=None if args.quiet else lambda line: print(
                             line, file=sys.stderr, flush=True))

    # --fail-on: a side this commit cannot run is bisect's "skip", not "bad".
    skip = ab.SKIP_STATUS if args.fail_on else None
    try:
        result, stopped = _interruptible(attempt)
    except _RUN_ERRORS as e:
        status = _exit_status(e)
        return _fail(skip or status, {2: f"error: ab: {e}", 3: f"ab: cannot run here: {e}",
                                      1: f"ab: a run failed: {e}"}[status], prefix="")
    if stopped is not None:
        return stopped
    print(result)
    if args.markdown:
        print()
        print(result.to_markdown())
    recorded = _record_history(args, result)
    if args.json:
        try:
            result.to_json(args.json)
        except OSError as e:
            return _fail(skip or 1, f"--json {args.json}: {e.strerror}")
    # --fail-on: the verdict is what CI and git bisect read, a missing record only warned of.
    return result.exit_status(args.fail_on) if args.fail_on else recorded


def _kernels_main(args, flags):
    """--kernel K...: the run (or -l) in a guest booting each kernel in turn."""
    from ..guests import vm
    from ..results.resultset import ResultSet
    if args.repeat != 1:
        return _fail(2, "--repeat with --kernel: repeated runs are taken on this "
                        "kernel only")
    try:
        for k in args.kernel:   # every spec checked before anything boots
            vm.resolve_kernel(k, fetch=False)
    except (ValueError, TypeError) as e:
        return _fail(2, f"--kernel {_in_flag_terms(str(e))}")
    if not args.list and not args.bench:
        return _fail(2, "benchmark name is not specified (or -l)")
    options = {}
    if not args.list:
        try:
            info = _runner.describe(args.bench)
            params = _bench_params(args, args.bench, flags)
        except ValueError as e:
            return _fail(2, str(e), prefix="")
        why = _consumer_error(args.consumers, info, params)
        if why is None and args.json is not None:
            why = _check_json_path(args.json)
        if why:
            return _fail(2, why)
        options = _run_kwargs(args, info, params)
        try:
            _runner.check(args.bench, **options)
        except (ValueError, TypeError) as e:
            return _fail(2, _in_flag_terms(str(e), info))
        refused = _check_history(args)
        if refused is not None:
            return refused

    def progress(line):
        if not args.quiet:
            print(f"benchbpf: {line}", file=sys.stderr, flush=True)

    def each_kernel():
        status, results = 0, []
        for spec in args.kernel:
            try:
                if args.list:
                    probed, missing = vm.features(spec, progress=progress)
                    print(f"Kernel {spec}: benchmarks ('!': this kernel cannot run it)")
                    for name in _runner.list_benchmarks():
                        m = missing.get(name, ())
                        why = f"  [cannot run: no {', '.join(m)}]" if m else ""
                        print(f"{'!' if m else '-'} {name:28s} "
                              f"{_runner.describe(name).help}{why}")
                    continue
                got = vm.run_many([(args.bench, options)], spec, progress=progress)[0]
            except _RUN_ERRORS as e:
                code = _exit_status(e)
                if code == 2:
                    return _fail(code, f"--kernel {spec}: {e}"), []
                if code == 3:
                    print(f"benchbpf: {args.bench or '-l'} cannot run on kernel {spec}: "
                          f"{_unnamed(e, args.bench)}", file=sys.stderr)
                    status = max(status, code)
                else:
                    print(f"benchbpf: {args.bench} failed on kernel {spec}: "
                          f"{_unnamed(e, args.bench)}", file=sys.stderr)
                    status = code
                continue
            if isinstance(got, dict):
                print(f"benchbpf: {args.bench} cannot run on kernel {spec}: {got['message']}",
                      file=sys.stderr)
                status = max(status, 3)
                continue
            _print_guest_result(args, info, got)
            results.append(got)
        return status, results

    outcome, stopped = _interruptible(each_kernel)
    if stopped is not None:
        return stopped
    status, results = outcome
    ran = ResultSet(results, axes=("kernel",)) if results else None
    recorded = _record_history(args, ran)
    if args.json is not None and results:
        try:
            if len(args.kernel) == 1:
                results[0].to_json(args.json)
            else:
                ran.save(args.json)
        except OSError as e:
            return _fail(1, f"--json {args.json}: {e.strerror}")
    return status or recorded


def _print_guest_result(args, info, r):
    """The lines `benchbpf NAME` prints, from a Result a guest sent back."""
    vm_meta = r.metadata.get("vm", {})
    print(f"Kernel: {r.metadata.get('kernel')} ({vm_meta.get('kernel_source')}; "
          f"{str(vm_meta.get('accel', '?')).upper()}: {vm_meta.get('accel_reason')})")
    if not args.quiet:
        print(f"Setting up benchmark '{args.bench}'...")
        print(f"Benchmark '{args.bench}' started.")
    interval_ns = r.metadata.get("interval_ns", int(round(_interval(args) * 1e9)))
    for i, s in enumerate(r.warmup_samples + r.samples):
        line = progress_line(info.report, i, s, args.producers, interval_ns)
        if line is not None:
            print(line)
    _print_summary(r)
    sys.stdout.flush()


def _print_summary(result, machine_readable=False):
    """The trigger that ran, the summary (kept the last line) and program costs;
    before them, a BPF-timed run's calibration warning on stderr, as the kernel
    bench's. machine_readable: the kernel bench's one RESULT line instead of
    the trigger and summary."""
    timing_warning = (result.metadata.get("bpf_timing") or {}).get("calibration", {}) \
        .get("warning")
    if timing_warning:
        print(timing_warning, file=sys.stderr)
    if machine_readable:
        from ..results.bpf_timing import machine_line
        print(machine_line(result))
    else:
        trigger = result.metadata.get("trigger")
        if trigger:
            print(f"Trigger: {trigger}")
        print(result.summary())
    for prog in result.prog_stats:
        print(prog)
    _print_warnings(result.warnings)


def _print_warnings(lines):
    """Instability warnings on stderr, after what stdout has so far: stdout
    stays the kernel bench's lines."""
    if lines:
        sys.stdout.flush()
        for line in lines:
            print(f"WARNING: {line}", file=sys.stderr, flush=True)


def _interruptible(fn):
    """(fn(), None), or (None, exit status) once Ctrl-C, SIGTERM (handled as
    Ctrl-C while fn runs) or a closed stdout stopped it; the run or guest
    has been stopped and cleaned up by then."""
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return fn(), None
    except KeyboardInterrupt as e:
        print("benchbpf: interrupted", file=sys.stderr)
        return None, _exit_status(e)
    except Terminated as e:
        print("benchbpf: terminated (SIGTERM): run stopped and cleaned up", file=sys.stderr)
        return None, _exit_status(e)
    except BrokenPipeError as e:
        # Reader went away (| head): the run was stopped and cleaned up.
        sys.stdout = open(os.devnull, "w")
        return None, _exit_status(e)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _unnamed(exc, bench):
    """exc's message without the "NAME: " the core starts it with, for a
    line that names the benchmark already."""
    text = str(exc)
    return text[len(bench) + 2:] if bench and text.startswith(f"{bench}: ") else text


def _fail(status, message, prefix="error: "):
    print(f"benchbpf: {prefix}{message}", file=sys.stderr)
    return status


def _host_drift_main(argv):
    ap = argparse.ArgumentParser(
        prog="benchbpf host-drift",
        description="Measure how far this machine moves a steady benchmark's figure "
                    "over minutes (short runs of "
                    f"{', '.join(hostdrift.CALIBRATION_BENCHMARKS)} in turn) and save it; "
                    "later runs on this machine and kernel add it to their interval "
                    "(Result.host_ci_mps), precision runs also how the same benchmark's "
                    "precision runs of the last day differed (--show lists them). Run it "
                    "on an otherwise idle machine.")
    ap.add_argument("--minutes", type=float, default=20,
                    help=f"how long to measure ({hostdrift.MIN_MINUTES:g}.."
                         f"{hostdrift.MAX_MINUTES:g}, default 20)")
    ap.add_argument("-o", "--output", default=None,
                    help=f"where to save it (default {hostdrift.default_path()})")
    ap.add_argument("--show", action="store_true",
                    help="print the saved calibration and the history of precision "
                         "runs, and measure nothing")
    args = ap.parse_args(argv)
    path = args.output or hostdrift.default_path()
    if args.show:
        drift = hostdrift.load(path)
        if drift is None:
            return _fail(1, f"no host drift calibration at {path}")
        print(drift)
        _print_histories(drift)
        return 0
    try:
        hostdrift.check_minutes(args.minutes)
    except (TypeError, ValueError) as e:
        return _fail(2, f"--{e}")

    def progress(elapsed_s, span_s):
        print(f"\r{elapsed_s:6.0f} / {span_s:.0f} s", end="", file=sys.stderr, flush=True)
    try:
        drift = hostdrift.calibrate(args.minutes, path=path, progress=progress)
    except (ValueError, OSError) as e:
        print(file=sys.stderr)
        return _fail(1, str(e))
    print(file=sys.stderr)
    print(drift)
    print(f"saved to {path}")
    return 0


def _print_histories(drift):
    """The precision runs of the last day on the calibrated machine, by
    benchmark and parameters: how far they differed."""
    path = hostdrift.default_history_path()
    histories = hostdrift.read_histories(drift.machine, time.time(), path)
    print(f"history of precision runs ({path}, last {hostdrift.HISTORY_HOURS:g} h): "
          f"{sum(map(len, histories.values()))} runs of {len(histories)} configurations")
    for key, records in sorted(histories.items()):
        h = hostdrift.history_of(records)
        print(f"  {key}: {len(records)} run{'s' if len(records) != 1 else ''}, " + (
            f"differing by \u00b1{h.relative_sd * 100:.2f}% beyond their own intervals"
            + (f", over {h.span_s / 60:.0f} min: young (under "
               f"{hostdrift.MATURE_HISTORY_S / 60:.0f})" if h.young else "")
            if h else f"fewer than {hostdrift.MIN_HISTORY_RUNS}: not used yet"))


#: `benchbpf NAME ...` runs a benchmark; these words, first, are subcommands
#: instead (no benchmark has these names: tests/test_report.py checks it).
SUBCOMMANDS = {"report": _report_main, "compare": _compare_main,
               "host-drift": _host_drift_main, "ab": _ab_main, "system": system.main,
               "history": _history.main, "show": show.main}

#: What `benchbpf --help` says of each subcommand, in one line.
_SUBCOMMAND_LINES = {
    "report": "run every benchmark this kernel supports, write one HTML page",
    "compare": "compare two saved reports or results, benchmark by benchmark",
    "host-drift": "measure how far this machine moves figures over minutes",
    "ab": "did B make it slower? sides A and B in turns until B/A is decided",
    "system": "show, tune or reset what distorts BPF figures on this machine",
    "history": "record runs into a store and read their series back",
    "show": "summarise a saved result, result set or ab comparison (JSON)",
}


def build_parser(flags=None, add_help=True):
    """The argparse parser of `benchbpf [options] NAME`, as `benchbpf --help`
    prints it: the run's flags (flags: benchmark flag -> its users, by default
    read from the registry; add_help=False leaves -h to the caller), the
    subcommands in its usage and each in a line of its epilog."""
    ap = _run_parser(flags, add_help)
    run_usage = ap.format_usage().split(": ", 1)[1].rstrip()
    ap.usage = (f"{run_usage} [NAME's options]\n"
                f"       benchbpf {{{','.join(SUBCOMMANDS)}}} ...")
    ap.epilog += ("\n\nsubcommands (first on the command line; `benchbpf WORD --help` "
                  "describes one):\n"
                  + "\n".join(f"  {w:<11} {_SUBCOMMAND_LINES[w]}" for w in SUBCOMMANDS)
                  + "\n\nexit status: 0 ok, 1 the run failed, 2 bad arguments, 3 this "
                  "kernel cannot run the benchmark, 130 Ctrl-C, 141 output closed, 143 "
                  "SIGTERM")
    return ap


def main(argv=None):
    """The benchbpf command: argv (default sys.argv[1:]) as `benchbpf --help`
    describes it; returns the exit status (0 ok, 1 the run failed, 2 bad
    arguments, 3 this kernel cannot run the benchmark, 4 the run ended well
    but --history's store did not take it, 130 Ctrl-C, 143 SIGTERM)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return _main(argv)
    except BrokenPipeError as e:
        # The reader went away (`benchbpf history ... | head`): nothing left
        # to tell it, and Python's own flush at exit must not complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return _exit_status(e)


def _main(argv):
    if argv and argv[0] in SUBCOMMANDS:
        return SUBCOMMANDS[argv[0]](argv[1:])
    flags = _family_options()
    if any(a in ("-h", "--help") for a in argv):
        status = _bench_help_main(argv, flags)
        if status is not None:
            return status
    args = build_parser(flags).parse_args(argv)
    if args.version:
        return _version_main()
    if args.kernel:
        return _kernels_main(args, flags)
    if args.list:
        return _list_main()
    if args.list_scenarios:
        return _list_scenarios(args.bench)
    return _run_main(args, flags)


def _bench_help_main(argv, flags):
    """`benchbpf NAME --help`: that benchmark's own help; `benchbpf NOSUCH
    --help`: the unknown name, not the generic help; None: the generic help."""
    names = [a for a in argv if not a.startswith("-") and a in _runner.list_benchmarks()]
    if names:
        print(_bench_help(_runner.describe(names[0])))
        return 0
    known, _ = build_parser(flags, add_help=False).parse_known_args(
        [a for a in argv if a not in ("-h", "--help")])
    if known.bench:
        try:
            _runner.describe(known.bench)
        except ValueError as e:
            return _fail(2, str(e), prefix="")
    return None


def _version_main():
    from .. import _core
    from .._version import __version__
    print(f"benchbpf {__version__} (libbpf {_core.libbpf_version()})")
    return 0


def _list_main():
    try:
        _list(sys.stdout)
    except BrokenPipeError as e:
        sys.stdout = open(os.devnull, "w")
        return _exit_status(e)
    return 0


def _run_main(args, flags):
    """`benchbpf NAME ...`: the run (--repeat N: N runs), as the kernel bench prints it."""
    checked = _check_run(args, flags)
    if isinstance(checked, int):
        return checked
    info, params = checked
    producers = args.producers
    interval_ns = int(round(_interval(args) * 1e9))
    kwargs = _run_kwargs(args, info, params)
    # As the kernel bench's --machine-readable: quiet, one RESULT line.
    if args.machine_readable:
        args.quiet = True

    def show(sample, index, warmup):
        if index == 0 and not args.quiet:
            print(f"Benchmark '{args.bench}' started.", flush=True)
        line = progress_line(info.report, index, sample, producers, interval_ns)
        if line is not None:
            print(line, flush=True)

    def attempt():
        results = []
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            began = time.monotonic()
            for i in range(args.repeat):
                spent = time.monotonic() - began
                if _runner.next_would_overrun(args.budget, spent, i):
                    print(f"benchbpf: --budget {args.budget:g} s: {i} of {args.repeat} runs "
                          "taken", file=sys.stderr, flush=True)
                    break
                if not args.quiet:
                    print(f"Setting up benchmark '{args.bench}'...", flush=True)
                budget = {} if args.budget is None or args.precision is None else \
                    {"budget": max(args.budget - spent, 0.001)}
                result = _runner.run(args.bench, callback=show, **kwargs, **budget)
                results.append(result)
                _print_summary(result, machine_readable=args.machine_readable)
        return results

    try:
        results, stopped = _interruptible(attempt)
    except _RUN_ERRORS as e:
        status = _exit_status(e)
        _fail(status, {2: f"error: {_in_flag_terms(str(e), info)}",
                       3: f"{args.bench} cannot run here: {_unnamed(e, args.bench)}",
                       1: f"{args.bench} failed: {_unnamed(e, args.bench)}"}[status],
              prefix="")
        log = getattr(e, "log", "")
        if status == 1 and log and args.verbose:
            print(log, file=sys.stderr)
        return status
    if stopped is not None:
        return stopped
    if len(results) > 1:
        _print_runs(results)
    saved = results[0] if len(results) == 1 else report.ResultSet(
        results, metadata={"repeat": len(results)})
    recorded = _record_history(args, saved)
    if args.json:
        try:
            saved.to_json(args.json)
        except OSError as e:
            return _fail(1, f"--json {args.json}: {e.strerror}")
    return recorded


def _check_run(args, flags):
    """(info, params) of the run args ask for, or the exit status of why
    not, said on stderr, before anything loads."""
    if args.bench is None and args.history in _runner.list_benchmarks():
        # `benchbpf --history NAME`: a bare --history, then the benchmark.
        args.bench, args.history = args.history, DEFAULT_STORE
    if args.bench in SUBCOMMANDS:
        return _fail(2, f"{args.bench} is a subcommand: it comes first "
                        f"(`benchbpf {args.bench} --help`)")
    if not args.bench:
        return _fail(2, "benchmark name is not specified\nTry `benchbpf --help' for more "
                        "information.", prefix="")
    try:
        info = _runner.describe(args.bench)
    except ValueError as e:
        return _fail(2, str(e), prefix="")
    try:
        params = _bench_params(args, args.bench, flags)
    except ValueError as e:
        return _fail(2, str(e))
    why = _consumer_error(args.consumers, info, params)
    missing = [p for k, p in info.params.items() if p.required and k not in params]
    if why is None and missing:
        extra = " (--list-scenarios lists them)" if missing[0].name == "scenario" else ""
        why = f"{missing[0].flag} is required for {info.name}{extra}"
    if why is None and args.machine_readable and info.report != "bpf_timing":
        timed = [n for n in _runner.list_benchmarks()
                 if _runner.describe(n).report == "bpf_timing"]
        why = (f"--machine-readable: {info.name} is not BPF-timed (it applies to "
               f"{', '.join(timed)})")
    if why is None and args.budget is not None and args.precision is None \
            and args.repeat == 1:
        why = (f"--budget {args.budget:g}: a time budget bounds repeated runs: give "
               "--precision or --repeat N too")
    if why is None:
        # Every value and combination, as the run would check it once set
        # up: a usage error comes before any "Setting up" line.
        try:
            _runner.check(args.bench, **_run_kwargs(args, info, params))
            _runner.check_budget(args.budget)
        except (ValueError, TypeError) as e:
            why = _in_flag_terms(str(e), info)
    if why is None and args.json is not None:
        why = _check_json_path(args.json)
    if why:
        return _fail(2, why)
    return _check_history(args) or (info, params)


def _print_runs(results):
    """After --repeat N runs: their medians, and whether they disagree."""
    meds = [r.median for r in results]
    over = sum(1 for r in results if (r.metadata.get("concurrent_runs") or 0) >= 1)
    print(f"Runs: {len(results)}, hits median of run medians "
          f"{statistics.median(meds):.3f} M/s (run medians "
          + ", ".join(f"{m:.3f}" for m in meds) + ")"
          + (f" [{over} overlapped another benchbpf run]" if over else ""))
    agreement = run_agreement(results)
    if agreement:
        _print_warnings([agreement.text()])


if __name__ == "__main__":
    sys.exit(main())
