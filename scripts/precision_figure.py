#!/usr/bin/env python3
"""Precision against time: how the interval a precision run states narrows
as its runs go on, from the runs precision_runs.py saved (no run here).

    python3 scripts/precision_figure.py /tmp/p.json --png results/precision-vs-time-2cpu.png \\
        --case count-local --case "rb-libbpf sampled"

For each saved precision run of a case, the interval (Result.mean_ci_mps's
rule: runs grouped by 5 s of start time, Student's t over the groups) is
recomputed after each of its runs, against the wall time that run ended
(starts from metadata, each run's warm-up and measured samples added); one
thin line per precision run, its stop marked.  The lines begin once there
are two groups.
"""
import argparse
import gzip
import json
import statistics

from benchbpf.results import stats
from benchbpf.results.result import Result


def trajectory(r):
    """[(wall s at the end of run k, relative half-width %)] of one precision Result."""
    runs = r.runs()
    starts = r.metadata["precision_run_starts_s"]
    points = []
    for k in range(1, len(runs) + 1):
        ci = stats.runs_mean_ci([x.mean for x in runs[:k]], starts[:k])
        if ci is None:
            continue
        last = runs[k - 1]
        end = starts[k - 1] + last.warmup_s + last.duration_s
        points.append((end, ci.relative_half_width * 100))
    return points


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", help="precision_runs.py --json file")
    ap.add_argument("--case", action="append", help="a case label (default: two)")
    ap.add_argument("--png", required=True)
    args = ap.parse_args()
    cases = args.case or ["count-local", "rb-libbpf sampled"]
    opener = gzip.open if args.source.endswith(".gz") else open
    with opener(args.source, "rt") as f:
        saved = json.load(f)["runs"]
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(cases), figsize=(5.2 * len(cases), 3.8), sharey=True)
    axes = axes if len(cases) > 1 else [axes]
    for ax, case in zip(axes, cases):
        rs = [Result.from_dict(x["result"]) for x in saved
              if x["case"] == case and x["kind"] == "precision"]
        asked = rs[0].params["precision"] * 100 if rs else None
        stops = []
        for r in rs:
            pts = trajectory(r)
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color="tab:blue",
                    alpha=0.25, linewidth=0.8)
            stops.append(pts[-1])
        ax.scatter([p[0] for p in stops], [p[1] for p in stops], s=10, color="tab:red",
                   label="where each run stopped", zorder=3)
        if asked is not None:
            ax.axhline(asked, color="black", linestyle="--", linewidth=0.8,
                       label=f"precision asked ({asked:g} %)")
        ax.set_yscale("log")
        ax.set_xlabel("wall time, s (loads and warm-ups included)")
        ax.set_title(f"{case}: {len(rs)} precision runs")
        ax.grid(True, which="both", alpha=0.3)
        if stops:
            walls = statistics.median(p[0] for p in stops)
            ax.text(0.98, 0.95, f"median stop at {walls:.0f} s", transform=ax.transAxes,
                    ha="right", va="top", fontsize=8)
    axes[0].set_ylabel("95 % CI half-width, % of the mean")
    axes[0].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(args.png, dpi=100)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
