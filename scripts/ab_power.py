#!/usr/bin/env python3
"""How often `benchbpf ab` calls a difference that is not there, and how often
it finds one that is, on this machine: results/ab-power-2cpu.md.

    python3 scripts/ab_power.py --out results/ab-power-2cpu.jsonl [--budget 120]
    python3 scripts/ab_power.py --summarize results/ab-power-2cpu.jsonl > table.md
    python3 scripts/ab_power.py --truth-only --out results/ab-power-truth-2cpu.jsonl
    python3 scripts/ab_power.py --summarize results/ab-power-2cpu.jsonl \
        --truth results/ab-power-truth-2cpu.jsonl

Every comparison is a real one, run as a user would run it, one after
another; each writes a JSON line as it ends, so the file holds whatever has
finished.  Comparisons of all the cells are shuffled together (a fixed
seed), so that the machine's slow and fast hours fall on every cell alike:

- truth: each known slowdown measured at length (60 rounds, never stopped
  early), so that power is judged against the slowdown that really is;
- false: identical sides (count-local, trig-rawtp, rb-libbpf interleaved;
  count-local and selftest in a duet): every "slower" or "faster" is a false
  alarm;
- power: B slower by a known amount, in user space (count-local's
  work_per_hit 40 against 40 + k) and on the BPF path (selftest's bpf_work
  0 against k), each by ab interleaved, ab in a duet, and today's
  `benchbpf compare` of two `--repeat` series of default runs (A's runs,
  then B's), every method given the same wall time (--budget).

The first pass holds the false-alarm comparisons and the 5 % cells; then
the truth cells, and the 10 %, 25 % and 2 % cells in that order, so that a
shortened session still answers the goal with whole cells.

A campaign of many hours runs in stages (results/ab-power-robust-2cpu.md):
each comparison has a key (its cell, its number in the cell, the rule and
whether disturbed rounds were set aside), a run skips the keys its --out
file already holds, --cells takes only the cells named (shell patterns,
--list-cells shows them), --hours stops starting new comparisons after a
stage's time; --rule runs each ab comparison under each rule named, one
after the other.  Calibration of the knobs first:

    python3 scripts/ab_power.py --calibrate --out results/ab-knobs-2cpu.jsonl
    python3 scripts/ab_power.py --summarize results/ab-knobs-2cpu.jsonl \
        --write-knobs results/ab-knobs-2cpu.json
    python3 scripts/ab_power.py --knobs results/ab-knobs-2cpu.json --full-series \
        --cells 'false:*' --hours 4 --out results/ab-power-robust-live-2cpu.jsonl

--full-series runs each ab comparison once, to the end of its budget, and
--summarize replays every rule on its rounds, with and without disturbed
rounds set aside, at its budget and at each shorter one of REPLAY_BUDGETS:
the rounds a comparison takes do not depend on its rule, only where it
stops does (results/ab-power-robust-2cpu.md, "Amended").  With
--until-settled a series stops as soon as none of those replays can change
(settled()): a 10 % cell decides in some 40 s, and 300 s of rounds past
that would only be more of the same.

--busy PROFILE makes the machine busy during each comparison on a seeded
schedule (scripts/_busy.py), records which rounds the busy windows covered,
and --summarize sets the disturbed-round rule against them (the method:
results/ab-power-robust-2cpu.md, "Stage 4")."""
import argparse
import contextlib
import fnmatch
import inspect
import json
import math
import os
import random
import statistics
import sys
import time
import warnings
import zlib

import _busy
import _record
import benchbpf
from benchbpf import ab as ab_module
from benchbpf.results.stats import clopper_pearson
from benchbpf.tools.cli import check_command

#: The slowdowns: nominal size -> (A, B) for each path.  Their true size is
#: what the truth cells measure; the nominal one only names the cell.
KNOBS = {
    "user": {0.02: ("count-local --work-per-hit 40", "count-local --work-per-hit 41"),
             0.05: ("count-local --work-per-hit 40", "count-local --work-per-hit 42"),
             0.10: ("count-local --work-per-hit 40", "count-local --work-per-hit 44"),
             0.25: ("count-local --work-per-hit 40", "count-local --work-per-hit 50")},
    "bpf": {0.02: ("selftest", "selftest --bpf-work 10"),
            0.05: ("selftest", "selftest --bpf-work 25"),
            0.10: ("selftest", "selftest --bpf-work 50"),
            0.25: ("selftest", "selftest --bpf-work 150")},
}
IDENTICAL = {"interleaved": ("count-local", "trig-rawtp", "rb-libbpf", "selftest"),
             "duet": ("count-local", "selftest")}
TRUTH_ROUNDS = 60
#: What --calibrate measures at length, (A, B) pairs per path: settings
#: around the 2, 5 and 10 % the campaign needs, on each machine it ran on
#: (--cells picks a machine's; a knob's size belongs to its machine).
#: count-local's steps from a base of 40 come in about 2.5-5 % each, so
#: bases of 60 and 100 give finer ones; selftest's bpf_work_every spreads
#: bpf_work's steps over hits, finer than one step where the first steps
#: hide in the syscall.  On the Intel VM of stage 2c a BPF step costs 3-6x
#: what it does on the AMD one: bpf_work 5-20 are its candidates.
CANDIDATES = {
    "user": [("count-local --work-per-hit 40", f"count-local --work-per-hit {k}")
             for k in (41, 42, 44, 45, 43)] +
            [("count-local --work-per-hit 100", f"count-local --work-per-hit {k}")
             for k in (101, 102)] +
            [("count-local --work-per-hit 60", "count-local --work-per-hit 61")],
    "bpf": [("selftest", f"selftest --bpf-work {k}") for k in (25, 35, 50, 70, 90)] +
           [("selftest", f"selftest --bpf-work {n} --bpf-work-every {k}")
            for n, k in ((50, 2), (100, 2), (100, 3), (100, 4))] +
           [("selftest", f"selftest --bpf-work {k}") for k in (5, 8, 10, 12, 15, 20)],
}
#: --set-aside-disturbed: the ways each ab comparison runs.
SET_ASIDE = {"no": (False,), "yes": (True,), "both": (False, True)}
#: The "rule" of a comparison taken with --full-series: it runs to the end
#: of its budget, and --summarize replays every rule on its rounds.
SERIES = "series"
#: The slowdowns the campaign's cells are calibrated to (--write-knobs).
TARGETS = (0.02, 0.05, 0.10)


def _cell(task):
    """The task's cell as --cells matches it: "false:interleaved:count-local",
    "truth:bpf:0.05", "power:duet:user:0.05", "calib:bpf:selftest --bpf-work 35"."""
    if task["kind"] == "false":
        return f"false:{task['method']}:{task['a']}"
    if task["kind"] == "calib":
        return f"calib:{task['path']}:{task['b']}"
    if task["kind"] == "truth":
        return f"truth:{task['path']}:{task['effect']:g}"
    return f"power:{task['method']}:{task['path']}:{task['effect']:g}"


