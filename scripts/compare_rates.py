#!/usr/bin/env python3
"""How often `benchbpf compare` calls an unchanged pair significant, and how
often it catches a real slowdown, measured on this machine with the command line
exactly as a user runs it.

    python3 scripts/compare_rates.py                    # 20 pairs each, 5 runs a side
    python3 scripts/compare_rates.py --pairs 20 --slowed 20 --repeat 5 \\
        --out results/compare-rates-2cpu.md

Unchanged pairs: two quick suite reports of a few benchmarks, each benchmark
run --repeat times round the suite (`benchbpf report --quick --no-prog-stats
--repeat N --only ... --json`), then `benchbpf compare A.json B.json`.  Every
benchmark line called "significant" is a false alarm.

Slowed pairs: `benchbpf NAME --repeat N --json` of count-local with
--work-per-hit BASE against the same with SLOW (more dependent multiply-add
steps after each hit: a real, known slowdown), compared with
`benchbpf compare --different-params` (the difference is the point).  A pair
called "significant" with a drop is caught.  The true size of the slowdown is
measured side by side from the same runs.

Within each pair the two sides run back to back, alternately first, so that
a drift of the machine's speed does not always favour one side.

For contrast, the verdict that compare gave before it tested across runs (a
Mann-Whitney U test over the per-interval samples of one run per side) is
computed on the first run of each side of the same pairs.
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time


import _record
from benchbpf.analysis import mann_whitney_u, run_speed
from benchbpf.tools.report import counter_for, load

QUICK_ARGS = ["-q", "-w0.2", "-d0.9", "--interval", "0.1"]   # report --quick's timing


def _loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def benchbpf(*args):
    return subprocess.run([sys.executable, "-m", "benchbpf", *args], capture_output=True,
                          text=True, env=_record.child_env(), timeout=3600)


def _ok(res, what):
    if res.returncode not in (0, 1):
        raise SystemExit(f"{what} failed ({res.returncode}): {res.stderr}")
    return res


def verdicts(stdout):
    """{benchmark: (verdict, change %, change % of the tested figure)} from
    `benchbpf compare`'s table (the tested figure's change is printed when
    it is not the median per second)."""
    out = {}
    for line in stdout.splitlines()[1:]:
        m = re.match(r"(\S+)(?: \[[^]]*\])?\s+\S+ ->\s+\S+ M/s\s+([+-][\d.]+|[+-]?inf|nan)%\s+\S+\s+"
                     r"B/A \S+(?: \([^)]*\))?: (slower|faster|same|undecided)(: not enough runs)?",
                     line)
        if m:
            # The outcome's words, back to the test's: slower or faster is
            # what the test found significant.
            verdict = "not enough runs" if m.group(4) else "significant" \
                if m.group(3) in ("slower", "faster") else "within noise"
            tested = re.search(r"per producer CPU-second ([+-][\d.]+|[+-]?inf|nan)%", line)
            change = float(m.group(2))
            out[m.group(1)] = (verdict, change, float(tested.group(1)) if tested else change)
    return out


def _runs(path):
    x = load(path)
    return list(x) if hasattr(x, "results") else [x]


def _sample_verdict(a_runs, b_runs, name, alpha):
    """The old verdict: Mann-Whitney U over the first runs' per-interval samples."""
    a = next(r for r in a_runs if r.name == name)
    b = next(r for r in b_runs if r.name == name)
    c = counter_for(a)
    return mann_whitney_u(b.rates_mps(c), a.rates_mps(c))[1] < alpha


def _load1():
    try:
        return float(_loadavg().split()[0])
    except ValueError:
        return math.nan


def _overlapped(runs):
    return sum(1 for r in runs if (r.metadata.get("concurrent_runs") or 0) >= 1)


