"""`benchbpf history`: the history store from the command line.

    benchbpf history add run.json report.json ab.json  # import saved runs, reports, A/Bs
    benchbpf history show count-local --by kernel  # a table of its series
    benchbpf history show count-local --plot out.png
    benchbpf history changes count-local           # where it changed, and between what
    benchbpf history changes --since 2026-12-05T01:00Z --format markdown   # a CI summary
    benchbpf history html site/                    # static pages, one per series

The store is --history PATH|URL, else $BENCHBPF_HISTORY, else
history.sqlite in the user's data directory (benchbpf.history.Store)."""
import argparse
import json
import statistics
import sys

from .. import history
from ..analysis.ab import ABResult
from ..history import BY, HistoryError, Store
from . import report

__all__ = ["main", "build_parser", "table", "markdown"]


def build_parser():
    """The parser of `benchbpf history` and its subcommands."""
    def store_option(default):
        parser = argparse.ArgumentParser(add_help=False)
        parser.add_argument("--history", metavar="PATH|URL", default=default,
                            help="the store: an SQLite file or a postgresql:// URL (default "
                                 f"${history.ENV}, else {history.default_location()})")
        return parser
    # Before or after the command; after, it must not reset one given before.
    common = store_option(argparse.SUPPRESS)
    ap = argparse.ArgumentParser(prog="benchbpf history", parents=[store_option(None)],
                                 description="Results over time: record runs into a "
                                             "store and read their series back.")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    add = sub.add_parser("add", parents=[common],
                         help="import saved JSON files: runs (benchbpf NAME --json), reports "
                              "(report --json) and A/B comparisons (ab --json: both sides)")
    add.add_argument("files", nargs="+", metavar="FILE")
    show = sub.add_parser("show", parents=[common], help="print a benchmark's series")
    show.add_argument("name", metavar="NAME", help="the benchmark")
    show.add_argument("--by", choices=sorted(BY), default="date",
                      help="lay the runs out by date (each run), benchbpf commit or "
                           "kernel release (runs of one grouped; default date)")
    show.add_argument("--machine", metavar="M", default=None,
                      help="only the machine whose hash starts with M or whose label "
                           "(cpu model, CPUs, architecture) contains M")
    show.add_argument("--plot", metavar="OUT.png", default=None,
                      help="also draw the series to this image")
    changes = sub.add_parser("changes", parents=[common],
                             help="find where series changed (E-Divisive means, Apache Otava)")
    changes.add_argument("name", metavar="NAME", nargs="?", default=None,
                         help="the benchmark (default: every benchmark in the store)")
    changes.add_argument("--machine", metavar="M", default=None,
                         help="only machines matching M, as for show")
    changes.add_argument("--max-pvalue", type=float, default=history.MAX_PVALUE,
                         help="a change's t-test p-value must be below this, 0 < P < 1 "
                              f"(default {history.MAX_PVALUE:g}, Otava's)")
    changes.add_argument("--since", metavar="TIME", default=None,
                         help="only change points new since TIME (ISO 8601, e.g. "
                              "2026-12-05T01:00:00Z; UTC when no zone is given): those the "
                              "runs started since then made appear, as a CI job posts them")
    changes.add_argument("--format", choices=("text", "markdown"), default="text",
                         help="text (default) or a Markdown summary: a heading, a table of "
                              "the change points and the detector, as for $GITHUB_STEP_SUMMARY")
    site = sub.add_parser("html", parents=[common],
                          help="write a static dashboard: an index and a page per series")
    site.add_argument("out", metavar="OUT/", help="the directory to write")
    site.add_argument("name", metavar="NAME", nargs="?", default=None,
                      help="only this benchmark (default: every one)")
    site.add_argument("--machine", metavar="M", default=None,
                      help="only machines matching M, as for show")
    site.add_argument("--max-pvalue", type=float, default=history.MAX_PVALUE,
                      help=f"as for changes (default {history.MAX_PVALUE:g})")
    install = sub.add_parser("install-detector",
                             help=f"install the change-point detector ({history.DETECTOR_REQUIREMENT})"
                                  " in a venv of its own")
    install.add_argument("--path", metavar="DIR", default=None,
                         help="the venv (default $XDG_DATA_HOME/benchbpf/detector)")
    return ap


def _fail(status, message):
    print(f"benchbpf history: error: {message}", file=sys.stderr)
    return status


def _load(path):
    """What a saved JSON file holds: a Result or ResultSet (report.load), else
    an ABResult; report.load's ValueError, naming the file, when none."""
    try:
        return report.load(path)
    except ValueError as e:
        try:
            return ABResult.from_json(path)
        except ValueError:
            raise e from None


