"""The suite report: every benchmark this kernel can run, in one HTML file.

    >>> from benchbpf import report
    >>> rs = report.run_suite(quick=True, only="trig-*")
    >>> open("report.html", "w").write(report.to_html(rs))
    >>> rs.save("report.json")

run_suite() runs each selected benchmark with its defaults (as a plain
`benchbpf NAME` does) and returns a ResultSet: what ran, what this kernel
refused (with its reason), and in metadata the machine's fingerprint, the
options used and the runs that failed.  to_html() renders a ResultSet as
one self-contained page.  compare_sets() pairs two suite runs.
"""
import base64
import dataclasses
import datetime
import fnmatch
import html
import io
import math
import statistics
import time

from ..benchs import FAMILIES
from ..harness import _progress, _runner
from ..results._lines import summary_latency_ns
from .._core import BenchmarkError, UnsupportedError
from ..analysis._compare import NOT_ENOUGH_RUNS, compare, median_ci, run_agreement
from ..analysis._outcome import THRESHOLD
from ..results.fingerprint import differences, fingerprint
from ..results.result import Result, emulation
from ..results.resultset import ResultSet, Unsupported

__all__ = ["run_suite", "to_html", "select", "plan", "compare_sets", "compare_results", "load",
           "SetComparison",
           "disagreements",
           "QUICK", "QUICK_PARAMS", "REQUIRED_PARAMS", "EXCLUDED"]

#: Common options of a quick suite: nine samples per benchmark, enough for a
#: 95 % confidence interval of the median narrower than min..max.
QUICK = {"warmup": 0.2, "duration": 0.9, "interval": 0.1}



def _declared(attr):
    """{benchmark: options} that the family modules declare as `attr`: a
    family states its own, and no list here names it."""
    return {name: dict(options) for module in FAMILIES.values()
            for name, options in getattr(module, attr, {}).items()}


#: Benchmark options a quick suite changes: their defaults cost setup time
#: out of proportion with a short run (each family module's QUICK_PARAMS).
QUICK_PARAMS = _declared("QUICK_PARAMS")

#: Options a benchmark has no default for (the kernel bench requires them):
#: the suite runs this choice, in quick and full suites alike, and the
#: manual's examples show it (each family module's REQUIRED_PARAMS).
REQUIRED_PARAMS = _declared("REQUIRED_PARAMS")

#: Benchmarks the suite leaves out, and why.
EXCLUDED = {"selftest": "exists to test the harness, not a measurement"}

#: Report kinds whose kernel bench summary states a latency per operation.
_LATENCY_REPORTS = ("ops", "local_storage")

#: Benchmarks whose figure is their total operations (hits + drops), as the
#: kernel bench's own scripts summarise them: their lookups of absent keys
#: count as drops.  Every other benchmark's figure is its hits.
_TOTAL_OPS = ("hashmap-without-bloom", "hashmap-with-bloom")

#: Timing options: how long a run measured, not what it measured.  compare_sets()
#: pairs results whatever these were (a quick report against a full one).
_TIMING = ("warmup", "duration", "interval")


def _patterns(only):
    if only is None:
        return None
    if isinstance(only, str):
        only = only.split(",")
    pats = [p.strip() for p in only if p.strip()]
    if not pats:
        raise ValueError(f"only={only!r}: give at least one glob pattern of benchmark names")
    return pats


def select(only=None):
    """Names of the benchmarks a suite runs, in registry order.

    only: None (every benchmark but EXCLUDED), an fnmatch glob, a comma list
    of globs, or a list of globs.  A pattern that matches no benchmark is a
    ValueError naming it."""
    names = [n for n in _runner.list_benchmarks() if n not in EXCLUDED]
    pats = _patterns(only)
    if pats is None:
        return names
    for p in pats:
        if not any(fnmatch.fnmatchcase(n, p) for n in names):
            excluded = [n for n in EXCLUDED if fnmatch.fnmatchcase(n, p)]
            why = (f"; {', '.join(excluded)} is left out of the suite: "
                   f"{EXCLUDED[excluded[0]]}") if excluded else \
                "; `benchbpf -l` lists the benchmarks"
            raise ValueError(f"--only pattern {p!r} matches no benchmark{why}")
    return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in pats)]


#: The separate run that gives a benchmark's program cost: statistics cost
#: the measured run two clock reads per program run, so it never has them.
COST_RUN = {**QUICK, "prog_stats": True}


