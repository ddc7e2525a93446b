"""The gate's baseline file: small, deciding as the runs it was saved from,
and baselines of earlier versions still loading."""
import json
import math

import pytest

import benchbpf
from benchbpf.analysis import host_test
from benchbpf.tools import show
from benchbpf.tools.pytest_plugin import BASELINE_FORMAT, Baseline, Gate
from conftest import calibration

pytest_plugins = ["pytester"]

#: The largest baseline file of a 1-second check (issue #39: 1.4 MB before).
MAX_BYTES = 50_000

ONE_SECOND = """
import benchbpf
from benchbpf.tools.pytest_plugin import Gate
def test_gate(benchbpf_gate, monkeypatch):
    monkeypatch.setattr(Gate, "baseline_delay_s", 0.1)
    benchbpf_gate.check("count-local", lambda: benchbpf.run(
        "count-local", warmup=0.2, duration=1, interval=0.001, work_per_hit=40),
        max_drop_pct=60)
"""


def test_a_real_baseline_of_a_1_second_check_is_at_most_50_kB(pytester, tmp_path):
    # The check of docs/tasks/pytest-gate.md, sampled every millisecond:
    # 5 runs of about 1000 samples each.
    pytester.makepyfile(ONE_SECOND)
    base = tmp_path / "b"
    pytester.runpytest(f"--benchbpf-baseline={base}",
                       "--benchbpf-save").assert_outcomes(passed=1)
    path = base / "count-local.json"
    size = path.stat().st_size
    assert 0 < size <= MAX_BYTES, size
    saved = json.loads(path.read_text())
    assert saved["format"] == BASELINE_FORMAT and len(saved["runs"]) == 5
    # What the comparison needs is there: every run's usable samples
    # counted, its fastest tenth kept, the machine's fingerprint once.
    for run in saved["runs"]:
        assert run["samples"] > 0      # usable: fewer when other runs take the CPUs
        assert len(run["fastest_mps"]) == math.ceil(run["samples"] / 10)
    assert saved["first"]["samples"] == [] and saved["first"]["metadata"]["fingerprint"]
    # benchbpf show reads it (without pytest's plugin): what it is a baseline of, and where.
    shown = show.text(show.load(path), metadata=True).splitlines()
    assert shown[0].startswith("a pytest gate baseline of count-local: reference ")
    assert shown[0].endswith("from 5 runs") and "work_per_hit=40" in shown[2]
    assert shown[3].startswith("measured: ") and "fingerprint:" in shown
    out = pytester.runpytest(f"--benchbpf-baseline={base}")
    out.assert_outcomes(passed=1)
    out.stdout.fnmatch_lines(["count-local: ok *fastest of 5 runs*"])


class _Request:
    class node:
        user_properties = []


def _run(rates, cpu_share=1.0, **metadata):
    return benchbpf.Result("count-local", {"interval": 0.001, "work_per_hit": 0}, tuple(
        benchbpf.Sample(interval_ns=1_000_000, hits=int(r * 1000 * cpu_share),
                        extra={"producer_cpu_ns": int(1_000_000 * cpu_share)})
        for r in rates), metadata=metadata)


def _saved(base):
    """`base` as the gate saves and loads it."""
    return Baseline.from_dict(json.loads(json.dumps(base.as_dict())), base.counter,
                              base.top_pct, base.alpha)


def test_a_saved_baseline_decides_as_the_runs_it_was_saved_from():
    runs = [_run([20 + (i * 7 + k) % 13 for i in range(300)], started=f"2026-12-03T07:0{k}:00"
                 "+00:00", host_drift=calibration(0.05)) for k in range(5)]
    base = Baseline(runs)
    loaded = _saved(base)
    for name in ("reference", "spread_pct", "n_rates"):
        assert getattr(loaded, name) == pytest.approx(getattr(base, name), rel=1e-6), name
    for name in ("speeds", "lower_bounds", "pooled_top"):
        assert getattr(loaded, name) == pytest.approx(getattr(base, name), rel=1e-6), name
    assert len(loaded.tops) == len(base.tops)
    for kept, had in zip(loaded.tops, base.tops):
        assert kept == pytest.approx(had, rel=1e-6)
    assert loaded.first.name == base.first.name and loaded.first.params == base.first.params
    # The host test reads each run's mean, start and span: the same from
    # the saved stand-ins as from the runs.
    slow = [_run([15 + i % 13 for i in range(300)], started="2026-12-03T09:00:00+00:00",
                 host_drift=calibration(0.05))]
    a, b = host_test(base.runs, slow, "less"), host_test(loaded.host_runs, slow, "less")
    assert a is not None and b is not None
    assert b.p_value == pytest.approx(a.p_value, rel=1e-4)
    assert b.base.mean == pytest.approx(a.base.mean, rel=1e-6)


def test_show_reads_a_baseline_as_the_gate_does(tmp_path):
    # One reader for both: what show states is what a check compares with,
    # at the file's own alpha.
    runs = [_run([20 + (i * 7 + k) % 13 for i in range(300)]) for k in range(5)]
    base = Baseline(runs, alpha=0.05)
    path = tmp_path / "k.json"
    path.write_text(json.dumps(base.as_dict()))
    shown = show.load(path)
    assert isinstance(shown, Baseline) and shown.alpha == 0.05
    assert shown.reference == _saved(base).reference == pytest.approx(base.reference, rel=1e-6)
    first = show.text(shown).splitlines()[0]
    assert f"reference {base.as_dict()['reference_mps']} M/s " in first
    assert "lower bound at alpha 0.05), from 5 runs" in first


def test_a_baseline_saved_as_a_result_set_still_loads(tmp_path):
    # The layout of the version before: a ResultSet of the runs, every sample.
    runs = [_run([30 + (i + k) % 3 for i in range(200)]) for k in range(5)]
    benchbpf.ResultSet(runs, metadata={"gate": {"top_pct": 10}}).to_json(tmp_path / "k.json")
    gate = Gate(str(tmp_path), False, _Request())
    decision = gate.check("k", _run([30 + i % 3 for i in range(200)]), max_drop_pct=15)
    assert decision["verdict"] == "pass" and len(decision["baseline_speeds_mps"]) == 5


def test_a_check_asking_for_other_rates_than_saved_is_not_comparable(tmp_path):
    # The file keeps the fastest tenth only: a check comparing the fastest
    # fifth cannot be answered from it, and says so (not a regression).
    Gate(str(tmp_path), True, _Request()).check("k", _run([30 + i % 3 for i in range(200)]))
    request = _Request()
    request.node.user_properties = []
    gate = Gate(str(tmp_path), False, request)
    with pytest.raises(pytest.fail.Exception) as e:
        gate.check("k", _run([30 + i % 3 for i in range(200)]), max_drop_pct=15, top_pct=20)
    text = str(e.value)
    assert text.startswith("k: not comparable: ") and "regression:" not in text
    assert "fastest share (top_pct): baseline 10, this check 20" in text
    assert "--benchbpf-save" in text
    assert ("benchbpf_outcome", "not comparable") in request.node.user_properties
    assert gate.reports[-1].startswith("k: NOT COMPARABLE")
