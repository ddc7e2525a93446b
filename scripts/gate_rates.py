#!/usr/bin/env python3
"""How often the pytest regression gate fails without a change, and how often it
catches a real slowdown, measured on this machine.

    python3 scripts/gate_rates.py                       # 50 unchanged, 20 slowed
    python3 scripts/gate_rates.py --unchanged 100 --slowed 30 --out results/gate-2cpu.md

The gate under test is benchbpf.pytest_plugin.Gate itself, as a test calls it:
count-local, one producer, `work_per_hit` dependent multiply-add steps after
each hit.  One baseline is recorded first.  Then unchanged checks (the same
work per hit) and slowed checks (more work per hit: a real, known slowdown,
allowed to differ from the baseline's parameter) are interleaved, so a noisy
stretch of time hits both alike.  A failure of an unchanged check is a false
alarm; a slowed check that passes is a miss.

The true size of the slowdown is measured too, side by side: the median of the
unchanged checks' medians against the slowed checks'.
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
from benchbpf.analysis import mann_whitney_u
from benchbpf.pytest_plugin import Gate, _rates, _top

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


def measure(directory, unchanged=50, slowed=20, base_work=40, slow_work=52,
            max_drop_pct=15.0, duration=1.0, interval=0.001, baseline_duration=2.0,
            top_pct=10,
            progress=None):
    """Run the experiment; returns a dict of counts, decisions and timings."""
    common = dict(warmup=0.2, interval=interval)

    def run(work, seconds):
        return benchbpf.run("count-local", duration=seconds, work_per_hit=work, **common)

    saver = Gate(directory, True, _Request())
    saver.check(KEY, run(base_work, baseline_duration), max_drop_pct=max_drop_pct)
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
        out[kind].append({
            "failed": failed, "runs": len(runs), "seconds": time.monotonic() - start,
            "median_mps": statistics.median(runs[0].rates_mps()),
            "all_rates": runs[0].rates_mps(),
            "top_median_mps": statistics.median(_top(_rates(runs[0], "hits"), top_pct)),
            "concurrent": max((r.metadata.get("concurrent_runs") or 0) for r in runs),
            "change_pct": decision["change_pct"] if decision else None,
            "message": message.splitlines()[0] if message else "",
        })
        if progress:
            progress(n, kind, out[kind][-1])
    base = benchbpf.Result.from_json(os.path.join(directory, KEY + ".json"))
    out["baseline_median_mps"] = base.median
    out["baseline_top_mps"] = statistics.median(_top(_rates(base, "hits"), top_pct))
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
    caught = sum(c["failed"] for c in sl)
    un_med = statistics.median(c["median_mps"] for c in un)
    sl_med = statistics.median(c["median_mps"] for c in sl)
    un_top = statistics.median(c["top_median_mps"] for c in un)
    sl_top = statistics.median(c["top_median_mps"] for c in sl)
    true_change = (sl_top / un_top - 1) * 100
    lines = [
        "# Regression gate: false alarms and detection on this machine",
        "",
        f"- taken: {started:%Y-%m-%d %H:%M} UTC, {elapsed:.0f} s; host: "
        f"{_cpu_model()}, {os.cpu_count()} CPUs, "
        f"kernel {platform.release()}",
        f"- load average (1/5/15 min): at start {load_start}, at end {load_end}; the "
        "machine was shared with other build and benchmark work while this ran",
        f"- command: `python3 scripts/gate_rates.py --unchanged {args.unchanged} --slowed "
        f"{args.slowed} --base-work {args.base_work} --slow-work {args.slow_work} "
        f"--max-drop-pct {args.max_drop_pct:g} --duration {args.duration:g} --interval "
        f"{args.interval:g} --top-pct {args.top_pct:g}`",
        f"- gate: `Gate.check(key, callable, max_drop_pct={args.max_drop_pct:g})`: fails "
        f"when the median of the fastest {args.top_pct:g}% of per-interval rates is more "
        "than that below the baseline's AND a one-sided Mann-Whitney U test over those "
        "samples gives p < 0.01, confirmed by a second independent run 2 s later (a run "
        "that overlapped another benchbpf run does not count as a regression: it is "
        "measured again)",
        f"- benchmark: count-local, 1 producer, work_per_hit={args.base_work} "
        f"(unchanged) vs {args.slow_work} (slowed); runs of {args.duration:g} s sampled "
        f"every {args.interval:g} s; baseline median {out['baseline_median_mps']:.2f} M/s",
        "",
        "| | checks | failed | gate runs per check (median, max) | median of first-run "
        "medians, M/s (min..max) | same, fastest tenth |",
        "|---|---|---|---|---|---|",
        f"| unchanged | {len(un)} | {false_alarms} (false alarms) | "
        f"{statistics.median(c['runs'] for c in un):g}, {max(c['runs'] for c in un)} | "
        f"{un_med:.2f} ({min(c['median_mps'] for c in un):.2f}.."
        f"{max(c['median_mps'] for c in un):.2f}) | {un_top:.2f} |",
        f"| slowed | {len(sl)} | {caught} (caught) | "
        f"{statistics.median(c['runs'] for c in sl):g}, {max(c['runs'] for c in sl)} | "
        f"{sl_med:.2f} ({min(c['median_mps'] for c in sl):.2f}.."
        f"{max(c['median_mps'] for c in sl):.2f}) | {sl_top:.2f} |",
        "",
        f"True slowdown, side by side: {true_change:+.1f}% (slowed vs unchanged, medians of "
        "the fastest tenth of each first run's samples).",
        f"False-alarm rate: {false_alarms}/{len(un)}; detection rate: {caught}/{len(sl)}.",
        f"For contrast, one run judged on the medians of all its samples (top_pct=100, no "
        f"confirmation run) would have failed {sum(c['plain_median_fails'] for c in un)} "
        f"of the {len(un)} unchanged checks and {sum(c['plain_median_fails'] for c in sl)} "
        f"of the {len(sl)} slowed ones: under this load a producer loses whole intervals "
        "to other processes, and the lower samples measure the load (the baseline's "
        f"all-sample median was {out['baseline_median_mps']:.2f} M/s, against "
        f"{out['baseline_top_mps']:.2f} M/s for its fastest {args.top_pct:g}%).",
        f"Checks that overlapped another benchbpf run: "
        f"{sum(1 for c in un + sl if c['concurrent'])} of {len(un) + len(sl)}.",
    ]
    misses = [c["message"] or f"passed at {c['change_pct']:+.1f}%" for c in sl
              if not c["failed"]]
    alarms = [c["message"] + (f" [overlapped {c['concurrent']} other benchbpf run(s)]"
                              if c["concurrent"] else "") for c in un if c["failed"]]
    if alarms:
        lines += ["", "False alarms:"] + [f"- {m}" for m in alarms]
    if misses:
        lines += ["", "Missed slowdowns:"] + [f"- {m}" for m in misses]
    return "\n".join(lines) + "\n", false_alarms, caught


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--unchanged", type=int, default=50)
    ap.add_argument("--slowed", type=int, default=20)
    ap.add_argument("--base-work", type=int, default=40)
    ap.add_argument("--slow-work", type=int, default=52)
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