def plan(quick=False, only=None, prog_stats=True):
    """[(name, run options, cost run options or None)] of a suite, in run
    order: the benchmark's defaults, QUICK and QUICK_PARAMS with quick=True;
    with prog_stats=True, every benchmark that loads BPF also gets a short
    run with program statistics on, for its programs' own cost."""
    runs = []
    for name in select(only):
        info = _runner.describe(name)
        options = dict(QUICK) if quick else {}
        options.update(REQUIRED_PARAMS.get(name, {}))
        if quick:
            options.update(QUICK_PARAMS.get(name, {}))
        cost = {**options, **COST_RUN} if prog_stats and info.needs_bpf else None
        runs.append((name, options, cost))
    return runs


def counter_for(r):
    """The counter a suite reports for Result r: "total_ops" or "hits"."""
    return "total_ops" if r.name in _TOTAL_OPS else "hits"


def _median(r):
    xs = r.rates_mps(counter_for(r))
    return statistics.median(xs) if xs else math.nan


def _fmt_rate(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.3f}" if abs(x) >= 1 or math.isinf(x) else f"{x:.4g}"


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def run_suite(quick=False, only=None, progress=None, prog_stats=True, repeat=1, budget=None):
    """Run every selected benchmark `repeat` times and return a ResultSet.

    Repetitions go round the suite (every benchmark once, then again), so
    that each benchmark's runs are spread over the whole suite's time and
    meet its changing conditions as a later suite's runs will: compare()
    tests across them.  A benchmark this kernel refuses (UnsupportedError,
    or no privilege to load BPF) is listed in .unsupported with the reason,
    once; one that fails (BenchmarkError) in metadata["failed"].
    progress(line) is called with one line per run as it finishes.  budget:
    seconds of wall time after which no new pass round the suite starts
    (whole passes only, so every benchmark keeps as many runs as the others;
    metadata["report"]["passes"] says how many ran).  Options are checked for
    every benchmark before the first run."""
    if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= 1000:
        raise ValueError(f"repeat={repeat!r} out of range: an integer in 1..1000")
    budget = _runner.check_budget(budget)
    runs = plan(quick, only, prog_stats)
    for name, options, cost in runs:
        _runner.check(name, **options)
        if cost is not None:
            _runner.check(name, **cost)
    started, t0 = _now(), time.monotonic()
    machine = fingerprint()
    results, unsupported, failed = [], [], []
    passes = [0]

    def metadata():
        return {
            "fingerprint": machine,
            "report": {
                "quick": bool(quick), "only": _patterns(only),
                "prog_stats": bool(prog_stats), "repeat": repeat,
                "common_options": dict(QUICK) if quick else
                {k: _runner.COMMON_OPTIONS[k] for k in _TIMING},
                "quick_params": {n: p for n, p in QUICK_PARAMS.items()
                                 if quick and n in {name for name, *_ in runs}},
                "cost_run": dict(COST_RUN) if prog_stats else None,
                "excluded": dict(EXCLUDED),
                "started": started, "finished": _now(),
                "elapsed_s": round(time.monotonic() - t0, 3),
                "budget_s": budget, "passes": passes[0],
            },
            "failed": failed,
        }
    try:
        _run_all(runs, repeat, results, unsupported, failed, progress, budget, passes)
    except KeyboardInterrupt:
        # Keep what finished: a partial report, marked so, saved and said where.
        done = len(results) + len(unsupported) + len(failed)
        planned = len(runs) * repeat
        partial = ResultSet(results, unsupported=unsupported, metadata={
            **metadata(), "incomplete": True, "interrupted": "benchbpf report",
            "finished_runs": done, "planned_runs": planned})
        path = _progress.save_partial(partial, "report")
        where = f"saved to {path}" if path else "in the exception's .partial"
        raise _progress.Interrupted(
            f"report interrupted after {done} of {planned} runs; what finished is "
            f"{where}", partial, path) from None
    return ResultSet(results, unsupported=unsupported, metadata=metadata())