def _add(args):
    loaded = []
    for path in args.files:
        try:
            loaded.append((path, _load(path)))
        except (OSError, ValueError) as e:
            return _fail(2, f"{path}: {e}" if path not in str(e) else str(e))
    try:
        with Store(args.history) as store:
            total = 0
            for path, item in loaded:
                n = history.record(item, store, source=path, strict=True)
                total += n
                have = (2 if item.rounds else 0) if isinstance(item, ABResult) else \
                    len(item) if hasattr(item, "results") else 1
                print(f"{path}: {n} new run{'s' if n != 1 else ''}"
                      + (f", {have - n} already in the store" if have > n else ""))
            print(f"{total} run{'s' if total != 1 else ''} recorded in {store.where} "
                  f"({store.count()} in all)")
    except HistoryError as e:
        return _fail(1, str(e))
    return 0


def _span(values):
    """"a", or "a..z (n)": the first and last of n distinct values, in run order."""
    seen = list(dict.fromkeys(str(v) for v in values))
    return seen[0] if len(seen) == 1 else f"{seen[0]}..{seen[-1]} ({len(seen)})"


def table(runs):
    """The rows `history show` prints for one series' runs (history.runs()
    dicts of one key), as dicts: the runs of each "at" (one date, commit or
    kernel) grouped, with the median of their medians and of their interval
    bounds, in order of their first run."""
    groups = {}
    for r in runs:
        groups.setdefault(r["at"], []).append(r)
    out = []
    for at, group in groups.items():
        def mid(column):
            values = [r[column] for r in group if r[column] is not None and r[column] == r[column]]
            return statistics.median(values) if values else None
        out.append({"at": "?" if at is None else str(at), "runs": len(group),
                    "median_mps": mid("median_mps"), "ci_low_mps": mid("ci_low_mps"),
                    "ci_high_mps": mid("ci_high_mps"),
                    "kernel": _span(r["kernel_release"] for r in group),
                    "commit": _span(str(r["benchbpf_commit"])[:12] for r in group)})
    return out


def _number(x):
    return f"{x:10.3f}" if x is not None else f"{'-':>10s}"


def _show(args):
    try:
        found = history.runs(args.name, machine=args.machine, by=args.by, store=args.history)
    except (HistoryError, ValueError) as e:
        return _fail(2, str(e))
    if not found:
        return _fail(2, f"benchmark {args.name!r}: no run on a machine matching "
                        f"--machine {args.machine!r}")
    groups = {}
    for r in found:
        groups.setdefault(r["series"], []).append(r)
    for key, runs in groups.items():
        first = runs[0]
        mark = f"  [{first['emulated']}-emulated: not a performance figure]" \
            if first["emulated"] else ""
        print(f"{args.name} {json.dumps(first['params'], sort_keys=True)} on "
              f"{first['machine_label']} (machine {first['machine']}, series {key}){mark}")
        print(f"  {args.by:25s} {'runs':>4s} {'median M/s':>10s} {'95% CI low':>10s} "
              f"{'high':>10s}  kernel / commit")
        for r in table(runs):
            print(f"  {r['at'][:25]:25s} {r['runs']:4d} {_number(r['median_mps'])} "
                  f"{_number(r['ci_low_mps'])} {_number(r['ci_high_mps'])}  "
                  f"{r['kernel']} / {r['commit']}")
    if args.plot:
        _plot(groups, args)
        print(f"plot: {args.plot}")
    return 0