def _keyed(tasks, rules, set_aside, full_series=False):
    """Each task with its cell and key, one per rule and per way of
    set_aside (False, True) where a rule decides (ab's false and power
    cells), in order: the same arguments give the same
    keys, whatever part of them a stage runs.  full_series: one comparison
    per task (rule "series"), every rule replayed on its rounds."""
    seen, out = {}, []
    for task in tasks:
        cell = _cell(task)
        n = seen[cell] = seen.get(cell, 0) + 1
        if task["method"] == "compare":
            variants = [(None, False)]
        elif task["kind"] in ("false", "power") and full_series:
            variants = [(SERIES, False)]
        elif task["kind"] in ("false", "power"):
            variants = [(rule, aside) for rule in rules for aside in set_aside]
        else:   # truth and calibration cells: fixed rounds, read by their median
            variants = [("median", False)]
        for rule, aside in variants:
            aside = bool(aside) and task["method"] != "compare"
            out.append(dict(task, cell=cell, rule=rule, set_aside_disturbed=aside,
                            index=len(out),
                            key=f"{cell}#{n}|{rule}|{'aside' if aside else 'all'}"))
    return out


def _calibration_tasks():
    return [dict(kind="calib", method="interleaved", path=path, a=a, b=b)
            for path, pairs in CANDIDATES.items() for a, b in pairs]


def _tasks(n_false, n_false_duet, n_power, n_compare):
    first, rest = [], []
    for mode, names in IDENTICAL.items():
        for name in names:
            n = n_false_duet if mode == "duet" else n_false
            first += [dict(kind="false", method=mode, a=name, b=name)] * n
    for path, levels in KNOBS.items():
        for effect, (a, b) in levels.items():
            rest.append(dict(kind="truth", method="interleaved", path=path, effect=effect,
                             a=a, b=b))
            for method in ("interleaved", "duet"):
                cell = dict(kind="power", method=method, path=path, effect=effect, a=a, b=b)
                (first if effect == 0.05 else rest).extend([cell] * n_power)
            if effect in (0.05, 0.10):
                cell = dict(kind="power", method="compare", path=path, effect=effect, a=a, b=b)
                (first if effect == 0.05 else rest).extend([cell] * n_compare)
    rng = random.Random(2026)
    rng.shuffle(first)
    rng.shuffle(rest)
    # Among the rest: the truth cells first (the power cells are judged by them),
    # then the slowdowns by how much they say, 10 %, 25 %, 2 %; each shuffled.
    order = {"truth": 0, 0.10: 1, 0.25: 2, 0.02: 3}
    rest.sort(key=lambda t: order["truth"] if t["kind"] == "truth" else order[t["effect"]])
    return first + rest


def _loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def _host(result):
    """What the host did to one side's run, for the record (no watch cost)."""
    d = result.disturbances
    return None if d is None else {k: v for k, v in d.items() if k != "watch_ns_per_sample"}


class _Settled(Exception):
    """Raised by on_round to end a --full-series comparison whose every
    replay is settled; `fields` are its record's fields up to there.  ab
    frees all it loaded on the way out (its runner's context), as on Ctrl-C."""

    def __init__(self, fields):
        super().__init__("settled")
        self.fields = fields


def _ab(task, budget, truth_rounds=TRUTH_ROUNDS, on_round=None, until_settled=False):
    """One ab comparison of the task, as a record's fields.  until_settled
    (a --full-series task): it stops after the first round at which every
    replay of its rounds is settled (settled()), stopped_by "settled"."""
    aside = bool(task.get("set_aside_disturbed"))
    if until_settled and task.get("rule") == SERIES:
        def watched(rnd, so_far):
            if on_round is not None:
                on_round(rnd, so_far)
            fields = _fields(so_far)
            if settled(dict(task, budget_s=budget, **fields)):
                raise _Settled(fields)
        try:
            return _ab(task, budget, truth_rounds, watched)
        except _Settled as e:
            return dict(e.fields, stopped_by="settled")
    if task["kind"] in ("truth", "calib"):
        r = benchbpf.ab(task["a"], task["b"], budget=None, max_rounds=truth_rounds,
                        min_rounds=truth_rounds, rule=task.get("rule") or ab_module.RULE,
                        threshold=ab_module.MIN_THRESHOLD, precision=ab_module.MIN_PRECISION,
                        progress=False, set_aside_disturbed=aside, on_round=on_round)
    elif task.get("rule") == SERIES:
        # No verdict stops it (min_rounds past any budget): the rounds a
        # comparison takes do not depend on its rule, so each rule's stop is
        # replayed on them (replay_series).
        r = benchbpf.ab(task["a"], task["b"], mode=task["method"], budget=budget,
                        rule=ab_module.RULE, progress=False, different_benchmarks=False,
                        min_rounds=ab_module.MAX_ROUNDS, on_round=on_round)
    else:
        r = benchbpf.ab(task["a"], task["b"], mode=task["method"], budget=budget,
                        rule=task.get("rule") or ab_module.RULE, progress=False,
                        different_benchmarks=False, set_aside_disturbed=aside,
                        on_round=on_round)
    return _fields(r)


def _fields(r):
    """What a record keeps of an ABResult r (finished or so far)."""
    logs = [math.log(x) for x in r.ratios]
    return dict(verdict=r.verdict, beyond=r.beyond_threshold, ratio=r.ratio, low=r.low,
                high=r.high, rounds=len(r.rounds), wall_s=r.wall_s, measured_s=r.measured_s,
                stopped_by=r.stopped_by, seed=r.seed, round_log_ratios=logs,
                planned_rounds=r.planned_rounds, threshold=r.threshold,
                precision=r.precision,
                round_starts_s=[x.started_s for x in r.rounds], rule=r.rule, alpha=r.alpha,
                round_index=[x.index for x in r.rounds],
                set_aside_index=[x.index for x in r.set_aside],
                round_disturbed=[list(x.disturbed) for x in r.rounds],
                round_host=[[_host(x.a), _host(x.b)] for x in r.rounds],
                round_cpu_share_median=[[x.a_cpu_share_median, x.b_cpu_share_median]
                                        for x in r.rounds],
                set_aside_log_ratios=[math.log(x.ratio) for x in r.set_aside if x.ratio > 0],
                set_aside_disturbed_why=[list(x.disturbed) for x in r.set_aside],
                disturbed=r.disturbances)


