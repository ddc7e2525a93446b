#!/usr/bin/env python3
"""Side by side: benchbpf on this machine against the kernel bench's reference figures.

    python3 scripts/reference_table.py --dry-run                 # the mapping, nothing run
    python3 scripts/reference_table.py --filter 'rb-|pb-' --repeat 3
    python3 scripts/reference_table.py --repeat 3 --out results/reference-2cpu.md

Reads the reference markdown files (default: ../shared/reference/*.md next to the
repository).  Each table row names the kernel bench's arguments (for example
"-w1 -d3 --rb-sampled pb-libbpf") and its pass 1 / pass 2 figures.  The arguments
go through the benchbpf command's own check (benchbpf.tools.cli.check_command), so
a flag means here what it means to `benchbpf`.

Every runnable row is run --repeat times.  Runs are interleaved: pass 1 runs every
row once, then pass 2 again, and so on, so that a noisy stretch of time hits all
rows alike.  Rows whose arguments resolve to the same run share its measurements.

The table gives, per row: the median over the repeats of each run's mean hit rate
(the kernel bench's summary is a mean too) with the min..max of those means, the
reference pass 1 / pass 2 figures, and ours / (mean of the two passes).  A row the
kernel cannot run here says so with benchbpf's UnsupportedError message; a benchmark
benchbpf does not have is reported as "not implemented in benchbpf".

Figures from different machines, or taken while other work runs, are not
comparable as they stand: the header records the load average at start and end,
and runs that overlapped another benchbpf run are marked with '*'.
"""
import argparse
import contextlib
import datetime
import glob
import io
import os
import platform
import re
import statistics
import sys
import time
import warnings

import benchbpf
from benchbpf.tools import cli

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_REFS = os.path.join(HERE, "..", "..", "shared", "reference", "*.md")

#: Flags the kernel bench accepts for every benchmark of a family and some of its
#: benchmarks ignore; benchbpf refuses them where they do nothing.  Dropped (and
#: said so) only for the benchmarks that do not take them: flag -> (the
#: parameter it sets, why the kernel bench ignores it).
IGNORED_BY_KERNEL = {
    "--trig-batch-iters": ("trig_batch_iters",
                           "the kernel bench's user-space trigger loops ignore it"),
}

#: Reference rows whose benchmark does something else in benchbpf than in the
#: kernel version the figures come from.
SEMANTIC_NOTES = {
    ("v6.3", "trig-tp"): "v6.3's trig-tp hooked getpgid syscall entry; benchbpf's is the "
                         "newest one (test-run driver, batch 100): different work",
    ("v6.3", "trig-rawtp"): "v6.3's trig-rawtp hooked getpgid syscall entry; benchbpf's is "
                            "the newest one (test-run driver, batch 100): different work",
}

#: v6.3 names benchbpf has under their newest name (not run: say where to look).
RENAMED = {
    "trig-base": "trig-syscall-count",
    "trig-uprobe-with-nop": "trig-uprobe-nop",
    "trig-uretprobe-with-nop": "trig-uretprobe-nop",
    "trig-uprobe-without-nop": "trig-uprobe-push",
    "trig-uretprobe-without-nop": "trig-uretprobe-push",
}


# ---------------------------------------------------------------- parsing

class RefRow:
    """One reference figure: the kernel bench's arguments and its two passes."""

    def __init__(self, source, args, pass1, pass2):
        self.source = source      # short tag of the file: "v6.3", "newest"
        self.args = args          # "-w1 -d3 --rb-sampled pb-libbpf"
        self.pass1 = pass1        # cell text
        self.pass2 = pass2
        self.ref1 = ref_value(pass1)
        self.ref2 = ref_value(pass2)

    @property
    def label(self):
        return f"[{self.source}] {self.args}"


