#!/usr/bin/env python3
"""How often the pytest regression gate fails without a change, and how often it
catches a real slowdown, measured on this machine.

    PYTHONPATH=. python3 scripts/gate_rates.py          # 60 unchanged, 25 slowed (this checkout)
    python3 scripts/gate_rates.py --unchanged 100 --slowed 30 --out results/gate-2cpu.md

The gate under test is benchbpf.tools.pytest_plugin.Gate itself, as a test calls it:
count-local, one producer, `work_per_hit` dependent multiply-add steps after
each hit.  One baseline is recorded first.  Then unchanged checks (the same
work per hit) and slowed checks (more work per hit: a real, known slowdown,
allowed to differ from the baseline's parameter) are interleaved, so a noisy
stretch of time hits both alike.  The baseline is recorded as a test would,
from a callable: Gate.baseline_runs runs.  A failure of an unchanged check is a false
alarm; a slowed check that passes is a miss.

The true size of the slowdown is measured too, side by side: the median of the
unchanged checks' first-run speeds against the slowed checks'.
"""
import argparse
import datetime
import os
import platform
import statistics
import sys
import time
import warnings

import pytest

import benchbpf
from benchbpf.analysis import fastest, mann_whitney_u, usable_rates
from benchbpf.tools.pytest_plugin import Baseline, Gate

KEY = "count-local-gate"


class _Node:
    def __init__(self):
        self.user_properties = []


class _Request:
    """The one thing Gate needs from pytest's request: a node to note on."""

    def __init__(self):
        self.node = _Node()


def _loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def _cpu_model():
    return benchbpf.run("count-local", warmup=0, duration=0.1, interval=0.1) \
        .metadata["fingerprint"]["cpu_model"]


def measure(directory, unchanged=60, slowed=25, base_work=40, slow_work=50,
            max_drop_pct=15.0, duration=1.0, interval=0.001, baseline_duration=None,
            top_pct=10, progress=None):
    """Run the experiment; returns a dict of counts, decisions and timings."""
    common = dict(warmup=0.2, interval=interval)

    def run(work, seconds):
        return benchbpf.run("count-local", duration=seconds, work_per_hit=work, **common)

    saver, recorded = Gate(directory, True, _Request()), []

    def baseline_run():
        # Kept here: the baseline file holds only what the gate compares.
        recorded.append(run(base_work, baseline_duration or duration))
        return recorded[-1]

    saver.check(KEY, baseline_run, max_drop_pct=max_drop_pct, top_pct=top_pct)
    gate = Gate(directory, False, _Request())
    # Interleaved: a slowed check after every unchanged/slowed unchanged ones.
    order = []
    for i in range(max(unchanged, slowed)):
        if i < unchanged:
            order.append("unchanged")
        while order.count("slowed") < slowed * (i + 1) // max(unchanged, slowed):
            order.append("slowed")
    out = {"unchanged": [], "slowed": []}
    for n, kind in enumerate(order):
        work = base_work if kind == "unchanged" else slow_work
        runs = []

        def once(work=work, runs=runs):
            r = run(work, duration)
            runs.append(r)
            return r

        start = time.monotonic()
        try:
            decision = gate.check(KEY, once, max_drop_pct=max_drop_pct, top_pct=top_pct,
                                  allow_param_changes=("work_per_hit",))
            failed, message = False, ""
        except pytest.fail.Exception as e:
            decision, failed, message = None, True, str(e)
        first_line = message.splitlines()[0] if message else ""
        out[kind].append({
            "failed": failed,
            "verdict": "pass" if not failed else
                       "regression" if f"{KEY}: regression:" in first_line else "undecided", "runs": len(runs), "seconds": time.monotonic() - start,
            "median_mps": statistics.median(runs[0].rates_mps()),
            "all_rates": runs[0].rates_mps(),
            "top_median_mps": statistics.median(fastest(usable_rates(runs[0], "hits"), top_pct)),
            "wall_top_median_mps": statistics.median(
                fastest(usable_rates(runs[0], "hits", per_cpu=False), top_pct)),
            "producer_cpu_share": statistics.median(
                s.producer_cpu_ns / s.interval_ns for s in runs[0].samples),
            "slower_runs": decision["slower_runs"] if decision else None,
            "concurrent": max((r.metadata.get("concurrent_runs") or 0) for r in runs),
            "change_pct": decision["change_pct"] if decision else None,
            "message": message.splitlines()[0] if message else "",
        })
        if progress:
            progress(n, kind, out[kind][-1])
    baseline = Baseline(recorded, top_pct=top_pct)
    base = baseline.first
    out["baseline_median_mps"] = base.median
    out["baseline_top_mps"] = statistics.median(
        fastest(usable_rates(base, "hits", per_cpu=False), top_pct))
    out["baseline"] = baseline.describe()
    # What one run judged on all samples' medians (top_pct=100, no
    # confirmation run) would have said of the same first runs.
    for c in out["unchanged"] + out["slowed"]:
        change = (c["median_mps"] / base.median - 1) * 100 if base.median else 0.0
        p = mann_whitney_u(c["all_rates"], base.rates_mps(), "less")[1]
        c["plain_median_fails"] = change < -max_drop_pct and p < 0.01
        del c["all_rates"]
    return out