def _run_all(runs, repeat, results, unsupported, failed, progress, budget=None, passes=None):
    """run_suite's runs, `repeat` times round the suite, appending to its lists
    as each ends; a benchmark the kernel refuses is not tried again.  No pass
    starts that would, at the pace of those before, end past `budget` s;
    passes[0] counts the passes that ran."""
    refused, costs = set(), {}
    total = len(runs) * repeat
    began = time.monotonic()
    for rep in range(repeat):
        if _runner.next_would_overrun(budget, time.monotonic() - began, rep):
            if progress:
                progress(f"budget of {budget:g} s: {rep} of {repeat} passes taken")
            break
        if passes is not None:
            passes[0] = rep + 1
        for i, (name, options, cost) in enumerate(runs, 1):
            if name in refused:
                continue
            head = f"[{rep * len(runs) + i}/{total}] {name} ..." if repeat > 1 else \
                f"[{i}/{len(runs)}] {name} ..."
            t = time.monotonic()
            try:
                r = _runner.run(name, **options)
                if cost is not None:
                    # Program cost is the programs', not the run's: once is enough.
                    if name not in costs:
                        costs[name] = _runner.run(name, **cost)
                    r = _with_cost(r, costs[name])
            except (UnsupportedError, PermissionError) as e:
                unsupported.append(Unsupported(name, str(e), options))
                refused.add(name)
                line = f"{head} unsupported: {e}"
            except BenchmarkError as e:
                failed.append({"name": name, "error": str(e), "params": options})
                line = f"{head} FAILED: {e}"
            else:
                results.append(r)
                trig = r.metadata.get("trigger")
                what = "" if counter_for(r) == "hits" else f" {counter_for(r)}"
                over = r.metadata.get("concurrent_runs") or 0
                line = f"{head} {_fmt_rate(_median(r))} M/s{what}" + \
                    (f" ({trig})" if trig else "") + \
                    f", {time.monotonic() - t:.1f} s" + \
                    (f" [overlapped {over} other benchbpf run(s)]" if over else "")
            if progress is not None:
                progress(line)


def _with_cost(r, cost):
    """r with the program statistics of its separate cost run."""
    meta = {**r.metadata, "prog_stats_source":
            f"a separate {cost.duration_s:.1f} s run with BPF_ENABLE_STATS on"}
    return dataclasses.replace(r, prog_stats=cost.prog_stats, metadata=meta)


# ---------------------------------------------------------------- HTML

def _e(value):
    return html.escape(str(value), quote=True)


def _ci_is_range(n):
    """True when n samples are too few for a 95 % interval narrower than min..max."""
    lo, hi = median_ci(range(n)) if n else (0, 0)
    return n > 0 and (lo, hi) == (0, n - 1)


def _own_params(r):
    """The benchmark's own parameters that differ from its defaults, plus
    producers/consumers when not the defaults: what this row ran with."""
    try:
        info = _runner.describe(r.name)
    except ValueError:
        info = None
    shown = {}
    for k, v in r.params.items():
        if k in _runner.COMMON_OPTIONS:
            continue
        if info is not None and k in info.params and info.params[k].default == v:
            continue
        shown[k] = v
    if r.params.get("producers", 1) != 1:
        shown["producers"] = r.params["producers"]
    if info is not None and r.params.get("consumers", info.default_consumers) != \
            info.default_consumers:
        shown["consumers"] = r.params["consumers"]
    return shown


def _label(r):
    extra = _own_params(r)
    how = emulation(r)
    return r.name + ("" if not extra else
                     " [" + ", ".join(f"{k}={v}" for k, v in extra.items()) + "]") + \
        (f" ({how}-emulated, {r.metadata.get('kernel', '?')})" if how else "")


def row_stats(r):
    """(median, (ci low, ci high), mean, stdev, latency ns/op or None) of a
    Result's rates of counter_for(r), M/s."""
    xs = r.rates_mps(counter_for(r))
    med = statistics.median(xs) if xs else math.nan
    ci = median_ci(xs)
    mean, sd = r.stat(counter_for(r))
    return med, ci, mean, sd, summary_latency_ns(r)


#: Programs a run loads to set itself up, not to be measured: the producers'
#: whoami (bpf/producer.bpf.h), run once through BPF_PROG_TEST_RUN before the
#: measured window, so its cost is no benchmark's.
SETUP_PROGRAMS = frozenset({"producer_whoami"})


