#!/usr/bin/env python3
"""The kernel's run_bench_ringbufs.sh against benchbpf.ringbuf_study(precision=...),
alternating, on one machine: figures, wall time and precision side by side.

    python3 scripts/ringbuf_study_side_by_side.py /path/to/bench /path/to/benchs \\
        --alternations 3 --precision 0.01 --out results/ringbuf-study-2cpu.md \\
        --json results/ringbuf-study-2cpu.json.gz

Each alternation runs both once, the kernel script first in even
alternations and benchbpf first in odd ones:

  kernel    bash benchs/run_bench_ringbufs.sh in a directory holding BENCH as
            ./bench (62 runs of -w3 -d10 -a -c1); its wall time is timed
  benchbpf  a new interpreter running benchbpf.ringbuf_study(precision=P,
            budget=B): the same 62 configurations, their short runs
            interleaved; its wall time (interpreter start included) is timed

B is --budget-fraction (default 0.5) of the first kernel script's wall time,
less --margin (default 20 s: the interpreter's start, the last run past the
budget and the gathering of results), so that the whole benchbpf run takes at
most half the kernel script's time.

The table gives per configuration: the kernel's figure (median over the
alternations of the script's mean), benchbpf's (median over the alternations
of the precision run's mean), their ratio, the kernel's run-to-run spread
(stdev over the alternations, % of the mean), benchbpf's run-to-run spread
likewise, and benchbpf's stated 95 % half width (median over alternations,
%) with its runs and what stopped it.  Repeatability: how often benchbpf's
figure from one alternation lies inside the interval it stated in another.
"""
import argparse
import gzip
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import _record
import benchbpf

SECTION_TO_STUDY = {
    "Single-producer, parallel producer": "single_producer_parallel",
    "Single-producer, parallel producer, sampled notification": "single_producer_sampled",
    "Single-producer, back-to-back mode": "back_to_back",
    "Ringbuf back-to-back, effect of sample rate": "ringbuf_sample_rate_sweep",
    "Perfbuf back-to-back, effect of sample rate": "perfbuf_sample_rate_sweep",
    "Ringbuf back-to-back, reserve+commit vs output": "reserve_vs_output",
    "Ringbuf sampled, reserve+commit vs output": "reserve_vs_output_sampled",
    "Single-producer, consumer/producer competing on the same CPU, low batch count":
        "same_cpu",
    "Ringbuf, multi-producer contention": "multi_producer",
}
LINE = re.compile(r"^(\S.*?)\s+([0-9.]+) \u00b1 ([0-9.]+)M/s \(drops")

OURS = r"""
import json, sys, time
import benchbpf
began = time.monotonic()
studies = benchbpf.ringbuf_study(precision=float(sys.argv[1]), budget=float(sys.argv[2]),
                                 progress=False)
studies.to_resultset().save(sys.argv[3])
print(json.dumps({"study_s": time.monotonic() - began}))
"""


def kernel_key(section, name):
    """(study, label) of one summary line of the kernel script."""
    study = SECTION_TO_STUDY[section]
    if study == "back_to_back" and name.endswith("-sampled"):
        return "back_to_back_sampled", name[:-len("-sampled")]
    if study.endswith("sample_rate_sweep"):
        return study, name.rsplit("-", 1)[1]
    if study == "reserve_vs_output_sampled":
        return study, name[:-len("-sampled")]
    if study == "multi_producer":
        return study, name.rsplit(" ", 1)[1]
    return study, name


def run_kernel(bench, benchs):
    with tempfile.TemporaryDirectory(prefix="rbstudy-") as work:
        os.symlink(os.path.abspath(bench), os.path.join(work, "bench"))
        os.mkdir(os.path.join(work, "benchs"))
        for f in ("run_common.sh", "run_bench_ringbufs.sh"):
            shutil.copy(os.path.join(benchs, f), os.path.join(work, "benchs", f))
        env = dict(os.environ)
        if shutil.which("sudo") is None:
            env["BASH_FUNC_sudo%%"] = '() {  "$@"\n}'
        t0 = time.monotonic()
        out = subprocess.run(["bash", "benchs/run_bench_ringbufs.sh"], cwd=work, env=env,
                             capture_output=True, text=True, check=True).stdout
        wall = time.monotonic() - t0
    figures, section, lines = {}, None, out.splitlines()
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and lines[i + 1].startswith("==="):
            section = line.strip()
            continue
        m = LINE.match(line)
        if m:
            figures["/".join(kernel_key(section, m.group(1)))] = float(m.group(2))
    return {"wall_s": wall, "figures": figures, "output": out}


