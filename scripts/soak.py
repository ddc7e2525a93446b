#!/usr/bin/env python3
"""Soak test: many short runs back to back, mixing every benchmark, must leave
the process as it found it.

    python3 scripts/soak.py --runs 500            # the long version
    python3 scripts/soak.py --runs 40 --json      # what the test suite runs

Cases are every benchmark in the registry with its defaults (the ones this
kernel cannot run raise UnsupportedError, and failing paths must not leak
either), the selftest benchmark with each of its faults, and a few rejected
options.  One pass over all cases comes first, so that what a first run
allocates for good (libbpf's feature cache, Python's imports) is in the
baseline; then --runs runs cycle through the cases.

At the end the process must have the same number of open descriptors and
threads, no BPF program, map, link or perf event descriptor, no child
process, no run marker left, no BPF object loaded since the start that
nobody holds, and an RSS that did not grow beyond --rss-slack-kb.  Exit
status 0 when all of that holds, 1 otherwise.
"""
import argparse
import importlib.util
import json
import os
import sys
import time
import warnings

import benchbpf


def _test_module(name):
    """A module of the test suite (tests/NAME.py), loaded from its file: the
    soak is the suite's leak check run long, and shares its checker."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests",
                        name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


leakcheck = _test_module("leakcheck")

#: selftest faults a soak mixes in; each must raise BenchmarkError.
FAULTS = ("setup-second-load", "setup-attach", "producer", "consumer", "measure")

#: Options every case is rejected for, before anything is loaded.
BAD = (
    ("count-local", {"producers": 0}),
    ("selftest", {"fault": "nope"}),
    ("selftest", {"fault_after_ms": 5}),
    ("count-local", {"prog_stats": True}),
)

#: Runs with the kernel's statistics on: the descriptor that holds them
#: must go whatever the outcome.
PROG_STATS = (
    ("selftest", {"prog_stats": True}, "run"),
    ("trig-rawtp", {"prog_stats": True}, "run"),
    ("selftest", {"prog_stats": True, "fault": "setup-attach"}, "fault"),
    ("selftest", {"prog_stats": True, "fault": "measure", "fault_after_ms": 20,
                  "duration": 5}, "fault"),
)


def cases():
    out = [(name, {}, "run") for name in benchbpf.list_benchmarks()]
    for fault in FAULTS:
        kw = {"fault": fault}
        if fault in ("producer", "consumer", "measure"):
            # The run stops at the fault; the long duration only makes sure
            # the fault comes first even on a loaded machine.
            kw.update(fault_after_ms=20, duration=5)
        if fault == "consumer":
            kw["consumers"] = 1
        out.append(("selftest", kw, "fault"))
    out += [(name, kw, "bad") for name, kw in BAD]
    out += list(PROG_STATS)
    return out


def one(name, kw, kind, common):
    """Run one case; returns (outcome, detail).  outcome is ok, unsupported,
    expected (the fault or rejection asked for) or unexpected."""
    try:
        r = benchbpf.run(name, **{**common, **kw})
    except benchbpf.UnsupportedError as e:
        return ("unsupported", str(e)) if kind == "run" else ("unexpected", repr(e))
    except benchbpf.BenchmarkError as e:
        return ("expected", str(e)) if kind == "fault" else ("unexpected", repr(e))
    except (ValueError, TypeError) as e:
        return ("expected", str(e)) if kind == "bad" else ("unexpected", repr(e))
    except PermissionError as e:
        return ("unsupported", str(e)) if kind == "run" else ("unexpected", repr(e))
    if kind != "run":
        return ("unexpected", "no error raised")
    return ("ok", r.metadata["concurrent_runs"])


def soak(runs, warmup=0, duration=0.05, interval=0.05, rss_slack_kb=4096,
         progress=None):
    """Returns a report dict; report["ok"] says whether nothing was left behind."""
    common = dict(warmup=warmup, duration=duration, interval=interval)
    todo = cases()
    # Other benchbpf processes are counted, not shouted about once per run.
    concurrent = []
    warnings.simplefilter("ignore", benchbpf.ConcurrentRunWarning)
    objects_before = leakcheck.kernel_objects()
    start = leakcheck.snapshot()
    outcomes = {}
    unexpected = {}
    t0 = time.monotonic()

    # First pass: what stays allocated for good goes into the baseline.
    for name, kw, kind in todo:
        one(name, kw, kind, common)
    base = leakcheck.snapshot()
    rss = [base.rss_kb]
    for i in range(runs):
        name, kw, kind = todo[i % len(todo)]
        outcome, detail = one(name, kw, kind, common)
        key = name + ("" if not kw else " " + ",".join(f"{k}={v}" for k, v in kw.items()))
        outcomes.setdefault(key, {}).setdefault(outcome, 0)
        outcomes[key][outcome] += 1
        if outcome == "unexpected":
            unexpected[key] = detail
        if outcome == "ok" and detail:
            concurrent.append(key)
        if (i + 1) % len(todo) == 0 or i + 1 == runs:
            rss.append(leakcheck.rss_kb())
            if progress:
                progress(f"{i + 1}/{runs} runs, {time.monotonic() - t0:.0f} s, "
                         f"fds {len(os.listdir('/proc/self/fd'))}, rss {rss[-1]} kB")

    end, leaks = leakcheck.settle(base)
    orphans = leakcheck.orphaned_objects(objects_before)
    rss_growth = end.rss_kb - base.rss_kb
    problems = list(leaks)
    if orphans:
        problems.append(f"BPF objects loaded by the soak and held by nobody: {orphans}")
    if rss_growth > rss_slack_kb:
        problems.append(f"RSS grew {rss_growth} kB over {runs} runs "
                        f"(allowed {rss_slack_kb} kB): {rss}")
    return {
        "ok": not problems,
        "problems": problems,
        "runs": runs,
        "cases": len(todo),
        "seconds": round(time.monotonic() - t0, 1),
        "fds": {"start": start.fds, "baseline": base.fds, "end": end.fds},
        "threads": {"start": start.threads, "baseline": base.threads, "end": end.threads},
        "rss_kb": {"start": start.rss_kb, "baseline": base.rss_kb, "end": end.rss_kb,
                   "per_pass": rss},
        "bpf_fds_end": end.bpf_fds,
        "children_end": end.children,
        "orphaned_objects": orphans,
        "outcomes": outcomes,
        # Runs that saw another benchbpf process: their figures are
        # disturbed, which does not matter here.
        "runs_with_concurrent_process": len(concurrent),
        "unexpected": unexpected,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=500, help="runs after the first pass (500)")
    ap.add_argument("--duration", type=float, default=0.05, help="seconds per run (0.05)")
    ap.add_argument("--interval", type=float, default=0.05, help="sampling interval (0.05)")
    ap.add_argument("--rss-slack-kb", type=int, default=4096,
                    help="RSS growth tolerated as noise, kB (4096)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON only")
    args = ap.parse_args(argv)
    report = soak(args.runs, duration=args.duration, interval=args.interval,
                  rss_slack_kb=args.rss_slack_kb,
                  progress=None if args.json else (lambda m: print(m, flush=True)))
    if args.json:
        print(json.dumps(report))
    else:
        for key in ("runs", "cases", "seconds", "fds", "threads", "rss_kb",
                    "bpf_fds_end", "children_end", "orphaned_objects",
                    "runs_with_concurrent_process"):
            print(f"{key}: {report[key]}")
        for key, detail in report["unexpected"].items():
            print(f"unexpected outcome: {key}: {detail}")
        print("OK: nothing left behind" if report["ok"] else
              "FAILED:\n  " + "\n  ".join(report["problems"]))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