def _repeat(side, seconds):
    """Default-length runs of one side, back to back, until `seconds` are used."""
    name, options = check_command(side.split())
    runs, began = [], time.monotonic()
    while not runs or time.monotonic() - began + (time.monotonic() - began) / len(runs) \
            <= seconds:
        runs.append(benchbpf.run(name, **options))
    return runs


def _compare(task, budget):
    began = time.monotonic()
    base = _repeat(task["a"], budget / 2)
    new = _repeat(task["b"], budget - (time.monotonic() - began))
    c = benchbpf.compare(base, new, different_params=True)
    verdict = "undecided"
    if c.significant:
        verdict = "slower" if c.figure_change_pct < 0 else "faster"
    return dict(verdict=verdict, change_pct=c.change_pct, p_value=c.p_value(),
                runs=(len(base), len(new)), wall_s=time.monotonic() - began,
                measured_s=sum(r.duration_s for r in base + new))


def _planned(args):
    """Every task the arguments ask for, keyed, before --cells picks some."""
    if args.knobs:
        with open(args.knobs) as f:
            KNOBS.update({path: {float(e): tuple(sides) for e, sides in levels.items()}
                          for path, levels in json.load(f).items()})
    if args.calibrate:
        return _keyed(_calibration_tasks(), ("median",), (False,))
    tasks = _tasks(args.n_false, args.n_false_duet, args.n_power, args.n_compare)
    if args.truth_only:
        tasks = [t for t in tasks if t["kind"] == "truth"]
    tasks = _keyed(tasks, args.rule, SET_ASIDE[args.set_aside_disturbed], args.full_series)
    if args.busy:
        # Keyed apart from the quiet machine's comparisons of the same cells.
        tasks = [dict(t, busy=args.busy, key=f"busy={args.busy}|{t['key']}") for t in tasks]
    return tasks


def _picked(tasks, patterns):
    return [t for t in tasks if not patterns or any(fnmatch.fnmatchcase(t["cell"], p)
                                                     for p in patterns)]


#: What a row says of the machine that ran it: a knob's size and a rule's
#: rates belong to it (stage 2c read the AMD VM's BPF knobs 3-6x larger on
#: an Intel one).
MACHINE_KEYS = ("cpu_model", "nr_cpus", "kernel_release")


def _machine():
    fp = benchbpf.results.fingerprint.fingerprint()
    return {k: fp[k] for k in MACHINE_KEYS}


def other_machines(rows, here):
    """The machines, other than `here`, that rows name (rows of records
    taken before rows named theirs name none)."""
    out = []
    for r in rows:
        m = r.get("machine")
        if m is not None and m != here and m not in out:
            out.append(m)
    return out


def _one_machine(path, rows):
    """The machine the rows of the record at path name, or None: refused
    where they name two."""
    named = other_machines(rows, None)
    if len(named) > 1:
        raise ValueError(f"{path}: its rows name {len(named)} machines: "
                         + "; ".join(map(_machine_text, named)))
    return named[0] if named else None


def _packaged_machine(m):
    """What a packaged entry holds of machine m: CPU model, CPU count and
    kernel version (its build left out, as a verdict matches by CPU)."""
    return m["cpu_model"], m["nr_cpus"], m["kernel_release"].split("-")[0]


def _machine_text(m):
    return f"{m['cpu_model']}, {m['nr_cpus']} CPUs, kernel {m['kernel_release']}"


def run(args):
    every = _planned(args)
    tasks = _picked(every, args.cells)
    done, here = set(), _machine()
    if os.path.exists(args.out):
        with open(args.out) as f:
            held = [json.loads(line) for line in f if line.strip()]
        done = {r.get("key") for r in held}
        others = other_machines(held, here)
        if others:
            sys.exit(f"--out {args.out}: its rows were measured on "
                     f"{_machine_text(others[0])}, this machine is {_machine_text(here)}; "
                     "a record holds one machine's comparisons: name another --out "
                     "(and calibrate --knobs here)")
    print(f"measured on {_machine_text(here)}", file=sys.stderr)
    print(f"{len(tasks)} comparisons planned, {sum(t['key'] in done for t in tasks)} "
          f"already in {args.out}", file=sys.stderr)
    warnings.simplefilter("ignore")
    until = time.time() + args.hours * 3600 if args.hours else math.inf
    for task in tasks:
        i = task["index"]
        if task["key"] in done:
            continue
        if time.time() > until:
            print("stopping: --hours reached", file=sys.stderr)
            break
        load = _loadavg()
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        spans, marks = {}, []

        def on_round(rnd, so_far):
            # Only the busy cells' fields use it. ab's clock starts at its
            # own start: where that lies on ours.
            marks.append(time.monotonic() - so_far.wall_s)
            spans[rnd.index] = (rnd.started_s, so_far.wall_s)
        busy = _busy.Busy(task["busy"], zlib.crc32(task["key"].encode())) \
            if task.get("busy") else contextlib.nullcontext()
        try:
            with busy:
                got = _compare(task, args.budget) if task["method"] == "compare" \
                    else _ab(task, args.budget, args.truth_rounds,
                             on_round if task.get("busy") else None, args.until_settled)
        except benchbpf.BenchmarkError as e:
            got = dict(error=str(e))
        if task.get("busy"):
            got.update(_busy_fields(busy, got, spans, marks))
        line = dict(task, started=started, load=load, budget_s=args.budget, machine=here,
                    **got)
        with open(args.out, "a") as f:
            f.write(json.dumps(line) + "\n")
        print(f"{i + 1}/{len(every)} {task['key']} {task['b']!r}: "
              f"{got.get('verdict', got.get('error'))} in {got.get('wall_s', 0):.0f} s",
              file=sys.stderr, flush=True)


def _busy_fields(busy, got, spans, marks):
    """What a comparison on a busy machine records of the busy windows: them,
    from the comparison's start (ab's; the spinners' for compare), and per
    round kept and set aside the seconds they covered of it."""
    began = statistics.median(marks) if marks else busy.t0
    windows = [(s - began, e - began) for s, e in busy.windows()]
    out = dict(busy_seed=busy.seed,
               busy_windows_s=[[round(s, 3), round(e, 3)] for s, e in windows])
    for key, index in (("round_busy_s", "round_index"), ("set_aside_busy_s", "set_aside_index")):
        if index in got:
            out[key] = [round(_busy.overlap(spans[i], windows), 3) for i in got[index]]
    return out


# ---------------------------------------------------------------- summary

def _pct(k, n):
    lo, hi = clopper_pearson(k, n)
    return f"{k}/{n} ({100 * k / n:.1f} %, {100 * lo:.1f}..{100 * hi:.1f} %)"


