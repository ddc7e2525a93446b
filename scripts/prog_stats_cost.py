#!/usr/bin/env python3
"""What prog_stats=True costs: the same benchmark with and without the
kernel's run-time statistics, alternating, and the ratio of the medians.

    python3 scripts/prog_stats_cost.py --runs 7 -d 3 \\
        trig-rawtp:trig_batch_iters=1000 rename-rawtp

Each run's figure is its median hit rate; the two series alternate (off, on,
off, on, ...) so that drift on a shared machine affects both alike.  Columns:
the median of each series with its spread ((max - min) / median), the ratio
of the medians, the median of the per-pair ratios, the time the statistics
add per hit (1000/on - 1000/off, ns: one program run per hit on these
benchmarks) and the kernel's mean time per run of each program.
"""
import argparse
import statistics
import sys

import benchbpf


def parse_spec(spec):
    name, _, rest = spec.partition(":")
    params = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        params[key] = int(value)
    return name, params


def spread(xs):
    m = statistics.median(xs)
    return (max(xs) - min(xs)) / m if m else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="+", metavar="BENCH[:k=v,...]")
    ap.add_argument("--runs", type=int, default=7, help="runs of each setting (default 7)")
    ap.add_argument("-w", "--warmup", type=float, default=1)
    ap.add_argument("-d", "--duration", type=float, default=3)
    args = ap.parse_args(argv)
    print("| benchmark | runs | off M/s (spread) | on M/s (spread) | on/off | "
          "pairs on/off | added ns/hit | ns/run (program) |")
    print("|---|---|---|---|---|---|---|---|")
    for spec in args.specs:
        name, params = parse_spec(spec)
        off, on, per_run = [], [], {}
        for _ in range(args.runs):
            for stats, series in ((False, off), (True, on)):
                r = benchbpf.run(name, warmup=args.warmup, duration=args.duration,
                                 prog_stats=stats, **params)
                series.append(r.median)
                for p in r.prog_stats:
                    per_run.setdefault(p.name, []).append(p.ns_per_run)
        mo, mn = statistics.median(off), statistics.median(on)
        pairs = statistics.median(b / a for a, b in zip(off, on))
        progs = ", ".join(f"{n} {statistics.median(v):.1f}" for n, v in per_run.items())
        print(f"| {spec} | {args.runs} | {mo:.3f} ({spread(off):.1%}) | "
              f"{mn:.3f} ({spread(on):.1%}) | {mn / mo:.3f} | {pairs:.3f} | "
              f"{1e3 / mn - 1e3 / mo:.1f} | {progs} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
