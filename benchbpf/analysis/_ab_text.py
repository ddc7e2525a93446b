"""ab's presentation: an ABResult as one line, as a Markdown table, and the
error rates measured for its mode in words.  Reading the measured rates
(the package's ab_measured.json) happens once, where a result is made
(measured_rates); printing only formats."""
import json
import math
import os
import statistics

from ..results import stats
from ._ab_rule import DISTURBANCES


#: Error rates measured on the project's machines for each mode
#: (scripts/ab_power.py --package-data; results/ab-power-robust-2cpu.md).
MEASURED_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ab_measured.json")


def measured_rates(mode):
    """What was measured of `mode` on the project's machines: a list, one
    dict per machine, rule, alpha and budget measured, each with
    "false_alarms" and "comparisons" (identical sides), "power" (path, "user"
    or "bpf" -> nominal slowdown -> {"slower", "comparisons", "measured_pct":
    the slowdown the cell's rounds measured}), "rule", "alpha", "budget_s",
    "benchmarks", "machine" (in words), "taken", and where the records named
    it, "cpu_model" and "nr_cpus"; None where that mode was not measured."""
    try:
        with open(MEASURED_PATH) as f:
            got = json.load(f).get(mode)
    except (OSError, ValueError):
        return None
    return list(got) if got else None


def _differences(m, rule, alpha, budget_s, names):
    """How a comparison asked with rule, alpha, budget_s and benchmark names
    (None: not asked) differs from what m was measured at, in words."""
    m_rule, m_alpha, m_budget = _measured_at(m)
    differs = [f"{what} {shown}" for what, mine, theirs, shown in (
        ("rule", rule, m_rule, rule), ("alpha", alpha, m_alpha, f"{alpha:g}"),
        ("budget", budget_s, m_budget, f"{budget_s:g} s")) if mine is not None and mine != theirs]
    unmeasured = sorted(set(names) - set(m.get("benchmarks", names)))
    if unmeasured:
        differs.append(f"benchmark {', '.join(unmeasured)}")
    return differs


def _settings(measured):
    """measured_rates()'s list, from it, one of its dicts or None."""
    return [measured] if isinstance(measured, dict) else list(measured or ())


def _nearness(m, machine):
    """0 for a setting measured on `machine` (a mapping with "cpu_model" and
    "nr_cpus", or None: not known), 1 for one whose records named no
    machine, 2 for one measured on another: this machine's rates first."""
    if "cpu_model" not in m:
        return 1
    mine = machine and (machine.get("cpu_model"), machine.get("nr_cpus"))
    return 0 if mine == (m["cpu_model"], m.get("nr_cpus")) else 2


def _ranked(measured, machine):
    ms = _settings(measured)
    return sorted(ms, key=lambda m: _nearness(m, machine))


def applicable(measured, rule=None, alpha=None, budget_s=None, names=(), machine=None):
    """Of measured (measured_rates(mode): a list, or one dict, or None) the
    setting measured as the comparison was asked, or None; where several
    machines were, the one measured on `machine` (a mapping with "cpu_model"
    and "nr_cpus", as a result's metadata has them), or else the first."""
    return _first_applicable(_ranked(measured, machine), rule, alpha, budget_s, names)


def _first_applicable(ranked, rule, alpha, budget_s, names):
    return next((m for m in ranked if not _differences(m, rule, alpha, budget_s, names)),
                None)


_PATH_NAMES = {"user": "in user space", "bpf": "on the BPF path"}


def _around(cells, pct=5.0):
    """The measured cells nearest below and above pct, smallest first."""
    below = [c for c in cells if c["measured_pct"] < pct]
    above = [c for c in cells if c["measured_pct"] >= pct]
    near = [max(below, key=lambda c: c["measured_pct"])] if below else []
    if above:
        near.append(min(above, key=lambda c: c["measured_pct"]))
    return near


def _measured_at(m):
    # Comparisons measured before rules had names used the mean rule at ab's
    # alpha then, 0.05.
    return m.get("rule", "mean"), m.get("alpha", 0.05), m["budget_s"]


def _share(k, n):
    lo, hi = stats.clopper_pearson(k, n)
    return f"{k}/{n} ({100 * lo:.0f}..{100 * hi:.0f} %)"


def _at(m):
    m_rule, m_alpha, m_budget = _measured_at(m)
    return f"{m_rule} rule, alpha {m_alpha:g}, {m_budget:g} s budget"