def _records(path, truth_path=None):
    """The record's rows, and those of its comparisons that ran; the truth
    cells of truth_path (retaken at a fixed number of rounds) replace the
    record's own."""
    def read(p):
        return [json.loads(line) for line in open(p) if line.strip()]
    rows = read(path)
    ok = [r for r in rows if "error" not in r]
    if truth_path:
        # A calibration record's cells are the truth of the power cells that
        # run their sides (--knobs took them from it).
        cells = {(r["a"], r["b"]): (r["path"], r["effect"]) for r in ok if r["kind"] == "power"}
        truth = [dict(r, kind="truth", path=cells[r["a"], r["b"]][0],
                      effect=cells[r["a"], r["b"]][1]) if r["kind"] == "calib" else r
                 for r in read(truth_path) if "error" not in r
                 and (r["kind"] != "calib" or (r["a"], r["b"]) in cells)]
        ok = [r for r in ok if r["kind"] != "truth"] + truth
    return rows, ok


#: The budgets each --full-series comparison is replayed at, s (those up
#: to its own, and its own).
REPLAY_BUDGETS = (60.0, 300.0)


def replay_series(row, rule, set_aside, budget):
    """What ab under `rule`, with `budget` s, would have concluded from the
    rounds of a --full-series comparison (its row): they are the rounds it
    would have taken, in order, so it stops where the rule decides or where
    ab's budget check on the rounds' own times stops it.  set_aside: rounds
    the host disturbed are not fed to the rule and take their time, as
    ab's set_aside_disturbed does.  A row as a comparison's, or None where
    the series is shorter than the budget asks."""
    if budget > row["budget_s"]:
        return None
    logs, disturbed = row["round_log_ratios"], row["round_disturbed"]
    ends = row["round_starts_s"][1:] + [row["wall_s"]]
    taken = ab_module.budget_rounds(ends, budget)
    kept = [i for i in range(taken) if not (set_aside and disturbed[i])]
    nominal = ab_module.round_seconds(
        row["method"], ab_module.DUET_WARMUP_S if row["method"] == "duet" else
        ab_module.WARMUP, ab_module.DURATION_S)
    planned = ab_module.planned_rounds(nominal, budget)
    xs = [logs[i] for i in kept]
    settings = (rule, row["alpha"], planned, row["threshold"], row["precision"])
    verdict, beyond, used, (ratio, low, high) = ab_module.replay(xs, *settings)
    # Decided on its last kept round too, when one more would not be fed.
    decided = used < len(xs) or (xs and ab_module.replay(xs + [0.0], *settings)[2] == used)
    last = kept[used - 1] if decided and used else taken - 1
    return dict(row, rule=rule, set_aside_disturbed=set_aside, budget_s=budget,
                verdict=verdict, beyond=beyond, ratio=ratio, low=low, high=high,
                rounds=last + 1, wall_s=ends[last], planned_rounds=planned,
                measured_s=row["measured_s"] * ends[last] / row["wall_s"],
                stopped_by="decided" if decided else "budget",
                set_aside=sum(1 for i in range(last + 1) if set_aside and disturbed[i]))


def settled(row):
    """Whether every replay of a --full-series comparison's rounds so far
    (row, as its record's) is final: each rule, with and without disturbed
    rounds set aside, at each budget _replayed() reads it at, has decided,
    or that budget's check has stopped it before the last round.  More
    rounds would change none of these verdicts, so a comparison stopped
    here (--until-settled) replays as the one run to its budget would."""
    ends = row["round_starts_s"][1:] + [row["wall_s"]]
    for budget in _replay_budgets(row):
        if budget < row["budget_s"] and ab_module.budget_rounds(ends, budget) < len(ends):
            continue
        if any(replay_series(row, rule, aside, budget)["stopped_by"] != "decided"
               for rule in ab_module.RULES for aside in (False, True)):
            return False
    return True


def _replay_budgets(row):
    return sorted({b for b in REPLAY_BUDGETS if b <= row["budget_s"]} | {row["budget_s"]})


def _is_series(r):
    """Whether a row is a --full-series comparison (its rule field is the
    one ab ran under; its key names it a series)."""
    return f"|{SERIES}|" in r.get("key", "")


def _replayed(rows):
    """The record's rows, each --full-series comparison replaced by its
    replays: every rule, with and without disturbed rounds set aside, at each
    of REPLAY_BUDGETS up to its own and at its own."""
    out = []
    for r in rows:
        if not _is_series(r) or "error" in r:
            out.append(r)
            continue
        out += [x for rule in ab_module.RULES for aside in (False, True)
                for b in _replay_budgets(r)
                if (x := replay_series(r, rule, aside, b)) is not None]
    return out


def _variant(r):
    """The rule and whether disturbed rounds were set aside (records from
    before either: the mean rule, none set aside)."""
    return r.get("rule") or "mean", bool(r.get("set_aside_disturbed"))


def _disturbed_share(cell):
    """"k/n" of the cell's rounds the host disturbed, or "-" before records said."""
    said = [why for r in cell for why in r.get("round_disturbed") or ()]
    if not any("round_disturbed" in r for r in cell):
        return "-"
    return f"{sum(1 for why in said if why)}/{len(said)}"


def _setting(r):
    """What a comparison's rates belong to: (rule, set aside, budget, busy
    profile or ""). A busy profile is a setting of its own, never pooled
    with a quiet machine's or another profile's."""
    return (*_variant(r), r["budget_s"], r.get("busy") or "")


def summarize(path, truth_path=None):
    """The record's tables: calibration cells, then per rule (and with or
    without disturbed rounds set aside) the false alarms and the power."""
    rows, ok = _records(path, truth_path)
    series = [r for r in ok if _is_series(r)]
    quiet = [r for r in ok if r["kind"] in ("false", "power") and not r.get("busy")
             and r.get("round_host")]
    rows, ok = _replayed(rows), _replayed(ok)
    calib = _calibration_table([r for r in ok if r["kind"] == "calib"])
    rows, ok = ([r for r in x if r["kind"] != "calib"] for x in (rows, ok))
    if not rows:
        return calib
    variants = sorted({_setting(r) for r in ok
                       if r["kind"] in ("false", "power") and r["method"] != "compare"})
    if len(variants) <= 1:
        return "\n\n".join(x for x in (calib, _tables(rows, ok)) if x)
    parts = [calib] if calib else []
    if series:
        parts.append(_series_check(series))
    if any(r.get("busy") for r in series):
        parts.append(_busy_table([r for r in series if r.get("busy")]))
    if quiet:
        parts.append(_quiet_flag_table(quiet))
    for rule, aside, budget, busy in variants:
        rows_, ok_ = ([r for r in x if r["kind"] == "truth" or r["method"] == "compare"
                       or _setting(r) == (rule, aside, budget, busy)]
                      for x in (rows, ok))
        parts.append(f"## Rule {rule}, budget {budget:g} s"
                     + (", disturbed rounds set aside" if aside else "")
                     + (f", machine busy ({busy})" if busy else "")
                     + "\n\n" + _tables(rows_, ok_))
    return "\n\n".join(parts)


