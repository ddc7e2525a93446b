#!/usr/bin/env python3
"""How often each instability warning (Result.warnings) fires on real runs,
and how often repeated runs are said to disagree (analysis.run_agreement),
with the command line exactly as a user runs it.

    python3 scripts/warnings_rates.py                          # 20 runs each
    python3 scripts/warnings_rates.py --runs 20 --group 5 --json /tmp/w.json \\
        --out results/warnings-2cpu.md
    python3 scripts/warnings_rates.py --from /tmp/w.json       # table again

Each run is `benchbpf -q NAME --json FILE` with the CLI defaults (-w1 -d5,
1 s samples); the benchmarks take turns (count-local, trig-rawtp,
rb-libbpf, count-local, ...) so that each meets the machine's changing load
alike.  count-local and trig-rawtp are steady: every warning on them is a
false warning of this machine's noise.  rb-libbpf is bistable: warnings are
expected.  The warnings the CLI printed on stderr are checked against those
the saved samples give.  Consecutive runs of a benchmark, `--group` at a
time, are the repeated runs of run_agreement: a "disagree" on a steady
benchmark is a false alarm.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile


import _record
from benchbpf.analysis import run_agreement
from benchbpf.results.result import Result
from benchbpf.results.resultset import ResultSet

BENCHES = ("count-local", "trig-rawtp", "rb-libbpf")
KINDS = (("cv", "coefficient of variation"), ("far", "far from the median"),
         ("drift", "drifts"), ("few", "too few"))


def _loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def run_once(name, tmp):
    path = os.path.join(tmp, "r.json")
    load = _loadavg()
    out = subprocess.run([sys.executable, "-m", "benchbpf", "-q", name, "--json", path],
                         capture_output=True, text=True, timeout=300,
                         env=_record.child_env())
    if out.returncode != 0:
        raise SystemExit(f"benchbpf -q {name} failed ({out.returncode}): {out.stderr}")
    r = Result.from_json(path)
    printed = [line[len("WARNING: "):] for line in out.stderr.splitlines()
               if line.startswith("WARNING: ")]
    if printed != list(r.warnings):
        raise SystemExit(f"{name}: stderr warned {printed}, the saved samples give "
                         f"{list(r.warnings)}")
    meta = dict(r.metadata)
    meta["loadavg_before"] = load
    return Result(name=r.name, params=r.params, samples=r.samples,
                  warmup_samples=r.warmup_samples, metadata=meta)


def kind_of(warning):
    for k, text in KINDS:
        if text in warning:
            return k
    return "other"


def table(rs, group):
    lines = ["| benchmark | runs | CV over 10 % | far samples | drift | too few | any | "
             "CV median (max) | load before runs (1-min, median, range) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name in BENCHES:
        runs = [r for r in rs if r.name == name]
        if not runs:
            continue
        counts = {k: sum(1 for r in runs if any(kind_of(w) == k for w in r.warnings))
                  for k, _ in KINDS}
        anyw = sum(1 for r in runs if r.warnings)
        cvs = [r.stdev / r.mean * 100 for r in runs if r.mean > 0]
        loads = [float(r.metadata.get("loadavg_before", "nan").split()[0]) for r in runs]
        lines.append(f"| {name} | {len(runs)} | " + " | ".join(
            f"{counts[k]}" for k, _ in KINDS) + f" | {anyw} | "
            f"{statistics.median(cvs):.2f} % ({max(cvs):.2f} %) | "
            f"{statistics.median(loads):.2f} ({min(loads):.2f}..{max(loads):.2f}) |")
    lines += ["", f"Repeated runs: consecutive runs of a benchmark, {group} at a time, "
              "judged by `analysis.run_agreement`:", "",
              "| benchmark | groups | disagree | with two states | what was said |",
              "|---|---|---|---|---|"]
    for name in BENCHES:
        runs = [r for r in rs if r.name == name]
        groups = [runs[i:i + group] for i in range(0, len(runs) - group + 1, group)]
        if not groups:
            continue
        verdicts = [run_agreement(g) for g in groups]
        said = "; ".join(v.text() for v in verdicts if v) or "-"
        lines.append(f"| {name} | {len(groups)} | {sum(1 for v in verdicts if v)} | "
                     f"{sum(1 for v in verdicts if v.states)} | {said} |")
    lines += ["", "Every warning given, by benchmark (run index: warnings):", ""]
    for name in BENCHES:
        for i, r in enumerate(x for x in rs if x.name == name):
            for w in r.warnings:
                lines.append(f"- {name} #{i}: {w}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="runs of each benchmark")
    ap.add_argument("--group", type=int, default=5, help="runs per repeated-run group")
    ap.add_argument("--json", help="save the runs (a ResultSet) here")
    ap.add_argument("--from", dest="source", help="read runs saved by --json instead")
    ap.add_argument("--out", help="write the markdown table here too")
    args = ap.parse_args()
    if args.source:
        rs = ResultSet.load(args.source)
    else:
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        results = []
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.runs):
                for name in BENCHES:
                    r = run_once(name, tmp)
                    results.append(r)
                    print(f"[{i + 1}/{args.runs}] {name}: {r.mean:.3f} M/s, load "
                          f"{r.metadata['loadavg_before']}, {len(r.warnings)} warning(s)",
                          file=sys.stderr, flush=True)
        rs = ResultSet(results, metadata={"started": started, "finished": datetime.datetime.now(
            datetime.timezone.utc).isoformat(timespec="seconds"), "runs": args.runs})
        if args.json:
            rs.save(args.json)
    text = table(rs, args.group)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
