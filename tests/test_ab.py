"""benchbpf.ab: sides measured in turns, the sequential rule, duets, the CLI.

The rule's error rates are checked on seeded simulated series (no BPF);
the comparisons themselves run real benchmarks, briefly, and assert only
what holds on a busy machine: a change of 2x is found, identical sides are
never called different beyond the threshold."""
import json
import math
import re
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import benchbpf
from benchbpf import ab as ab_module
from benchbpf.analysis import _ab_sim, _ab_text
from conftest import rejected_before_loading

#: Short comparisons: what the tests can afford, not what a user would run.
QUICK = dict(warmup=0.1, duration=0.3, interval=0.05, progress=False)


def _clopper_pearson_upper(k, n, confidence=0.95):
    """Upper end of the exact binomial interval of k in n (bisection)."""
    lo, hi = k / n, 1.0
    target = (1 - confidence) / 2
    for _ in range(60):
        mid = (lo + hi) / 2
        tail = sum(math.comb(n, i) * mid ** i * (1 - mid) ** (n - i) for i in range(k + 1))
        lo, hi = (mid, hi) if tail > target else (lo, mid)
    return hi


# ---------------------------------------------------------------- the rule

@pytest.mark.parametrize("fast_sd", [0.05, 0.2])
def test_the_sequential_rule_keeps_false_alarms_under_alpha_at_every_look(fast_sd):
    # 300 comparisons of identical sides, looked at after every one of up to
    # 100 rounds, on a host with slow phases and disturbed runs.
    rates = ab_module.simulate(effect=0.0, n=300, rounds=100, seed=11, fast_sd=fast_sd)
    alarms = rates.slower + rates.faster
    assert alarms / rates.n <= 0.05
    # Not a rule that never speaks: the rate is measured, and the exact
    # interval of it reaches no further than a little over alpha.
    assert _clopper_pearson_upper(alarms, rates.n) < 0.08


def test_a_fixed_n_interval_looked_at_every_round_would_not():
    # The reason for a sequence: Student's interval at every look, same series.
    import random
    rng = random.Random(5)
    alarms = 0
    for _ in range(300):
        logs = ab_module.simulated_log_ratios(rng, 100, 0.0, 0.05, 0.10, 120.0, 3.0, 0.03,
                                              0.03, 0.5, 3)
        for k in range(4, 101):
            lo, hi = benchbpf.results.stats.mean_ci(logs[:k])
            if hi < 0 or lo > 0:
                alarms += 1
                break
    assert alarms / 300 > 0.15


def test_the_rule_finds_larger_changes_more_often_and_sooner():
    rates = [ab_module.simulate(effect=e, n=150, rounds=100, seed=3)
             for e in (0.02, 0.05, 0.10, 0.25)]
    powers = [r.power for r in rates]
    assert powers == sorted(powers)
    assert rates[-1].power == 1.0 and rates[-2].power >= 0.95
    assert rates[-1].median_rounds < rates[-2].median_rounds < 100
    assert all(r.faster == 0 for r in rates[2:])


def test_verdicts_follow_the_interval():
    from benchbpf.analysis import _ab_rule
    from benchbpf.analysis._outcome import verdict_of
    v = verdict_of
    assert v(0.99, 1.01, 0.02) == ("same", False)
    assert v(0.90, 0.95, 0.02) == ("slower", True)
    assert v(0.97, 0.995, 0.02) == ("slower", False)
    assert v(1.03, 1.10, 0.02) == ("faster", True)
    assert v(0.95, 1.05, 0.02) == ("undecided", False)
    decided = _ab_rule.decided
    assert decided(3, 0.9, 0.85, 0.95, 0.02, 0.01) is None   # too few rounds
    assert decided(10, 0.9, 0.85, 0.95, 0.02, 0.01) == "decided"
    assert decided(10, 1.0, 0.995, 1.005, 0.02, 0.01) == "decided"
    assert decided(10, 0.985, 0.976, 0.994, 0.02, 0.01) == "precision"
    assert decided(10, 0.985, 0.95, 1.02, 0.02, 0.01) is None


def test_every_stored_round_series_replays_to_its_recorded_verdict():
    # The rounds of real comparisons (scripts/ab_power.py's records), replayed
    # through the rule as ab() ran it, end with the verdict ab() gave them.
    from benchbpf.analysis import _ab_rule
    from benchbpf.analysis._outcome import verdict_of
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    n = 0
    for name in ("ab-power-2cpu.jsonl", "ab-power-truth-2cpu.jsonl"):
        with open(os.path.join(root, "results", name)) as f:
            for line in f:
                d = json.loads(line)
                if d.get("round_log_ratios") is None:
                    continue    # a `benchbpf compare` cell: no rounds
                truth = d["kind"] == "truth"
                warmup = ab_module.DUET_WARMUP_S if d["method"] == "duet" else "auto"
                nominal = ab_module.round_seconds(d["method"], warmup, ab_module.DURATION_S)
                planned = 60 if truth else ab_module.planned_rounds(nominal, d["budget_s"])
                # They were taken before rules had names: by the mean rule.
                _, low, high = _ab_rule.interval(d["round_log_ratios"], _ab_rule.ALPHA,
                                                 planned, "mean")
                threshold = ab_module.MIN_THRESHOLD if truth else ab_module.THRESHOLD
                assert verdict_of(low, high, threshold) == (d["verdict"], d["beyond"]), d
                n += 1
    assert n == 256


def test_budget_rounds_is_abs_own_budget_check_on_recorded_times():
    # A comparison run to a long budget holds those of shorter ones
    # (scripts/ab_power.py --full-series): budget_rounds says where each ends.
    ends = [3.0 * k for k in range(1, 11)]
    assert ab_module.budget_rounds(ends, 10) == 3       # 9 s + 3 s a round > 10
    assert ab_module.budget_rounds(ends, 12) == 4
    assert ab_module.budget_rounds(ends, 1000) == 10    # never stopped: all of them
    with pytest.raises(ValueError, match="budget=-1"):
        ab_module.budget_rounds(ends, -1)
    # Every stored comparison that ab stopped by its budget ends, by the
    # rounds' recorded times, where ab ended it, and at half that budget sooner.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    n = 0
    with open(os.path.join(root, "results", "ab-power-2cpu.jsonl")) as f:
        for line in f:
            d = json.loads(line)
            if d.get("stopped_by") != "budget":
                continue
            ends = d["round_starts_s"][1:] + [d["wall_s"]]
            assert ab_module.budget_rounds(ends, d["budget_s"]) == len(ends), d["started"]
            assert ab_module.budget_rounds(ends, d["budget_s"] / 2) < len(ends) * 0.6
            n += 1
    assert n == 97


def _fake_round(i, a_mps, b_mps):
    def made(mps):
        return benchbpf.Result("count-local", {"interval": 0.001, "work_per_hit": 0}, tuple(
            benchbpf.Sample(interval_ns=1_000_000, hits=int(mps * 1000 + k % 3))
            for k in range(50)))
    return ab_module.Round(i, made(a_mps), made(b_mps))


