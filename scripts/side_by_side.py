#!/usr/bin/env python3
"""Alternating comparison of benchbpf with the kernel's own BPF `bench` binary.

    python3 scripts/side_by_side.py /path/to/bench                    # the default table
    python3 scripts/side_by_side.py /path/to/bench -n 7 -w1 -d3 \\
        --config "trig-kernel-count" --config "--trig-batch-iters 1000 trig-kernel-count"
    python3 scripts/side_by_side.py /path/to/bench --out results/side-by-side-2cpu.md

Each configuration is a kernel bench command line without -w/-d (for example
"-c1 --rb-sampled rb-libbpf").  For every alternation, each configuration runs
once on every side, in an order that rotates from one alternation to the next
(so no side always runs first):

  kernel   the kernel bench binary:            BENCH -wW -dD FLAGS
  cli      the benchbpf command:               python3 -m benchbpf -wW -dD FLAGS
  api      benchbpf.run() in this process, with the arguments the benchbpf
           command's own parser makes of FLAGS (scripts/reference_table.resolve)

A run's figure is the mean of its kept per-interval samples (what both summary
lines print), or with --figure median the median of them: on a host whose
CPUs slow down by a third for a second at a time, now and then, a slowed
interval moves a run's mean but seldom its median, and both sides are read
the same way.  The table gives per side the median of those figures over the
alternations, benchbpf / kernel and API / CLI ratios of medians, benchbpf /
kernel as the median of each alternation's ratio (runs taken next to each
other, so that a host drifting over minutes moves both), and the spread:
the median over runs of each run's stdev / mean of its kept samples.  The kernel
bench keeps D+1 samples for -dD, benchbpf D; the spread is per sample, so the
counts do not bias it, but the kernel's first kept sample starts right after
warm-up the way its timer drifts, and both are stated as measured.

The header records the time, machine, load average before and after, and the
commands, so that a table states how it was taken.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
import warnings

import _record
import benchbpf
import reference_table              # flag mapping, machine facts

#: The configurations of the shared side-by-side table, as kernel bench flags.
DEFAULT_CONFIGS = [
    "--trig-batch-iters 1 trig-kernel-count",
    "trig-kernel-count",
    "--trig-batch-iters 1000 trig-kernel-count",
    "trig-syscall-count",
    "trig-usermode-count",
    "trig-uprobe-nop",
    "trig-uretprobe-nop",
    "trig-uprobe-multi-nop",
    "trig-tp",
    "trig-rawtp",
    "--trig-batch-iters 1000 trig-rawtp",
    "count-global",
    "-p1 count-local",
    "rename-base",
    "rename-rawtp",
    "-c1 rb-libbpf",
    "-c1 --rb-sampled rb-libbpf",
    "-c1 --rb-sampled rb-custom",
    "-c1 --rb-b2b rb-custom",
    "-c1 --rb-sampled pb-libbpf",
    "-c1 --rb-sampled pb-custom",
    "-c1 --rb-b2b pb-custom",
    "bloom-lookup",
    "bloom-update",
    "hashmap-with-bloom",
    "--nr_loops 10 bpf-loop",
    "--nr_loops 1000 bpf-loop",
    "strncmp-no-helper",
    "--cmp-str-len 512 strncmp-helper",
]

#: Map families, run with --maps (the 4M-key control map takes the kernel
#: bench minutes to fill with its defaults, so it runs with 1000 keys used).
MAP_CONFIGS = [
    "--nr_maps 1 local-storage-cache-seq-get",
    "--nr_maps 16 local-storage-cache-int-get",
    "--nr_maps 32 local-storage-cache-seq-get",
    "--nr_maps 1 --hashmap_nr_keys_used=1000 local-storage-cache-hashmap-control",
    "bpf-hashmap-full-update",
]

SIDES = ("kernel", "cli", "api")
_ITER = re.compile(r"^Iter\s+(\d+)\s+\([^)]*\):\s+hits\s+([\d.]+)M/s")
_SUMMARY = re.compile(r"^Summary:\s+(?:hits\s+throughput|hits|throughput)\s+([\d.]+)\s")
# sockmap: the figure is the BPF speed (the kernel bench's summary gives its
# mean after the total MB).
_SOCKMAP_ITER = re.compile(r"^Iter\s+(\d+)\s+\([^)]*\):\s+Send Speed.*BPF Speed\s+([\d.]+) MB/s")
_SOCKMAP_SUMMARY = re.compile(r"^Summary: total trans\s+\d+ MB \S+\s+([\d.]+) MB/s")
# bpf-hashmap-full-update and -lookup print no Summary but one line per CPU
# that ran.  A full-update line is the speed of the last program run on that
# CPU, so a producer that moved between CPUs prints two lines of one speed:
# the figure is their mean.  Lookup lines are each CPU's own throughput over
# the run: the figure is their sum.
_FULL_UPDATE = re.compile(r"^(\d+):hash_map_full_perf\s+(\d+) events per sec")
_LOOKUP = re.compile(r"^cpu(\d+): lookup ([\d.]+)M ")


class RunFailed(RuntimeError):
    pass


def parse_output(text, warmup):
    """(summary mean, kept per-interval rates) from kernel-bench style output."""
    rates, mean = [], None
    for line in text.splitlines():
        m = _ITER.match(line.strip()) or _SOCKMAP_ITER.match(line.strip())
        if m and int(m.group(1)) >= warmup:
            rates.append(float(m.group(2)))
        m = _SUMMARY.match(line.strip()) or _SOCKMAP_SUMMARY.match(line.strip())
        if m:
            mean = float(m.group(1))
    if mean is None:
        full_update, lookup = {}, {}
        for line in text.splitlines():
            m = _FULL_UPDATE.match(line.strip())
            if m:
                full_update[m.group(1)] = int(m.group(2)) / 1e6
            m = _LOOKUP.match(line.strip())
            if m:
                lookup[m.group(1)] = float(m.group(2))
        if full_update:
            mean = statistics.mean(full_update.values())
        elif lookup:
            mean = sum(lookup.values())
    if mean is None:
        raise RunFailed("no Summary line in:\n" + text[-2000:])
    return mean, rates


def run_subprocess(argv, warmup, env=None, timeout=300):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        raise RunFailed(f"{shlex.join(argv)} exited {p.returncode}:\n{p.stdout[-2000:]}")
    return parse_output(p.stdout, warmup)


def spread(rates):
    """stdev / mean of per-interval rates (NaN for fewer than two)."""
    if len(rates) < 2 or statistics.fmean(rates) == 0:
        return float("nan")
    return statistics.stdev(rates) / statistics.fmean(rates)


class Config:
    """One configuration: its flags, how each side runs it, and what it measured."""

    def __init__(self, flags, opts, known):
        self.flags = flags
        self.common = f"-w{opts.warmup} -d{opts.duration}"
        self.warmup = opts.warmup
        self.kernel_argv = [opts.bench] + self.common.split() + flags.split()
        self.cli_argv = [sys.executable, "-m", "benchbpf"] + self.common.split() + flags.split()
        row = reference_table.RefRow("side-by-side", f"{self.common} {flags}", "", "")
        self.api_kw, why = reference_table.resolve(row, known)
        self.error = None if self.api_kw else why
        self.figure = opts.figure
        self.means = {s: [] for s in SIDES}
        self.interval_medians = {s: [] for s in SIDES}
        self.spreads = {s: [] for s in SIDES}

    def run(self, side, env):
        if side == "kernel":
            return run_subprocess(self.kernel_argv, self.warmup)
        if side == "cli":
            return run_subprocess(self.cli_argv, self.warmup, env=env)
        kw = dict(self.api_kw)
        name = kw.pop("name")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", benchbpf.ConcurrentRunWarning)
            r = benchbpf.run(name, **kw)
        return r.mean, list(r.rates_mps("hits"))

    def once(self, order, env):
        for side in order:
            if self.error:
                return
            try:
                mean, rates = self.run(side, env)
            except (RunFailed, subprocess.TimeoutExpired, benchbpf.BenchmarkError,
                    benchbpf.UnsupportedError, ValueError, OSError) as e:
                self.error = f"{side}: {str(e).strip().splitlines()[-1][:200]}"
                return
            self.means[side].append(mean)
            # Runs that print no per-interval lines (full update) have only a mean.
            self.interval_medians[side].append(statistics.median(rates) if rates else mean)
            self.spreads[side].append(spread(rates))

    def median(self, side):
        xs = self.interval_medians[side] if self.figure == "median" else self.means[side]
        return statistics.median(xs) if xs else None

    def paired(self, side, other):
        """Median over alternations of side / other, runs taken next to each
        other: robust to a host whose speed drifts over minutes."""
        xs = self.interval_medians if self.figure == "median" else self.means
        ratios = [a / b for a, b in zip(xs[side], xs[other]) if b]
        return statistics.median(ratios) if ratios else None

    def spread_median(self, side):
        xs = [x for x in self.spreads[side] if x == x]
        return statistics.median(xs) if xs else None


def fmt(x):
    if x is None:
        return "–"
    return reference_table.fmt(x)


def pct(x):
    return "–" if x is None else f"{100 * x:.1f} %"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def table_lines(configs, lo, hi):
    out = ["| kernel bench flags | kernel | benchbpf CLI | benchbpf API | CLI / kernel | "
           "CLI / kernel, paired | API / CLI | spread kernel | spread CLI | spread API | runs |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]

    def marked(r):
        return "–" if r is None else (f"{r:.2f}" if lo <= r <= hi else f"**{r:.2f}**")

    for c in configs:
        k, cl, api = (c.median(s) for s in SIDES)
        ra = ratio(api, cl)
        n = "/".join(str(len(c.means[s])) for s in SIDES)
        line = (f"| `{c.flags}` | {fmt(k)} | {fmt(cl)} | {fmt(api)} | {marked(ratio(cl, k))} | "
                f"{marked(c.paired('cli', 'kernel'))} | "
                f"{'–' if ra is None else f'{ra:.3f}'} | {pct(c.spread_median('kernel'))} | "
                f"{pct(c.spread_median('cli'))} | {pct(c.spread_median('api'))} | {n} |")
        if c.error:
            line += f" {c.error.replace('|', '/')} |"
        out.append(line)
    return out


def summary_lines(configs, lo, hi):
    """Overall statements: how many configurations are in range, API vs CLI, spread."""
    done = [c for c in configs
            if ratio(c.median("cli"), c.median("kernel")) is not None]
    out = []
    inside = [c for c in done if lo <= ratio(c.median("cli"), c.median("kernel")) <= hi]
    out.append(f"- CLI / kernel within {lo:.2f}–{hi:.2f}: {len(inside)} of {len(done)} "
               "configurations")
    paired = [c for c in done if lo <= (c.paired("cli", "kernel") or 0) <= hi]
    out.append(f"- CLI / kernel, median of the ratios of runs taken next to each other, "
               f"within {lo:.2f}–{hi:.2f}: {len(paired)} of {len(done)} configurations")
    api = [ratio(c.median("api"), c.median("cli")) for c in done]
    api = [x for x in api if x is not None]
    if api:
        worst = max(api, key=lambda x: abs(x - 1))
        within = sum(1 for x in api if abs(x - 1) <= 0.02)
        out.append(f"- API / CLI: median {statistics.median(api):.3f}, furthest from 1: "
                   f"{worst:.3f}; within 2 %: {within} of {len(api)}")
    pairs = [(c.spread_median("cli"), c.spread_median("kernel")) for c in done]
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    if pairs:
        steadier = sum(1 for a, b in pairs if a <= b)
        out.append(f"- spread (stdev/mean of kept samples, median over runs): benchbpf CLI "
                   f"{pct(statistics.median(a for a, _ in pairs))}, kernel "
                   f"{pct(statistics.median(b for _, b in pairs))} (medians over "
                   f"configurations); benchbpf no larger in {steadier} of {len(pairs)}")
    return out


def save_raw(path, configs):
    """Every run's figure so far, so that an interrupted comparison keeps them."""
    data = [{"flags": c.flags, "means": c.means, "interval_medians": c.interval_medians,
             "spreads": c.spreads, "error": c.error} for c in configs]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bench", help="the kernel's bench binary")
    ap.add_argument("--config", action="append", metavar="FLAGS",
                    help="kernel bench flags of one configuration (repeatable; default: "
                         "the shared side-by-side table)")
    ap.add_argument("--filter", metavar="REGEX", help="only configurations matching")
    ap.add_argument("--maps", action="store_true",
                    help="add the map families' configurations (local storage, hashmap)")
    ap.add_argument("-n", "--alternations", type=int, default=5,
                    help="runs per side and configuration (default 5)")
    ap.add_argument("-w", "--warmup", type=int, default=1)
    ap.add_argument("-d", "--duration", type=int, default=3)
    ap.add_argument("--sides", default=",".join(SIDES),
                    help="comma-separated subset of kernel,cli,api")
    ap.add_argument("--figure", choices=("mean", "median"), default="mean",
                    help="a run's figure: the mean of its kept intervals (default, "
                         "as the summary lines) or their median")
    ap.add_argument("--band", type=float, default=0.05,
                    help="ratios outside 1 +- BAND are marked (default 0.05)")
    ap.add_argument("--out", metavar="FILE", help="also write the markdown here")
    ap.add_argument("--raw", metavar="FILE",
                    help="write every run's figures here (JSON) after each alternation")
    opts = ap.parse_args(argv)
    if opts.alternations < 1:
        ap.error(f"--alternations must be >= 1, got {opts.alternations}")
    if opts.warmup < 1 or opts.duration < 1:
        ap.error("the kernel bench needs -w >= 1 and -d >= 1")
    if not os.access(opts.bench, os.X_OK):
        ap.error(f"{opts.bench} is not an executable file")
    sides = [s for s in opts.sides.split(",") if s]
    if not sides or any(s not in SIDES for s in sides):
        ap.error(f"--sides takes a subset of {','.join(SIDES)}, got {opts.sides!r}")

    flags_list = opts.config or DEFAULT_CONFIGS + (MAP_CONFIGS if opts.maps else [])
    if opts.filter:
        flags_list = [f for f in flags_list if re.search(opts.filter, f)]
    known = set(benchbpf.list_benchmarks())
    configs = [Config(f, opts, known) for f in flags_list]
    env = _record.child_env()

    started = datetime.datetime.now().astimezone()
    load_start = reference_table.loadavg()
    t0 = time.monotonic()
    for rep in range(opts.alternations):
        order = [sides[(rep + i) % len(sides)] for i in range(len(sides))]
        for j, c in enumerate(configs, 1):
            print(f"[{rep + 1}/{opts.alternations}, {j}/{len(configs)}, "
                  f"{time.monotonic() - t0:.0f}s] {c.flags} ({' '.join(order)})",
                  file=sys.stderr, flush=True)
            c.once(order, env)
        if opts.raw:
            save_raw(opts.raw, configs)
    load_end = reference_table.loadavg()
    lo, hi = 1 - opts.band, 1 + opts.band

    lines = [
        "# benchbpf next to the kernel's bench, alternating runs",
        "",
        f"- taken: {started:%Y-%m-%d %H:%M %Z}, {time.monotonic() - t0:.0f} s; host: "
        f"{reference_table.cpu_model()}, {os.cpu_count()} CPUs, kernel {platform.release()}",
        f"- load average (1/5/15 min): at start {load_start}, at end {load_end}",
        f"- kernel: `{opts.bench} -w{opts.warmup} -d{opts.duration} FLAGS`; CLI: "
        f"`python3 -m benchbpf -w{opts.warmup} -d{opts.duration} FLAGS`; API: "
        "`benchbpf.run()` with the CLI parser's arguments",
        f"- {opts.alternations} alternations, side order rotating; figures: median over "
        f"runs of each run's {opts.figure} of kept intervals, M/s (bpf-loop: M ops/s); spread: median over runs of "
        "stdev/mean of a run's kept samples",
        "",
    ]
    lines += table_lines(configs, lo, hi) + [""] + summary_lines(configs, lo, hi)
    text = "\n".join(lines) + "\n"
    print(text)
    if opts.out:
        with open(opts.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
