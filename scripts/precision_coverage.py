#!/usr/bin/env python3
"""Coverage of precision='s stopping rule on seeded simulated runs: how
often the interval a precision run states at its stop contains the true
mean, when each run's figure is drawn independently (normal, or a
two-state mixture like a bistable ring buffer).

    python3 scripts/precision_coverage.py [--reps 2000] [--seed 1]

The rule is benchbpf's own (benchbpf.harness.stopping.stop_reason): runs, one every
1.2 s, until at least MIN_RUNS in MIN_GROUPS groups of 5 s
(MIN_RUNS_APART when they disagree beyond their own spread, here 1 % of
each run's figure), then stop once the Student's t interval over the
groups is within the precision, or when the duration allows no further run
(here 120 runs).  The
sequential looks are what could make it cover less than 95 %: stopping
when the spread happens to look small; runs in a row that share a phase of
the host are the other (the AR(1) cases).  Real runs: precision_runs.py.
"""
import argparse
import math
import random

from benchbpf.harness.stopping import stop_reason
from benchbpf.results import stats


RUN_WALL_S = 1.2


def one(rng, make_draw, truth, precision, max_runs):
    draw = make_draw()
    runs = []
    while True:
        # Each run's own standard error: 1 % of its figure.
        mean = draw(rng)
        runs.append((mean, 0.01 * abs(mean)))
        # A run every RUN_WALL_S, as count-local's runs (0.5 s warm-up, 0.5 s measured).
        starts = [i * RUN_WALL_S for i in range(len(runs))]
        why = stop_reason(runs, starts, len(runs), 1, max_runs, precision)
        if why:
            ci = stats.runs_mean_ci([m for m, _ in runs], starts)
            return ci.low <= truth <= ci.high, why, len(runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print("| runs' figures | spread (sd / mean) | precision | coverage | stopped by precision "
          "| median runs |")
    print("|---|---|---|---|---|---|")
    cases = []
    for cv in (0.005, 0.02, 0.05):
        for precision in (0.005, 0.01, 0.02):
            cases.append((f"normal", cv, precision,
                          lambda cv=cv: lambda r: r.gauss(100.0, 100.0 * cv), 100.0))
    # Two states 2x apart, 30 % of runs in the low one (a bistable ring).
    for precision in (0.05, 0.1):
        cases.append(("two states (70 % at 100, 30 % at 50)", None, precision,
                      lambda: lambda r: r.gauss(100.0, 3.0) if r.random() < 0.7
                      else r.gauss(50.0, 2.0), 0.7 * 100 + 0.3 * 50))
    # Runs in a row sharing the host's phase: AR(1), lag-1 correlation 0.7.
    def phases(cv, phi=0.7):
        def make():
            state = [None]

            def draw(r):
                x = state[0]
                x = r.gauss(0, 1) if x is None else phi * x + math.sqrt(1 - phi * phi) * r.gauss(0, 1)
                state[0] = x
                return 100.0 + 100.0 * cv * x
            return draw
        return make
    for precision in (0.01, 0.02):
        cases.append(("AR(1) phases, lag-1 0.7", 0.02, precision, phases(0.02), 100.0))
    for label, cv, precision, draw, truth in cases:
        results = [one(rng, draw, truth, precision, 120) for _ in range(args.reps)]
        covered = sum(c for c, _, _ in results) / len(results)
        by_precision = sum(w == "precision" for _, w, _ in results) / len(results)
        runs = sorted(n for _, _, n in results)[len(results) // 2]
        spread = f"{cv * 100:g} %" if cv is not None else "bimodal"
        print(f"| {label} | {spread} | {precision * 100:g} % | {covered * 100:.1f} % | "
              f"{by_precision * 100:.0f} % | {runs} |")


if __name__ == "__main__":
    main()