def ref_value(cell):
    """The hit rate (M/s) a reference cell states (for a false-positive benchmark:
    its percentage), or None if it states none."""
    cell = cell.strip()
    m = re.search(r"false positives\s+([\d.]+)\s*%", cell)
    if m:
        return float(m.group(1))
    m = re.search(r"hits\s+([\d.]+)", cell)
    if m:
        return float(m.group(1))
    m = re.match(r"([\d.]+)\s*±\s*[\d.]+\s*M ops/s", cell)
    if m:
        return float(m.group(1))
    m = re.match(r"([\d.]+)(\s*\(.*\))?$", cell)       # newest file: "6.01 (drops 0.037)"
    if m:
        return float(m.group(1))
    return None


def _cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _tables(text):
    """Yield (header cells, [row cells]) for each markdown table in text."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and \
                re.match(r"^\|[\s:|-]+\|$", lines[i + 1].strip()):
            header = _cells(lines[i])
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            yield header, rows
        else:
            i += 1


def _expand_names(spec):
    """"trig-uprobe-nop / -push / -ret" -> the three full names."""
    parts = [p.strip() for p in spec.split("/")]
    names = [parts[0]]
    for p in parts[1:]:
        if p.startswith("-"):
            names.append(names[0].rsplit("-", 1)[0] + p)
        else:
            names.append(p)
    return names


def _split_values(cell, n):
    parts = [p.strip() for p in cell.split(" / ")]
    return parts if len(parts) == n else [cell] * n


def parse_reference(path):
    """RefRows of one reference file, in file order."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    base = os.path.basename(path)
    m = re.search(r"v(\d+\.\d+)", base)
    source = f"v{m.group(1)}" if m else ("newest" if "newest" in base else base)
    m = re.search(r"`(-w\s*\d+\s+-d\s*\d+)`", text)
    common = m.group(1) if m else "-w1 -d3"
    rows = []
    prev_names = []
    for header, body in _tables(text):
        h0 = header[0].lower()
        if h0 == "bench arguments":                      # one row = one run
            for cells in body:
                rows.append(RefRow(source, cells[0].strip("`"), cells[1], cells[2]))
        elif h0 == "benchmark" and "pass" not in header[1].lower():   # columns = batch sizes
            col_args = []
            for h in header[1:]:
                m = re.search(r"(--[\w-]+)\s+(\d+)", h)
                col_args.append(f"{m.group(1)} {m.group(2)} " if m else "")
            for cells in body:
                for extra, cell in zip(col_args, cells[1:]):
                    p1, p2 = _split_values(cell, 2)
                    rows.append(RefRow(source, f"{common} {extra}{cells[0]}", p1, p2))
        elif h0 == "benchmark":                          # "a / -b / c[, `flags`]"
            for cells in body:
                spec, flags = cells[0], ""
                m = re.match(r"^(.*?),\s*`([^`]*)`\s*$", spec)
                if m:
                    spec, flags = m.group(1), m.group(2) + " "
                names = prev_names if spec.strip() == "same" else _expand_names(spec)
                prev_names = names
                v1 = _split_values(cells[1], len(names))
                v2 = _split_values(cells[2], len(names))
                for name, p1, p2 in zip(names, v1, v2):
                    rows.append(RefRow(source, f"{common} {flags}{name}", p1, p2))
    return rows


# ---------------------------------------------------------------- mapping

class ParserError(ValueError):
    pass


def bench_name(args):
    """The benchmark a kernel bench command line names (the one word that is not
    an option or an option's number)."""
    words = [w for w in args.split() if re.match(r"^[a-z][a-z0-9-]*$", w)]
    if len(words) != 1:
        raise ParserError(f"cannot tell the benchmark in {args!r}")
    return words[0]


def _without(words, flag):
    """words without `flag VALUE` (or `flag=VALUE`); None when flag is not there."""
    for i, w in enumerate(words):
        if w == flag:
            return words[:i] + words[i + 2:]
        if w.startswith(flag + "="):
            return words[:i] + words[i + 1:]
    return None


