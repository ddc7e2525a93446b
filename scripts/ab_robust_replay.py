#!/usr/bin/env python3
"""Which sequential rule `benchbpf ab` should use: every candidate replayed on
every stored round series and on seeded simulations fitted to them
(results/ab-power-robust-2cpu.md, whose method section was written first).

    python3 scripts/ab_robust_replay.py                # print the tables
    python3 scripts/ab_robust_replay.py --write results/ab-power-robust-2cpu.md
    python3 scripts/ab_robust_replay.py --quick        # fewer simulated comparisons

Nothing runs a benchmark: the stored rounds are results/ab-power-2cpu.jsonl,
results/ab-power-truth-2cpu.jsonl and results/ab-duet-fixed-workers-2cpu.jsonl,
and the simulations are benchbpf.ab.simulate_fitted's, seeded."""
import argparse
import json
import math
import os
import statistics
import sys
import time

from benchbpf import ab as ab_module
from benchbpf.results.stats import clopper_pearson

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "results")
STORED = ("ab-power-2cpu.jsonl", "ab-power-truth-2cpu.jsonl",
          "ab-duet-fixed-workers-2cpu.jsonl")
#: Seconds a round takes (results/ab-power-2cpu.md): rounds in 60 and 300 s.
ROUND_S = {"interleaved": 2.7, "duet": 1.35}
BUDGETS = (60, 300)
EFFECTS = (0.0, 0.02, 0.05, 0.10)
#: Where the table of the record begins; everything after it is rewritten.
MARK = "## Fitted contamination and replay"
#: A candidate's verdict where the stored rounds ran out before it decided.
CENSORED = "censored"
#: A burst: a round this far (log ratio) from its comparison's median.
BURST = 0.1


def series(name):
    """The stored comparisons of results/`name` that kept their rounds."""
    with open(os.path.join(RESULTS, name)) as f:
        rows = [json.loads(line) for line in f]
    return [d for d in rows if d.get("round_log_ratios")]


def _settings(d):
    """How ab ran the stored comparison d: (planned, threshold, precision,
    min_rounds)."""
    if d["kind"] == "truth":
        n = len(d["round_log_ratios"])     # fixed rounds: never stopped early
        return n, ab_module.MIN_THRESHOLD, ab_module.MIN_PRECISION, n
    warmup = ab_module.DUET_WARMUP_S if d["method"] == "duet" else "auto"
    nominal = ab_module.round_seconds(d["method"], warmup, ab_module.DURATION_S)
    return (ab_module.planned_rounds(nominal, d["budget_s"]), ab_module.THRESHOLD,
            ab_module.PRECISION, ab_module.MIN_ROUNDS)


def replay(d, rule):
    """(verdict, beyond, rounds, figures) of rule on the stored series d.
    The verdict is "censored" where the rule had not decided when the stored
    rounds ended though ab's run had budget left (it had stopped on its own
    verdict): what the rule would have said after more rounds is not in the
    record."""
    planned, threshold, precision, min_rounds = _settings(d)
    verdict, beyond, k, figures = ab_module.replay(d["round_log_ratios"], rule,
                                                   ab_module.ALPHA, planned, threshold,
                                                   precision, min_rounds)
    if verdict == "undecided" and d["kind"] != "truth" and d["stopped_by"] != "budget":
        verdict = CENSORED
    return verdict, beyond, k, figures


# ---------------------------------------------------------------- the fit

def fit(rows):
    """The contamination of the rounds of rows: the fields of
    ab.Contamination, and the lags' autocorrelation."""
    spreads, shares, excess, faster, num, den = [], [], [], 0, [0.0] * 7, 0.0
    for d in rows:
        xs = d["round_log_ratios"]
        mid = statistics.median(xs)
        spreads.append(max(1e-4, 1.4826 * statistics.median(abs(x - mid) for x in xs)))
        bursts = [x - mid for x in xs if abs(x - mid) > BURST]
        shares.append(len(bursts) / len(xs))
        excess += [abs(v) - BURST for v in bursts]
        faster += sum(v > 0 for v in bursts)
        # Bursts clipped, so that a few do not make the autocorrelation.
        y = [max(-BURST, min(BURST, x - mid)) for x in xs]
        m = statistics.fmean(y)
        y = [v - m for v in y]
        den += sum(v * v for v in y)
        for k in range(1, 7):
            num[k] += sum(y[i] * y[i + k] for i in range(len(y) - k))
    logs = [math.log(s) for s in spreads]
    p, v = statistics.fmean(shares), statistics.pvariance(shares)
    total = p * (1 - p) / v - 1        # Beta by moments: a + b
    return dict(comparisons=len(rows), rounds=sum(len(d["round_log_ratios"]) for d in rows),
                spread_log_mean=statistics.fmean(logs), spread_log_sd=statistics.stdev(logs),
                spread_median=statistics.median(spreads), burst_share=p,
                burst_a=p * total, burst_b=(1 - p) * total,
                burst_excess=statistics.fmean(excess), burst_faster=faster / len(excess),
                bursts=len(excess), acf=[num[k] / den for k in range(1, 7)])