def measure(directory, pairs=20, slowed=20, repeat=5, only="count-local,trig-tp,rb-libbpf",
            base_work=40, slow_work=50, alpha=0.05, progress=None, reuse=False):
    names = only.split(",")
    out = {"unchanged": [], "slowed": [], "base_medians": [], "slow_medians": [],
           "base_speeds": [], "slow_speeds": []}
    for i in range(pairs):
        files = [os.path.join(directory, f"u{i}{s}.json") for s in "ab"]
        order = files if i % 2 == 0 else files[::-1]
        for f in order:
            if reuse and os.path.exists(f):
                continue
            _ok(benchbpf("report", "--quick", "--no-prog-stats", "--repeat", str(repeat),
                         "--only", only, "-q", "--json", f), "report")
        res = _ok(benchbpf("compare", files[0], files[1], "--alpha", str(alpha)), "compare")
        got = verdicts(res.stdout)
        per_second = verdicts(_ok(benchbpf("compare", files[0], files[1], "--alpha",
                                           str(alpha), "--per-second"), "compare").stdout)
        a_runs, b_runs = _runs(files[0]), _runs(files[1])
        for name in names:
            if name not in got:
                raise SystemExit(f"no line for {name} in:\n{res.stdout}")
            verdict, change, _ = got[name]
            over = _overlapped([r for r in a_runs + b_runs if r.name == name])
            out["unchanged"].append({
                "pair": i, "name": name, "verdict": verdict, "change_pct": change,
                "overlapped_runs": over, "per_second_verdict": per_second[name][0],
                "load": _load1(),
                "sample_test_flags": _sample_verdict(a_runs, b_runs, name, alpha)})
            if progress:
                progress("unchanged", i, out["unchanged"][-1])
    for i in range(slowed):
        base, slow = (os.path.join(directory, f"s{i}{s}.json") for s in "ab")
        jobs = [(base, base_work), (slow, slow_work)]
        for f, work in (jobs if i % 2 == 0 else jobs[::-1]):
            if reuse and os.path.exists(f):
                continue
            _ok(benchbpf(*QUICK_ARGS, "--repeat", str(repeat), "--work-per-hit", str(work),
                         "count-local", "--json", f), "count-local")
        res = _ok(benchbpf("compare", base, slow, "--alpha", str(alpha), "--different-params"),
                  "compare")
        verdict, change, tested = verdicts(res.stdout)["count-local"]
        per_second = verdicts(_ok(benchbpf("compare", base, slow, "--alpha", str(alpha),
                                           "--different-params", "--per-second"),
                                  "compare").stdout)["count-local"]
        a_runs, b_runs = _runs(base), _runs(slow)
        out["base_medians"] += [r.median for r in a_runs]
        out["slow_medians"] += [r.median for r in b_runs]
        out["base_speeds"] += [run_speed(r) for r in a_runs]
        out["slow_speeds"] += [run_speed(r) for r in b_runs]
        out["slowed"].append({
            "pair": i, "name": "count-local", "verdict": verdict, "change_pct": change,
            "overlapped_runs": _overlapped(a_runs + b_runs), "tested_change_pct": tested,
            "per_second_verdict": per_second[0], "per_second_caught":
            per_second[0] == "significant" and per_second[1] < 0, "load": _load1(),
            "sample_test_flags": _sample_verdict(a_runs, b_runs, "count-local", alpha)})
        if progress:
            progress("slowed", i, out["slowed"][-1])
    return out