def _prog_cell(r):
    progs = [p for p in r.prog_stats if p.name not in SETUP_PROGRAMS]
    if progs:
        return "<br>".join(
            f"{_e(p.name)}: {_e(f'{p.ns_per_run:.1f}')} ns/run "
            f"<span class=dim>({_e(p.run_cnt)} runs)</span>" if p.run_cnt else
            f"{_e(p.name)}: <span class=dim>did not run</span>" for p in progs)
    if not r.params.get("prog_stats") and "prog_stats_source" not in r.metadata:
        try:
            if not _runner.describe(r.name).needs_bpf:
                return "<span class=dim>no BPF</span>"
        except ValueError:
            pass
        return "<span class=dim>off</span>"
    return "<span class=dim>none reported</span>"


def _results_table(rs):
    head = ("<tr><th>benchmark</th><th>family</th><th>samples</th><th>counter</th>"
            "<th>median M/s</th>"
            "<th>95 % CI of median</th><th>mean &plusmn; stdev</th><th>latency ns/op</th>"
            "<th>trigger</th><th>program cost</th><th>kernel bench summary</th>"
            "<th>warnings</th></tr>")
    rows, ranged, stepped, overlapped = [], False, False, 0
    for r in rs:
        med, (lo, hi), mean, sd, lat = row_stats(r)
        n = len(r.samples)
        mark = ""
        if _ci_is_range(n):
            ranged, mark = True, "*"
        late = f" <span class=dim>({r.late_samples} late)</span>" if r.late_samples else ""
        over = r.metadata.get("concurrent_runs") or 0
        if over:
            overlapped += 1
            late += (f" <span class=warn>overlapped {_e(over)} other benchbpf "
                     "run(s)</span>")
        step = r.coarse_step_mps(counter_for(r))
        # The resolution of the samples, beside the figure it limits.
        steps = f"<br><span class=dim>in steps of {_e(f'{step:.3g}')}</span>" if step else ""
        stepped = stepped or bool(step)
        rows.append(
            f"<tr><td><code>{_e(_label(r))}</code></td><td>{_e(r.metadata.get('family', '?'))}"
            f"</td><td class=num>{_e(n)}{late}</td><td>{_e(counter_for(r))}</td>"
            f"<td class=num><b>{_e(_fmt_rate(med))}</b>{steps}"
            f"</td><td class=num>{_e(_fmt_rate(lo))} .. {_e(_fmt_rate(hi))}{_e(mark)}</td>"
            f"<td class=num>{_e(_fmt_rate(mean))} &plusmn; {_e(_fmt_rate(sd))}</td>"
            f"<td class=num>{_e(_fmt_rate(lat)) if lat is not None else '-'}</td>"
            f"<td><code>{_e(r.metadata.get('trigger') or '-')}</code></td>"
            f"<td>{_prog_cell(r)}</td><td><pre>{_e(r.summary())}</pre></td>"
            f"<td>{_warnings_cell(r)}</td></tr>")
    note = ("<p class=dim>\"in steps of X\": the benchmark counts a batch per event "
            "(local storage 10000 gets, bpf-hashmap-lookup nr_loops lookups per "
            "getpgid(), as the kernel bench), so each sample's rate is a whole number of "
            "X M/s (Result.step_mps()); a longer interval makes X smaller.</p>"
            if stepped else "") + \
        ("<p class=dim>* too few samples for a 95 % interval: min..max of the "
         "samples.</p>" if ranged else "")
    if overlapped:
        note += (f"<p class=note>{overlapped} run(s) overlapped another benchbpf run on "
                 "this machine (marked in the samples column): both competed for the "
                 "CPUs, so their figures are disturbed.</p>")
    warned = sum(1 for r in rs if r.warnings)
    if warned:
        note += (f"<p class=note>{warned} run(s) warn of instability (warnings column: "
                 "Result.warnings, thresholds in benchbpf.stats.instability): their "
                 "figure is less certain than its interval says.</p>")
    note += _disagreement_note(rs)
    if not rows:
        return "<p>No benchmark ran.</p>"
    return f"<table>{head}{''.join(rows)}</table>{note}"


def _warnings_cell(r):
    if not r.warnings:
        return "<span class=dim>none</span>"
    return "<br>".join(f"<span class=warn>WARNING</span> {_e(w)}" for w in r.warnings)


def disagreements(results):
    """[(label, RunStates)] of each configuration among `results` (a
    suite's Results) whose repeated runs disagree beyond their own spread
    (analysis.run_agreement on the suite's counter), in run order."""
    out = []
    for runs in _groups(results).values():
        if len(runs) > 1:
            states = run_agreement(runs, counter_for(runs[0]))
            if states:
                out.append((_label(runs[0]), states))
    return out