def fit_section(rows):
    out = ["### Fitted contamination",
           "",
           "Every stored series of the mode (identical sides, power and truth cells; "
           "results/ab-power-2cpu.jsonl and results/ab-power-truth-2cpu.jsonl). A burst is a "
           f"round more than {BURST} in log from its comparison's median.",
           "",
           "| mode | comparisons | rounds | core spread (1.4826 MAD): median; log-normal "
           "mean, sd of log | burst share; Beta(a, b) per comparison | burst size beyond 0.1: "
           "mean (exponential) | B faster among bursts | autocorrelation, lags 1-6 (bursts "
           "clipped) | `ab.FITTED` |",
           "|---|---|---|---|---|---|---|---|---|"]
    for mode in ("interleaved", "duet"):
        f = fit([d for d in rows if d["method"] == mode])
        c = ab_module.FITTED[mode]
        same = all(abs(a - b) < 5e-3 for a, b in (
            (f["spread_log_mean"], c.spread_log_mean), (f["spread_log_sd"], c.spread_log_sd),
            (f["burst_a"], c.burst_a), (f["burst_b"], c.burst_b),
            (f["burst_excess"], c.burst_excess), (f["burst_faster"], c.burst_faster)))
        out.append(
            f"| {mode} | {f['comparisons']} | {f['rounds']} | {100 * f['spread_median']:.2f} %;"
            f" {f['spread_log_mean']:.3f}, {f['spread_log_sd']:.3f} | "
            f"{100 * f['burst_share']:.1f} %; Beta({f['burst_a']:.3f}, {f['burst_b']:.3f}) | "
            f"{f['burst_excess']:.3f} | {f['burst_faster']:.3f} of {f['bursts']} | "
            f"{', '.join(f'{a:+.3f}' for a in f['acf'])} | "
            f"{'matches' if same else 'DIFFERS'} |")
    out += ["",
            "No lag reaches 0.1 interleaved; in a duet lag 1 is negative (the CPU halves swap "
            "every round). So the fitted series have no side bias (autocorrelation time 1), "
            "and the stress rows below add one of autocorrelation time 3 and 6 "
            "(`Contamination.autocorrelated`)."]
    return out


# ---------------------------------------------------------------- stored rounds

def _cell(d):
    if d["kind"] == "false":
        return ("identical", d["method"], d["a"])
    return (d["kind"], d["method"], f"{d['a']} / {d['b']}")


