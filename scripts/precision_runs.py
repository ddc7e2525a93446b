#!/usr/bin/env python3
"""Coverage of precision= on real runs: does the 95 % interval a run states
(Result.mean_ci_mps) contain the long-run figure?

    python3 scripts/precision_runs.py --rounds 40 --json /tmp/p.json \\
        --out results/precision-2cpu.md
    python3 scripts/precision_runs.py --from /tmp/p.json --out results/precision-2cpu.md

The benchmarks take turns, one precision run each per round, so that all
meet the machine's changing load alike; every `--ref-every` rounds each
also gets a reference run of fixed length (-w1, `--ref-duration` s in 1 s
samples, the kernel bench's way).  The long-run figure of a benchmark is
the mean of its reference runs' means; the pooled figure also counts each
short run of every precision run as one more load.  A precision run covers
when its stated interval contains that figure.  Runs that ended by duration count
too: their interval is what they state.  Every run is saved (--json), so
the table can be made again without running.

With --host-drift FILE (a calibration by `benchbpf host-drift -o FILE`,
taken before and apart from these runs) each run also states
Result.host_ci_mps, and a second table gives its coverage: of the
long-run figure, and of the figure of the calibration's span around the
run.
"""
import argparse
import calendar
import dataclasses
import gzip
import datetime
import itertools
import json
import math
import os
import statistics
import sys
import time


import benchbpf
from benchbpf import analysis
from benchbpf.analysis import hostdrift
from benchbpf.results.result import Result
from benchbpf.results.stats import clopper_pearson

#: (label, benchmark, parameters, precision): the issue's characters.
CASES = (
    ("count-local", "count-local", {}, 0.02),
    ("trig-rawtp", "trig-rawtp", {}, 0.02),
    ("rb-libbpf", "rb-libbpf", {}, 0.10),
    ("rb-libbpf sampled", "rb-libbpf", {"rb_sampled": True}, 0.05),
    ("local-storage seq-get", "local-storage-cache-seq-get", {}, 0.02),
    ("bpf-hashmap-lookup", "bpf-hashmap-lookup", {}, 0.05),
)


def _loadavg():
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except OSError:
        return math.nan


def measure(args):
    runs = []
    cases = [c for c in CASES if not args.only or c[0] in args.only]
    for rnd in range(args.rounds):
        if args.until and time.time() >= args.until:
            print(f"stopped before round {rnd}: --until reached", flush=True)
            break
        for label, name, params, precision in cases:
            t0, began = time.monotonic(), time.time()
            r = benchbpf.run(name, precision=args.precision or precision, duration=args.cap,
                             **params)
            runs.append({"case": label, "kind": "precision", "round": rnd,
                         "wall_s": time.monotonic() - t0, "load": _loadavg(),
                         "began": began, "result": r.as_dict()})
            ci = r.mean_ci_mps
            shown = f"[{ci.low:10.3f}, {ci.high:10.3f}]" if ci else "[interval unknown]"
            print(f"{rnd:3d} {label:22s} {r.mean:10.3f} {shown} "
                  f"{r.stopped_by:9s} {len(r.runs()):3d} runs {runs[-1]['wall_s']:5.1f} s",
                  flush=True)
            if args.adjacent:
                # The figure of the same window: a plain run right after.
                a = benchbpf.run(name, warmup=1, duration=args.adjacent, **params)
                runs.append({"case": label, "kind": "adjacent", "round": rnd,
                             "load": _loadavg(), "result": a.as_dict()})
                print(f"    adjacent {a.mean:10.3f}", flush=True)
        if rnd % args.ref_every == args.ref_every - 1 or rnd == 0:
            for label, name, params, _ in cases:
                began = time.time()
                r = benchbpf.run(name, warmup=1, duration=args.ref_duration, **params)
                runs.append({"case": label, "kind": "reference", "round": rnd,
                             "load": _loadavg(), "began": began, "result": r.as_dict()})
                print(f"ref {label:22s} {r.mean:10.3f}", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"args": vars(args), "runs": runs}, f)
    return runs


def _precision_of(runs, label, default):
    """The precision the saved precision runs of `label` asked for."""
    for r in runs:
        if r["case"] == label and r["kind"] == "precision":
            return r["result"]["params"].get("precision", default)
    return default


