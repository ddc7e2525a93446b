#!/usr/bin/env python3
"""Time outside the measurement: what a fresh load adds, when a warm-up may
end, and how much of the wall time precision runs and sweeps measure.
Makes results/load-once-2cpu.md.

    python3 scripts/load_once.py --out results/load-once-2cpu.json [--reps 12]
    python3 scripts/load_once.py --summarize results/load-once-2cpu.json

1. Fresh loads against one load (per benchmark, --reps times, the two arms
   in turns): "one load" measures four 0.5 s runs in a row after one warm-up,
   as a precision run now does; "fresh loads" measures four 0.5 s runs, each
   loaded anew with its own warm-up, as it did before.  If a fresh load is
   what tells runs apart (placement, a ring buffer's state), the four
   figures of fresh loads spread more than the four of one load.
2. Warm-up: runs without warm-up, sampled every 0.05 s and 0.1 s; the auto
   warm-up's rule is replayed on each, and the second after it ends is set
   against the run's steady figure (its last second).
3. Share of wall time measured by precision runs and a precision sweep.
"""
import json
import math
import statistics
import sys
import time
import warnings

import _record
import benchbpf
from benchbpf.harness.stopping import warmup_end

CASES = [("count-local", {}), ("trig-rawtp", {}), ("rb-libbpf", {}), ("selftest", {}),
         ("local-storage-cache-seq-get", {}), ("bpf-hashmap-lookup", {}),
         ("bloom-lookup", {}), ("strncmp-helper", {})]
WINDOWS = 4


def _window_means(result, size):
    xs = [s.hits / s.interval_ns * 1e3 for s in result.samples]
    return [statistics.fmean(xs[i:i + size]) for i in range(0, len(xs), size)]


def fresh_against_one(name, options, reps):
    out = []
    for rep in range(reps):
        arms = ["one", "fresh"] if rep % 2 == 0 else ["fresh", "one"]
        row = {"rep": rep, "first": arms[0]}
        for arm in arms:
            began = time.monotonic()
            if arm == "one":
                r = benchbpf.run(name, warmup="auto", duration=0.5 * WINDOWS, interval=0.1,
                                 **options)
                means = _window_means(r, 5)
                measured = r.duration_s
            else:
                runs = [benchbpf.run(name, warmup="auto", duration=0.5, interval=0.1, **options)
                        for _ in range(WINDOWS)]
                means = [statistics.fmean(s.hits / s.interval_ns * 1e3 for s in x.samples)
                         for x in runs]
                measured = sum(x.duration_s for x in runs)
            row[arm] = dict(means=means, wall_s=time.monotonic() - began, measured_s=measured)
        out.append(row)
    return out


def warmup(name, options, reps):
    out = []
    for interval in (0.05, 0.1):
        for _ in range(reps):
            r = benchbpf.run(name, warmup=0, duration=3.0, interval=interval, **options)
            rates = [s.hits / s.interval_ns * 1e3 for s in r.samples]
            end = warmup_end(rates, interval)
            per_s = round(1 / interval)
            steady = statistics.fmean(rates[-per_s:])
            after = statistics.fmean(rates[end:end + per_s]) if end is not None else None
            out.append(dict(interval=interval, ended_after=end, steady=steady, after=after))
    return out


def shares():
    out = []
    for name in ("count-local", "trig-rawtp", "selftest", "rb-libbpf"):
        began = time.monotonic()
        r = benchbpf.run(name, precision=0.01, duration=10)
        wall = time.monotonic() - began
        out.append(dict(kind="precision", name=name, wall_s=wall, measured_s=r.duration_s,
                        loads=list(r.metadata["precision_loads"]), stopped_by=r.stopped_by))
    began = time.monotonic()
    rs = benchbpf.sweep("count-local", producers=[1, 2], precision=0.01, duration=10,
                        progress=False)
    wall = time.monotonic() - began
    out.append(dict(kind="sweep", name="count-local producers=[1, 2]", wall_s=wall,
                    measured_s=sum(r.duration_s for r in rs)))
    return out