def _summary(out, args, started, load_start, load_end, elapsed, loads):
    un, sl = out["unchanged"], out["slowed"]
    flagged = [c for c in un if c["verdict"] == "significant"]
    caught = [c for c in sl if c["verdict"] == "significant" and c["tested_change_pct"] < 0]

    def med(xs):
        return statistics.median([x for x in xs if not math.isnan(x)])

    true_change = (med(out["slow_medians"]) / med(out["base_medians"]) - 1) * 100
    names = args.only.split(",")
    lines = [
        "# `benchbpf compare`: false alarms and detection on this machine",
        "",
        f"- taken: {started:%Y-%m-%d %H:%M} UTC, {elapsed:.0f} s; {os.cpu_count()} CPUs, "
        f"kernel {platform.release()}",
        f"- load average (1/5/15 min): at start {load_start}, at end {load_end}; "
        f"1-min load sampled every pair: median {statistics.median(loads):.1f}, "
        f"range {min(loads):.1f}..{max(loads):.1f}"
        + (" (--reuse: benchmark runs reused from an earlier run of this script in the "
           "same directory; only `benchbpf compare` ran again)" if args.reuse else ""),
        f"- command: `python3 scripts/compare_rates.py --pairs {args.pairs} --slowed "
        f"{args.slowed} --repeat {args.repeat} --only {args.only} --base-work "
        f"{args.base_work} --slow-work {args.slow_work} --alpha {args.alpha:g}"
        + (" --dir DIR --reuse" if args.reuse else "") + "`",
        f"- unchanged pair: `benchbpf report --quick --no-prog-stats --repeat {args.repeat} "
        f"--only {args.only} -q --json A.json`, the same to B.json, then "
        f"`benchbpf compare A.json B.json --alpha {args.alpha:g}`",
        f"- slowed pair: `benchbpf {' '.join(QUICK_ARGS)} --repeat {args.repeat} "
        f"--work-per-hit {args.base_work} count-local --json A.json`, the same with "
        f"`--work-per-hit {args.slow_work}` to B.json, then `benchbpf compare A.json B.json "
        f"--alpha {args.alpha:g} --different-params`",
        "- the two sides of a pair ran back to back, alternately first",
        f"- verdict (default): each run is summarised by its speed, the median of the "
        f"fastest half of its rates per producer CPU-second (the gate's figure); exact "
        f"two-sided Mann-Whitney U test of the {args.repeat} speeds of B against A's. "
        f"`--per-second`: the same test on the runs' median rates per second",
        "",
        "| | comparisons | called significant (default) | rate | with --per-second | "
        "runs that overlapped another benchbpf run |",
        "|---|---|---|---|---|---|",
    ]

    def ps(cs):
        k = sum(c.get("per_second_caught", c["per_second_verdict"] == "significant")
                for c in cs)
        return f"{k} ({k / len(cs):.1%})"

    for name in names:
        cs = [c for c in un if c["name"] == name]
        k = sum(c["verdict"] == "significant" for c in cs)
        lines.append(f"| unchanged {name} | {len(cs)} | {k} | {k / len(cs):.1%} | {ps(cs)} | "
                     f"{sum(c['overlapped_runs'] for c in cs)} of "
                     f"{len(cs) * 2 * args.repeat} |")
    lines.append(f"| **unchanged, all** | {len(un)} | {len(flagged)} | "
                 f"**{len(flagged) / len(un):.1%}** | {ps(un)} | "
                 f"{sum(c['overlapped_runs'] for c in un)} of {len(un) * 2 * args.repeat} |")
    lines.append(f"| **slowed count-local** | {len(sl)} | {len(caught)} (as drops) | "
                 f"**{len(caught) / len(sl):.1%}** detected | {ps(sl)} | "
                 f"{sum(c['overlapped_runs'] for c in sl)} of {len(sl) * 2 * args.repeat} |")
    old_un = sum(c["sample_test_flags"] for c in un)
    old_sl = sum(c["sample_test_flags"] for c in sl)
    lines += [
        "",
        f"False-alarm rate: {len(flagged)}/{len(un)} = {len(flagged) / len(un):.1%} "
        f"(alpha {args.alpha:g}); detection rate: {len(caught)}/{len(sl)} = "
        f"{len(caught) / len(sl):.1%}.",
        f"True slowdown, side by side: {true_change:+.1f}% (median of the "
        f"{len(out['slow_medians'])} slowed run medians against the "
        f"{len(out['base_medians'])} baseline ones, hits per second); "
        f"{(med(out['slow_speeds']) / med(out['base_speeds']) - 1) * 100:+.1f}% "
        "per producer CPU-second (median of the runs' speeds; "
        f"{sum(math.isnan(x) for x in out['base_speeds'] + out['slow_speeds'])} runs had no "
        "usable interval).",
        f"Changes reported for the unchanged pairs: median "
        f"{statistics.median(c['change_pct'] for c in un):+.1f}%, range "
        f"{min(c['change_pct'] for c in un):+.1f}%..{max(c['change_pct'] for c in un):+.1f}%.",
        f"For contrast, the previous verdict (Mann-Whitney U over the per-interval samples "
        f"of one run per side, here each side's first run) on the same pairs: "
        f"{old_un}/{len(un)} unchanged comparisons called significant, "
        f"{old_sl}/{len(sl)} slowed ones.",
    ]
    if flagged:
        lines += ["", "False alarms:"] + [
            f"- pair {c['pair']} {c['name']}: {c['change_pct']:+.1f}%"
            + (f" ({c['overlapped_runs']} runs overlapped another benchbpf run)"
               if c["overlapped_runs"] else "") for c in flagged]
    missed = [c for c in sl if c not in caught]
    if missed:
        lines += ["", "Missed slowdowns:"] + [
            f"- pair {c['pair']}: {c['change_pct']:+.1f}% per second, "
            f"{c['tested_change_pct']:+.1f}% tested, {c['verdict']}" for c in missed]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=20, help="unchanged report pairs")
    ap.add_argument("--slowed", type=int, default=20, help="slowed count-local pairs")
    ap.add_argument("--repeat", type=int, default=5, help="runs per side")
    ap.add_argument("--only", default="count-local,trig-tp,rb-libbpf")
    ap.add_argument("--base-work", type=int, default=40)
    ap.add_argument("--slow-work", type=int, default=50)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--dir", help="where the JSON files go (default: a temporary directory)")
    ap.add_argument("--out", help="write the markdown summary here too")
    ap.add_argument("--reuse", action="store_true",
                    help="keep the JSON files already in --dir (run only compare again)")
    args = ap.parse_args(argv)
    directory = args.dir or tempfile.mkdtemp(prefix="benchbpf-compare-")
    os.makedirs(directory, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start, t0, loads = _loadavg(), time.monotonic(), []

    def progress(kind, i, c):
        loads.append(float(_loadavg().split()[0]))
        print(f"{kind:9s} {i:3d} {c['name']:12s} {c['verdict']:16s} {c['change_pct']:+7.1f}% "
              f"overlapped {c['overlapped_runs']} load {loads[-1]:.1f}", file=sys.stderr)

    out = measure(directory, args.pairs, args.slowed, args.repeat, args.only, args.base_work,
                  args.slow_work, args.alpha, progress, args.reuse)
    with open(os.path.join(directory, "rates.json"), "w") as f:
        json.dump(out, f, indent=1)
    text = _summary(out, args, started, load_start, _loadavg(), time.monotonic() - t0, loads)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