def rates_text(mode, measured, rule=None, alpha=None, budget_s=None, names=(), machine=None):
    """The error rates measured of `mode` (measured: measured_rates(mode),
    one of its dicts, or None), in words, each with its Clopper-Pearson 95 %
    interval and the machine, rule, alpha and budget they were measured at:
    those of the setting measured as the comparison was asked (applicable:
    on `machine` where it was measured there).  When none was (its rule,
    alpha, budget_s or benchmark names, None: not asked, differ from every
    setting's), the words say that the rates do not apply, how the nearest
    setting differs, and print none."""
    ms = _ranked(measured, machine)
    if not ms:
        return f"error rates of {mode} comparisons not measured"
    m = _first_applicable(ms, rule, alpha, budget_s, names)
    if m is None:
        near = min(ms, key=lambda x: len(_differences(x, rule, alpha, budget_s, names)))
        differs = _differences(near, rule, alpha, budget_s, names)
        return (f"error rates measured for {mode} comparisons on {near['machine']} at "
                f"{' and at '.join(_at(x) for x in ms if x['machine'] == near['machine'])} "
                "do not apply to this one "
                f"({'; '.join(differs)}): results/ab-power-robust-2cpu.md has the "
                "simulated rates of each rule")
    at = _at(m)
    found = []
    for path, cells in m["power"].items():
        near = _around(list(cells.values()))
        if near:
            found.append(" and ".join(f"{c['measured_pct']:g} % "
                                      f"{_share(c['slower'], c['comparisons'])}"
                                      for c in near) + f" {_PATH_NAMES.get(path, path)}")
    power = (f"; slowdowns found, of those measured nearest 5 %: {'; '.join(found)}"
             if found else "" if m["power"] else "; how often it finds a slowdown: "
             "not measured at this setting")
    return (f"measured for {mode} comparisons on {m['machine']} at {at} (95 % intervals): "
            f"false alarms {_share(m['false_alarms'], m['comparisons'])}{power}")


def disturbed_text(r):
    """"3 of 21 rounds disturbed (steal, preemption)", and how many more
    were set aside, disturbed, to be replaced (r: an ABResult)."""
    per_round = [rnd.disturbed for rnd in r.rounds]
    hit = [why for why in per_round if why]
    reasons = [w for w in DISTURBANCES if any(w in why for why in hit)]
    text = f"{len(hit)} of {len(per_round)} rounds disturbed" + (
        f" ({', '.join(reasons)})" if reasons else "")
    if r.set_aside_disturbed:
        text += f"; {len(r.set_aside)} more, disturbed, set aside"
    return text


def line(r):
    """One line: the sides, B/A and its interval, the verdict and the
    method (r.outcome.text()), rounds and time, then the rates."""
    emulated = " [emulated guests: not a performance figure]" if r.emulated else ""
    o = r.outcome
    return (f"{r.mode} A/B: A = {r.a.text}, B = {r.b.text}: {o.text()}; "
            f"{len(r.rounds)} rounds in {r.wall_s:.0f} s (stopped by {r.stopped_by}, "
            f"{r.measured_fraction * 100:.0f} % of it measured; {disturbed_text(r)})"
            f"{emulated} [{o.rates_text}]")


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
        f"{r.mode} rounds of {_warmup_text(r.metadata.get('warmup'))} warm-up + "
        f"{r.metadata.get('duration')} s measured per run, sides in a random order "
        f"(seed {r.seed}); {o.method} (rule {r.rule}), "
        f"threshold \u00b1{r.threshold * 100:g} %, stopped by {r.stopped_by}; "
        f"kernel {r.metadata.get('kernel', '?')}, {r.metadata.get('nr_cpus', '?')} "
        f"CPUs ({r.metadata.get('cpu_model', '?')}), benchbpf "
        f"{r.metadata.get('benchbpf_version', '?')}.",
    ]
    rows.append(f"Host: {disturbed_text(r)}.")
    if r.emulated:
        rows.append("Emulated guests: the verdict is about emulation, never about speed.")
    rows.append(f"Error rates: {o.rates_text}.")
    return "\n".join(rows)


def _warmup_text(warmup):
    """A run's warm-up as prose: "auto" (it ends once steady) has no unit."""
    return "auto" if warmup == "auto" else f"{warmup} s"
