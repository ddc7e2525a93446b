#!/usr/bin/env python3
"""xdp-lb scenarios side by side: the kernel's bench against the benchbpf command.

    python3 scripts/xdp_lb_side_by_side.py /path/to/bench -n 3 --out results/xdp-lb-side-by-side-2cpu.md
    python3 scripts/xdp_lb_side_by_side.py /path/to/bench --scenario tcp-v4-lru-hit --scenario pass-non-ip

For every alternation, each scenario runs once on each side, in an order that
swaps from one alternation to the next, with the flags of the kernel's
run_bench_xdp_lb.sh:

  kernel   BENCH -q -wW -a xdp-lb --machine-readable --scenario S
  benchbpf python3 -m benchbpf -q -wW -a xdp-lb --machine-readable --scenario S

A run's figure is the median ns/op of its RESULT line (IQR-filtered batches,
as both print it).  The table gives per side the median of those over the
alternations, benchbpf / kernel as a ratio of those medians and as the median
of each alternation's ratio (runs taken next to each other), and the load
average before each scenario's runs.
"""
import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys

from benchbpf import xdp_lb

RESULT = re.compile(r"^RESULT scenario=(\S+) samples=(\d+) median=([\d.]+)", re.M)


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def one(argv, timeout=900):
    """(median ns/op, samples) of one run, or None with the reason."""
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    m = RESULT.search(p.stdout)
    if p.returncode or not m:
        return None, (p.stderr.strip().splitlines() or ["no RESULT line"])[-1]
    return (float(m.group(3)), int(m.group(2))), None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench", help="the kernel's bench binary")
    ap.add_argument("-n", type=int, default=3, help="alternations (default 3)")
    ap.add_argument("-w", type=int, default=1, help="warm-up, s (run script: 3)")
    ap.add_argument("--scenario", action="append", help="scenarios (default all 24)")
    ap.add_argument("--out", help="write the markdown table here")
    args = ap.parse_args(argv)
    scenarios = args.scenario or list(xdp_lb.SCENARIOS)
    flags = ["-q", f"-w{args.w}", "-a", "xdp-lb", "--machine-readable", "--scenario"]
    sides = {
        "kernel": [os.path.abspath(args.bench)] + flags,
        "benchbpf": [sys.executable, "-m", "benchbpf"] + flags,
    }
    env_cwd = os.path.dirname(os.path.abspath(args.bench))
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows, loads_all = [], []
    for sc in scenarios:
        figs = {"kernel": [], "benchbpf": []}
        ratios, loads, errors = [], [], []
        for i in range(args.n):
            order = ["kernel", "benchbpf"] if i % 2 == 0 else ["benchbpf", "kernel"]
            loads.append(load())
            got = {}
            for side in order:
                fig, err = one(sides[side] + [sc]) if side == "benchbpf" else \
                    _in(env_cwd, sides[side] + [sc])
                if fig is None:
                    errors.append(f"{side}: {err}")
                    continue
                got[side] = fig[0]
                figs[side].append(fig[0])
            if len(got) == 2:
                ratios.append(got["benchbpf"] / got["kernel"])
        loads_all += loads
        k = statistics.median(figs["kernel"]) if figs["kernel"] else None
        b = statistics.median(figs["benchbpf"]) if figs["benchbpf"] else None
        rows.append((sc, k, b, b / k if k and b else None,
                     statistics.median(ratios) if ratios else None,
                     statistics.median(loads), errors))
        print(_row(rows[-1]), flush=True)
    lines = [
        f"# xdp-lb side by side ({started})", "",
        f"Machine: {os.cpu_count()} CPUs, kernel {os.uname().release}; load average "
        f"(1 min) {min(loads_all):.1f} .. {max(loads_all):.1f} during the runs.", "",
        f"Command: `python3 scripts/xdp_lb_side_by_side.py {args.bench} -n {args.n} -w {args.w}"
        + "".join(f" --scenario {sc}" for sc in (args.scenario or ())) + "`",
        "",
        f"Per scenario, {args.n} alternations of `BENCH -q -w{args.w} -a xdp-lb "
        "--machine-readable --scenario S` (the kernel's bench) and `python3 -m benchbpf` with "
        "the same flags, the order swapped every alternation.  Figures: the median over "
        "the alternations of each run's RESULT median (ns/op, IQR-filtered batches).",
        "",
        "| scenario | kernel ns/op | benchbpf ns/op | benchbpf / kernel | median of paired "
        "ratios | load |",
        "|---|---:|---:|---:|---:|---:|",
    ] + [_row(r) for r in rows]
    errs = [f"- {r[0]}: {e}" for r in rows for e in r[6]]
    if errs:
        lines += ["", "Runs that gave no RESULT line:", ""] + errs
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text)


def _in(cwd, argv):
    """The kernel's bench, run from its own directory."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return one(argv)
    finally:
        os.chdir(old)


def _row(r):
    sc, k, b, ratio, paired, ld, _ = r

    def f(x, spec):
        return "-" if x is None else format(x, spec)
    return (f"| {sc} | {f(k, '.2f')} | {f(b, '.2f')} | {f(ratio, '.3f')} | "
            f"{f(paired, '.3f')} | {ld:.1f} |")


if __name__ == "__main__":
    main()
