"""The gate with the history store: every run of a check recorded, and a
baseline taken as the last N runs of its series on this machine and
kernel, against SQLite and a real PostgreSQL server."""
import os
import re
import warnings

import pytest

import benchbpf
from benchbpf import history
from benchbpf.tools.pytest_plugin import HISTORY_METHOD, Gate

pytest_plugins = ["pytester"]

#: The throwaway PostgreSQL cluster of test_history_pg (skipped where none starts).
try:
    from test_history_pg import server, url  # noqa: F401  (fixtures)
except pytest.skip.Exception:
    server = url = None


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    """A fresh history store: an SQLite file, or a database on the server."""
    if request.param == "sqlite":
        return str(tmp_path / "history.sqlite")
    if url is None:
        pytest.skip("psycopg is not installed (pip install 'benchbpf[history]')")
    return request.getfixturevalue("url")


class _Request:
    def __init__(self):
        self.node = type("node", (), {"user_properties": []})()


def _run(rates, work=0):
    return benchbpf.Result("count-local", {"interval": 0.001, "work_per_hit": work}, tuple(
        benchbpf.Sample(interval_ns=1_000_000, hits=int(r * 1000)) for r in rates),
        metadata={"kernel": "6.18.0-test"})


def _normal(k=0):
    return _run([30 + (i + k) % 3 for i in range(200)])


def _no_pauses(monkeypatch):
    monkeypatch.setattr(Gate, "confirm_delays_s", (0, 0, 0))
    monkeypatch.setattr(Gate, "baseline_delay_s", 0)


def test_a_file_baseline_records_every_run_into_the_store(store, tmp_path, monkeypatch):
    _no_pauses(monkeypatch)
    Gate(str(tmp_path / "b"), True, _Request(), history=store).check("k", _normal)
    assert (tmp_path / "b" / "k.json").exists()          # file baselines keep working
    gate = Gate(str(tmp_path / "b"), False, _Request(), history=store)
    assert gate.check("k", _normal, max_drop_pct=15)["verdict"] == "pass"
    found = history.runs("count-local", store=store)
    assert len(found) == 6 and all(r["params"]["work_per_hit"] == 0 for r in found)
    assert re.fullmatch(r"k: history: 1 run\(s\) recorded in .*", gate.reports[-1])


def test_the_baseline_from_history_is_the_last_n_runs(store, monkeypatch):
    _no_pauses(monkeypatch)

    def gate():
        return Gate(None, False, _Request(), history=store, history_runs=5)

    # Fewer runs than the baseline needs: NOT CHECKED, saying how many, and
    # the run is recorded, so that the store fills up.
    for k in range(5):
        g = gate()
        assert g.check("k", lambda: _normal(k), max_drop_pct=15) is None
        assert f"history store {store} holds {k} of the 5 runs" in g.reports[0]
        assert "NOT CHECKED" in g.reports[0]
    assert len(history.last_runs(_normal(), 99, store)) == 5
    # Then: an unchanged run passes, one figure compared against the five.
    g = gate()
    decision = g.check("k", _normal, max_drop_pct=15)
    assert decision["verdict"] == "pass" and decision["outcome"].verdict == "same"
    assert decision["outcome"].method == HISTORY_METHOD
    assert len(decision["baseline_speeds_mps"]) == 5
    # Half as fast, run after run: a regression, confirmed by four runs.
    g = gate()
    with pytest.raises(pytest.fail.Exception) as e:
        g.check("k", lambda: _run([15 + i % 3 for i in range(200)]), max_drop_pct=15)
    text = str(e.value)
    assert text.startswith("k: regression: B/A 0.") and "slower by" in text
    assert "the median of the last 5 runs in history store" in text and "run 4:" in text
    # Other parameters are another series: nothing to compare with yet.
    g = gate()
    assert g.check("k", lambda: _run([30] * 200, work=7), max_drop_pct=15) is None
    assert "holds 0 of the 5 runs" in g.reports[0]


def test_a_failed_write_keeps_the_checks_figure(tmp_path):
    # A directory is no store: the write fails, the check's figure stays in
    # its note and its decision, with a HistoryWarning.
    bad = tmp_path / "a-directory"
    bad.mkdir()
    gate = Gate(str(tmp_path / "b"), True, _Request(), history=str(bad))
    with pytest.warns(history.HistoryWarning, match="not a file"):
        gate.check("k", lambda: _run([30] * 200))
    assert (tmp_path / "b" / "k.json").exists()
    line = gate.reports[-1]
    assert line.startswith(f"k: history: NOT RECORDED in {bad}: ")
    assert "30.000 M/s mean" in line


# A limit far beyond what other runs sharing the CPUs do to a run's hits
# per second: these tests check the plumbing, not the machine.
GATED = """
import benchbpf
def test_gate(benchbpf_gate):
    benchbpf_gate.check("count-local", lambda: benchbpf.run(
        "count-local", warmup=0.1, duration=0.3, interval=0.001, work_per_hit=40),
        max_drop_pct=95)
"""


def test_the_flags_record_then_compare_on_this_machine(pytester, tmp_path):
    db = tmp_path / "h.sqlite"
    pytester.makepyfile(GATED)
    out = pytester.runpytest(f"--benchbpf-history={db}")
    out.assert_outcomes(passed=1)
    out.stdout.fnmatch_lines(["count-local: NOT CHECKED, no baseline*",
                              f"count-local: history: 1 run(s) recorded in {db}"])
    for held in (1, 2):
        out = pytester.runpytest(f"--benchbpf-history={db}",
                                 "--benchbpf-baseline-from-history", "3")
        out.assert_outcomes(passed=1)
        out.stdout.fnmatch_lines([f"count-local: NOT CHECKED, history store {db} holds "
                                  f"{held} of the 3 runs*"])
    out = pytester.runpytest(f"--benchbpf-history={db}", "--benchbpf-baseline-from-history=3")
    out.assert_outcomes(passed=1)
    out.stdout.fnmatch_lines(["count-local: ok B/A *(gate: run means against the history "
                              "store's last runs); *the median of the last 3 runs*"])
    assert len(history.runs("count-local", store=str(db))) == 4


def test_bad_history_options_are_usage_errors(pytester, tmp_path):
    pytester.makepyfile(GATED)
    cases = [
        (["--benchbpf-baseline-from-history", "0"],
         "*--benchbpf-baseline-from-history 0: out of range, 1 <= N <= 1000*"),
        (["--benchbpf-baseline-from-history", "3", "--benchbpf-save"],
         "*give it without --benchbpf-baseline, --benchbpf-save or --benchbpf-compare*"),
        (["--benchbpf-history", "test_bad_history_options_are_usage_errors.py"],
         "*not a history store; write --benchbpf-history=PATH*"),
        ([f"--benchbpf-history={tmp_path}", "--benchbpf-baseline-from-history=3"],
         "*that is a test path or a directory*"),
        (["--benchbpf-history=ftp://nowhere/x", "--benchbpf-baseline-from-history=3"],
         "*--benchbpf-history ftp://nowhere/x: *ftp*"),
        # Recording only: a store that is no store is refused before any run too.
        (["--benchbpf-history=ftp://nowhere/x"], "*--benchbpf-history ftp://nowhere/x: *ftp*"),
    ]
    for args, message in cases:
        out = pytester.runpytest(*args)
        assert out.ret == pytest.ExitCode.USAGE_ERROR, (args, out.stderr.str())
        out.stderr.fnmatch_lines([message])