def _series_check(series):
    """That replaying each full series at its own budget ends where the run
    ended (ab's budget check on the recorded times), and how long they are."""
    ends = [r["round_starts_s"][1:] + [r["wall_s"]] for r in series]
    same = sum(ab_module.budget_rounds(e, r["budget_s"]) == len(e)
               for e, r in zip(ends, series))
    cut = sum(r.get("stopped_by") == "settled" for r in series)
    how = (f"{len(series) - cut} ran to the end of their budget, {cut} stopped once every "
           "replay was settled (--until-settled)") if cut else "all ran to the end of their budget"
    return (f"{len(series)} comparisons (--full-series): {how}; "
            f"replayed at that budget, {same} of them end on the round the run ended on. "
            f"Rounds per comparison: {min(len(e) for e in ends)}-{max(len(e) for e in ends)}.")


#: A round the busy windows covered for at least this long, s, was
#: disturbed by them; one they did not touch was not (between: not judged).
BUSY_HIT_S = 0.2
#: The producers' CPU shares below which a replayed rule calls a round
#: preempted (ab's rule: 0.9, with an involuntary switch).
CPU_SHARE_CANDIDATES = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)


def _replayed_flag(hosts, cpu_share):
    """Whether a round (its sides' recorded host figures) is disturbed with
    the preemption threshold at cpu_share, the other reasons as ab's."""
    return any(ab_module.disturbed_why(h, cpu_share) for h in hosts)


#: Per-side candidates: a side's round is preempted when its producers'
#: share falls below its own median share so far by more than this
#: fraction (or below ab's fixed share); results/ab-power-robust-2cpu.md,
#: "A per-side disturbed-share rule".
RELATIVE_CANDIDATES = (0.02, 0.03, 0.05, 0.08)


def _relative_flags(rounds, d, hindsight=False):
    """Whether each of a comparison's rounds (round_host: each side's
    recorded host figures) is disturbed by ab's rule with the per-side
    tolerance at d: a side switched out involuntarily whose share is below
    ab's fixed share or below (1 - d) times that side's median share over
    the rounds so far, this one included (with hindsight: over all of
    them)."""
    sides = list(zip(*rounds))
    whole = [ab_module.share_median([ab_module.cpu_share_of(h) for h in side])
             for side in sides] if hindsight else None
    seen = [[] for _ in sides]
    out = []
    for hosts in rounds:
        flag = False
        for side, h in enumerate(hosts):
            seen[side].append(ab_module.cpu_share_of(h))
            ref = whole[side] if hindsight else ab_module.share_median(seen[side])
            flag = flag or bool(ab_module.disturbed_why(h, share_median=ref, share_drop=d))
        out.append(flag)
    return out


def _flag_rules():
    """(name, flags of one comparison's rounds) for ab's fixed shares and
    the per-side candidates, as the busy and quiet tables replay them."""
    fixed = [(f"cpu share < {t:g}",
              lambda r, t=t: [_replayed_flag(h, t) for h in r["round_host"]])
             for t in CPU_SHARE_CANDIDATES]
    rel = [(f"rel {d:g}", lambda r, d=d: _relative_flags(r["round_host"], d))
           for d in RELATIVE_CANDIDATES]
    hind = [(f"rel {d:g}, hindsight",
             lambda r, d=d: _relative_flags(r["round_host"], d, hindsight=True))
            for d in RELATIVE_CANDIDATES]
    return ([("as ab ran it", lambda r: [bool(w) for w in r["round_disturbed"]])]
            + fixed + rel + hind)


def _busy_table(series):
    """The disturbed-round rule against the known busy windows: of the rounds
    they covered for BUSY_HIT_S or more, the share it flagged; of those they did
    not touch, the share it flagged all the same; as ab ran it, replayed at
    each preemption threshold of CPU_SHARE_CANDIDATES, and by the per-side
    candidates; over all of a profile's comparisons and, in turns, over
    those in the first and the last half of them in the record's order."""
    out = ["### The disturbed-round rule against the busy windows", "",
           f"A round is covered when the windows took {BUSY_HIT_S:g} s or more of it, "
           "untouched when they took none of it.", "",
           "| profile | method | comparisons | rule | rounds | covered | flagged of covered | "
           "untouched | flagged of untouched |", "|---|---|---|---|---|---|---|---|---|"]
    rules = _flag_rules()
    for profile in sorted({r["busy"] for r in series}):
        profiled = [r for r in series if r["busy"] == profile and "round_busy_s" in r]
        half = len(profiled) // 2
        # Each comparison's flags once per rule, whichever parts it is read in.
        flagged = {name: [flags(r) for r in profiled] for name, flags in rules}
        for method in ("interleaved", "duet"):
            parts = [("all", range(len(profiled)))]
            if method == "interleaved" and half:
                parts += [(f"first {half}", range(half)),
                          (f"last {len(profiled) - half}", range(half, len(profiled)))]
            for part, indices in parts:
                mine = [i for i in indices if profiled[i]["method"] == method]
                if not mine:
                    continue
                for name, _ in rules:
                    rounds = [(busy, flag) for i in mine
                              for busy, flag in zip(profiled[i]["round_busy_s"],
                                                    flagged[name][i])]
                    covered = [f for busy, f in rounds if busy >= BUSY_HIT_S]
                    untouched = [f for busy, f in rounds if busy == 0]
                    out.append(
                        f"| {profile} | {method} | {part} | {name} | {len(rounds)} | "
                        f"{len(covered)} | "
                        f"{_pct(sum(covered), len(covered)) if covered else '-'} | "
                        f"{len(untouched)} | "
                        f"{_pct(sum(untouched), len(untouched)) if untouched else '-'} |")
    return "\n".join(out)


def _quiet_flag_table(series):
    """On a quiet machine, the share of each cell's rounds (by benchmark and
    method, identical sides and power cells pooled) that ab's rule, each
    fixed share and each per-side candidate flags."""
    out = ["### The disturbed-round rule on a quiet machine", "",
           "Rounds flagged, by benchmark and method (identical sides and known "
           "slowdowns pooled).", "",
           "| benchmark | method | rounds | rule | flagged |", "|---|---|---|---|---|"]
    cells = sorted({(r["a"].split()[0], r["method"]) for r in series})
    for bench, method in cells:
        mine = [r for r in series if r["method"] == method and r["a"].split()[0] == bench]
        for name, flags in _flag_rules():
            flagged = [f for r in mine for f in flags(r)]
            out.append(f"| {bench} | {method} | {len(flagged)} | {name} | "
                       f"{_pct(sum(flagged), len(flagged))} |")
    return "\n".join(out)


