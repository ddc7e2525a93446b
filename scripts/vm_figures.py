#!/usr/bin/env python3
"""Cross-kernel figures through benchbpf.vm, written as a markdown table.

    python3 scripts/vm_figures.py --kernels host 6.1 6.12 --repeat 3 --out results/vm-2cpu.md

One boot per kernel runs every benchmark --repeat times, alternating them.
Also local-storage-tasks-trace with gp_check=True: grace periods timed by
fentry (the kernel bench's method) and by benchbpf's context-switch
substitute in the same run, interval by interval.  Under TCG (no usable
KVM) the rates are an emulator's: the table says so and gives them as
ratios to the host's only to show the size of that distortion.
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

import benchbpf
from benchbpf import vm

BENCHES = [
    ("count-local", {}),
    ("trig-kernel-count", {}),
    ("trig-rawtp", {}),
    ("trig-kprobe", {}),
    ("trig-fentry", {}),
    ("rename-kprobe", {}),
    ("rename-fentry", {}),
    ("local-storage-create", {"storage_type": "socket"}),
]
TASKS_TRACE = ("local-storage-tasks-trace", {"nr_procs": 100, "gp_check": True})


def label(name, params):
    return name + "".join(f" {k}={v}" for k, v in params.items() if k != "gp_check")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", nargs="+", default=["host", "6.1", "6.12"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("-w", "--warmup", type=float, default=1)
    ap.add_argument("-d", "--duration", type=float, default=3)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    timing = dict(warmup=args.warmup, duration=args.duration, interval=1)
    jobs = [(n, {**p, **timing}) for _ in range(args.repeat) for n, p in BENCHES]
    jobs.append((TASKS_TRACE[0], {**TASKS_TRACE[1], "warmup": 1, "duration": 8, "interval": 1}))
    load_before = os.getloadavg()
    table, tasks, info = {}, {}, {}
    started = time.time()
    for k in args.kernels:
        t0 = time.monotonic()
        out = vm.run_many(jobs, k, progress=lambda line: print(line, file=sys.stderr),
                          errors="return")
        elapsed = time.monotonic() - t0
        for (name, params), r in zip(jobs, out):
            key = label(name, {q: v for q, v in params.items() if q not in timing})
            if isinstance(r, dict):
                table.setdefault(key, {})[k] = "unsupported" if r["type"] == "UnsupportedError" \
                    else r["type"]
                continue
            if name == TASKS_TRACE[0]:
                tasks[k] = r
                continue
            table.setdefault(key, {}).setdefault(k, []).append(r.median)
            info[k] = (r.metadata["kernel"], (r.metadata.get("vm") or {}).get("accel", "none"),
                       (r.metadata.get("vm") or {}).get("boot_s"))
        info.setdefault(k, (k, "?", None))
        info[k] = info[k] + (elapsed,)
    load_after = os.getloadavg()
    lines = [f"# benchbpf across kernels ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))})",
             "",
             f"Host: {platform.release()}, {os.cpu_count()} CPUs; load average "
             f"{load_before[0]:.1f} before, {load_after[0]:.1f} after (other jobs shared the "
             "machine).", "",
             "Command: `python3 scripts/vm_figures.py --kernels "
             f"{' '.join(args.kernels)} --repeat {args.repeat} -w {args.warmup:g} "
             f"-d {args.duration:g} --out {args.out}`", "",
             "| kernel | release | how | boot to Python s | whole batch s |", "|---|---|---|---:|---:|"]
    for k in args.kernels:
        rel, accel, boot, elapsed = info[k]
        lines.append(f"| {k} | {rel} | {accel.upper() if accel != 'none' else 'host'} | "
                     f"{boot if boot is not None else '-'} | {elapsed:.0f} |")
    lines += ["", "Median of each run's median hits, M/s (runs alternated within one boot; "
              "n = runs).  Under TCG these are an emulator's rates, not performance "
              "figures: the ratio to the host only shows how far emulation distorts them.",
              "", "| benchmark | " + " | ".join(args.kernels) + " |",
              "|---|" + "---:|" * len(args.kernels)]
    for key, per in table.items():
        cells = []
        host = per.get("host")
        for k in args.kernels:
            v = per.get(k)
            if isinstance(v, list):
                m = statistics.median(v)
                ratio = ""
                if k != "host" and isinstance(host, list):
                    ratio = f" ({m / statistics.median(host):.2f}x host)"
                cells.append(f"{m:.3f} (n={len(v)}){ratio}")
            else:
                cells.append(v or "-")
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    lines += ["", "## Grace-period latency: fentry and the substitute in the same run", "",
              "`local-storage-tasks-trace --nr_procs 100 --gp-check`, 8 intervals of 1 s: each "
              "interval's mean latency by fentry on rcu_tasks_trace_pregp_step/postgp (the "
              "kernel bench's method) and by benchbpf's tp_btf/sched_switch substitute, "
              "over the same grace periods.", ""]
    for k, r in tasks.items():
        timed, ns = r.series["substitute_gp_timed"], r.series["substitute_gp_ns"]
        half = r.series["substitute_gp_bracket_ns"]
        lines += [f"### {k} ({r.metadata['kernel']})", "",
                  "| interval | GPs (fentry) | fentry ms | GPs (substitute) | substitute ms | "
                  "± half-width ms | substitute / fentry |", "|---:|---:|---:|---:|---:|---:|---:|"]
        ratios = []
        for i, s in enumerate(r.samples):
            f_ms = s.extra["gp_ns"] / s.extra["gp_timed"] / 1e6 if s.extra["gp_timed"] else None
            s_ms = ns[i] / timed[i] / 1e6 if timed[i] else None
            h_ms = half[i] / timed[i] / 1e6 if timed[i] else None
            ratio = s_ms / f_ms if f_ms and s_ms else None
            if ratio:
                ratios.append(ratio)
            fmt = (lambda x: f"{x:.2f}" if x is not None else "-")
            lines.append(f"| {i} | {s.extra['gp_timed']} | {fmt(f_ms)} | {int(timed[i])} | "
                         f"{fmt(s_ms)} | {fmt(h_ms)} | {fmt(ratio)} |")
        if ratios:
            lines += ["", f"Median substitute / fentry over intervals: "
                      f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max "
                      f"{max(ratios):.3f}, {len(ratios)} intervals).", ""]
    for k in args.kernels:
        if k not in tasks:
            lines.append(f"{k}: tasks-trace with gp_check did not run: "
                         f"{table.get(label(*TASKS_TRACE), {}).get(k, 'see above')}")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