def table(runs, args, prior_runs=()):
    lines = []
    loads = [r["load"] for r in runs]
    lines.append(f"Load average (1 min) during the runs: {min(loads):.1f}..{max(loads):.1f}.\n")
    window = []
    lines.append("| benchmark | precision | runs | long-run figure M/s (refs, their spread) "
                 "| covered | coverage (95 % CI) | pooled figure M/s | covered (pooled) "
                 "| stopped by precision | median wall s | median short runs "
                 "| median stated ± | spread of figures between runs (sd / mean) "
                 "| median stated standard error | overlapped another run |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, _, _, precision in CASES:
        precision = _precision_of(runs, label, precision)
        refs = [Result.from_dict(r["result"]).mean for r in runs
                if r["case"] == label and r["kind"] == "reference"]
        prec = [(Result.from_dict(r["result"]), r["wall_s"]) for r in runs
                if r["case"] == label and r["kind"] == "precision"]
        adjacent = _adjacent_coverage(runs, label)
        if adjacent:
            window.append(f"| {label} | {precision * 100:g} % | {adjacent} |")
        if not refs or not prec:
            continue
        truth = statistics.fmean(refs)
        spread = statistics.stdev(refs) / truth * 100 if len(refs) > 1 else math.nan
        prec = [(r, w) for r, w in prec if r.mean_ci_mps is not None] + \
            [(r, w) for r, w in prec if r.mean_ci_mps is None]
        covered = sum(1 for r, _ in prec if r.mean_ci_mps is not None
                      and r.mean_ci_mps.low <= truth <= r.mean_ci_mps.high)
        lo, hi = clopper_pearson(covered, len(prec))
        # Every load of the session alike: the reference runs and each short run.
        pooled = statistics.fmean(refs + [s.mean for r, _ in prec for s in r.runs()])
        pooled_cov = sum(1 for r, _ in prec if r.mean_ci_mps is not None
                         and r.mean_ci_mps.low <= pooled <= r.mean_ci_mps.high)
        plo, phi = clopper_pearson(pooled_cov, len(prec))
        by_prec = sum(1 for r, _ in prec if r.stopped_by == "precision")
        wall = statistics.median(w for _, w in prec)
        nruns = statistics.median(len(r.runs()) for r, _ in prec)
        half = statistics.median(r.precision_reached for r, _ in prec
                                 if r.precision_reached is not None) * 100
        overlapped = sum(1 for r, _ in prec if r.metadata.get("concurrent_runs"))
        figures = [r.mean for r, _ in prec]
        between = statistics.stdev(figures) / statistics.fmean(figures) * 100 \
            if len(figures) > 1 else math.nan
        # A stated half-width h over g groups is t(0.975, g - 1) standard errors.
        stated_se = statistics.median(
            r.mean_ci_mps.standard_error / abs(r.mean_ci_mps.mean) for r, _ in prec
            if r.mean_ci_mps is not None) * 100
        lines.append(f"| {label} | {precision * 100:g} % | {len(prec)} | {truth:.3f} "
                     f"({len(refs)}, {spread:.1f} %) | {covered} | "
                     f"{covered / len(prec) * 100:.0f} % ({lo * 100:.0f}..{hi * 100:.0f} %) | "
                     f"{pooled:.3f} | {pooled_cov / len(prec) * 100:.0f} % "
                     f"({plo * 100:.0f}..{phi * 100:.0f} %) | "
                     f"{by_prec} | {wall:.1f} | {nruns:g} | {half:.2f} % | {between:.2f} % | "
                     f"{stated_se:.2f} % | {overlapped} |")
    live = any("history" in (Result.from_dict(r["result"]).metadata.get("host_drift") or {})
               for r in runs if r["kind"] == "precision")
    host = _host_table(runs, title=(
        "As each run stated it (Result.host_ci_mps: the host drift and the history of "
        "earlier runs the run itself found, live):") if live else None)
    if host:
        lines += ["", host]
        histories = [((), "With the host drift and the history of this session's earlier "
                          "precision runs of each benchmark:")]
        if prior_runs:
            histories.append((prior_runs, "With the host drift and the history of the "
                              f"earlier sessions ({', '.join(args.prior)}) and this one's earlier runs:"))
        for prior, title in histories:
            taken = _with_history(runs, prior)
            lines += ["", _host_table(runs, lambda c, t, r: taken.get((c, t)), title)]
        if args.compare:
            lines += ["", _compare_table(runs, prior_runs)]
    if window:
        lines += ["", "Against the figure of the same window (a plain run right after each "
                  "precision run):", "",
                  "| benchmark | precision | covered the adjacent run (95 % CI) |",
                  "|---|---|---|"] + window
    return "\n".join(lines) + "\n"


def _with_history(runs, prior=()):
    """{(case, began): Result} for the precision runs taken with a
    calibration, as the runner makes them with a history of precision runs
    (_runner._with_history): metadata["host_drift"] gains the History of the
    earlier precision runs of the same case in `prior` (an earlier session's
    saved runs) and in `runs`, each entered when it ended."""
    ended = sorted(((r["began"] + r["wall_s"], r) for r in list(prior) + list(runs)
                    if r["kind"] == "precision" and "began" in r),
                   key=lambda x: x[0])
    out, seen = {}, {}
    mine = {id(r) for r in runs}
    for when, r in ended:
        result = Result.from_dict(r["result"])
        ci, drift = result.mean_ci_mps, result.metadata.get("host_drift")
        if ci is None:
            continue
        if id(r) in mine and drift is not None:
            earlier = [x for x in seen.get(r["case"], ())
                       if 0 <= when - x[0] <= hostdrift.HISTORY_HOURS * 3600]
            history = hostdrift.history_of(earlier)
            drift = {k: v for k, v in drift.items() if k != "history"}
            if history is not None:
                drift["history"] = history.as_dict()
            out[(r["case"], r["began"])] = dataclasses.replace(
                result, metadata={**result.metadata, "host_drift": drift})
        seen.setdefault(r["case"], []).append((when, ci.mean, ci.standard_error))
    return out


def _young(result):
    """Whether a precision run warns that its host interval rests on a young
    history (HostDrift.young_history); a history saved without its span
    (before it was kept) counts by its minutes since..until."""
    drift = result.host_drift
    h = drift.history
    if h is not None and h.span_s is None:
        def epoch(text):
            return calendar.timegm(time.strptime(text, "%Y-%m-%d %H:%M UTC"))
        h = dataclasses.replace(h, span_s=epoch(h.until) - epoch(h.since))
        drift = dataclasses.replace(drift, history=h)
    return drift.young_history() is not None


def _host_table(runs, taken_as=None, title=None):
    """Coverage of Result.host_ci_mps (the run's interval widened by the
    machine's host drift; taken_as(case, began, result) gives the Result
    with the history it stands on when not the result itself), for runs
    taken with a calibration: against the session's figure (the mean of
    every other load of the benchmark in the session: the other precision
    runs' short runs and the reference runs), and against the figure of the
    calibration's span around each run (those of them that began within
    half that span of the run's start); and the session's figure again, by
    the runs that did not warn of a young history."""
    taken_as = taken_as or (lambda case, began, r: r)
    lines = []
    for label, _, _, precision in CASES:
        precision = _precision_of(runs, label, precision)
        prec = [(r["began"], Result.from_dict(r["result"])) for r in runs
                if r["case"] == label and r["kind"] == "precision" and "began" in r]
        prec = [(t, r, taken_as(label, t, r)) for t, r in prec]
        prec = [(t, r, h.host_ci_mps, _young(h)) for t, r, h in prec if h is not None]
        prec = [(t, r, ci, young) for t, r, ci, young in prec if ci is not None]
        refs = [(r["began"], Result.from_dict(r["result"]).mean) for r in runs
                if r["case"] == label and r["kind"] == "reference" and "began" in r]
        if not prec or not refs:
            continue
        drift = prec[0][1].host_drift
        loads = [(t + s, x.mean) for t, r, _, _ in prec
                 for s, x in zip(r.metadata["precision_run_starts_s"], r.runs())] + refs
        covered = near = mature = mature_covered = 0
        for t, r, ci, young in prec:
            # The figure of every other load of the session, or of those within
            # half the calibration's span: the reference runs and the short runs
            # of the other precision runs, hundreds of loads taken in turn.
            own = {t + s for s in r.metadata["precision_run_starts_s"]}
            others = [(u, m) for u, m in loads if u not in own]
            session = statistics.fmean(m for _, m in others)
            around = statistics.fmean(m for u, m in others if abs(u - t) <= drift.span_s / 2)
            covered += ci.low <= session <= ci.high
            near += ci.low <= around <= ci.high
            if not young:
                mature += 1
                mature_covered += ci.low <= session <= ci.high
        lo, hi = clopper_pearson(covered, len(prec))
        nlo, nhi = clopper_pearson(near, len(prec))
        half = statistics.median(ci.relative_half_width for _, _, ci, _ in prec) * 100
        own_half = statistics.median(r.precision_reached for _, r, _, _ in prec) * 100
        if mature:
            mlo, mhi = clopper_pearson(mature_covered, mature)
            not_young = f"{mature_covered}/{mature} ({mlo * 100:.0f}..{mhi * 100:.0f} %)"
        else:
            not_young = "none"
        lines.append(f"| {label} | {precision * 100:g} % | {len(prec)} | {own_half:.2f} % | "
                     f"{half:.2f} % | {covered} ({lo * 100:.0f}..{hi * 100:.0f} %) | "
                     f"{near} ({nlo * 100:.0f}..{nhi * 100:.0f} %) | {len(prec) - mature} | "
                     f"{not_young} |")
    if not lines:
        return ""
    return "\n".join([
        title or f"With the host drift: {drift}", "",
        *([f"(host drift: {drift})", ""] if title else []),
        "| benchmark | precision | runs | median stated \u00b1 (own) | median \u00b1 with "
        "host drift | covered the session's figure (95 % CI) | covered the figure of "
        f"the {drift.span_s / 60:g} min around it (95 % CI) | warned: young history "
        "| not warned: covered the session's figure (95 % CI) |",
        "|---|---|---|---|---|---|---|---|---|"] + lines)


def _scaled(result, factor):
    """result with every sample's hits times factor: a change of known size
    on real runs' noise."""
    return dataclasses.replace(result, samples=tuple(
        dataclasses.replace(x, hits=round(x.hits * factor)) for x in result.samples))


def _compare_table(runs, prior=(), drop=0.10):
    """compare() between two precision runs of one benchmark from different
    rounds, each as the runner makes it with a history: how often it calls
    the same benchmark "significant" (false alarms), with the test across
    runs alone and with the host test; and how often it finds a drop of
    `drop` put into the later run's samples."""
    taken = _with_history(runs, prior)
    lines = []
    for label, _, _, _ in CASES:
        mine = sorted((t, r) for (c, t), r in taken.items() if c == label)
        pairs = [(a, b) for (i, (_, a)), (j, (_, b)) in
                 itertools.combinations(enumerate(mine), 2)]
        if not pairs:
            continue
        across = alarms = found_across = found = 0
        for a, b in pairs:
            same = benchbpf.compare(a, b)
            across += same.test().verdict == analysis.SIGNIFICANT
            alarms += same.significant
            slower = benchbpf.compare(a, _scaled(b, 1 - drop))
            found_across += slower.test().verdict == analysis.SIGNIFICANT
            found += slower.significant
        n = len(pairs)
        lo, hi = clopper_pearson(alarms, n)
        lines.append(f"| {label} | {n} | {across / n * 100:.0f} % | {alarms / n * 100:.1f} % "
                     f"({lo * 100:.1f}..{hi * 100:.1f} %) | {found_across / n * 100:.0f} % | "
                     f"{found / n * 100:.0f} % |")
    if not lines:
        return ""
    return "\n".join([
        "compare() between two precision runs of one benchmark taken in different rounds "
        "(every pair), each with the host drift and its history as above; and with "
        f"a {drop * 100:g} % drop put into the later run's samples:", "",
        "| benchmark | pairs | significant: across runs alone | significant: with the host "
        "test (95 % CI) | drop found: across runs alone | drop found: with the host test |",
        "|---|---|---|---|---|---|"] + lines)


def _adjacent_coverage(runs, label):
    """"k of n (lo..hi %)": precision runs of `label` whose interval holds the
    plain run taken right after them; "" when there are none."""
    pairs = [(Result.from_dict(p["result"]), Result.from_dict(a["result"]))
             for p, a in zip(runs, runs[1:])
             if p["case"] == label and p["kind"] == "precision" and a["kind"] == "adjacent"
             and a["case"] == label]
    pairs = [(p, a) for p, a in pairs if p.mean_ci_mps is not None]
    if not pairs:
        return ""
    k = sum(1 for p, a in pairs if p.mean_ci_mps.low <= a.mean <= p.mean_ci_mps.high)
    lo, hi = clopper_pearson(k, len(pairs))
    return f"{k} of {len(pairs)} ({lo * 100:.0f}..{hi * 100:.0f} %)"


def _saved_runs(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)["runs"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--cap", type=float, default=10,
                    help="duration: the time measured over all short runs, s")
    ap.add_argument("--ref-every", type=int, default=4)
    ap.add_argument("--ref-duration", type=float, default=5)
    ap.add_argument("--adjacent", type=float, default=0,
                    help="after each precision run, a plain run of this many seconds: "
                         "does the interval hold the figure of its own window?")
    ap.add_argument("--only", action="append", help="a case label (repeatable)")
    ap.add_argument("--until", type=float, default=None,
                    help="start no round after this time (seconds since the epoch)")
    ap.add_argument("--host-drift", default=None,
                    help="a host drift calibration (benchbpf host-drift -o FILE) the runs "
                         "take their widened interval from")
    ap.add_argument("--json")
    ap.add_argument("--from", dest="source")
    ap.add_argument("--compare", action="store_true",
                    help="also tabulate compare() between the precision runs (slow)")
    ap.add_argument("--prior", action="append", default=[],
                    help="an earlier session's saved runs (--json; repeatable): their "
                         "precision runs join the history the widened intervals stand on")
    ap.add_argument("--precision", type=float, default=None,
                    help="every case's precision (default: each its own, CASES)")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.host_drift:
        os.environ[benchbpf.hostdrift.ENV_PATH] = os.path.abspath(args.host_drift)
    prior_runs = [r for path in args.prior for r in _saved_runs(path)]
    if args.source:
        runs = _saved_runs(args.source)
    else:
        started = datetime.datetime.now(datetime.timezone.utc)
        runs = measure(args)
        print(f"started {started:%Y-%m-%d %H:%M} UTC", file=sys.stderr)
    text = table(runs, args, prior_runs)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