def stored_section(rows, rules):
    out = ["### Every stored round series, replayed",
           "",
           "Each series fed round by round to each rule with the settings ab ran it with "
           "(alpha 0.05, threshold 2 %, precision 1 %, at least 8 rounds, planned rounds "
           "from its 120 s budget), stopped where the rule stops or where the stored rounds "
           "end. Counts: slower / faster / same / undecided at the budget / censored, then the "
           "median rounds of those that stopped with a verdict. Censored: the rule had not "
           "decided when the stored rounds ended, because ab (the mean rule) had stopped "
           "there on its own verdict; what the rule would have said after more rounds is not "
           "in the record, so the stored rounds favour the mean rule wherever it stopped "
           "early. Power cells are named by their sides; the slowdown each really is, by the "
           "truth cells' median, is in the next table."]
    # The mean rule replayed must end each series as ab did.
    checked = agree = 0
    for d in rows:
        if d["kind"] == "truth":
            continue
        verdict, beyond, k, _ = replay(d, "mean")
        checked += 1
        agree += (verdict, beyond, k) == (d["verdict"], d["beyond"], d["rounds"])
    out += ["", f"The `mean` rule replayed ends {agree} of the {checked} stored non-truth "
            "series with the verdict, the beyond-threshold flag and the round count ab "
            "recorded.", ""]
    head = "| file | cell | mode | n | " + " | ".join(rules) + " |"
    out += [head, "|" + "---|" * (4 + len(rules))]
    cells = {}
    for d in rows:
        if d["kind"] != "truth":
            cells.setdefault((d["_file"], *_cell(d)), []).append(d)
    totals = {}
    for key in sorted(cells, key=lambda k: (k[0], k[1] != "identical", k[2], k[3])):
        group = cells[key]
        row = [key[0].replace(".jsonl", ""), f"{key[1]}: {key[3]}", key[2], str(len(group))]
        for rule in rules:
            got = [replay(d, rule) for d in group]
            n = {v: sum(g[0] == v for g in got) for v in ("slower", "faster", "same",
                                                          "undecided", CENSORED)}
            decided = [g[2] for g in got if g[0] not in ("undecided", CENSORED)]
            med = f" ({statistics.median(decided):g})" if decided else ""
            row.append(f"{n['slower']}/{n['faster']}/{n['same']}/{n['undecided']}/"
                       f"{n[CENSORED]}{med}")
            t = totals.setdefault((key[0], key[1], key[2], rule), [0, 0, 0])
            t[0] += len(group) - n[CENSORED]
            t[1] += n["slower"] + n["faster"]
            t[2] += n["slower"]
        out.append("| " + " | ".join(row) + " |")
    out += ["", "Pooled, over the series not censored for the rule:", "",
            "| file | kind | mode | " + " | ".join(rules) + " |",
            "|" + "---|" * (3 + len(rules))]
    for f, kind, mode in sorted({k[:3] for k in totals}):
        row = [f.replace(".jsonl", ""), kind, mode]
        for rule in rules:
            n, alarms, slower = totals[(f, kind, mode, rule)]
            k = alarms if kind == "identical" else slower
            what = "false alarms" if kind == "identical" else "slower"
            if n:
                lo, hi = clopper_pearson(k, n)
                row.append(f"{what} {k}/{n} ({100 * lo:.1f}..{100 * hi:.1f} %)")
            else:
                row.append("all censored")
        out.append("| " + " | ".join(row) + " |")
    out += ["", "Head to head, on the series ab ran to the end of its budget (none is "
            "censored for any rule: each saw every round ab took; these are the hard ones, "
            "where the mean rule did not decide early):", "",
            "| file | kind | mode | series | " + " | ".join(rules) + " |",
            "|" + "---|" * (4 + len(rules))]
    fair = {}
    for d in rows:
        if d["kind"] != "truth" and d["stopped_by"] == "budget":
            fair.setdefault((d["_file"], _cell(d)[0], d["method"]), []).append(d)
    guard = {}
    for key in sorted(fair):
        group = fair[key]
        row = [key[0].replace(".jsonl", ""), key[1], key[2], str(len(group))]
        for rule in rules:
            got = [replay(d, rule)[0] for d in group]
            k = sum(v in ("slower", "faster") for v in got) if key[1] == "identical" \
                else sum(v == "slower" for v in got)
            lo, hi = clopper_pearson(k, len(group))
            row.append(f"{'false alarms' if key[1] == 'identical' else 'slower'} {k}/{len(group)}"
                       f" ({100 * lo:.0f}..{100 * hi:.0f} %)")
            if key[1] == "power" and key[0] == STORED[0]:
                guard[(key[2], rule)] = k / len(group)
        out.append("| " + " | ".join(row) + " |")
    return out, agree, checked, guard


def truth_section(rows, rules):
    out = ["", "### The truth cells (60 fixed rounds), read by each rule", "",
           "The effect each rule states at 60 rounds, B/A with its interval "
           "(threshold 0.1 %, as those cells were taken), and the rounds' mean and median.",
           "", "| file | sides | rounds' mean B/A | rounds' median B/A | bursts | "
           + " | ".join(rules) + " |", "|" + "---|" * (5 + len(rules))]
    for d in rows:
        if d["kind"] != "truth":
            continue
        xs = d["round_log_ratios"]
        mid = statistics.median(xs)
        row = [d["_file"].replace(".jsonl", ""), f"{d['a']} / {d['b']}",
               f"{math.exp(statistics.fmean(xs)):.4f}", f"{math.exp(mid):.4f}",
               str(sum(abs(x - mid) > BURST for x in xs))]
        for rule in rules:
            _, _, _, (r, lo, hi) = replay(d, rule)
            row.append("-" if r is None else f"{r:.4f} ({lo:.4f}..{hi:.4f})")
        out.append("| " + " | ".join(row) + " |")
    return out


# ---------------------------------------------------------------- simulations