def keyed_results(rs):
    """(configuration key as the kernel script's figures are keyed, Result)
    for each Result of a study's ResultSet."""
    for study, r in zip(rs.metadata["studies"], rs):
        label = r.params.get({"ringbuf_sample_rate_sweep": "rb_sample_rate",
                              "perfbuf_sample_rate_sweep": "rb_sample_rate",
                              "multi_producer": "producers"}.get(study, ""))
        if label is None:
            label = (r.name if study not in ("reserve_vs_output", "reserve_vs_output_sampled")
                     else ("output" if r.params.get("rb_use_output") else "reserve"))
        yield f"{study}/{label}", r


def states_of(data):
    """Configuration key -> a stats.RunStates for each alternation whose
    precision run's short runs disagreed beyond their own spread (what its
    Result's warnings say: a multi-state ring, with its states when two)."""
    out = {}
    for a in data["alternations"]:
        rs = benchbpf.ResultSet.from_dict(a["benchbpf"]["result_set"])
        for key, r in keyed_results(rs):
            if len(r.runs()) > 2:
                found = benchbpf.analysis.run_agreement(r.runs())
                if found:
                    out.setdefault(key, []).append(found)
    return out


def _states_cell(found):
    """"figures lo..hi" of each disagreeing alternation, with its two states if any."""
    parts = []
    for f in found:
        text = f"{min(f.values):.3g}..{max(f.values):.3g}"
        if f.states:
            (lo, n_lo), (hi, n_hi) = f.states
            text += f" (states {lo:.3g} x{n_lo} and {hi:.3g} x{n_hi})"
        parts.append(text)
    return "; ".join(parts)


def run_ours(precision, budget, path):
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-c", OURS, str(precision), str(budget), path],
                         env=_record.child_env(), capture_output=True, text=True, check=True)
    wall = time.monotonic() - t0
    rs = benchbpf.ResultSet.load(path)
    figures = {}
    for key, r in keyed_results(rs):
        ci = r.mean_ci_mps
        figures[key] = {
            "mean": r.mean, "low": ci.low if ci else None, "high": ci.high if ci else None,
            "half_pct": 100 * r.precision_reached if ci else None,
            "runs": len(r.runs()), "stopped_by": r.stopped_by}
    return {"wall_s": wall, "study_s": json.loads(out.stdout.strip().splitlines()[-1])["study_s"],
            "figures": figures, "result_set": rs.as_dict()}


def _loadavg():
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


def spread_pct(xs):
    return 100 * statistics.stdev(xs) / statistics.fmean(xs) if len(xs) > 1 else math.nan


