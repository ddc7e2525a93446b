"""Ingest and query time of a history store of a million runs (seeded):
results/history-changes-2cpu.md, "Scale".

    python3 scripts/history_scale.py [--runs 1000000] [--store /tmp/scale.sqlite]

Rows are written through Store.insert in batches (what `history add` of
many files does); the store holds BENCHMARKS x PARAMS series of equal
length.  Then `benchbpf history show NAME` is timed as a command (Python
start, imports and all), and history.series() of one benchmark in-process."""
import argparse
import os
import random
import subprocess
import sys
import time

from benchbpf import history
from benchbpf.history import Store

BENCHMARKS, PARAMS, BATCH = 50, 20, 10_000


def rows(n, rng):
    """n seeded rows, spread over BENCHMARKS x PARAMS series."""
    per_series = max(1, n // (BENCHMARKS * PARAMS))
    t0 = 1.7e9
    for i in range(n):
        series, k = divmod(i, per_series)
        b, p = divmod(series % (BENCHMARKS * PARAMS), PARAMS)
        started = t0 + k * 3600
        yield {"series": f"s{series:06d}", "benchmark": f"bench-{b:02d}",
               "params": f'{{"producers":{p}}}', "median_mps": 100 * (1 + rng.gauss(0, 0.03)),
               "mean_mps": 100.0, "ci_low_mps": 99.0, "ci_high_mps": 101.0,
               "started": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(started)),
               "started_s": started, "kernel_release": "6.18.0", "machine": "m0",
               "machine_label": "Scale CPU, 2 CPUs, x86_64", "cpu_model": "Scale CPU",
               "nr_cpus": 2, "benchbpf_version": "0.1.0", "benchbpf_commit": f"c{k}"}


def main():
    """Fill the store, time it, and time the queries."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=1_000_000)
    ap.add_argument("--store", default="/tmp/benchbpf-history-scale.sqlite")
    args = ap.parse_args()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(args.store + suffix):
            os.remove(args.store + suffix)
    rng = random.Random(0)
    with Store(args.store) as store:
        start, batch = time.perf_counter(), []
        for row in rows(args.runs, rng):
            batch.append(row)
            if len(batch) == BATCH:
                store.insert(batch)
                batch = []
        if batch:
            store.insert(batch)
        ingest = time.perf_counter() - start
        total = store.count()
    size = os.path.getsize(args.store) + (os.path.getsize(args.store + "-wal")
                                          if os.path.exists(args.store + "-wal") else 0)
    print(f"ingest: {total} runs in {ingest:.1f} s ({total / ingest:,.0f} runs/s), "
          f"{size / 1e6:.0f} MB")
    per_benchmark = total // BENCHMARKS
    for by in ("date", "kernel"):
        cmd = [sys.executable, "-m", "benchbpf", "history", "--history", args.store, "show",
               "bench-07", "--by", by]
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        took = time.perf_counter() - start
        assert done.returncode == 0, done.stderr
        print(f"`benchbpf history show bench-07 --by {by}` ({per_benchmark} runs in "
              f"{PARAMS} series): {took:.2f} s, {len(done.stdout.splitlines())} lines")
    start = time.perf_counter()
    df = history.series("bench-07", params={"producers": 3}, store=args.store)
    print(f"history.series() of one series ({len(df)} runs): "
          f"{time.perf_counter() - start:.2f} s in-process")


if __name__ == "__main__":
    main()