def _calibration_table(cells):
    """Each calibration cell: B/A read by the rounds' median, its interval,
    the slowdown and how many rounds the host disturbed."""
    if not cells:
        return ""
    out = ["### Calibration: each setting at length, by the rounds' median", "",
           "| path | A | B | rounds | median B/A (interval) | slowdown | disturbed rounds |",
           "|---|---|---|---|---|---|---|"]
    for r in sorted(cells, key=lambda r: (r["path"], r["b"])):
        out.append(f"| {r['path']} | `{r['a']}` | `{r['b']}` | {r['rounds']} | "
                   f"{r['ratio']:.4f} ({r['low']:.4f}..{r['high']:.4f}) | "
                   f"{100 * (1 - r['ratio']):.1f} % | {_disturbed_share([r])} |")
    return "\n".join(out)


def knobs(path):
    """For each path and target slowdown (TARGETS), the calibrated setting
    whose median slowdown lies nearest: {path: {target: [A, B]}}, as --knobs
    reads it."""
    cells = [r for r in _records(path)[1] if r["kind"] == "calib" and r.get("ratio")]
    out = {}
    for path in sorted({r["path"] for r in cells}):
        mine = [r for r in cells if r["path"] == path]
        for target in TARGETS:
            best = min(mine, key=lambda r: abs(1 - r["ratio"] - target))
            out.setdefault(path, {})[f"{target:g}"] = [best["a"], best["b"]]
    return out