def run(args):
    warnings.simplefilter("ignore")
    data = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "fresh": {}, "warmup": {}}
    for name, options in CASES:
        print(f"fresh loads against one load: {name}", file=sys.stderr, flush=True)
        data["fresh"][name] = fresh_against_one(name, options, args.reps)
    for name, options in CASES:
        print(f"warm-up: {name}", file=sys.stderr, flush=True)
        data["warmup"][name] = warmup(name, options, args.warmup_reps)
    print("shares of wall time", file=sys.stderr, flush=True)
    data["shares"] = shares()
    data["ended"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with open(args.out, "w") as f:
        json.dump(data, f)


def _spread(means):
    logs = [math.log(m) for m in means if m > 0]
    return statistics.stdev(logs) if len(logs) > 1 else math.nan


def summarize(path):
    d = json.load(open(path))
    out = [f"Taken {d['started']} .. {d['ended']} UTC.", "",
           "### Fresh loads against one load", "",
           "| benchmark | spread of 4 runs, one load | spread, fresh loads | ratio | "
           "fresh spread larger in | share measured, one load | fresh loads |",
           "|---|---|---|---|---|---|---|"]
    for name, rows in d["fresh"].items():
        one = [_spread(r["one"]["means"]) for r in rows]
        fresh = [_spread(r["fresh"]["means"]) for r in rows]
        larger = sum(f > o for o, f in zip(one, fresh))
        share = lambda arm: statistics.median(r[arm]["measured_s"] / r[arm]["wall_s"]
                                              for r in rows)
        out.append(f"| {name} | {100 * statistics.median(one):.2f} % | "
                   f"{100 * statistics.median(fresh):.2f} % | "
                   f"{statistics.median(fresh) / statistics.median(one):.2f} | "
                   f"{larger}/{len(rows)} | {100 * share('one'):.0f} % | "
                   f"{100 * share('fresh'):.0f} % |")
    out += ["", "### Warm-up: the second after the auto warm-up, against the run's last second",
            "", "| benchmark | sampling | warm-up ended after (median) | after / steady "
            "(median) | off by more than 2 % | ended at the cap |", "|---|---|---|---|---|---|"]
    for name, rows in d["warmup"].items():
        for interval in (0.05, 0.1):
            cell = [r for r in rows if r["interval"] == interval]
            ended = [r for r in cell if r["ended_after"] is not None]
            ratios = [r["after"] / r["steady"] for r in ended if r["steady"] > 0]
            off = sum(abs(x - 1) > 0.02 for x in ratios)
            out.append(f"| {name} | {interval:g} s | "
                       f"{statistics.median(r['ended_after'] for r in ended) * interval:.2f} s | "
                       f"{statistics.median(ratios):.3f} | {off}/{len(ratios)} | "
                       f"{len(cell) - len(ended)}/{len(cell)} |" if ratios else
                       f"| {name} | {interval:g} s | - | - | - | {len(cell)}/{len(cell)} |")
    out += ["", "### Share of wall time measured", "",
            "| what | wall | measured | share | loads (runs each) |", "|---|---|---|---|---|"]
    for r in d["shares"]:
        loads = ", ".join(map(str, r.get("loads", []))) or "-"
        out.append(f"| {r['kind']} {r['name']} | {r['wall_s']:.1f} s | {r['measured_s']:.1f} s | "
                   f"{100 * r['measured_s'] / r['wall_s']:.0f} % | {loads} |")
    return "\n".join(out)


def _arguments(ap):
    ap.add_argument("--reps", type=int, default=12)
    ap.add_argument("--warmup-reps", type=int, default=8)


if __name__ == "__main__":
    sys.exit(_record.main(__doc__, run, summarize, _arguments))