def simulated_section(rules, n_null, n_power, seed=2026):
    out = ["", "### Seeded simulations with the fitted contamination", "",
           f"`benchbpf.ab.simulate_fitted`, seed {seed}; {n_null} comparisons of identical "
           f"sides and {n_power} per slowdown; rounds that fit the budget at "
           f"{ROUND_S['interleaved']} s a round interleaved and {ROUND_S['duet']} s in a duet. "
           "False alarms: slower or faster on identical sides, with the Clopper-Pearson 95 % "
           "interval; power: the share called slower; in brackets the median rounds of "
           "those that stopped with a verdict.", "",
           "| mode | budget | rounds | tau | true slowdown | " + " | ".join(rules) + " |",
           "|" + "---|" * (5 + len(rules))]
    summary = {}
    plan = [("interleaved", b, 1.0) for b in BUDGETS] + [("duet", 60, 1.0)]
    plan += [("interleaved", 300, 3.0), ("interleaved", 300, 6.0)]
    for mode, budget, tau in plan:
        rounds = int(budget / ROUND_S[mode])
        effects = EFFECTS if tau == 1.0 else (0.0, 0.05)
        for effect in effects:
            row = [mode, f"{budget} s", str(rounds), f"{tau:g}", f"{100 * effect:g} %"]
            for rule in rules:
                began = time.monotonic()
                r = ab_module.simulate_fitted(effect=effect, n=n_null if effect == 0 else n_power,
                                              rounds=rounds, seed=seed, mode=mode, tau=tau,
                                              rule=rule)
                k = r.slower + r.faster if effect == 0 else r.slower
                lo, hi = clopper_pearson(k, r.n)
                summary[(mode, budget, tau, effect, rule)] = (k, r.n, lo, hi)
                cell = f"{k}/{r.n} = {100 * k / r.n:.1f} % ({100 * lo:.1f}..{100 * hi:.1f})"
                if effect:
                    cell += f" [{r.median_decided_rounds:g}]" \
                        if r.median_decided_rounds is not None else ""
                row.append(cell)
                print(f"  {mode} {budget} s tau {tau:g} effect {effect:g} {rule}: {cell} "
                      f"({time.monotonic() - began:.0f} s)", file=sys.stderr)
            out.append("| " + " | ".join(row) + " |")
    return out, summary


def choose(summary, guard, rules, alpha=ab_module.ALPHA):
    """The criteria of the method: admissible rules (simulated false alarms at
    most alpha at every fitted setting without a side bias), the one with the
    highest power at 5 % within 60 s interleaved, unless it finds more than
    15 points fewer of the stored uncensored power series of a mode (guard:
    (mode, rule) -> share found) than another admissible rule; then the next."""
    admissible = [r for r in rules
                  if all(k / n <= alpha for (m, b, tau, e, rule), (k, n, lo, hi)
                         in summary.items() if rule == r and e == 0 and tau == 1.0)]
    ranked = sorted(admissible, key=lambda r: -summary[("interleaved", 60, 1.0, 0.05, r)][0])
    for best in ranked:
        if all(guard[(mode, best)] >= guard[(mode, other)] - 0.15
               for mode, other in guard if other in admissible):
            return admissible, best
    return admissible, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", metavar="FILE", help="rewrite FILE's replay section")
    ap.add_argument("--quick", action="store_true", help="100 simulated comparisons a cell")
    args = ap.parse_args()
    rules = ab_module.RULES
    rows = []
    for name in STORED:
        for d in series(name):
            d["_file"] = name
            rows.append(d)
    out = [MARK, "",
           f"Written by `python3 scripts/ab_robust_replay.py{' --quick' if args.quick else ''}`"
           " after the method above was committed.", ""]
    out += fit_section([d for d in rows if d["_file"] != STORED[2]])
    out.append("")
    stored, agree, checked, guard = stored_section(rows, rules)
    out += stored
    out += truth_section(rows, rules)
    n_null, n_power = (100, 100) if args.quick else (1000, 400)
    sim, summary = simulated_section(rules, n_null, n_power)
    out += sim
    admissible, best = choose(summary, guard, rules)
    out += ["", f"Admissible by the criteria (simulated false alarms at most 5 % at every "
            f"fitted setting): {', '.join(admissible)}. Chosen (the highest power at 5 % "
            "within 60 s interleaved among them that finds no more than 15 points fewer of "
            f"the stored head-to-head power series than another): **{best}**."]
    text = "\n".join(out) + "\n"
    if args.write:
        with open(args.write) as f:
            old = f.read()
        head, _, rest = old.partition(MARK)
        tail = rest[rest.index("\n## ", 1):] if "\n## " in rest[1:] else ""
        with open(args.write, "w") as f:
            f.write(head + text + tail)
    else:
        print(text)
    return 0 if agree == checked else 1


if __name__ == "__main__":
    sys.exit(main())