def _check(words):
    """benchbpf's own reading of a command line (the benchbpf command's
    check_command): (name, run() keywords); ValueError with the command's
    message when it refuses the line."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return cli.check_command(words)
    except SystemExit:
        # argparse's refusal: its message is the first line it printed.
        raise ValueError(err.getvalue().splitlines()[0].removeprefix("benchbpf: ")) from None


def resolve(row, known):
    """(kwargs for benchbpf.run, note) or (None, why it cannot be run)."""
    try:
        name = bench_name(row.args)
    except ParserError as e:
        return None, str(e)
    if name not in known:
        why = "not implemented in benchbpf"
        if name in RENAMED and RENAMED[name] in known:
            why += f" (newest name: {RENAMED[name]}, see its row)"
        return None, why
    words, notes = row.args.split(), []
    taken = benchbpf.describe(name).params
    for flag, (param, why) in IGNORED_BY_KERNEL.items():
        rest = _without(words, flag)
        if rest is not None and param not in taken:
            words = rest
            notes.append(f"{flag} dropped: {why}")
    try:
        _, kw = _check(words)
    except (ValueError, TypeError) as e:
        return None, f"options not accepted by benchbpf: {e}"
    # None: run()'s own default (it depends on precision), as the command leaves it.
    kw = {k: v for k, v in kw.items()
          if not (v is None and k in ("warmup", "duration", "interval"))}
    note = SEMANTIC_NOTES.get((row.source, name))
    if note:
        notes.append(note)
    return dict(name=name, **kw), "; ".join(notes)


def run_key(kw):
    return tuple(sorted((k, repr(v)) for k, v in kw.items()))


def call_text(kw):
    kw = dict(kw)
    name = kw.pop("name")
    defaults = dict(benchbpf.COMMON_OPTIONS)
    shown = [f"{k}={v!r}" for k, v in kw.items() if defaults.get(k, object()) != v]
    return f"benchbpf.run({name!r}{''.join(', ' + s for s in shown)})"


# ---------------------------------------------------------------- running

class Runs:
    """The measurements of one distinct run (shared by identical rows)."""

    def __init__(self, kw):
        self.kw = kw
        self.means = []          # per-run mean hits M/s (false_hits report: %)
        self.drops = []
        self.overlapped = 0      # runs that overlapped another benchbpf run
        self.outcome = None      # None while runnable, else the reason text
        self.unit = ""

    def once(self):
        kw = dict(self.kw)
        name = kw.pop("name")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", benchbpf.ConcurrentRunWarning)
                r = benchbpf.run(name, **kw)
        except benchbpf.UnsupportedError as e:
            self.outcome = f"unsupported here: {e}"
            return
        except PermissionError as e:
            self.outcome = f"no permission: {e}"
            return
        except (ValueError, TypeError) as e:
            self.outcome = f"rejected by benchbpf: {e}"
            return
        except benchbpf.BenchmarkError as e:
            self.outcome = f"failed: {e}"
            return
        if r.report == "false_hits":
            # the kernel bench states this one as a percentage of false positives
            m = re.search(r"Percentage\s*=\s*([\d.]+)", r.summary())
            self.means.append(float(m.group(1)) if m else float("nan"))
            self.unit = " %"
        else:
            self.means.append(r.mean)
        self.drops.append(r.drops_mps)
        if r.metadata.get("concurrent_runs"):
            self.overlapped += 1


def fmt(x):
    if x is None:
        return "–"
    if x >= 100:
        return f"{x:.1f}"
    if x >= 10:
        return f"{x:.2f}"
    return f"{x:.3f}"


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _esc(text):
    return text.replace("|", "\\|").replace("\n", " ")


def table(rows, resolved, runs, header):
    out = list(header)
    out.append("| # | reference row | benchbpf M/s: median [min..max] of run means | "
               "ref pass 1 | ref pass 2 | ours / ref | note |")
    out.append("|---|---|---|---|---|---|---|")
    for i, row in enumerate(rows, 1):
        kw, note = resolved[i - 1]
        ours, ratio = "", ""
        if kw is None:
            ours = "–"
        else:
            r = runs[run_key(kw)]
            if r.outcome:
                ours = "–"
                note = "; ".join(x for x in (r.outcome, note) if x)
            elif r.means:
                med = statistics.median(r.means)
                ours = f"{fmt(med)} [{fmt(min(r.means))}..{fmt(max(r.means))}]{r.unit}"
                dmed = statistics.median(r.drops)
                if dmed > 0.0005:
                    ours += f" (drops {dmed:.3f})"
                if r.overlapped:
                    ours += f" *{r.overlapped}/{len(r.means)}"
                refs = [x for x in (row.ref1, row.ref2) if x is not None]
                if (row.source, kw["name"]) in SEMANTIC_NOTES:
                    ratio = "n/c"
                elif refs and statistics.fmean(refs) > 0:
                    ratio = f"{med / statistics.fmean(refs):.2f}"
            else:
                ours = "(not run)"
        out.append(f"| {i} | `{row.label}` | {ours} | {_esc(row.pass1)} | "
                   f"{_esc(row.pass2)} | {ratio} | {_esc(note)} |")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("refs", nargs="*",
                    help="reference markdown files (default: ../shared/reference/*.md)")
    ap.add_argument("--filter", metavar="REGEX",
                    help="only the rows whose '[source] arguments' label matches")
    ap.add_argument("--repeat", type=int, default=3, help="runs per row (default 3)")
    ap.add_argument("--out", metavar="FILE", help="also write the markdown table here")
    ap.add_argument("--dry-run", action="store_true",
                    help="list each row's benchbpf call (or why there is none); run nothing")
    opts = ap.parse_args(argv)
    if opts.repeat < 1:
        ap.error("--repeat must be >= 1")

    paths = opts.refs or sorted(glob.glob(DEFAULT_REFS))
    if not paths:
        ap.error(f"no reference files (looked for {DEFAULT_REFS})")
    rows = [r for p in paths for r in parse_reference(p)]
    if opts.filter:
        rx = re.compile(opts.filter)
        rows = [r for r in rows if rx.search(r.label)]

    known = set(benchbpf.list_benchmarks())
    resolved = [resolve(r, known) for r in rows]

    if opts.dry_run:
        for row, (kw, note) in zip(rows, resolved):
            what = call_text(kw) if kw else "-"
            print(f"{row.label}\n    -> {what}" + (f"\n    note: {note}" if note else ""))
        n = sum(1 for kw, _ in resolved if kw)
        print(f"{len(rows)} rows, {n} runnable, "
              f"{len({run_key(kw) for kw, _ in resolved if kw})} distinct runs")
        return 0

    runs = {}
    for kw, _ in resolved:
        if kw is not None:
            runs.setdefault(run_key(kw), Runs(kw))
    started = datetime.datetime.now().astimezone()
    load_start = loadavg()
    t0 = time.monotonic()
    for rep in range(opts.repeat):
        for j, r in enumerate(runs.values(), 1):
            if r.outcome:
                continue
            print(f"[pass {rep + 1}/{opts.repeat}, {j}/{len(runs)}, "
                  f"{time.monotonic() - t0:.0f}s] {call_text(r.kw)}",
                  file=sys.stderr, flush=True)
            r.once()
    load_end = loadavg()

    header = [
        "# benchbpf vs the kernel bench's reference figures",
        "",
        f"- taken: {started:%Y-%m-%d %H:%M %Z}, {time.monotonic() - t0:.0f} s; "
        f"host: {cpu_model()}, {os.cpu_count()} CPUs, kernel {platform.release()}",
        f"- load average (1/5/15 min): at start {load_start}, at end {load_end}",
        f"- each runnable row run {opts.repeat} times, interleaved (every row once per "
        "pass); identical runs shared between rows",
        "- ours: median of the runs' mean hit rates [min..max], M/s; `*k/n`: k of n runs "
        "overlapped another benchbpf run",
        "- ours / ref: our median over the mean of the two reference passes "
        "(n/c: not comparable, see the note)",
        "- reference files: " + ", ".join(os.path.basename(p) for p in paths),
        "",
    ]
    lines = table(rows, resolved, runs, header)
    text = "\n".join(lines) + "\n"
    print(text)
    if opts.out:
        os.makedirs(os.path.dirname(os.path.abspath(opts.out)), exist_ok=True)
        with open(opts.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
