"""Detection rate and false change points of `benchbpf history changes`
on seeded series with this host's noise (results/history-changes-2cpu.md
says the method; this prints its tables).

    python3 scripts/history_changes.py [--series 200] > tables.md
"""
import argparse
import glob
import gzip
import json
import os
import random
import statistics
import zlib

from benchbpf import history
from benchbpf.results.stats import clopper_pearson

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POINTS, STEP_AT, BLOCK, NEAR = 60, 30, 6, 2
STEPS = (0.0, 0.02, 0.05, 0.10)


def noise_sequences():
    """{benchmark: [[relative deviation of each run's median, in run order], ...]}
    from every stored precision campaign."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "results", "precision-runs*-2cpu.json.gz"))):
        with gzip.open(path) as f:
            runs = json.load(f)["runs"]
        by_case = {}
        for r in runs:
            res = r.get("result")
            if r.get("kind") != "precision" or not res or not res["samples"]:
                continue
            rates = [s["hits"] / s["interval_ns"] * 1e3 for s in res["samples"]]
            by_case.setdefault(r["case"], []).append(statistics.median(rates))
        for case, medians in by_case.items():
            if len(medians) >= BLOCK:
                mid = statistics.median(medians)
                out.setdefault(case, []).append([m / mid - 1 for m in medians])
    return out


def make_series(sequences, step, seed, case):
    rng = random.Random(seed * 1_000_003 + zlib.crc32(case.encode()))
    points = []
    while len(points) < POINTS:
        seq = rng.choice(sequences)
        at = rng.randrange(len(seq) - BLOCK + 1)
        points += seq[at:at + BLOCK]
    return [100 * (1 + d) * (1 - step if i >= STEP_AT else 1)
            for i, d in enumerate(points[:POINTS])]


def count(found, step):
    """(detected, false change points, points of stable signal) of one series."""
    near = [c for c in found if abs(c["index"] - STEP_AT) <= NEAR and c["mean_after"] < c["mean_before"]]
    if step:
        detected = bool(near)
        false = len(found) - (1 if near else 0)
        stable = POINTS - (2 * NEAR + 1)
    else:
        detected, false, stable = False, len(found), POINTS
    return detected, false, stable


def main():
    """Print the tables: detection rate per step and false change points
    per 100 stable points, per benchmark and pooled, at each max_pvalue."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--series", type=int, default=200, help="series per benchmark and step")
    args = ap.parse_args()
    noise = noise_sequences()
    spread = {c: statistics.pstdev([d for s in seqs for d in s]) * 100 for c, seqs in noise.items()}
    print(f"Noise: {sum(len(s) for s in noise.values())} sequences of run medians, "
          f"{sum(len(x) for s in noise.values() for x in s)} runs; run-to-run SD of each "
          "benchmark: " + ", ".join(f"{c} {v:.2f} %" for c, v in sorted(spread.items())) + "\n")
    for pvalue in (0.001, 0.01):
        keys = [(case, step) for case in sorted(noise) for step in STEPS]
        series = [make_series(noise[case], step, seed, case)
                  for case, step in keys for seed in range(args.series)]
        # One call: the detector's interpreter starts once.
        found = history.detect(series, max_pvalue=pvalue)
        cells = {key: [count(f, key[1]) for f in found[i * args.series:(i + 1) * args.series]]
                 for i, key in enumerate(keys)}
        print(f"### max_pvalue {pvalue:g}, {args.series} series of {POINTS} points per cell\n")
        head = "| benchmark | false / 100 stable points (no step) | " + " | ".join(
            f"detected, {s:.0%} step | false / 100 pts" for s in STEPS[1:]) + " |"
        print(head)
        print("|" + "---|" * (2 + 2 * (len(STEPS) - 1)))
        for case in sorted(noise) + ["all"]:
            cases = sorted(noise) if case == "all" else [case]
            row = [case]
            for step in STEPS:
                rows = [x for c in cases for x in cells[c, step]]
                false = sum(r[1] for r in rows) / sum(r[2] for r in rows) * 100
                if step:
                    k, n = sum(r[0] for r in rows), len(rows)
                    lo, hi = clopper_pearson(k, n)
                    row.append(f"{k / n:.0%} ({lo:.0%}..{hi:.0%})")
                row.append(f"{false:.2f}")
            print("| " + " | ".join(row) + " |")
        print(flush=True)


if __name__ == "__main__":
    main()