def _plot(groups, args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for key, runs in groups.items():
        rows = table(runs)
        x = list(range(len(rows)))
        y = [r["median_mps"] for r in rows]
        err = [[max(0.0, r["median_mps"] - r["ci_low_mps"]) if r["ci_low_mps"] is not None
                else 0.0 for r in rows],
               [max(0.0, r["ci_high_mps"] - r["median_mps"]) if r["ci_high_mps"] is not None
                else 0.0 for r in rows]]
        first = runs[0]
        label = f"{json.dumps(first['params'], sort_keys=True)} {first['machine']}" + \
            (f" [{first['emulated']}]" if first["emulated"] else "")
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=label,
                    linestyle="--" if first["emulated"] else "-")
        ax.set_xticks(x, [r["at"][:19] for r in rows], rotation=30, ha="right", fontsize=7)
    ax.set_title(f"{args.name} by {args.by}")
    ax.set_ylabel("median hits, M/s (95 % CI of the mean)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.plot)
    plt.close(fig)


def _pct(ratio):
    return f"{(ratio - 1) * 100:+.1f} %" if ratio is not None else "?"


def _emulation(change):
    """A change point's emulation ("TCG"), or None for real CPUs: pandas
    reads a real run's None as NaN where the column also holds "TCG"."""
    value = change["emulated"]
    return value if isinstance(value, str) else None


def _changes(args):
    try:
        df = history.series(args.name, machine=args.machine, store=args.history)
        found = history.series_changes(df, args.max_pvalue, since=args.since)
    except (HistoryError, ValueError) as e:
        return _fail(2, str(e))
    if args.format == "markdown":
        print(markdown(found, args.max_pvalue, df["series"].nunique(), len(df), args.since))
        return 0
    for _, c in found.iterrows():
        mark = f" [{_emulation(c)}-emulated: not a performance figure]" if _emulation(c) else ""
        print(f"{c['benchmark']} {json.dumps(c['params'], sort_keys=True)} on "
              f"{c['machine_label']} (series {c['series']}){mark}")
        print(f"  at run {c['index'] + 1} of {c['runs']}: {c['mean_before']:.3f} -> "
              f"{c['mean_after']:.3f} M/s, {c['change_pct']:+.1f} % (95 % CI "
              f"{_pct(c['ratio_low'])} .. {_pct(c['ratio_high'])}), p = {c['pvalue']:.2g}, "
              f"{c['n_before']} runs before, {c['n_after']} after")
        print(f"  ran {c['started_before']} -> {c['started_after']}; commit "
              f"{c['commit_before']} -> {c['commit_after']}; kernel {c['kernel_before']} -> "
              f"{c['kernel_after']}")
    new = f" new since {args.since}" if args.since else ""
    print(f"{len(found)} change point{'s' if len(found) != 1 else ''}{new} "
          f"(p < {args.max_pvalue:g}, {history.DETECTOR_REQUIREMENT})")
    return 0


def _cell(value):
    """A Markdown table cell: pipes and line ends would end it."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown(found, max_pvalue, series, runs, since=None):
    """`history changes --format markdown`: a Markdown summary of the
    change points `found` (a history.series_changes() DataFrame) among
    `series` series of `runs` runs; `since` (the time they are new since)
    goes in the heading.  A heading, one table row per change point (or a
    line saying there is none) and a line naming the detector."""
    n = len(found)
    new = " new" if since else ""
    head = f"### benchbpf: {n}{new} change point{'s' if n != 1 else ''}" + \
        (f" since {since}" if since else "")
    lines = [head, ""]
    if n:
        lines += ["| benchmark | parameters | machine | at run | before → after, M/s "
                  "| change (95 % CI) | p | commit before → after | kernel before → after |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for _, c in found.iterrows():
            machine = c["machine_label"] + (f" **[{_emulation(c)}-emulated: not a performance "
                                            "figure]**" if _emulation(c) else "")
            commits = " → ".join(str(x)[:12] for x in (c["commit_before"], c["commit_after"]))
            cells = [c["benchmark"], f"`{json.dumps(c['params'], sort_keys=True)}`", machine,
                     f"{c['index'] + 1} of {c['runs']}",
                     f"{c['mean_before']:.3f} → {c['mean_after']:.3f}",
                     f"{c['change_pct']:+.1f} % ({_pct(c['ratio_low'])} .. "
                     f"{_pct(c['ratio_high'])})", f"{c['pvalue']:.2g}", commits,
                     f"{c['kernel_before']} → {c['kernel_after']}"]
            lines.append("| " + " | ".join(_cell(x) for x in cells) + " |")
    else:
        lines.append(f"No{new} change point in {series} series ({runs} runs).")
    lines += ["", f"E-Divisive means ({history.DETECTOR_REQUIREMENT}), p < {max_pvalue:g}, over "
                  f"{series} series ({runs} runs). A change point is a lead: confirm it with "
                  "`benchbpf ab` of the commits or kernels either side."]
    return "\n".join(lines)


def _html(args):
    try:
        pages = history.html(args.out, args.name, machine=args.machine,
                             max_pvalue=args.max_pvalue, store=args.history)
    except (HistoryError, ValueError, OSError) as e:
        return _fail(2, str(e))
    print(f"{pages[0]} and {len(pages) - 1} series page{'s' if len(pages) != 2 else ''}")
    return 0


def _install(args):
    try:
        python = history.install_detector(args.path)
    except HistoryError as e:
        return _fail(1, str(e))
    print(f"detector installed: {python}")
    return 0


def main(argv):
    """`benchbpf history ...` (argv after "history"); returns the exit
    status: 0 done, 1 the store refused a write, 2 bad arguments, files or
    store."""
    args = build_parser().parse_args(argv)
    if args.command == "install-detector":
        return _install(args)
    try:
        Store(args.history).close()   # a bad store is refused before anything is read
    except HistoryError as e:
        return _fail(2, str(e))
    return {"add": _add, "show": _show, "changes": _changes, "html": _html}[args.command](args)
