#!/usr/bin/env python3
"""Whether each CPU of this machine runs at a steady speed: short count-local
runs with the producer pinned to each CPU in turn, for a while.

    python3 scripts/cpu_phases.py --seconds 75

Prints one line per round: seconds since the start, then for each CPU the
speed of a run pinned there (median of the fastest tenth of its 1 ms rates,
per producer CPU-second, as the regression gate measures it).  On a virtual
machine one CPU at a time may run markedly slower for seconds, whatever runs
on it: a stretch of slow figures in one column only.
"""
import argparse
import os
import statistics
import sys
import time
import warnings

import benchbpf
from benchbpf.analysis import fastest, usable_rates


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=75.0)
    ap.add_argument("--duration", type=float, default=0.25)
    ap.add_argument("--work-per-hit", type=int, default=40)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", benchbpf.ConcurrentRunWarning)
    cpus = sorted(os.sched_getaffinity(0))
    print("seconds " + " ".join(f"cpu{c:<4d}" for c in cpus))
    start = time.monotonic()
    rounds = {c: [] for c in cpus}
    while time.monotonic() - start < args.seconds:
        row = [f"{time.monotonic() - start:7.1f}"]
        for c in cpus:
            r = benchbpf.run("count-local", warmup=0.05, duration=args.duration,
                             interval=0.001, work_per_hit=args.work_per_hit,
                             affinity=True, prod_affinity=[c])
            speed = statistics.median(fastest(usable_rates(r, "hits"), 10))
            rounds[c].append(speed)
            row.append(f"{speed:7.2f}")
        print(" ".join(row), flush=True)
    for c in cpus:
        xs = rounds[c]
        print(f"cpu{c}: median {statistics.median(xs):.2f}, min {min(xs):.2f}, "
              f"max {max(xs):.2f} M/s over {len(xs)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
