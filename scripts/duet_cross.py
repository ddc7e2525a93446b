#!/usr/bin/env python3
"""What the two sides of a duet do to each other: the same pairs taken
interleaved (one side at a time) and in a duet (both at once), 30 rounds
each, never stopped early.  Makes the duet section of
results/ab-power-2cpu.md.

    python3 scripts/duet_cross.py --out results/duet-cross-2cpu.json
    python3 scripts/duet_cross.py --summarize results/duet-cross-2cpu.json

In a duet every BPF producer's program also runs on the other side's
getpgid() calls, and filters them out: each side pays for the other's
calls.  Sides with the same programs pay alike and B/A is what it is one
side at a time; sides with different programs (two against one, a program
on entry and exit against one on entry) pay differently, and the duet's
B/A moves away from the interleaved one by that difference.  Identical
sides are the control: there both ratios should be 1."""
import json
import sys
import time
import warnings

import _record
import benchbpf
from benchbpf import ab as ab_module

PAIRS = [
    ("count-local", "count-local", "no BPF, identical"),
    ("selftest", "selftest", "identical programs"),
    ("selftest", "selftest --bpf-work 25", "same programs, B's does more per own hit"),
    ("strncmp-no-helper", "strncmp-helper", "one program each, same filter"),
    ("selftest", "strncmp-helper", "A: two programs (entry, exit), B: one (entry)"),
    ("count-local", "selftest", "A: no program, B: two"),
]
ROUNDS = 30


def run(args):
    warnings.simplefilter("ignore")
    out = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "pairs": []}
    for a, b, what in PAIRS:
        row = {"a": a, "b": b, "what": what}
        for mode in ("interleaved", "duet"):
            print(f"{mode}: {a} -- {b}", file=sys.stderr, flush=True)
            r = benchbpf.ab(a, b, mode=mode, budget=None, max_rounds=ROUNDS, min_rounds=ROUNDS,
                            threshold=ab_module.MIN_THRESHOLD,
                            precision=ab_module.MIN_PRECISION, progress=False,
                            different_benchmarks=True)
            row[mode] = dict(ratio=r.ratio, low=r.low, high=r.high, rounds=len(r.rounds),
                             a_mps=list(r.a_mps()), b_mps=list(r.b_mps()), wall_s=r.wall_s)
        out["pairs"].append(row)
    out["ended"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with open(args.out, "w") as f:
        json.dump(out, f)


def summarize(path):
    import statistics
    d = json.load(open(path))
    lines = [f"Taken {d['started']} .. {d['ended']} UTC, {ROUNDS} rounds a mode.", "",
             "| A | B | what differs | B/A interleaved | B/A duet | duet / interleaved | "
             "A in a duet / alone | B in a duet / alone |", "|---|---|---|---|---|---|---|---|"]
    for p in d["pairs"]:
        i, u = p["interleaved"], p["duet"]
        a_alone, b_alone = statistics.median(i["a_mps"]), statistics.median(i["b_mps"])
        lines.append(
            f"| `{p['a']}` | `{p['b']}` | {p['what']} | {i['ratio']:.3f} ({i['low']:.3f}.."
            f"{i['high']:.3f}) | {u['ratio']:.3f} ({u['low']:.3f}..{u['high']:.3f}) | "
            f"{u['ratio'] / i['ratio']:.3f} | "
            f"{statistics.median(u['a_mps']) / a_alone:.3f} | "
            f"{statistics.median(u['b_mps']) / b_alone:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(_record.main(__doc__, run, summarize))