def _summary(out, args, started, load_start, load_end, elapsed):
    un, sl = out["unchanged"], out["slowed"]
    false_alarms = sum(c["failed"] for c in un)
    caught = sum(c["verdict"] == "regression" for c in sl)

    def med(cs, k):
        return statistics.median(c[k] for c in cs)

    def span(cs, k):
        return f"{min(c[k] for c in cs):.2f}..{max(c[k] for c in cs):.2f}"

    true_change = (med(sl, "top_median_mps") / med(un, "top_median_mps") - 1) * 100
    wall_change = (med(sl, "wall_top_median_mps") / med(un, "wall_top_median_mps") - 1) * 100
    lines = [
        "# Regression gate: false alarms and detection on this machine",
        "",
        f"- taken: {started:%Y-%m-%d %H:%M} UTC, {elapsed:.0f} s; host: "
        f"{_cpu_model()}, {os.cpu_count()} CPUs, "
        f"kernel {platform.release()}",
        f"- load average (1/5/15 min): at start {load_start}, at end {load_end}",
        f"- command: `python3 scripts/gate_rates.py --unchanged {args.unchanged} --slowed "
        f"{args.slowed} --base-work {args.base_work} --slow-work {args.slow_work} "
        f"--max-drop-pct {args.max_drop_pct:g} --duration {args.duration:g} --interval "
        f"{args.interval:g} --top-pct {args.top_pct:g}`",
        f"- gate: `Gate.check(key, callable, max_drop_pct={args.max_drop_pct:g})` with its "
        f"defaults (alpha 0.01, baseline from {Gate.baseline_runs} runs "
        f"{Gate.baseline_delay_s:g} s apart, a slower run confirmed by "
        f"{len(Gate.confirm_delays_s)} more after pauses of "
        f"{', '.join('%g' % d for d in Gate.confirm_delays_s)} s): a run's speed is the "
        f"median of the fastest {args.top_pct:g}% of its per-interval rates per producer "
        "CPU-second; a run is slower when the upper 99% confidence bound of its speed is "
        "more than the limit below the baseline's reference (the highest lower 99% bound "
        "of its runs' speeds) and a one-sided Mann-Whitney U test gives p < 0.01",
        f"- benchmark: count-local, 1 producer, work_per_hit={args.base_work} "
        f"(unchanged) vs {args.slow_work} (slowed); runs of {args.duration:g} s sampled "
        f"every {args.interval:g} s; baseline {out['baseline']}",
        "",
        "| | checks | failed | gate runs per check (median, max) | first-run speed, M/s "
        "per producer CPU-second: median (min..max) | same per second of the interval |",
        "|---|---|---|---|---|---|",
    ]
    for kind, cs, what in (("unchanged", un, "false alarms"), ("slowed", sl, "caught")):
        lines.append(
            f"| {kind} | {len(cs)} | {sum(c['failed'] for c in cs)} ({what}"
            f"{'' if kind == 'unchanged' else ' as regressions: %d' % caught}) | "
            f"{med(cs, 'runs'):g}, {max(c['runs'] for c in cs)} | "
            f"{med(cs, 'top_median_mps'):.2f} ({span(cs, 'top_median_mps')}) | "
            f"{med(cs, 'wall_top_median_mps'):.2f} ({span(cs, 'wall_top_median_mps')}) |")
    lines += [
        "",
        f"True slowdown, side by side: {true_change:+.1f}% per producer CPU-second "
        f"({wall_change:+.1f}% per second), medians of the checks' first-run speeds.",
        f"False-alarm rate: {false_alarms}/{len(un)}; detection rate: {caught}/{len(sl)}.",
        f"Unchanged checks whose first run was slower by the rule (more than "
        f"{args.max_drop_pct:g}% below, bound and test included) and that a later run "
        f"cleared: {sum(1 for c in un if c['slower_runs'] and not c['failed'])} of "
        f"{len(un)}.",
        f"Producer's share of its CPU in the first runs (median of per-interval CPU time "
        f"over interval length): median {med(un + sl, 'producer_cpu_share'):.3f}, lowest "
        f"{min(c['producer_cpu_share'] for c in un + sl):.3f}.",
        f"Checks that overlapped another benchbpf run: "
        f"{sum(1 for c in un + sl if c['concurrent'])} of {len(un) + len(sl)}.",
        f"For contrast, one run judged on the medians of all its samples per second "
        f"(top_pct=100, against the first baseline run, no confirmation run) would have "
        f"failed {sum(c['plain_median_fails'] for c in un)} of the {len(un)} unchanged "
        f"checks and {sum(c['plain_median_fails'] for c in sl)} of the {len(sl)} slowed "
        f"ones (that baseline run's all-sample median: {out['baseline_median_mps']:.2f} "
        "M/s).",
    ]
    misses = [c["message"] or f"passed at {c['change_pct']:+.1f}%" for c in sl
              if c["verdict"] != "regression"]
    alarms = [c["message"] + (f" [overlapped {c['concurrent']} other benchbpf run(s)]"
                              if c["concurrent"] else "") for c in un if c["failed"]]
    lines += ["", "Why the gate is built this way: [gate-cpu-phases.md](gate-cpu-phases.md)."]
    if alarms:
        lines += ["", "False alarms:"] + [f"- {m}" for m in alarms]
    if misses:
        lines += ["", "Missed slowdowns:"] + [f"- {m}" for m in misses]
    return "\n".join(lines) + "\n", false_alarms, caught


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--unchanged", type=int, default=60)
    ap.add_argument("--slowed", type=int, default=25)
    ap.add_argument("--base-work", type=int, default=40)
    ap.add_argument("--slow-work", type=int, default=50)
    ap.add_argument("--max-drop-pct", type=float, default=15.0)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--interval", type=float, default=0.001)
    ap.add_argument("--top-pct", type=float, default=10)
    ap.add_argument("--dir", default=None, help="baseline directory (default: a temporary one)")
    ap.add_argument("--out", help="write the markdown summary here too")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", benchbpf.ConcurrentRunWarning)
    import tempfile
    directory = args.dir or tempfile.mkdtemp(prefix="benchbpf-gate-")
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start, t0 = _loadavg(), time.monotonic()

    def progress(n, kind, c):
        print(f"{n:3d} {kind:9s} {'FAIL' if c['failed'] else 'ok  '} runs={c['runs']} "
              f"median={c['median_mps']:.2f} {c['message'][:100]}", file=sys.stderr)

    out = measure(directory, args.unchanged, args.slowed, args.base_work, args.slow_work,
                  args.max_drop_pct, args.duration, args.interval, top_pct=args.top_pct,
                  progress=progress)
    text, false_alarms, caught = _summary(out, args, started, load_start, _loadavg(),
                                          time.monotonic() - t0)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0 if false_alarms == 0 and caught == args.slowed else 1


if __name__ == "__main__":
    sys.exit(main())
