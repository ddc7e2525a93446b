"""ab's presentation: an ABResult as one line, as a Markdown table, and the
error rates measured for its mode in words.  Reading the measured rates
(the package's ab_measured.json) happens once, where a result is made
(measured_rates); printing only formats."""
import json
import math
import os
import statistics


#: Error rates measured on the project's machine for each mode
#: (scripts/ab_power.py --package-data; results/ab-power-2cpu.md).
MEASURED_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ab_measured.json")


def measured_rates(mode):
    """What was measured of `mode` on the project's machine: a dict with
    "false_alarms" and "comparisons" (identical sides), "power" (path,
    "user" or "bpf" -> nominal slowdown -> {"slower", "comparisons",
    "measured_pct": the slowdown the cell's rounds measured}), "budget_s",
    "machine" and "taken"; None where that mode was not measured."""
    try:
        with open(MEASURED_PATH) as f:
            return json.load(f).get(mode)
    except (OSError, ValueError):
        return None


_PATH_NAMES = {"user": "in user space", "bpf": "on the BPF path"}


def _around(cells, pct=5.0):
    """The measured cells nearest below and above pct, smallest first."""
    below = [c for c in cells if c["measured_pct"] < pct]
    above = [c for c in cells if c["measured_pct"] >= pct]
    near = [max(below, key=lambda c: c["measured_pct"])] if below else []
    if above:
        near.append(min(above, key=lambda c: c["measured_pct"]))
    return near


def rates_text(mode, m):
    """The error rates measured of `mode` (m: measured_rates(mode), or
    None), in words."""
    if not m:
        return f"error rates of {mode} comparisons not measured"
    k, n = m["false_alarms"], m["comparisons"]
    found = []
    for path, cells in m["power"].items():
        near = _around(list(cells.values()))
        if near:
            found.append(" and ".join(f"{c['measured_pct']:g} % {c['slower']}/{c['comparisons']}"
                                      for c in near) + f" {_PATH_NAMES.get(path, path)}")
    power = (f"; slowdowns found, of those measured nearest 5 %: {'; '.join(found)} "
             f"(within {m['budget_s']:g} s)") if found else ""
    return (f"measured for {mode} comparisons on {m['machine']}: false alarms {k}/{n} "
            f"({100 * k / n:.1f} %){power}")


def line(r):
    """One line: the sides, B/A and its interval, the verdict and the
    method (r.outcome.text()), rounds and time, then the rates."""
    emulated = " [emulated guests: not a performance figure]" if r.emulated else ""
    o = r.outcome
    return (f"{r.mode} A/B: A = {r.a.text}, B = {r.b.text}: {o.text()}; "
            f"{len(r.rounds)} rounds in {r.wall_s:.0f} s (stopped by {r.stopped_by}, "
            f"{r.measured_fraction * 100:.0f} % of it measured){emulated} [{o.rates_text}]")


def markdown(r):
    """A table fit for a commit message: both sides' median figures, B/A,
    its interval, the verdict, the rounds and the time, then how it was
    measured."""
    o = r.outcome
    a_med = statistics.median(r.a_mps()) if r.rounds else math.nan
    b_med = statistics.median(r.b_mps()) if r.rounds else math.nan
    conf = f"{o.confidence * 100:g} %"
    fig = (f"{o.ratio:.4f}", f"{o.low:.4f}..{o.high:.4f}") if o.ratio is not None \
        else ("-", "-")
    rows = [
        "| side | benchmark | median M/s |",
        "|---|---|---|",
        f"| A | `{r.a.text}` | {a_med:.3f} |",
        f"| B | `{r.b.text}` | {b_med:.3f} |",
        "",
        f"| B/A | {conf} interval | verdict | rounds | time |",
        "|---|---|---|---|---|",
        f"| {fig[0]} | {fig[1]} | {o.verdict_text()} | {len(r.rounds)} | "
        f"{r.wall_s:.0f} s |",
        "",
        f"{r.mode} rounds of {r.metadata.get('warmup')} s warm-up + "
        f"{r.metadata.get('duration')} s measured per run, sides in a random order "
        f"(seed {r.seed}); a confidence sequence on the rounds' log ratios, "
        f"threshold \u00b1{r.threshold * 100:g} %, stopped by {r.stopped_by}; "
        f"kernel {r.metadata.get('kernel', '?')}, {r.metadata.get('nr_cpus', '?')} "
        f"CPUs ({r.metadata.get('cpu_model', '?')}), benchbpf "
        f"{r.metadata.get('benchbpf_version', '?')}.",
    ]
    if r.emulated:
        rows.append("Emulated guests: the verdict is about emulation, never about speed.")
    rows.append(f"Error rates: {o.rates_text}.")
    return "\n".join(rows)