def test_printing_reads_no_package_data(monkeypatch):
    # The measured rates are read once, when the result is made; printing
    # it later only formats them.
    rounds = [_fake_round(i, 30, 15) for i in range(8)]
    # The rule, alpha and budget the rates were measured at, so that they apply.
    r = ab_module.ABResult(ab_module.Side("count-local", {}), ab_module.Side("count-local", {}),
                           "interleaved", rounds, "decided", 20.0, budget_s=120.0)
    assert r.measured == ab_module.measured_rates("interleaved") is not None
    assert r.outcome.rates in r.measured
    monkeypatch.setattr(_ab_text, "MEASURED_PATH", "/nonexistent/ab_measured.json")
    assert ab_module.measured_rates("interleaved") is None
    text, md = str(r), r.to_markdown()
    assert "measured for interleaved comparisons" in text and "false alarms" in md
    assert r.outcome.verdict == "slower" and r.outcome.rates in r.measured
    # Loaded from JSON, a comparison reads them as it is made, once.
    again = ab_module.ABResult.from_dict(json.loads(json.dumps(r.as_dict())))
    assert again.measured is None and "not measured" in str(again)


# ---------------------------------------------------------------- checks

def test_bad_comparisons_are_refused_before_anything_loads():
    with rejected_before_loading(ValueError, "b:", "unknown benchmark", "count-locl"):
        benchbpf.ab("count-local", "count-locl", **QUICK)
    with rejected_before_loading(ValueError, "rb-libbpf", "pb-libbpf", "different_benchmarks"):
        benchbpf.ab("rb-libbpf", "pb-libbpf", **QUICK)
    with rejected_before_loading(ValueError, "budget=2", "8 rounds"):
        benchbpf.ab("count-local", "count-local", budget=2, **QUICK)
    with rejected_before_loading(ValueError, "precision=0.9", "0.001..0.5"):
        benchbpf.ab("count-local", "count-local", precision=0.9, **QUICK)
    with rejected_before_loading(ValueError, "threshold=0", "0.001..0.5"):
        benchbpf.ab("count-local", "count-local", threshold=0, **QUICK)
    with rejected_before_loading(ValueError, "a:", "work_per_hit=-1"):
        benchbpf.ab("count-local --work-per-hit -1", "count-local", **QUICK)
    with rejected_before_loading(ValueError, "b:", "duration=", "inside a side"):
        benchbpf.ab("count-local", ("count-local", {"duration": 3}), **QUICK)
    with rejected_before_loading(ValueError, "b:", "-d", "both sides"):
        benchbpf.ab("count-local", "count-local -d 3", **QUICK)
    with rejected_before_loading(ValueError, "bpf-nop", "BPF-timed"):
        benchbpf.ab("bpf-nop", "bpf-nop", **QUICK)
    with rejected_before_loading(ValueError, "host", "guest"):
        benchbpf.ab("--kernel host count-local", "--kernel 6.1 count-local", **QUICK)
    with rejected_before_loading(TypeError, "a=", "side"):
        benchbpf.ab(42, "count-local", **QUICK)
    with rejected_before_loading(ValueError, "min_rounds=12", "8..10"):
        benchbpf.ab("count-local", "count-local", max_rounds=10, min_rounds=12, **QUICK)
    with rejected_before_loading(ValueError, "min_rounds=4", "8.."):
        benchbpf.ab("count-local", "count-local", min_rounds=4, **QUICK)
    with rejected_before_loading(ValueError, "rule='nosuch'", "huber, median, mean"):
        benchbpf.ab("count-local", "count-local", rule="nosuch", **QUICK)


def test_round_counts_are_checked_by_the_shared_int_range_check():
    # max_rounds and min_rounds: the messages _runner._count writes, one rule.
    from benchbpf.harness import _runner
    for kwargs, name, value, lo, hi, why in (
            (dict(max_rounds=3), "max_rounds", 3, 8, ab_module.MAX_ROUNDS, ", or None"),
            (dict(min_rounds=4), "min_rounds", 4, 8, ab_module.MAX_ROUNDS, "")):
        with pytest.raises(ValueError) as shared:
            _runner._count(name, value, lo, hi, why)
        with rejected_before_loading(ValueError, str(shared.value)):
            benchbpf.ab("count-local", "count-local", **kwargs, **QUICK)
    with rejected_before_loading(TypeError, "max_rounds=2.5", "must be an int"):
        benchbpf.ab("count-local", "count-local", max_rounds=2.5, **QUICK)
    with rejected_before_loading(ValueError, "budget=-1", "seconds of wall time"):
        benchbpf.ab("count-local", "count-local", budget=-1, **QUICK)


def test_the_budget_is_the_one_shared_rule(monkeypatch):
    # ab asks _runner.next_would_overrun after each round, with the budget,
    # the time spent and the rounds taken; when it says so, ab stops.
    from benchbpf.harness import _runner
    asked = []

    def overrun(budget, spent_s, done):
        asked.append((budget, spent_s, done))
        return True
    monkeypatch.setattr(_runner, "next_would_overrun", overrun)
    r = benchbpf.ab("count-local", "count-local", budget=60, **QUICK)
    assert r.stopped_by == "budget" and len(r.rounds) == 1
    assert len(asked) == 1 and asked[0][0] == 60.0 and asked[0][2] == 1 and asked[0][1] > 0
    # Interleaved precision runs ask it too, once each has its first run.
    asked.clear()
    got = _runner.run_interleaved([
        (label, "count-local", {"precision": 0.05, "duration": 3, "warmup": 0.1,
                                "interval": 0.05}) for label in ("x", "y")], budget_s=60)
    assert [r.stopped_by for r in got] == ["budget", "budget"]
    assert [r.params.get("precision") for r in got] == [0.05, 0.05]
    assert [d for _, _, d in asked] == [2, 2] and all(b == 60.0 for b, _, _ in asked)


def test_ab_and_ringbuf_are_callable_through_one_module_type(monkeypatch):
    from benchbpf import _callable, ringbuf
    assert type(ab_module) is type(ringbuf) is _callable.CallableModule
    # The call looks the function up each time: a patched one is called.
    monkeypatch.setattr(ab_module, "ab", lambda *a, **k: ("ab", a, k))
    monkeypatch.setattr(ringbuf, "ringbuf", lambda *a, **k: ("ringbuf", a, k))
    assert ab_module("x", seed=1) == ("ab", ("x",), {"seed": 1})
    assert ringbuf(2) == ("ringbuf", (2,), {})


def test_a_duet_is_refused_where_the_cpus_are_too_few_for_both_sides():
    n = len(os.sched_getaffinity(0))
    # More producers than half the CPUs: cannot fit, whatever the machine.
    producers = n // 2 + 1
    with rejected_before_loading(ValueError, "duet", f"{producers} threads",
                                 "interleaved"):
        benchbpf.ab(f"count-local -p {producers}", "count-local", mode="duet", **QUICK)
    with rejected_before_loading(ValueError, "trig-rawtp", "every process", "duet"):
        benchbpf.ab("trig-rawtp", "trig-rawtp", mode="duet", **QUICK)
    with rejected_before_loading(ValueError, "prod_affinity", "places each side"):
        benchbpf.ab("count-local --prod-affinity 0", "count-local", mode="duet", **QUICK)


# ---------------------------------------------------------------- real runs

def test_identical_sides_are_never_called_different_beyond_the_threshold():
    r = benchbpf.ab("count-local", "count-local", budget=20, **QUICK)
    assert len(r.rounds) >= ab_module.MIN_ROUNDS
    assert not r.beyond_threshold, str(r)
    assert r.low <= 1 <= r.high or r.verdict == "same", str(r)
    # Every round ran both sides, loaded anew, in a recorded order.
    assert all(rnd.first in ("a", "b") for rnd in r.rounds)
    assert {rnd.first for rnd in r.rounds} <= {"a", "b"}
    assert all(rnd.a.mean > 0 and rnd.b.mean > 0 for rnd in r.rounds)