def _disagreement_note(rs):
    found = disagreements(rs)
    if not found:
        return ""
    items = "".join(f"<li><code>{_e(label)}</code>: {_e(states.text())}</li>"
                    for label, states in found)
    return (f"<p class=note><b>Runs that disagree:</b> the repeated runs of these "
            f"benchmarks differ beyond what each run's own spread explains (each run's "
            f"mean and its standard error over 1 s blocks, Cochran's Q at alpha 0.01, "
            f"and a spread over 5 %): one run's interval does not describe the "
            f"next.</p><ul>{items}</ul>")


def _families(rs):
    fams = {}
    for r in rs:
        fams.setdefault(r.metadata.get("family", r.name), []).append(r)
    return fams


def _family_png(family, results):
    """A bar chart of the medians with their CIs as PNG bytes (matplotlib Agg)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    labels, meds, lo, hi = [], [], [], []
    for r in results:
        med, (low, high), _, _, _ = row_stats(r)
        counter = counter_for(r)
        labels.append(_label(r) + ("" if counter == "hits" else f" ({counter})"))
        meds.append(med)
        lo.append(max(med - low, 0.0))
        hi.append(max(high - med, 0.0))
    fig = Figure(figsize=(max(4.0, 0.6 * len(results) + 2.0), 3.6))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    xs = range(len(results))
    ax.bar(xs, meds, width=0.6, yerr=[lo, hi], capsize=3, color="#4c78a8")
    ax.set_xlim(-0.7, len(results) - 0.3)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    finite = [m for m in meds if m == m and m > 0]
    if len(finite) == len(meds) and finite and max(finite) / min(finite) >= 100:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.set_ylabel("M/s (median, 95 % CI)")
    ax.set_title(family)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()


def _plots(rs):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return ("<p>Plots need matplotlib, which is not installed here "
                "(<code>pip install 'benchbpf[plot]'</code>).</p>")
    parts = []
    for family, results in _families(rs).items():
        png = base64.b64encode(_family_png(family, results)).decode("ascii")
        parts.append(f"<figure><img alt=\"{_e(family)}: medians\" "
                     f"src=\"data:image/png;base64,{png}\"><figcaption>{_e(family)}"
                     f"</figcaption></figure>")
    return "".join(parts) or "<p>Nothing to plot.</p>"


def _value_html(value):
    if value is None:
        return "<span class=dim>unknown</span>"
    if hasattr(value, "items"):
        return "<br>".join(f"{_e(k)}: {_e(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return _e(", ".join(map(str, value)))
    return _e(value)


def _fingerprint_table(fp):
    if not fp:
        return "<p>No fingerprint recorded.</p>"
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_value_html(v)}</td></tr>"
                   for k, v in fp.items())
    return f"<table class=kv>{rows}</table>"


def _unsupported_table(rs):
    if not rs.unsupported:
        return "<p>Every selected benchmark ran.</p>"
    rows = "".join(f"<tr><td><code>{_e(u.name)}</code></td><td>{_e(u.reason)}</td></tr>"
                   for u in rs.unsupported)
    return f"<table><tr><th>benchmark</th><th>reason</th></tr>{rows}</table>"


def _failed_table(failed):
    rows = "".join(f"<tr><td><code>{_e(f.get('name'))}</code></td>"
                   f"<td><pre>{_e(f.get('error'))}</pre></td></tr>" for f in failed)
    return f"<table><tr><th>benchmark</th><th>error</th></tr>{rows}</table>"


_STYLE = """
body{font-family:sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0;font-size:90%}
th,td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top;text-align:left}
td.num{text-align:right;white-space:nowrap}
table.kv th{background:#f4f4f4}
pre{margin:0;font-size:85%;white-space:pre-wrap}
.dim{color:#777}
figure{display:inline-block;margin:.5em}
img{max-width:100%}
.note{background:#fff7e0;border-left:4px solid #e0a000;padding:.4em .8em}
.warn{color:#b00;font-weight:bold}
"""


def to_html(resultset):
    """One self-contained HTML page (no external resources), a str, for a
    suite's ResultSet `resultset` (run_suite's)."""
    rs = resultset
    meta = rs.metadata
    opts = meta.get("report") or {}
    fp = meta.get("fingerprint")
    if fp is None and len(rs):
        fp = rs[0].metadata.get("fingerprint")
    mode = "quick" if opts.get("quick") else "full"
    common = opts.get("common_options") or {}
    settings = ", ".join(f"{k} {v} s" for k, v in common.items())
    qp = opts.get("quick_params") or {}
    qp_text = "; ".join(f"{n}: " + ", ".join(f"{k}={v}" for k, v in p.items())
                        for n, p in qp.items())
    only = opts.get("only")
    lines = [
        f"{len(rs)} benchmarks ran, {len(rs.unsupported)} could not run here"
        + (f", {len(meta.get('failed') or ())} failed" if meta.get("failed") else "") + ".",
        f"Mode: {mode} ({settings or 'each benchmark defaults'}); the benchmarks' own "
        f"options are their defaults" + (f", except {qp_text}" if qp_text else "") + ".",
    ]
    if meta.get("incomplete"):
        lines.insert(0, f"INCOMPLETE: interrupted after {meta.get('finished_runs')} of "
                        f"{meta.get('planned_runs')} benchmarks; only those are below.")
    if only:
        lines.append("Selected with --only " + ", ".join(only) + ".")
    if (opts.get("repeat") or 1) > 1:
        lines.append(f"Each benchmark ran {opts['repeat']} times, round the suite; "
                     "one row per run.")
    if opts.get("started"):
        lines.append(f"Started {opts['started']}, finished {opts.get('finished', '?')} "
                     f"({opts.get('elapsed_s', '?')} s).")
    excluded = opts.get("excluded") or {}
    if excluded:
        lines.append("Left out: " + "; ".join(f"{k} ({v})" for k, v in excluded.items()) + ".")
    prog_note = ""
    if opts.get("prog_stats"):
        prog_note = (
            "<p class=note>Program cost comes from a separate short run of each "
            "benchmark that loads BPF, with the kernel's run-time statistics "
            "(BPF_ENABLE_STATS) on: they read the clock twice per program run, so the "
            "measured runs above never have them on (the manual, \"Program cost\"). "
            "<code>--no-prog-stats</code> skips the cost runs.</p>")
    emulated = sorted({f"{emulation(r)} guest {r.metadata.get('kernel', '?')}"
                       for r in rs if emulation(r)})
    if emulated:
        prog_note += ("<p class=note><b>Emulated:</b> rows marked so ran in a guest that "
                      "QEMU emulated (" + _e(", ".join(emulated)) + "): their counts are "
                      "real, their rates are the emulator's, not performance figures.</p>")
    failed = meta.get("failed") or ()
    title = f"benchbpf suite report: {fp.get('kernel_release', '?') if fp else '?'}"
    body = [
        f"<h1>{_e(title)}</h1>",
        "".join(f"<p>{_e(line)}</p>" for line in lines),
        prog_note,
        "<h2>Machine fingerprint</h2>", _fingerprint_table(fp),
        "<h2>Results</h2>",
        "<p class=dim>Rates are each benchmark's counter per second over its kept "
        "samples (each normalised by its real interval length): hits, or total "
        "operations (hits + drops) where the kernel bench's scripts summarise those. "
        "The last column is the kernel bench's own summary for the run.</p>",
        _results_table(rs),
        "<h2>Per family</h2>", _plots(rs),
        "<h2>Could not run here</h2>", _unsupported_table(rs),
    ]
    if failed:
        body += ["<h2>Failed</h2>", _failed_table(failed)]
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


# ---------------------------------------------------------------- compare

def _pair_key(r):
    return (r.name, tuple(sorted((k, repr(v)) for k, v in r.params.items()
                                 if k not in _TIMING)))


def _varying(results):
    """Per benchmark name, the parameters whose values differ between its results."""
    seen = {}
    for r in results:
        for k, v in r.params.items():
            if k not in _TIMING:
                seen.setdefault(r.name, {}).setdefault(k, set()).add(repr(v))
    return {n: [k for k, vs in ps.items() if len(vs) > 1] for n, ps in seen.items()}


def _groups(results):
    """Results by configuration (_pair_key), in run order: the repetitions of each."""
    groups = {}
    for r in results:
        groups.setdefault(_pair_key(r), []).append(r)
    return groups


def _regression(label, c, threshold):
    """The line naming a regression beyond threshold percent, or None.  The
    threshold applies to the figure the verdict is on (with per_cpu, the
    runs' speeds per producer CPU-second, as the gate's max_drop_pct)."""
    if threshold is None or not c.significant or not c.figure_change_pct < -threshold:
        return None
    on = f", {c.figure_text()} {c.figure_change_pct:+.1f}%" if c.per_cpu else ""
    return (f"{label}: {c.figure_change_pct:+.1f}% beyond -{threshold:g}% (baseline "
            f"{c.base_median:.4g} -> new {c.new_median:.4g} M/s {c.counter}, "
            f"{c.change_pct:+.1f}%{on}), Mann-Whitney U across {len(c.base_runs)} -> "
            f"{len(c.new_runs)} runs p={c.p_value():.2g} < alpha {c.alpha:g}")


class SetComparison(tuple):
    """What compare_sets() and compare_results() return: the tuple (lines,
    regressions, undecided), and in `comparisons` each pair's Comparison by
    its label, whose `outcome` (analysis.Outcome) the lines print."""

    def __new__(cls, lines, regressions, undecided, comparisons):
        self = super().__new__(cls, (lines, regressions, undecided))
        self.comparisons = dict(comparisons)
        return self

    @property
    def outcomes(self):
        """Each pair's Outcome by its label."""
        return {k: c.outcome for k, c in self.comparisons.items()}


def _pair_line(name, width, c):
    """One pair of compare_sets(): medians, change, runs, then the outcome
    as every comparison prints it and the test behind it."""
    t = c.test()
    if t.verdict == NOT_ENOUGH_RUNS:
        test = ""
    elif c.per_cpu:
        test = f"; p={t.p_value:.2g}, per producer CPU-second {c.figure_change_pct:+.1f}%"
    else:
        test = f"; p={t.p_value:.2g}, run medians"
    what = "" if c.counter == "hits" else f" ({c.counter})"
    runs = f"{len(c.base_runs)}->{len(c.new_runs)}"
    mark = c.overlap_text()
    return (f"{name:<{width}}  {c.base_median:10.4g} -> {c.new_median:10.4g} M/s"
            f"  {c.change_pct:+7.1f}%  {runs:>4}  {c.outcome.text()}{test}{what}"
            + (f" {mark}" if mark else ""))


def compare_sets(base, new, alpha=0.05, fail_on_regression=None, different_params=False,
                 different_benchmarks=False, per_cpu=None, allow_emulated=False):
    """Compare two suite runs (ResultSets): (lines, regressions, undecided),
    a SetComparison whose `comparisons` holds each pair's Comparison.

    Results group by benchmark name and parameters (warm-up, duration and
    interval aside): the repetitions of one configuration (`report --repeat
    N`) are one side, and analysis.compare() tests across them.  Each pair
    gives the medians baseline -> new, the change and its Outcome: B/A, its
    interval and the verdict, "slower", "faster", "same" (within
    fail_on_regression percent, else 2 %) or "undecided".  A configuration
    left alone on each side under one benchmark name pairs with the other
    as runs of different parameters, and paired runs whose interval or
    trigger differ, are refused (ValueError naming every difference) unless
    different_params=True.  Then what is only in one of them, and what
    differs between the machines' fingerprints.

    regressions: one line per benchmark whose drop is significant and larger
    than fail_on_regression percent (empty when it is None).  undecided:
    the benchmarks with too few runs to tell (when fail_on_regression is
    given), one line each."""
    varying = _varying(list(base) + list(new))

    def label(r):
        keys = varying.get(r.name) or ()
        return r.name + ("" if not keys else
                         " [" + ", ".join(f"{k}={r.params.get(k)}" for k in keys) + "]")

    pending = _groups(base)
    pairs, only_new = [], []
    for key, runs in _groups(new).items():
        if key in pending:
            pairs.append((pending.pop(key), runs))
        else:
            only_new.append(runs)
    # One configuration left on each side under one name: the same
    # benchmark run with other parameters; compared only if that is the point.
    for runs in list(only_new):
        name = runs[0].name
        mine = [k for k in pending if k[0] == name]
        if len(mine) == 1 and sum(1 for rs in only_new if rs[0].name == name) == 1:
            pairs.append((pending.pop(mine[0]), runs))
            only_new.remove(runs)
    refused, rows = [], []
    for b, n in pairs:
        if not b[0].samples or not n[0].samples:
            rows.append((b, n, None))
            continue
        try:
            c = compare(b, n, counter=counter_for(n[0]), alpha=alpha,
                        different_params=different_params,
                        different_benchmarks=different_benchmarks, per_cpu=per_cpu,
                        allow_emulated=allow_emulated, threshold=_threshold(fail_on_regression))
        except ValueError as e:
            refused.append(str(e))
            continue
        rows.append((b, n, c))
    if refused:
        raise ValueError("\n".join(refused))
    lines, regressions, undecided, comparisons = [], [], [], {}
    width = max([len(label(r)) for r in list(base) + list(new)] + [len("benchmark")])
    lines.append(f"{'benchmark':<{width}}  {'baseline':>10} -> {'new':>10} M/s  "
                 f"{'change':>8}  runs  outcome (Mann-Whitney U across runs, alpha {alpha:g})")
    for b, n, c in rows:
        name = label(n[0])
        if c is None:
            lines.append(f"{name:<{width}}  no samples to compare")
            continue
        t = c.test()
        comparisons[name] = c
        lines.append(_pair_line(name, width, c))
        lines += [f"{'':<{width}}  differs: {d}" for d in c.differences]
        for side, states in zip(("baseline", "new"), c.agreement):
            if states:
                lines.append(f"{'':<{width}}  {side}: {states.text()}")
        hit = _regression(name, c, fail_on_regression)
        if hit:
            regressions.append(hit)
        elif fail_on_regression is not None and t.verdict == NOT_ENOUGH_RUNS:
            undecided.append(f"{name}: {c.change_pct:+.1f}% over {len(c.base_runs)} -> "
                             f"{len(c.new_runs)} runs (needs {t.runs_needed} per side)")
    only_base = [r for q in pending.values() for r in q]
    only_second = [r for q in only_new for r in q]
    why_a = {u.name: u.reason for u in base.unsupported}
    why_b = {u.name: u.reason for u in new.unsupported}
    for side, rs, other_why in (("first", only_base, why_b), ("second", only_second, why_a)):
        for r in dict.fromkeys(label(r) for r in rs):
            name = r.split(" [")[0]
            why = other_why.get(name)
            lines.append(f"only in the {side}: {r}"
                         + (f" (the other could not run it: {why})" if why else ""))
    ran = {r.name for r in list(base) + list(new)}
    for side, why in (("first", why_a), ("second", why_b)):
        other = why_b if side == "first" else why_a
        for name, reason in why.items():
            if name not in ran and name not in other:
                lines.append(f"unsupported only in the {side}: {name}: {reason}")
    diffs = differences(base.metadata.get("fingerprint"), new.metadata.get("fingerprint"))
    if diffs:
        lines.append("fingerprint differences:")
        lines += ["  " + d for d in diffs]
    return SetComparison(lines, regressions, undecided, comparisons)


def _threshold(fail_on_regression):
    """The outcome's threshold, a fraction: the regression limit where one is given."""
    return THRESHOLD if fail_on_regression is None else fail_on_regression / 100.0


def compare_results(base, new, alpha=0.05, fail_on_regression=None, different_params=False,
                    different_benchmarks=False, per_cpu=None, allow_emulated=False):
    """Compare two Results as analysis.compare does: (lines, regressions,
    undecided), a SetComparison as compare_sets'.  ValueError when they are different
    benchmarks or configurations, or one is from an emulated guest and the
    other not (unless allow_emulated)."""
    c = compare(base, new, alpha=alpha, different_params=different_params,
                different_benchmarks=different_benchmarks, per_cpu=per_cpu,
                allow_emulated=allow_emulated, threshold=_threshold(fail_on_regression))
    hit = _regression(base.name, c, fail_on_regression)
    undecided = []
    if fail_on_regression is not None and c.verdict == NOT_ENOUGH_RUNS:
        undecided.append(f"{base.name}: {c.change_pct:+.1f}% over 1 -> 1 runs (needs "
                         f"{c.test().runs_needed} per side)")
    return SetComparison(str(c).splitlines(), [hit] if hit else [], undecided,
                         {base.name: c})


def load(path):
    """A Result or a ResultSet from the JSON file at `path`, whichever it
    holds.  ValueError naming the file when it is neither, OSError when it
    cannot be read."""
    import json
    with open(path) as f:
        try:
            d = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON ({e})") from None
    kind = d.get("format") if isinstance(d, dict) else None
    if kind == "benchbpf-resultset":
        return ResultSet.from_dict(d)
    if kind == "benchbpf-result":
        return Result.from_dict(d)
    raise ValueError(f"{path}: neither a benchbpf report (result set) nor a result "
                     f"(format {kind!r})")