def _tables(rows, ok):
    out = [f"{len(rows)} comparisons ({sum('error' in r for r in rows)} failed runs), "
           f"{rows[0]['started']} .. {rows[-1]['started']} UTC, load average "
           f"{min(r['load'] for r in rows):.1f}-{max(r['load'] for r in rows):.1f}", ""]
    head = len(out)
    out += ["### False alarms: identical sides", "",
            "| method | benchmark | slower or faster | beyond the threshold | same | "
            "undecided | median time | spread of a round's log ratio within comparisons: "
            "pooled sd, 1.4826 MAD | disturbed rounds |",
            "|---|---|---|---|---|---|---|---|---|"]
    pooled = {}
    for method, names in IDENTICAL.items():
        for name in names:
            cell = [r for r in ok if r["kind"] == "false" and r["method"] == method
                    and r["a"] == name]
            if not cell:
                continue
            alarms = sum(r["verdict"] in ("slower", "faster") for r in cell)
            beyond = sum(bool(r["beyond"]) for r in cell)
            same = sum(r["verdict"] == "same" for r in cell)
            und = sum(r["verdict"] == "undecided" for r in cell)
            pooled.setdefault(method, []).extend(cell)
            out.append(f"| {method} | {name} | {_pct(alarms, len(cell))} | {beyond} | {same} | "
                       f"{und} | {statistics.median(r['wall_s'] for r in cell):.0f} s | "
                       f"{_spread(cell)} | {_disturbed_share(cell)} |")
    for method, cell in pooled.items():
        alarms = sum(r["verdict"] in ("slower", "faster") for r in cell)
        out.append(f"| {method} | all | {_pct(alarms, len(cell))} | "
                   f"{sum(bool(r['beyond']) for r in cell)} | "
                   f"{sum(r['verdict'] == 'same' for r in cell)} | "
                   f"{sum(r['verdict'] == 'undecided' for r in cell)} | | "
                   f"{_spread(cell)} | {_disturbed_share(cell)} |")
    if not pooled:
        out[head + 2:] = ["No identical-side comparisons in this record."]
    truth = {(r["path"], r["effect"]): r for r in ok if r["kind"] == "truth"}
    head = len(out) + 3
    out += ["", "### Power: B slower by a known amount", "",
            "| path | nominal | measured slowdown (truth cell) | over all its interleaved "
            "rounds | method | called slower | faster | median time to verdict | "
            "median rounds | measured share of wall |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for path, levels in KNOBS.items():
        for effect in levels:
            t = truth.get((path, effect))
            true = (f"{100 * (1 - t['ratio']):.1f} % ({100 * (1 - t['high']):.1f}.."
                    f"{100 * (1 - t['low']):.1f}, {t['rounds']} rounds)" if t else "-")
            true += " | " + _pooled(ok, path, effect)
            for method in ("interleaved", "duet", "compare"):
                cell = [r for r in ok if r["kind"] == "power" and r["method"] == method
                        and r["path"] == path and r["effect"] == effect]
                if not cell:
                    continue
                slower = sum(r["verdict"] == "slower" for r in cell)
                faster = sum(r["verdict"] == "faster" for r in cell)
                decided = [r["wall_s"] for r in cell if r["verdict"] == "slower"]
                rounds = [r["rounds"] for r in cell if "rounds" in r] or [
                    sum(r["runs"]) for r in cell]
                share = statistics.median(r["measured_s"] / r["wall_s"] for r in cell)
                out.append(f"| {path} | {100 * effect:g} % | {true} | {method} | "
                           f"{_pct(slower, len(cell))} | {faster} | "
                           f"{statistics.median(decided):.0f} s | " if decided else
                           f"| {path} | {100 * effect:g} % | {true} | {method} | "
                           f"{_pct(slower, len(cell))} | {faster} | - | ")
                out[-1] += f"{statistics.median(rounds):g} | {100 * share:.0f} % |"
    if len(out) == head + 2:
        out[head:] = ["No comparisons of a known slowdown in this record."]
    return "\n".join(out)


def _spread(cell):
    """How far a round's log ratio lies from its own comparison's centre,
    over every round of the cell's comparisons: the pooled within-comparison
    standard deviation, and 1.4826 times the median absolute deviation from
    each comparison's median (which bursts do not move), in %."""
    series = [r["round_log_ratios"] for r in cell if len(r["round_log_ratios"]) > 2]
    if not series:
        return "-"
    ss = sum((x - statistics.fmean(xs)) ** 2 for xs in series for x in xs)
    sd = math.sqrt(ss / sum(len(xs) - 1 for xs in series))
    mad = 1.4826 * statistics.median(abs(x - statistics.median(xs))
                                     for xs in series for x in xs)
    return f"{100 * sd:.1f} %, {100 * mad:.1f} %"


def _pooled_logs(rows, path, effect, method="interleaved"):
    """The round log ratios of a cell: in turns, its power and truth
    comparisons'; in a duet, its own duets' (a knob's size moves with the
    machine's day, and a duet's rounds are not the truth cell's)."""
    kinds = ("power", "truth") if method == "interleaved" else ("power",)
    return [x for r in rows if r["kind"] in kinds and r["method"] == method
            and r["path"] == path and r["effect"] == effect for x in r["round_log_ratios"]]


def _pooled_slowdown(rows, path, effect, method="interleaved"):
    """B's slowdown over every round of the cell's comparisons of method
    (interleaved: its truth cell's too), a fraction."""
    return 1 - math.exp(statistics.fmean(_pooled_logs(rows, path, effect, method)))


def _pooled(rows, path, effect):
    """The slowdown over every round of the cell's interleaved comparisons
    (power and truth), with a 95 % interval taking rounds as independent:
    many more rounds than one truth cell, though those of comparisons that
    stopped early on a large effect lean that way."""
    logs = _pooled_logs(rows, path, effect)
    if len(logs) < 3:
        return "-"
    mean = statistics.fmean(logs)
    half = 1.96 * statistics.stdev(logs) / math.sqrt(len(logs))
    return (f"{100 * (1 - math.exp(mean)):.1f} % ({100 * (1 - math.exp(mean + half)):.1f}.."
            f"{100 * (1 - math.exp(mean - half)):.1f}, {len(logs)} rounds; median "
            f"{100 * (1 - math.exp(statistics.median(logs))):.1f} %)")


#: Hosts simulated for the rule's error rates: the fast noise of one run's
#: figure (sd of its log); the rest of the simulated host is ab.simulate's.
SIMULATED_FAST_SD = (0.01, 0.05)
SIMULATED_EFFECTS = (0.0, 0.02, 0.05, 0.10, 0.25)


def _round_sd(fast_sd, rounds, n=200):
    """The median sd of a simulated comparison's round log ratios, the
    simulated host otherwise as ab.simulate's defaults have it."""
    host = {k: p.default for k, p in inspect.signature(ab_module.simulate).parameters.items()
            if k in inspect.signature(ab_module.simulated_log_ratios).parameters}
    host.update(effect=0.0, fast_sd=fast_sd, rounds=rounds)
    rng = random.Random(7)
    return statistics.median(statistics.stdev(
        ab_module.simulated_log_ratios(rng, **host)) for _ in range(n))


def simulated(n=400, rounds=40):
    """The stopping rule's verdicts on seeded simulated comparisons (no BPF):
    at most `rounds` rounds, about what a 120 s budget allows here."""
    out = ["| fast noise of a run | sd of a round's log ratio | B slower by | slower | "
           "faster | same | undecided | median rounds |", "|---|---|---|---|---|---|---|---|"]
    for fast_sd in SIMULATED_FAST_SD:
        spread = _round_sd(fast_sd, rounds)
        for effect in SIMULATED_EFFECTS:
            r = ab_module.simulate(effect=effect, n=n, rounds=rounds, seed=2026,
                                   fast_sd=fast_sd)
            out.append(f"| {100 * fast_sd:g} % | {100 * spread:.1f} % | {100 * effect:g} % | "
                       f"{_pct(r.slower, n)} | {_pct(r.faster, n)} | {r.same} | "
                       f"{r.undecided} | {r.median_rounds:g} |")
    return "\n".join(out)


def package_data(path, truth_path=None, rule=None, budget=None, power_path=None):
    """What every A/B verdict states, per mode: the identical-side comparisons and
    their false alarms, and per path ("user", "bpf") and nominal slowdown how many
    were called slower, and the slowdown measured over all the cell's rounds
    of that mode (percent; interleaved: its truth cell's too).  rule: the
    rule whose comparisons (none set aside) count, where the record holds
    several (default: its first's); budget: the budget, s, whose comparisons
    count (a --full-series record is replayed at several; default: its
    first's).  power_path: another record of the same packaged machine
    whose known slowdowns count instead of path's; path's identical sides
    alone count as false alarms, so that no kind is pooled across records."""
    def quiet(record):
        # A verdict states a quiet machine's rates: busy comparisons are not
        # packaged, nor do they name the machine or the day.
        return ([r for r in _replayed(x) if not r.get("busy")]
                for x in _records(record, truth_path))
    rows, ok = quiet(path)
    cpu = _one_machine(path, rows)
    if power_path:
        power_rows, power_ok = quiet(power_path)
        theirs = _one_machine(power_path, power_rows)
        if cpu and theirs and _packaged_machine(cpu) != _packaged_machine(theirs):
            raise ValueError(f"{power_path}: measured on {_machine_text(theirs)}, "
                             f"{path} on {_machine_text(cpu)}: one entry states one machine")
        cpu = cpu or theirs
        ok = [r for r in ok if r["kind"] not in ("power", "truth")] + \
            [r for r in power_ok if r["kind"] in ("power", "truth")]
    ruled = [r for r in ok if r["kind"] in ("false", "power") and r["method"] != "compare"]
    want = (rule, False) if rule else _variant(ruled[0]) if ruled else None
    budget = budget or (ruled[0]["budget_s"] if ruled else None)
    ok = [r for r in ok if r["kind"] not in ("false", "power") or r["method"] == "compare"
          or (_variant(r) == want and r["budget_s"] == budget)]
    named = cpu is not None
    # Rows taken before rows named their machine: this one's, so package
    # them on the machine that took them.
    cpu = cpu or _machine()
    model, nr_cpus, kernel = _packaged_machine(cpu)
    machine = f"a {nr_cpus}-CPU {model.split()[0].replace('(R)', '')} machine, kernel {kernel}"
    out = {}
    for mode in ("interleaved", "duet"):
        same = [r for r in ok if r["kind"] == "false" and r["method"] == mode]
        if not same:
            continue
        power = {}
        for path in KNOBS:
            for effect in sorted({r["effect"] for r in ok if r["kind"] == "power"}):
                cell = [r for r in ok if r["kind"] == "power" and r["method"] == mode
                        and r["path"] == path and r["effect"] == effect]
                if cell:
                    power.setdefault(path, {})[f"{effect:g}"] = dict(
                        slower=sum(r["verdict"] == "slower" for r in cell),
                        comparisons=len(cell),
                        measured_pct=round(100 * _pooled_slowdown(ok, path, effect, mode),
                                           1))
        # The rule and alpha the comparisons ran with (ab's defaults then),
        # and their benchmarks: where a verdict's differ, the rates do not apply.
        names = {r[side].split()[0] for r in ok if r["method"] == mode for side in "ab"}
        out[mode] = dict(false_alarms=sum(r["verdict"] in ("slower", "faster") for r in same),
                         comparisons=len(same), power=power, budget_s=budget,
                         machine=machine, taken=rows[0]["started"][:10],
                         rule=want[0], alpha=same[0].get("alpha", 0.05),
                         benchmarks=sorted(names))
        # Rows that name their machine let a verdict on it state them first;
        # rows that name none are packaged where they were taken, but nothing
        # in them shows it, so their entry claims no machine to match.
        if named:
            out[mode].update(cpu_model=cpu["cpu_model"], nr_cpus=cpu["nr_cpus"])
    return out


def _ship(path, made):
    """Write what package_data made into the package's file at path, beside
    the settings (machine, rule, alpha, budget) of other records it holds: a
    mode's entry of the same setting is replaced where it stands, others are
    kept, since their order decides what a verdict on another machine states."""
    try:
        with open(path) as f:
            held = json.load(f)
    except FileNotFoundError:
        held = {}

    def setting(e):
        return e["machine"], e.get("rule", "mean"), e.get("alpha", 0.05), e["budget_s"]
    held = {mode: [e] if isinstance(e, dict) else e for mode, e in held.items()}
    for mode, entry in made.items():
        entries = held.get(mode, [])
        at = next((i for i, e in enumerate(entries) if setting(e) == setting(entry)),
                  len(entries))
        held[mode] = entries[:at] + [entry] + entries[at + 1:]
    with open(path, "w") as f:
        json.dump(held, f, indent=1)
        f.write("\n")


def _rules(text):
    rules = [r.strip() for r in text.split(",") if r.strip()]
    for r in rules:
        if r not in ab_module.RULES:
            raise argparse.ArgumentTypeError(
                f"--rule {text!r}: {r!r} is not one of {', '.join(ab_module.RULES)}")
    if not rules:
        raise argparse.ArgumentTypeError("--rule '': name at least one rule")
    return tuple(dict.fromkeys(rules))


def _arguments(ap):
    ap.add_argument("--rule", type=_rules, default=(ab_module.RULE,), metavar="RULES",
                    help=f"the rules each ab comparison runs under, comma separated, one "
                         f"comparison each ({', '.join(ab_module.RULES)}; default "
                         f"{ab_module.RULE})")
    ap.add_argument("--set-aside-disturbed", choices=tuple(SET_ASIDE), default="no",
                    help="whether ab comparisons set aside each round the host disturbed "
                         "and take another (ab's set_aside_disturbed): no (default), yes, "
                         "or both: each comparison once each way, one after the other")
    ap.add_argument("--full-series", action="store_true",
                    help="each ab comparison runs to the end of its budget, one per cell "
                         "number (rule \"series\"); --summarize replays every rule on its "
                         "rounds, with and without disturbed rounds set aside, at its "
                         "budget and each shorter one of 60 and 300 s")
    ap.add_argument("--until-settled", action="store_true",
                    help="with --full-series: a comparison stops at the first round after "
                         "which every replay --summarize makes of it is final (each rule, "
                         "set aside or not, at each budget: decided, or past that budget), "
                         "stopped_by \"settled\"; its replays are the full series' own")
    ap.add_argument("--cells", type=lambda t: [p for p in t.split(",") if p], default=[],
                    metavar="PATTERNS",
                    help="only these cells (comma separated shell patterns, e.g. "
                         "'false:*,power:interleaved:*:0.05'; --list-cells names them)")
    ap.add_argument("--busy", choices=tuple(_busy.PROFILES), default=None,
                    help="make the machine busy during each comparison on a seeded schedule "
                         "(scripts/_busy.py: bursts on every CPU now and then, or one CPU "
                         "taken throughout), recording which rounds it covered; keyed apart "
                         "from the quiet comparisons")
    ap.add_argument("--truth-rounds", type=int, default=TRUTH_ROUNDS,
                    help=f"rounds of a truth or calibration cell (default {TRUTH_ROUNDS})")
    for flag, what in (
            ("--list-cells", "print the cells the other options plan, with their counts"),
            ("--calibrate", "take the calibration cells (CANDIDATES, each --truth-rounds "
                            "fixed rounds) instead of the campaign")):
        ap.add_argument(flag, action="store_true", help=what)
    for flag, what in (
            ("--knobs", "the calibrated settings (--write-knobs) in place of KNOBS"),
            ("--write-knobs", "with --summarize of a calibration record: write the "
                              "settings nearest each target slowdown, for --knobs")):
        ap.add_argument(flag, metavar="JSON", help=what)
    ap.add_argument("--package-data", metavar="JSON",
                    help="with --summarize: also write what every verdict states "
                         "(benchbpf/analysis/ab_measured.json), beside the other settings "
                         "it holds")
    ap.add_argument("--package-rule", choices=ab_module.RULES, default=None,
                    help="with --package-data: the rule whose comparisons it states "
                         "(default: the record's first)")
    ap.add_argument("--package-budget", type=float, default=None, metavar="S",
                    help="with --package-data: the budget whose comparisons it states "
                         "(default: the record's first)")
    ap.add_argument("--package-power", metavar="JSONL", default=None,
                    help="with --package-data: state the known slowdowns of this record "
                         "(the same CPU model, CPU count and kernel version) and the "
                         "identical sides of --summarize's, neither pooled")
    ap.add_argument("--budget", type=float, default=120.0,
                    help="wall time each comparison may take, s (default 120)")
    ap.add_argument("--n-false", type=int, default=20, help="comparisons per identical pair")
    ap.add_argument("--n-false-duet", type=int, default=10,
                    help="comparisons per identical pair in a duet")
    ap.add_argument("--n-power", type=int, default=10, help="comparisons per power cell")
    ap.add_argument("--n-compare", type=int, default=10,
                    help="comparisons per cell of `benchbpf compare`")
    ap.add_argument("--simulate", action="store_true",
                    help="print the stopping rule's error rates on simulated series")
    ap.add_argument("--hours", type=float, default=None, help="stop starting after this long")
    ap.add_argument("--truth-only", action="store_true",
                    help="take only the truth cells (each a fixed number of rounds)")
    ap.add_argument("--truth", metavar="JSONL",
                    help="with --summarize: the truth cells from this record instead")


def _other(args):
    if args.simulate:
        print(simulated())
        return True
    if args.list_cells:
        cells = {}
        for t in _picked(_planned(args), args.cells):
            cells[t["cell"]] = cells.get(t["cell"], 0) + 1
        print("\n".join(f"{n:4d}  {cell}" for cell, n in cells.items()))
        return True
    if args.summarize and args.write_knobs:
        with open(args.write_knobs, "w") as f:
            json.dump(knobs(args.summarize), f, indent=1)
            f.write("\n")
    if args.summarize and args.package_data:
        try:
            made = package_data(args.summarize, args.truth, args.package_rule,
                                args.package_budget, args.package_power)
        except ValueError as e:   # records of two machines: a line, not a traceback
            sys.exit(f"--package-data {args.package_data}: {e}")
        _ship(args.package_data, made)
    if args.summarize and args.truth:
        print(summarize(args.summarize, args.truth))
        return True
    return False


if __name__ == "__main__":
    sys.exit(_record.main(__doc__, run, summarize, _arguments, _other))