def test_twice_the_work_per_hit_is_called_slower_within_a_minute():
    r = benchbpf.ab("count-local --work-per-hit 40", "count-local --work-per-hit 80",
                    budget=60, **QUICK)
    assert r.verdict == "slower" and r.beyond_threshold, str(r)
    assert r.wall_s < 60
    assert r.high < 0.9


def test_a_comparison_reads_saves_and_reloads(tmp_path):
    r = benchbpf.ab("count-local", "count-local --work-per-hit 40", max_rounds=8,
                    budget=None, seed=7, **QUICK)
    text = str(r)
    assert "A = count-local" in text and "B = count-local --work-per-hit 40" in text
    assert "B/A" in text and r.verdict in text and "rounds" in text
    md = r.to_markdown()
    assert md.count("\n| ") >= 4 and "| B/A |" in md and "seed 7" in md
    path = tmp_path / "ab.json"
    r.to_json(path)
    again = benchbpf.ABResult.from_json(path)
    assert again.ratio == r.ratio and again.verdict == r.verdict
    assert [x.ratio for x in again.rounds] == [x.ratio for x in r.rounds]
    assert json.loads(path.read_text())["format"] == "benchbpf-ab"
    # The seed fixes the order of the sides.
    assert [x.first for x in r.rounds] == [x.first for x in benchbpf.ab(
        "count-local", "count-local --work-per-hit 40", max_rounds=8, budget=None,
        seed=7, **QUICK).rounds]
    assert 0 < r.measured_fraction <= 1


def test_min_rounds_equal_to_max_rounds_takes_a_fixed_number_of_rounds():
    # A 2x slowdown is decided by round 8; min_rounds holds the verdict back,
    # so that an effect can be measured at length.
    r = benchbpf.ab("count-local --work-per-hit 40", "count-local --work-per-hit 80",
                    max_rounds=10, min_rounds=10, budget=None, **QUICK)
    # At round 10 both the verdict and max_rounds stop it; the verdict is named.
    assert len(r.rounds) == 10 and r.stopped_by in ("decided", "max_rounds"), str(r)
    assert r.verdict == "slower"


def test_ctrl_c_keeps_the_finished_rounds(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    def interrupt_in_round_3(rnd, so_far):
        if rnd.index == 1:
            threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
    import leakcheck
    before = leakcheck.snapshot()
    with pytest.raises(benchbpf.Interrupted) as info:
        benchbpf.ab("count-local", "selftest", different_benchmarks=True, budget=None,
                    max_rounds=10, on_round=interrupt_in_round_3, **QUICK)
    partial = info.value.partial
    assert isinstance(partial, benchbpf.ABResult)
    assert len(partial.rounds) == 2 and partial.stopped_by == "interrupted"
    assert benchbpf.ABResult.from_json(info.value.path).ratios == partial.ratios
    assert "interrupted after 2 rounds" in capsys.readouterr().err
    assert not leakcheck.snapshot().bpf_fds
    assert leakcheck.snapshot().threads == before.threads


# ---------------------------------------------------------------- the CLI

def _cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "benchbpf", "ab", *args],
                          capture_output=True, text=True, timeout=timeout)


def test_the_command_runs_a_comparison_and_saves_it(tmp_path):
    out = tmp_path / "ab.json"
    p = _cli("-w", "0.1", "-d", "0.3", "--interval", "0.05", "--max-rounds", "8",
             "--json", str(out), "--markdown", "count-local", "--",
             "count-local", "--work-per-hit", "40")
    assert p.returncode == 0, p.stderr
    assert "interleaved A/B: A = count-local, B = count-local --work-per-hit 40" in p.stdout
    assert "| B/A |" in p.stdout
    assert p.stderr.count("round ") == 8
    assert benchbpf.ABResult.from_json(out).b.options["work_per_hit"] == 40