def table(data, args):
    kern = [a["kernel"] for a in data["alternations"]]
    ours = [a["benchbpf"] for a in data["alternations"]]
    keys = list(kern[0]["figures"])
    rows, inside, pairs = [], 0, 0
    for key in keys:
        k = [a["figures"][key] for a in kern if key in a["figures"]]
        o = [a["figures"][key] for a in ours if key in a["figures"]]
        if not k or not o:
            continue
        om = [x["mean"] for x in o]
        for i, x in enumerate(o):
            for j, y in enumerate(o):
                if i != j and x["low"] is not None:
                    pairs += 1
                    inside += x["low"] <= y["mean"] <= x["high"]
        halves = [x["half_pct"] for x in o if x["half_pct"] is not None]
        rows.append((key, statistics.median(k), statistics.median(om),
                     statistics.median(om) / statistics.median(k), spread_pct(k),
                     spread_pct(om), statistics.median(halves) if halves else math.nan,
                     statistics.median(x["runs"] for x in o),
                     "/".join(sorted({x["stopped_by"] for x in o}))))
    lines = [
        f"# run_bench_ringbufs.sh against ringbuf_study(precision={args.precision})",
        "",
        f"Taken {data['started']} on {platform.node()} ({os.cpu_count()} CPUs, kernel "
        f"{platform.release()}), load average before {data['load_before']}, after "
        f"{data['load_after']}.",
        "",
        "    " + " ".join(data["argv"]),
        "",
        "| alternation | first | kernel script s | benchbpf s (whole process) | ratio |",
        "|---|---|---|---|---|",
    ]
    for i, a in enumerate(data["alternations"]):
        lines.append(f"| {i} | {a['first']} | {a['kernel']['wall_s']:.0f} | "
                     f"{a['benchbpf']['wall_s']:.0f} | "
                     f"{a['benchbpf']['wall_s'] / a['kernel']['wall_s']:.2f} |")
    lines += [
        "",
        f"Budget given to benchbpf: {data['budget_s']:.0f} s.",
        "",
        "Figures in M/s (hits).  kernel: median over alternations of the script's "
        "figure; benchbpf: median of the precision runs' means; spreads: stdev over "
        "alternations, % of the mean; half: benchbpf's stated 95 % half width, % "
        "(median over alternations).",
        "",
        "| configuration | kernel | benchbpf | ratio | kernel spread % | benchbpf spread % "
        "| benchbpf half % | runs | stopped by |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key, km, om, ratio, ks, os_, half, runs, stop in rows:
        lines.append(f"| {key} | {km:.3f} | {om:.3f} | {ratio:.2f} | {ks:.1f} | {os_:.1f} | "
                     f"{half:.1f} | {runs:g} | {stop} |")
    states = states_of(data)
    named = [(key, states[key]) for key, *_ in rows if states.get(key)]
    if named:
        lines += ["", "Configurations whose short runs disagreed beyond their own spread "
                  "(Cochran's Q, p < 0.01, over 5 %: `stats.run_states`, as their Results' "
                  "warnings say), with the runs' figures in M/s of each alternation that "
                  "did, and two states where the runs fell into two:", "",
                  "| configuration | alternations | runs' figures (states) |", "|---|---|---|"]
        for key, found in named:
            lines.append(f"| {key} | {len(found)} of {len(data['alternations'])} | "
                         f"{_states_cell(found)} |")
    ratios = [r[3] for r in rows]
    within = sum(0.95 <= r <= 1.05 for r in ratios)
    better = sum(r[6] <= 1.96 * r[4] for r in rows if not math.isnan(r[4]))
    lines += [
        "",
        f"Ratios within 5 %: {within} of {len(rows)}; median ratio "
        f"{statistics.median(ratios):.3f}.",
        f"benchbpf's stated half width no wider than the kernel's single-run 95 % "
        f"(1.96 x its run-to-run spread): {better} of {len(rows)}.",
        f"Repeatability: another alternation's benchbpf figure inside the interval one "
        f"stated: {inside} of {pairs} pairs.",
    ]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench")
    ap.add_argument("benchs", help="the kernel's selftests/bpf/benchs directory")
    ap.add_argument("--alternations", type=int, default=3)
    ap.add_argument("--precision", type=float, default=0.01)
    ap.add_argument("--budget-fraction", type=float, default=0.5)
    ap.add_argument("--margin", type=float, default=20.0)
    ap.add_argument("--out")
    ap.add_argument("--json")
    ap.add_argument("--from", dest="source", help="tabulate a saved --json instead")
    args = ap.parse_args()
    if args.source:
        with gzip.open(args.source, "rt") as f:
            data = json.load(f)
    else:
        data = {"started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "argv": sys.argv, "load_before": _loadavg(), "alternations": [],
                "budget_s": None}
        for i in range(args.alternations):
            order = ("kernel", "benchbpf") if i % 2 == 0 else ("benchbpf", "kernel")
            alt = {"first": order[0]}
            for side in order:
                if side == "kernel":
                    alt["kernel"] = run_kernel(args.bench, args.benchs)
                    if data["budget_s"] is None:
                        data["budget_s"] = args.budget_fraction * alt["kernel"]["wall_s"] \
                            - args.margin
                else:
                    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
                        alt["benchbpf"] = run_ours(args.precision, data["budget_s"], tmp.name)
                print(f"alternation {i}: {side} {alt[side]['wall_s']:.0f} s", flush=True)
            data["alternations"].append(alt)
        data["load_after"] = _loadavg()
        if args.json:
            with gzip.open(args.json, "wt") as f:
                json.dump(data, f)
    text = table(data, args)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