@pytest.mark.parametrize("args, words", [
    (["count-local"], "no `--`"),
    (["count-local", "--"], "side B is missing"),
    (["count-local", "--", "nosuch"], "unknown benchmark"),
    (["rb-libbpf", "--", "pb-libbpf"], "different_benchmarks"),
    (["--budget", "1", "count-local", "--", "count-local"], "8 rounds"),
    (["--precision", "90", "count-local", "--", "count-local"], "--precision"),
    (["--rule", "nosuch", "count-local", "--", "count-local"], "--rule"),
    (["--fail-on", "worse", "count-local", "--", "count-local"], "--fail-on"),
])
def test_the_command_refuses_bad_comparisons_with_status_2(args, words):
    p = _cli(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert words in p.stderr, p.stderr


# ---------------------------------------------------------------- duets

def _children():
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as f:
        return f.read().split()


def test_a_duet_runs_both_sides_at_once_on_swapped_cpus():
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("a duet needs two CPUs")
    before = _children()
    r = benchbpf.ab("selftest", "selftest --bpf-work 1000", mode="duet", budget=60,
                    warmup=0.2, duration=0.4, interval=0.1, progress=False)
    assert r.mode == "duet" and r.verdict == "slower" and r.beyond_threshold, str(r)
    for rnd in r.rounds:
        assert rnd.first is None
        assert set(rnd.a_cpus).isdisjoint(rnd.b_cpus)
        # Each side's threads ran where the round put them.
        assert list(rnd.a.metadata["producer_cpus"]) == list(rnd.a_cpus[:1])
        assert list(rnd.b.metadata["producer_cpus"]) == list(rnd.b_cpus[:1])
        # Each side counted its own calls only: its BPF hits match them.
        for side in (rnd.a, rnd.b):
            calls = sum(s.extra["calls"] for s in side.samples)
            hits = sum(s.hits for s in side.samples)
            assert abs(hits - calls) <= 0.01 * calls + 2, (hits, calls)
            # The other side is a companion, not a concurrent run.
            assert side.metadata["concurrent_runs"] in (0, None)
    assert r.rounds[0].a_cpus == r.rounds[1].b_cpus   # swapped every round
    # Both started at one time, and so measured the same window.
    assert all(rnd.a.metadata["duet_start_ns"] == rnd.b.metadata["duet_start_ns"]
               for rnd in r.rounds)
    assert len({rnd.a.metadata["duet_start_ns"] for rnd in r.rounds}) == len(r.rounds)
    assert _children() == before   # both workers ended


def test_a_duet_side_that_fails_stops_the_comparison_and_its_partner():
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("a duet needs two CPUs")
    import leakcheck
    before = _children()
    with pytest.raises(benchbpf.BenchmarkError, match="side B.*setup-attach"):
        benchbpf.ab("selftest", "selftest --fault setup-attach", mode="duet", budget=60,
                    warmup=0.2, duration=0.4, interval=0.1, progress=False)
    assert _children() == before
    assert not leakcheck.snapshot().bpf_fds


def test_a_duet_of_different_benchmarks_warns_that_their_cross_costs_differ():
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("a duet needs two CPUs")
    with pytest.warns(benchbpf.analysis.BenchmarkMismatchWarning,
                      match="other side's programs.*interleaved"):
        r = benchbpf.ab("count-local", "selftest", mode="duet", different_benchmarks=True,
                        budget=None, max_rounds=8, **QUICK)
    assert len(r.rounds) == 8


def test_ctrl_c_in_a_duet_stops_both_workers(monkeypatch, tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("a duet needs two CPUs")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    before = _children()

    def interrupt_in_round_2(rnd, so_far):
        if rnd.index == 0:
            threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    with pytest.raises(benchbpf.Interrupted) as info:
        benchbpf.ab("count-local", "count-local", mode="duet", budget=None, max_rounds=10,
                    warmup=0.2, duration=0.6, interval=0.1, progress=False,
                    on_round=interrupt_in_round_2)
    assert len(info.value.partial.rounds) == 1
    assert _children() == before


# ---------------------------------------------------------------- measured rates

#: The records whose rates ab_measured.json ships: (record, its truth cells,
#: the rule and the budget whose comparisons count, and the record whose
#: known slowdowns count instead of its own; None: the record's own).
RECORDS_SHIPPED = [("ab-power-2cpu.jsonl", "ab-power-truth-2cpu.jsonl", None, None, None),
                   ("ab-power-robust-live-2cpu.jsonl", "ab-knobs-2cpu.jsonl", "median", 60.0,
                    None),
                   ("ab-power-robust-live-intel-calibrated-2cpu.jsonl",
                    "ab-knobs-calib-intel-2cpu.jsonl", "median", 60.0, None),
                   ("ab-power-robust-live-300-v1300-2cpu.jsonl", "ab-knobs-2cpu.jsonl",
                    "median", 300.0, "ab-power-robust-live-300-2cpu.jsonl")]


def _ab_power_script():
    """scripts/ab_power.py, imported as when it runs: its folder first on
    sys.path, for its siblings."""
    import importlib.util
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "scripts")
    spec = importlib.util.spec_from_file_location(
        "ab_power", os.path.join(folder, "ab_power.py"))
    script = importlib.util.module_from_spec(spec)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(script)
    finally:
        sys.path.remove(folder)
    return script


def test_a_record_holds_one_machines_comparisons(tmp_path):
    """ab_power.py's rows name their machine: a knob's size belongs to it.
    Appending another machine's rows is refused, and a record whose rows name
    two machines cannot be packaged as one machine's rates."""
    script = _ab_power_script()
    here = script._machine()
    there = dict(here, cpu_model="Other CPU", nr_cpus=here["nr_cpus"] + 2)
    assert script.other_machines([{}, {"machine": here}], here) == []
    assert script.other_machines([{"machine": there}, {"machine": there}], here) == [there]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "results", "ab-power-robust-live-2cpu.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()][:4]
    record = tmp_path / "mixed.jsonl"
    record.write_text("".join(json.dumps(dict(r, machine=m)) + "\n"
                              for r, m in zip(rows, (here, there, here, there))))
    with pytest.raises(ValueError, match="name 2 machines"):
        script.package_data(str(record))
    shipped = tmp_path / "measured.json"
    asked = script.argparse.Namespace(
        simulate=False, list_cells=False, summarize=str(record), write_knobs=None,
        package_data=str(shipped), truth=None, package_rule=None, package_budget=None,
        package_power=None)
    with pytest.raises(SystemExit, match="--package-data .*name 2 machines"):
        script._other(asked)
    assert not shipped.exists()
    args = script.argparse.Namespace(out=str(record), cells=None)
    script._planned = lambda args: []
    with pytest.raises(SystemExit, match="Other CPU"):
        script.run(args)


def test_power_from_another_record_of_the_machine_is_not_pooled(tmp_path):
    """--package-power: an entry's false alarms come from the summarized
    record alone and its known slowdowns from the power record alone, which
    may be another kernel build of the same machine, never another CPU or
    kernel version."""
    script = _ab_power_script()
    here = dict(script._machine(), kernel_release="6.18.44-build-a")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "results", "ab-power-robust-live-2cpu.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    same = [r for r in rows if r["kind"] == "false" and r["method"] == "interleaved"]
    slower = [r for r in rows if r["kind"] == "power" and r["method"] == "interleaved"
              and r["path"] == "user" and r["effect"] == 0.05]

    def record(name, chosen, machine):
        path = tmp_path / name
        path.write_text("".join(json.dumps(dict(r, machine=machine)) + "\n" for r in chosen))
        return str(path)
    identical = record("identical.jsonl", same[:5], here)
    power = record("power.jsonl", same[5:8] + slower[:4],
                   dict(here, kernel_release="6.18.44-build-b"))
    made = script.package_data(identical, None, "median", 60.0, power)["interleaved"]
    assert made["comparisons"] == 5
    assert made["false_alarms"] == sum(
        script.replay_series(r, "median", False, 60.0)["verdict"] in ("slower", "faster")
        for r in same[:5])
    assert made["power"] == {"user": {"0.05": dict(
        slower=sum(script.replay_series(r, "median", False, 60.0)["verdict"] == "slower"
                   for r in slower[:4]),
        comparisons=4, measured_pct=made["power"]["user"]["0.05"]["measured_pct"])}}
    assert made["machine"].endswith("kernel 6.18.44") and made["cpu_model"] == here["cpu_model"]
    assert script.package_data(identical, None, "median", 60.0)["interleaved"]["power"] == {}
    for other in (dict(here, cpu_model="Other CPU"), dict(here, kernel_release="6.19.1-a")):
        elsewhere = record("elsewhere.jsonl", slower[:4], other)
        with pytest.raises(ValueError, match="one entry states one machine"):
            script.package_data(identical, None, "median", 60.0, elsewhere)


def _cut(script, row, k):
    """A --full-series row as it stood after its first k rounds."""
    starts = row["round_starts_s"]
    end = starts[k] if k < len(starts) else row["wall_s"]
    keys = ("round_log_ratios", "round_disturbed", "round_starts_s", "round_host",
            "round_index", "round_cpu_share_median")
    return dict(row, wall_s=end, measured_s=row["measured_s"] * end / row["wall_s"],
                **{key: row[key][:k] for key in keys if key in row})


def test_a_series_stopped_once_settled_replays_as_the_whole_series():
    """ab_power.py --until-settled stops a --full-series comparison at the
    first round where settled() says no replay can change.  On every stored
    series, cut there, each rule's replay (set aside or not, at each
    budget) gives the verdict, interval, rounds and time of the whole
    series'.  A settled() that waited for nothing would fail the first
    check; one that never said yes, the second."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = _ab_power_script()
    keys = ("rule", "set_aside_disturbed", "budget_s", "verdict", "beyond", "ratio",
            "low", "high", "rounds", "wall_s", "stopped_by", "set_aside")
    n = cut = saved = live = 0
    for name in ("ab-power-robust-live-2cpu.jsonl", "ab-power-robust-live-300-2cpu.jsonl",
                 "ab-power-robust-live-300-intel-calibrated-2cpu.jsonl"):
        rows, _ = script._records(os.path.join(root, "results", name))
        for row in rows:
            if not script._is_series(row) or "error" in row:
                continue
            if row["stopped_by"] == "settled":
                # Cut as it ran: on the first round settled() says so.
                assert script.settled(row), row["key"]
                k = len(row["round_log_ratios"])
                assert not script.settled(_cut(script, row, k - 1)), row["key"]
                live += 1
                continue
            # Settled stays settled as rounds come: the first such round by
            # bisection, checked on both sides.
            low, high = 0, len(row["round_log_ratios"])
            while high - low > 1:
                mid = (low + high) // 2
                low, high = (low, mid) if script.settled(_cut(script, row, mid)) else (mid, high)
            k, n = high, n + 1
            if k == len(row["round_log_ratios"]):
                continue
            assert script.settled(_cut(script, row, k))
            assert k == 1 or not script.settled(_cut(script, row, k - 1))
            whole = [[x[key] for key in keys] for x in script._replayed([row])]
            part = [[x[key] for key in keys] for x in script._replayed([_cut(script, row, k)])]
            assert part == whole, (name, row["key"], k)
            cut += 1
            saved += row["wall_s"] - _cut(script, row, k)["wall_s"]
    assert n > 300
    # Most series settle well before their budget's end (the 10 % cells'
    # in some 40 s of 300).
    assert cut > n / 2 and saved > 3600 * 3, (n, cut, saved)
    assert live >= 58


def test_until_settled_stops_a_live_series_and_frees_what_it_loaded(monkeypatch):
    script = _ab_power_script()
    import leakcheck
    before = leakcheck.snapshot()
    looked = []

    def after_two(row):
        looked.append(len(row["round_log_ratios"]))
        return len(row["round_log_ratios"]) >= 2
    monkeypatch.setattr(script, "settled", after_two)
    task = dict(kind="power", method="interleaved", a="count-local", b="count-local",
                rule=script.SERIES)
    got = script._ab(task, 60.0, until_settled=True)
    assert looked == [1, 2]
    assert got["stopped_by"] == "settled" and len(got["round_log_ratios"]) == 2
    assert got["wall_s"] < 60 and len(got["round_starts_s"]) == 2
    assert not leakcheck.snapshot().bpf_fds
    assert leakcheck.snapshot().threads == before.threads


def test_a_duet_cell_is_stated_at_the_size_its_own_duets_read():
    """A duet verdict's cells are stated at the slowdown their own duets'
    rounds read, not the interleaved truth cell's: on the AMD VM the 10 %
    knobs read about 10 % in turns on the calibration day and about 14 % in
    the duets of another day."""
    import statistics
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = _ab_power_script()
    made = script.package_data(os.path.join(root, "results", "ab-power-robust-live-2cpu.jsonl"),
                               os.path.join(root, "results", "ab-knobs-2cpu.jsonl"),
                               "median", 60.0)
    rows, truth = script._records(
        os.path.join(root, "results", "ab-power-robust-live-2cpu.jsonl"),
        os.path.join(root, "results", "ab-knobs-2cpu.jsonl"))
    for path in ("user", "bpf"):
        duets = [x for r in rows if r.get("kind") == "power" and r["method"] == "duet"
                 and r["path"] == path and r["effect"] == 0.1 for x in r["round_log_ratios"]]
        stated = made["duet"]["power"][path]["0.1"]["measured_pct"]
        own = 100 * (1 - math.exp(statistics.median(duets)))
        in_turns = 100 * script._pooled_slowdown(truth, path, 0.1)
        assert abs(stated - own) < 1.0, (path, stated, own)
        assert abs(stated - in_turns) > 2, (path, stated, in_turns)


def test_every_verdict_states_the_rates_measured_for_its_mode():
    """What a verdict states is what the records of RECORDS_SHIPPED hold,
    summed by the script that took them, each rate with its Clopper-Pearson
    interval and what it was measured at: the setting measured as the
    comparison was asked, or none, and how the nearest differs."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = _ab_power_script()
    with open(ab_module.MEASURED_PATH) as f:
        shipped = json.load(f)

    def plain(entry):
        return {k: v for k, v in entry.items() if k != "machine"}

    def machine_of(entry):
        # Each entry asked on the machine it names (none: asked nowhere).
        return entry if "cpu_model" in entry else None

    # Each record's setting is shipped, as the script sums it, and nothing else is.
    made = []
    for record, truth, rule, budget, power in RECORDS_SHIPPED:
        expected = script.package_data(os.path.join(root, "results", record),
                                       truth and os.path.join(root, "results", truth),
                                       rule, budget,
                                       power and os.path.join(root, "results", power))
        made += [(mode, plain(e)) for mode, e in expected.items()]
    held = [(mode, plain(e)) for mode, entries in shipped.items()
            for e in (entries if isinstance(entries, list) else [entries])]
    assert sorted(map(repr, held)) == sorted(map(repr, made))
    share = _ab_text._share
    for mode in ("interleaved", "duet"):
        for m in ab_module.measured_rates(mode):
            rule, alpha, budget, name = m["rule"], m["alpha"], m["budget_s"], m["benchmarks"][0]
            # Asked as they were measured: the rates, with their intervals.
            text = _ab_text.rates_text(mode, ab_module.measured_rates(mode), rule, alpha,
                                       budget, {name}, machine_of(m))
            assert f"on {m['machine']} at" in text, text
            assert f"at {rule} rule, alpha {alpha:g}, {budget:g} s budget (95 %" in text, text
            k, n = m["false_alarms"], m["comparisons"]
            lo, hi = benchbpf.results.stats.clopper_pearson(k, n)
            assert f"false alarms {k}/{n} ({100 * lo:.0f}..{100 * hi:.0f} %)" in text, text
            # The cells measured nearest 5 %, each side of it, with what they found.
            for path, where in (("user", "in user space"), ("bpf", "on the BPF path")):
                cells = sorted(m["power"].get(path, {}).values(),
                               key=lambda c: c["measured_pct"])
                below = [c for c in cells if c["measured_pct"] < 5][-1:]
                above = [c for c in cells if c["measured_pct"] >= 5][:1]
                if below + above:
                    assert " and ".join(f"{c['measured_pct']:g} % "
                                        f"{share(c['slower'], c['comparisons'])}"
                                        for c in below + above) + f" {where}" in text, text
            # Only identical sides measured at this setting: power not claimed.
            assert ("finds a slowdown: not measured" in text) == (not m["power"]), text
            # Asked otherwise: no rates, and how the nearest setting differs.
            for asked, words in (((("huber", alpha, budget, {name}), "rule huber")),
                                 ((rule, 0.01, budget, {name}), "alpha 0.01"),
                                 ((rule, alpha, 999.0, {name}), "budget 999 s"),
                                 ((rule, alpha, budget, {"bloom-lookup"}),
                                  "benchmark bloom-lookup")):
                text = _ab_text.rates_text(mode, ab_module.measured_rates(mode), *asked,
                                           machine_of(m))
                assert "do not apply" in text and f"({words})" in text, text
                assert "false alarms" not in text and not re.search(r"\d/\d", text), text
    assert "not measured" in _ab_text.rates_text("kernels", ab_module.measured_rates("kernels"))


def test_a_summary_says_which_comparisons_a_record_lacks(tmp_path):
    """A record of one kind of comparison prints no empty table for the other."""
    script = _ab_power_script()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "results", "ab-power-robust-live-2cpu.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    false_head, power_head = "| method | benchmark |", "| path | nominal |"
    for kind, lacks, empty, full in (
            ("power", "No identical-side comparisons", false_head, power_head),
            ("false", "No comparisons of a known slowdown", power_head, false_head)):
        record = tmp_path / f"{kind}.jsonl"
        record.write_text("".join(json.dumps(r) + "\n" for r in rows if r["kind"] == kind))
        text = script.summarize(str(record))
        assert lacks in text and empty not in text and full in text, text


def test_a_busy_profile_is_read_apart_and_never_packaged():
    """Each busy profile's comparisons get tables of their own, never pooled
    with another profile's, and a verdict's packaged rates leave them out."""
    script = _ab_power_script()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    record = os.path.join(root, "results", "ab-power-busy-2cpu.jsonl")
    with open(record) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    text = script.summarize(record)
    for profile in ("bursts", "steady"):
        mine = [r for r in rows if r["busy"] == profile and r["method"] == "interleaved"
                and r["a"] == "count-local"]
        part = text.split(f"## Rule median, budget 60 s, machine busy ({profile})")[1]
        part = part.split("\n## ")[0]
        assert f"| interleaved | count-local | 0/{len(mine)} " in part, part
    assert script.package_data(record) == {}


def test_busy_rows_in_a_record_change_nothing_packaged(tmp_path):
    """A record that holds busy comparisons beside quiet ones packages what
    its quiet ones alone give: the busy rows name neither the machine nor
    the day the rates were taken."""
    script = _ab_power_script()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def lines(name):
        return [line for line in open(os.path.join(root, "results", name)) if line.strip()]
    quiet, mixed = tmp_path / "quiet.jsonl", tmp_path / "mixed.jsonl"
    live, busy = lines("ab-power-robust-live-2cpu.jsonl"), lines("ab-power-busy-2cpu.jsonl")
    quiet.write_text("".join(live))
    assert json.loads(busy[0])["started"][:10] != json.loads(live[0])["started"][:10]
    mixed.write_text("".join(busy[:5]) + quiet.read_text())
    truth = os.path.join(root, "results", "ab-knobs-2cpu.jsonl")
    assert script.package_data(str(mixed), truth, "median", 60.0) == \
        script.package_data(str(quiet), truth, "median", 60.0) != {}


def test_a_verdict_states_the_rates_of_its_own_machine(tmp_path):
    """Where several machines were measured at a setting, a verdict states
    the rates of the machine it ran on; elsewhere those of the records that
    named no machine, then the first; packaging one machine's keeps the
    others'."""
    script = _ab_power_script()
    amd = dict(false_alarms=0, comparisons=100, power={}, budget_s=60.0, rule="median",
               alpha=0.05, benchmarks=["count-local"], taken="2026-12-05",
               machine="a 2-CPU AMD machine, kernel 6.18.44")
    intel = dict(amd, false_alarms=3, machine="a 2-CPU Intel machine, kernel 6.18.44",
                 cpu_model="Intel(R) Xeon(R) Processor", nr_cpus=2)
    other = dict(amd, false_alarms=7, machine="a 4-CPU Other machine, kernel 6.18.44",
                 cpu_model="Other CPU", nr_cpus=4)
    measured = [other, amd, intel]
    asked = ("median", 0.05, 60.0, {"count-local"})
    for machine, expected in (({"cpu_model": "Intel(R) Xeon(R) Processor", "nr_cpus": 2}, intel),
                              ({"cpu_model": "Other CPU", "nr_cpus": 4}, other),
                              ({"cpu_model": "Intel(R) Xeon(R) Processor", "nr_cpus": 4}, amd),
                              (None, amd)):
        assert _ab_text.applicable(measured, *asked, machine) is expected
        text = _ab_text.rates_text("interleaved", measured, *asked, machine)
        assert f"on {expected['machine']} at" in text, text
        assert f"false alarms {expected['false_alarms']}/100" in text, text
    # Asked otherwise, on the Intel machine: its settings, not the others'.
    text = _ab_text.rates_text("interleaved", [amd, dict(intel, rule="mean")], "huber", 0.05,
                               60.0, {"count-local"}, intel)
    assert "do not apply" in text and "mean rule" in text and "median rule" not in text, text
    # A result carries its machine in its metadata.
    rounds = [_fake_round(i, 30, 15) for i in range(8)]
    r = ab_module.ABResult(ab_module.Side("count-local", {}), ab_module.Side("count-local", {}),
                           "interleaved", rounds, "decided", 20.0, budget_s=60.0, rule="median",
                           metadata={"cpu_model": "Other CPU", "nr_cpus": 4},
                           measured=measured)
    assert r.outcome.rates == other and "false alarms 7/100" in str(r)
    # One machine's entry replaces only its own setting.
    shipped = tmp_path / "measured.json"
    script._ship(str(shipped), {"interleaved": amd})
    script._ship(str(shipped), {"interleaved": intel})
    script._ship(str(shipped), {"interleaved": dict(intel, false_alarms=4)})
    held = json.loads(shipped.read_text())["interleaved"]
    assert [(e["machine"], e["false_alarms"]) for e in held] == \
        [(amd["machine"], 0), (intel["machine"], 4)]
    # Re-packaging the first keeps it first: the order is what another
    # machine's verdict falls back on.
    script._ship(str(shipped), {"interleaved": dict(amd, false_alarms=2)})
    held = json.loads(shipped.read_text())["interleaved"]
    assert [(e["machine"], e["false_alarms"]) for e in held] == \
        [(amd["machine"], 2), (intel["machine"], 4)]


def test_a_busy_machine_spins_in_its_windows_and_leaves_nothing_behind():
    """ab_power.py --busy: the spinners take CPU time in the windows the
    schedule gives, which the parent knows without being told, and are
    reaped when the block ends, however it ends."""
    script = _ab_power_script()
    busy = script._busy
    before = os.times()
    with pytest.raises(KeyboardInterrupt):
        with busy.Busy("steady", seed=1) as b:
            procs = list(b._procs)
            deadline = time.monotonic() + 0.5
            while time.monotonic() < deadline:
                time.sleep(0.05)
            raise KeyboardInterrupt
    after = os.times()
    assert all(p.returncode is not None for p in procs) and not b._procs
    # One spinner for half a second: some CPU time even on a busy machine.
    assert (after.children_user + after.children_system) - \
        (before.children_user + before.children_system) > 0.05
    assert b.windows() == [(b.t0, b.t1)]
    # The same seed and start: the same windows, whoever draws them.
    first = busy.Busy("bursts", seed=7)
    first.t0, first.t1 = 100.0, 160.0
    windows = first.windows()
    drawn = [w for _, w in zip(windows, busy.schedule("bursts", 7, 100.0))]
    assert len(windows) > 2 and drawn[:-1] == windows[:-1]
    assert all(s >= 100.0 and e <= 160.0 for s, e in first.windows())
    assert busy.overlap((1.0, 3.0), [(0.0, 1.5), (2.5, 9.0)]) == 1.0
    with pytest.raises(ValueError, match="profile='idle'"):
        busy.Busy("idle", seed=1)


def test_busy_rounds_are_placed_on_abs_own_clock():
    """Each round's share of the busy windows is read on ab's clock, which
    starts where on_round says (the parent's clock less the comparison's
    time so far), for the rounds kept and those set aside alike."""
    script = _ab_power_script()

    class Known:
        t0, seed = 50.0, 3

        def windows(self):
            return [(101.0, 102.0), (106.5, 107.0)]
    spans = {0: (0.0, 3.0), 1: (3.0, 6.0), 2: (6.0, 9.0)}
    got = dict(round_index=[0, 2], set_aside_index=[1])
    out = script._busy_fields(Known(), got, spans, marks=[100.0, 100.002, 99.998])
    assert out["busy_windows_s"] == [[1.0, 2.0], [6.5, 7.0]]
    assert out["round_busy_s"] == [1.0, 0.5] and out["set_aside_busy_s"] == [0.0]


def test_the_busy_campaigns_replay_follows_abs_disturbed_rule():
    """The thresholds the busy campaign replays (ab_power.py's
    _replayed_flag) at ab's own preemption threshold flag what ab's fixed
    share flags: on a grid of host figures, and on every round of the
    stored live record that ab judged by the fixed share alone (recorded
    before ab kept each side's median share).  A change to ab's rule must
    be followed there."""
    from types import SimpleNamespace
    from benchbpf.analysis import _ab_rule
    script = _ab_power_script()
    share = _ab_rule.DISTURBED_CPU_SHARE
    grid = [dict(steal_pct=steal, late_samples=late, cpu_share=cpu, involuntary=inv)
            for steal in (0.0, 1.0, 3.0) for late in (0, 1) for inv in (0, 2)
            for cpu in (None, 0.3, share - 0.01, share, share + 0.01, 1.0)]
    for h in grid:
        ab_says = bool(_ab_rule.disturbances_of(SimpleNamespace(disturbances=h)))
        assert script._replayed_flag([h, None], share) == ab_says, h
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rows = [json.loads(line) for line in
            open(os.path.join(root, "results", "ab-power-robust-live-2cpu.jsonl"))]
    pairs = [(bool(why), hosts) for r in rows
             if "round_host" in r and "round_cpu_share_median" not in r
             for why, hosts in zip(r["round_disturbed"], r["round_host"])]
    assert len(pairs) > 1000
    assert all(script._replayed_flag(hosts, share) == why for why, hosts in pairs)


def _share_host(share, involuntary=5):
    return dict(steal_pct=0.0, late_samples=0, cpu_share=share, involuntary=involuntary)


def test_the_per_side_candidates_judge_a_side_by_its_own_share():
    """The per-side rule the busy campaign replays (_relative_flags) flags a
    side preempted below its own median share so far, whatever that share
    is, keeps ab's fixed rule, looks at no later round, and with a
    tolerance no share can cross flags exactly what ab flagged on every
    round of the stored live record."""
    script = _ab_power_script()
    host = _share_host
    quiet = [0.949, 0.951, 0.950, 0.948, 0.952]
    rounds = [[host(s), host(0.99)] for s in quiet]
    # rb-libbpf-like: a quiet side below ab's 0.95 is never flagged by its own median.
    assert script._relative_flags(rounds, 0.02) == [False] * 5
    dip = rounds + [[host(0.91), host(0.99)]]       # 4 % below its median, above 0.9
    assert script._relative_flags(dip, 0.03)[-1] is True
    assert script._relative_flags(dip, 0.05)[-1] is False
    # Switched out of its own accord only (no involuntary switch): not preempted.
    assert script._relative_flags(rounds + [[host(0.91, 0), host(0.99)]], 0.03)[-1] is False
    # Below ab's fixed share: flagged whatever the median says.
    assert script._relative_flags([[host(0.85), host(0.85)]] * 4, 0.08) == [True] * 4
    # Causal: a dip in the first round is its own reference; hindsight sees it.
    early = [[host(0.91), host(0.99)]] + rounds
    assert script._relative_flags(early, 0.03)[0] is False
    assert script._relative_flags(early, 0.03, hindsight=True)[0] is True
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rows = [json.loads(line) for line in
            open(os.path.join(root, "results", "ab-power-robust-live-2cpu.jsonl"))]
    rows = [r for r in rows if r.get("round_host") and "round_cpu_share_median" not in r]
    assert sum(len(r["round_host"]) for r in rows) > 1000
    for r in rows:
        assert script._relative_flags(r["round_host"], 1.0) == \
            [bool(why) for why in r["round_disturbed"]], r["key"]


def test_a_round_judges_each_side_by_its_own_median_share():
    """ab's rule (Round.disturbed): a side preempted more than
    DISTURBED_SHARE_DROP below its own median share so far is disturbed,
    above the fixed share too; a quiet side whose producers run below the
    fixed-share candidates (rb-libbpf, about 0.95) is not; a round without
    the medians (recorded before ab kept them) is judged as before, by the
    fixed share alone; the medians survive a save."""
    rule = ab_module._ab_rule
    drop = rule.DISTURBED_SHARE_DROP
    assert 0 < drop < 1 - rule.DISTURBED_CPU_SHARE

    def side(share, involuntary=5):
        return _host_result(30, cpu_share=share, involuntary=involuntary)

    median = 0.95
    dip = median * (1 - drop) - 0.005       # above the fixed share, below its own
    assert dip > rule.DISTURBED_CPU_SHARE
    quiet = ab_module.Round(0, side(median - 0.002), side(0.99), a_cpu_share_median=median,
                            b_cpu_share_median=0.99)
    assert quiet.disturbed == ()
    for rnd in (ab_module.Round(0, side(dip), side(0.99), a_cpu_share_median=median,
                                b_cpu_share_median=0.99),
                ab_module.Round(0, side(0.99), side(dip), a_cpu_share_median=0.99,
                                b_cpu_share_median=median)):
        assert rnd.disturbed == ("preemption",)
        again = ab_module.Round.from_dict(json.loads(json.dumps(rnd.as_dict())))
        assert again.disturbed == ("preemption",) and again.as_dict() == rnd.as_dict()
    # Switched out of its own accord only: not preempted, whatever its share.
    assert ab_module.Round(0, side(dip, 0), side(0.99), a_cpu_share_median=median).disturbed == ()
    # Without the medians, the fixed share alone: the dip passes, as it did.
    assert ab_module.Round(0, side(dip), side(0.99)).disturbed == ()
    old = ab_module.Round(0, side(dip), side(0.99)).as_dict()
    del old["a_cpu_share_median"], old["b_cpu_share_median"]
    assert ab_module.Round.from_dict(old).disturbed == ()
    # The median is the reference, not the share a caller passes alone.
    assert ab_module.share_median([None, 0.9, 0.95, 0.99]) == 0.95
    assert ab_module.share_median([None, None]) is None
    assert ab_module.disturbed_why(_share_host(dip), share_median=median) == ("preemption",)
    assert ab_module.disturbed_why(_share_host(dip), share_median=median,
                                   share_drop=0.05) == ()


def test_the_per_side_replay_is_abs_rule():
    """The busy campaign's per-side replay at ab's own tolerance flags what
    Round.disturbed flags on the same rounds with the medians ab keeps: one
    rule, in one place."""
    script = _ab_power_script()
    rule = ab_module._ab_rule
    shares = [0.95, 0.951, 0.93, 0.949, 1.0, 0.85, 0.952, 0.91]
    rounds, kept = [], ([], [])
    for i, s in enumerate(shares):
        a = _host_result(30, cpu_share=s, involuntary=5)
        b = _host_result(30, cpu_share=0.99, involuntary=5)
        for side, r in zip(kept, (a, b)):
            side.append(rule.cpu_share_of(r.disturbances))
        rounds.append(ab_module.Round(i, a, b, None, 0.0, None, None, None, "hits",
                                      *map(ab_module.share_median, kept)))
    hosts = [[r.a.disturbances, r.b.disturbances] for r in rounds]
    flags = [bool(r.disturbed) for r in rounds]
    assert flags == script._relative_flags(hosts, rule.DISTURBED_SHARE_DROP)
    assert True in flags and False in flags


def test_a_verdict_reads_no_file_when_printed(monkeypatch):
    r, shorter = (ab_module.ABResult(ab_module.Side.of("count-local"),
                                     ab_module.Side.of("count-local"), "interleaved", (),
                                     "budget", 1.0, rule="median", **budget)
                  for budget in ({}, {"budget_s": 90.0}))
    import builtins

    def no_open(*args, **kwargs):
        raise AssertionError(f"str() opened {args[0]}")
    monkeypatch.setattr(builtins, "open", no_open)
    text = str(r)
    # The default budget, 300 s, is measured: its rates come from the package
    # data read when the result was made, not from a file now.
    assert "median rule, alpha 0.05, 300 s budget (95 %" in text, text
    assert "confidence sequence on rounds' median" in text, text
    text = str(shorter)
    assert "budget 90 s" in text and "do not apply" in text, text


@pytest.mark.parametrize("verdict, beyond, fail_on, status", [
    ("slower", True, "slower", 1), ("slower", False, "slower", 125),
    ("undecided", False, "slower", 125), ("same", False, "slower", 0),
    ("faster", True, "slower", 0), ("faster", False, "slower", 0),
    ("faster", True, "faster", 1), ("slower", True, "faster", 0),
])
def test_fail_on_maps_each_verdict_to_its_exit_status(verdict, beyond, fail_on, status):
    from types import SimpleNamespace
    fake = SimpleNamespace(verdict=verdict, beyond_threshold=beyond)
    assert ab_module.ABResult.exit_status(fake, fail_on) == status
    with pytest.raises(ValueError, match="fail_on='worse'"):
        ab_module.ABResult.exit_status(fake, "worse")


def test_fail_on_exits_1_on_a_slowdown_and_0_on_a_speedup():
    common = ["--fail-on", "slower", "-q", "-w", "0.1", "-d", "0.3", "--interval", "0.05",
              "--max-rounds", "8", "--budget", "120"]
    p = _cli(*common, "count-local", "--", "count-local", "--work-per-hit", "40")
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "slower by" in p.stdout and "beyond the 2 % threshold" in p.stdout, p.stdout
    p = _cli(*common, "count-local", "--work-per-hit", "40", "--", "count-local")
    assert p.returncode == 0, (p.stdout, p.stderr)


def test_fail_on_exits_125_where_a_side_cannot_run():
    # git bisect's "skip": a commit where a side fails is neither good nor bad.
    p = _cli("--fail-on", "slower", "-q", "-w", "0.1", "-d", "0.3", "--max-rounds", "8",
             "selftest", "--", "selftest", "--fault", "setup-attach")
    assert p.returncode == 125, (p.stdout, p.stderr)
    p = _cli("--fail-on", "slower", "count-local", "--", "count-locl")
    assert p.returncode == 125 and "unknown benchmark" in p.stderr, p.stderr


def test_fail_on_exits_130_on_ctrl_c_with_the_finished_rounds_kept(tmp_path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "benchbpf", "ab", "--fail-on", "slower",
                             "-w", "0.1", "-d", "0.3", "--interval", "0.05", "--budget", "120",
                             "count-local", "--", "count-local"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("round 2"):
            proc.send_signal(signal.SIGINT)
            break
    err = "".join(seen) + proc.stderr.read()
    proc.wait(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted after" in err and "saved to" in err, err
    path = err.split("saved to ")[1].split(" (benchbpf")[0]
    assert len(benchbpf.ABResult.from_json(path).rounds) >= 2


# ---------------------------------------------------------------- disturbed rounds

_WATCH = "steal_cpus=1 migrations=se.nr_migrations cost_ns_per_sample=1"


def _host_result(mps, cpu_share=1.0, involuntary=0, steal_ns=0, late=False):
    """A run of 50 samples of 1 ms whose producer ran cpu_share of the time."""
    return benchbpf.Result("count-local", {"interval": 0.001, "work_per_hit": 0}, tuple(
        benchbpf.Sample(interval_ns=1_000_000, hits=int(mps * 1000),
                        extra={"producer_cpu_ns": int(1_000_000 * cpu_share)},
                        involuntary=involuntary if k == 0 else 0,
                        steal_ns=steal_ns if k == 0 else 0, late=late and k == 0)
        for k in range(50)), metadata={"host_watch": _WATCH})


def test_each_round_says_why_the_host_disturbed_it():
    quiet = _host_result(30)
    rule = ab_module._ab_rule
    cases = [
        ((), _host_result(30)),
        # Lost CPU with involuntary switches: preempted.
        (("preemption",), _host_result(30, cpu_share=rule.DISTURBED_CPU_SHARE - 0.05,
                                       involuntary=5)),
        # Lost CPU without being switched out: it blocked by itself.
        ((), _host_result(30, cpu_share=0.5)),
        # Switched out but kept its CPU time: the scheduler's ordinary ticks.
        ((), _host_result(30, involuntary=500)),
        (("steal",), _host_result(30, steal_ns=int(50e6 * rule.DISTURBED_STEAL_PCT / 100) + 1)),
        ((), _host_result(30, steal_ns=int(50e6 * rule.DISTURBED_STEAL_PCT / 100) - 1)),
        (("late sample",), _host_result(30, late=True)),
    ]
    for want, side in cases:
        assert ab_module.Round(0, quiet, side).disturbed == want
        assert ab_module.Round(0, side, quiet).disturbed == want
    # Runs recorded before the sampler read the host are not called disturbed.
    assert _fake_round(0, 30, 30).disturbed == ()


def test_the_verdict_says_how_many_rounds_were_disturbed():
    rounds = [ab_module.Round(i, _host_result(30), _host_result(
        15, cpu_share=0.5, involuntary=9) if i in (2, 5) else _host_result(15))
        for i in range(8)]
    rounds[6] = ab_module.Round(6, _host_result(30, late=True), _host_result(15))
    r = ab_module.ABResult(ab_module.Side("count-local", {}), ab_module.Side("count-local", {}),
                           "interleaved", rounds, "decided", 20.0, measured=None)
    said = "3 of 8 rounds disturbed (preemption, late sample)"
    assert said in str(r) and f"Host: {said}." in r.to_markdown()
    d = r.as_dict()
    assert d["disturbed"] == {"rounds": 3, "of": 8, "set_aside": 0, "reasons": {
        "steal": 0, "preemption": 2, "late sample": 1}}
    assert [x["disturbed"] for x in d["rounds"]][5:7] == [["preemption"], ["late sample"]]
    again = ab_module.ABResult.from_dict(json.loads(json.dumps(d)))
    assert again.disturbances == r.disturbances and not again.set_aside_disturbed


def test_set_aside_rounds_are_kept_for_the_record_out_of_the_figures():
    kept = [_fake_round(i, 30, 15) for i in range(8)]
    aside = [ab_module.Round(8, _host_result(30), _host_result(60, late=True))]
    r = ab_module.ABResult(ab_module.Side("count-local", {}), ab_module.Side("count-local", {}),
                           "interleaved", kept, "decided", 20.0, measured=None,
                           set_aside_disturbed=True, set_aside=aside)
    plain = ab_module.ABResult(r.a, r.b, "interleaved", kept, "decided", 20.0, measured=None)
    assert (r.ratio, r.low, r.high) == (plain.ratio, plain.low, plain.high)
    assert "0 of 8 rounds disturbed; 1 more, disturbed, set aside" in str(r)
    again = ab_module.ABResult.from_dict(json.loads(json.dumps(r.as_dict())))
    assert again.set_aside_disturbed and len(again.set_aside) == 1
    assert again.set_aside[0].disturbed == ("late sample",)


def test_set_aside_disturbed_is_checked_before_loading():
    with rejected_before_loading(TypeError, "set_aside_disturbed"):
        benchbpf.ab("count-local", "count-local", set_aside_disturbed="yes", **QUICK)


def test_set_aside_disturbed_replaces_disturbed_rounds():
    # Two spinning processes make preemption likely, on a busy machine
    # certain enough; whatever happens, no disturbed round is in the figures,
    # every set-aside one was disturbed, and no round is lost.
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        r = benchbpf.ab("count-local", "count-local", set_aside_disturbed=True,
                        min_rounds=8, max_rounds=8, budget=None, **QUICK)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert r.set_aside_disturbed and r.stopped_by == "max_rounds"
    assert all(not rnd.disturbed for rnd in r.rounds)
    assert all(rnd.disturbed for rnd in r.set_aside)
    taken = sorted(r.rounds + r.set_aside, key=lambda rnd: rnd.index)
    assert [rnd.index for rnd in taken] == list(range(len(taken)))
    assert r.disturbances["set_aside"] == len(r.set_aside)
    # Each side is judged against its own median share over every round
    # taken so far, set aside or not, this one included.
    for k, rnd in enumerate(taken):
        for key in ("a", "b"):
            so_far = [getattr(x, key).disturbances["cpu_share"] for x in taken[:k + 1]]
            assert getattr(rnd, f"{key}_cpu_share_median") == ab_module.share_median(so_far)
