"""Recording into the history store: what record() takes (Results, sets,
sweeps, A/B comparisons) and every command's --history, on real SQLite
files and real short runs; a store that cannot take the write never costs
the run."""
import os
import subprocess
import sys

import pytest

from benchbpf import history
from benchbpf.analysis.ab import ABResult, Round, Side
from benchbpf.harness._sweep import Sweep
from benchbpf.history import Store
from benchbpf.results.result import Result
from benchbpf.results.resultset import ResultSet
from benchbpf.tools import cli
from test_history import ROOT, make_result

SHORT = ["-w0", "-d1"]


@pytest.fixture
def store(tmp_path):
    return str(tmp_path / "h.sqlite")


def rows(store):
    with Store(store) as s:
        return s.rows()


def test_a_sweep_is_one_row_per_value(store):
    sw = Sweep("count-local", "work_per_hit", (0, 10, 100),
               tuple(make_result(100.0 / (1 + w), params={"work_per_hit": w}) for w in (0, 10, 100)))
    assert history.record(sw, store) == 3
    assert sorted(r["params"] for r in rows(store)) == \
        ['{"work_per_hit":0}', '{"work_per_hit":100}', '{"work_per_hit":10}']


def make_ab(n=6, a_mps=100.0, b_mps=90.0, gap_s=6.0):
    """An A/B comparison of n rounds, gap_s apart, B at b_mps against A's a_mps;
    each round's A swaps its producer CPU, as a duet's sides do."""
    rounds = []
    for i in range(n):
        day = f"2026-12-01T10:{i:02d}:00+00:00"
        a = make_result(a_mps * (1 + 0.01 * (i % 3 - 1)), started=day,
                        params={"producers": 1, "prod_affinity": str(i % 2)})
        b = make_result(b_mps * (1 + 0.01 * (i % 3 - 1)), started=day,
                        params={"producers": 1, "work_per_hit": 10})
        rounds.append(Round(i, a, b, "a", i * gap_s))
    return ABResult(Side("count-local", {}), Side("count-local", {"work_per_hit": 10}),
                    "interleaved", tuple(rounds), "decided", n * gap_s)


def test_an_ab_is_its_two_sides_each_one_run_of_its_rounds(store):
    ab = make_ab()
    assert history.record(ab, store) == 2
    a, b = rows(store)[0], rows(store)[1]
    # Each side's figure is over all its rounds' samples; its interval is
    # over the rounds, as a precision run's is over its runs.
    assert a["median_mps"] == pytest.approx(100.0, rel=0.02)
    assert b["median_mps"] == pytest.approx(90.0, rel=0.02)
    for r in (a, b):
        assert r["ci_low_mps"] < r["median_mps"] < r["ci_high_mps"]
    side = history._rows.ab_side(ab, "a")
    assert len(side.samples) == sum(len(r.a.samples) for r in ab.rounds)
    assert side.mean_ci_mps.basis == "runs" and side.mean_ci_mps.effective_n == 6
    # The CPUs a round gave a side are the comparison's, not the side's.
    assert a["params"] == '{"producers":1}'
    assert b["params"] == '{"producers":1,"work_per_hit":10}'
    assert a["series"] != b["series"]
    for key, r in (("A", a), ("B", b)):
        assert r["source"].startswith(f"ab side {key} of interleaved A/B: A = count-local, "
                                      "B = count-local work_per_hit=10: B/A 0.9")
        assert "slower" in r["source"] and r["source"].endswith("6 rounds")
    assert r["started"] == "2026-12-01T10:00:00+00:00"
    # The same comparison again adds nothing; one without rounds has no rows.
    assert history.record(ab, store) == 0
    assert history.record(make_ab(n=0), store) == 0


def test_record_names_what_it_cannot_take(store):
    with pytest.raises(TypeError, match=r"a Result, a ResultSet, a Sweep or an ABResult, "
                                        r"got dict"):
        history.record({"median": 1}, store)


# ---- the commands ------------------------------------------------------

def test_a_run_and_its_repeats_are_recorded(store, tmp_path, capsys, monkeypatch):
    out = str(tmp_path / "r.json")
    assert cli.main([*SHORT, "count-local", "--history", store, "--json", out]) == 0
    err = capsys.readouterr().err
    assert f"recorded 1 run in history store {store}" in err
    (row,) = rows(store)
    saved = Result.from_json(out)
    assert row["median_mps"] == pytest.approx(saved.median)
    assert row["started"] == saved.metadata["started"]
    assert row["machine_label"].endswith(saved.metadata["fingerprint"]["machine_id"])
    # A bare --history is the default store, also right before the benchmark.
    monkeypatch.setenv(history.ENV, store)
    assert cli.main([*SHORT, "--repeat", "2", "--history", "count-local"]) == 0
    assert "recorded 2 runs" in capsys.readouterr().err
    assert len(rows(store)) == 3


def test_a_report_records_every_run(store, tmp_path, capsys):
    out = str(tmp_path / "rep.json")
    assert cli.main(["report", "--quick", "--only", "count-local,trig-uprobe-nop",
                     "-q", "--json", out, "--history", store]) == 0
    rs = ResultSet.load(out)
    assert len(rs) == 2
    assert sorted(r["benchmark"] for r in rows(store)) == sorted(r.name for r in rs)


def test_an_ab_records_both_sides(store, capsys):
    assert cli.main(["ab", "--history", store, "-w", "0", "-d", "0.2", "--interval", "0.05",
                     "--max-rounds", "8", "--min-rounds", "8", "-q", "count-local", "--",
                     "count-local", "--work-per-hit", "10"]) == 0
    # Rows come oldest first, and a round runs its sides in a random order.
    side = {r["source"].split(" of ")[0]: r for r in rows(store)}
    a, b = side["ab side A"], side["ab side B"]
    assert '"work_per_hit":0' in a["params"] and '"work_per_hit":10' in b["params"]
    assert a["source"].startswith("ab side A of interleaved A/B") and "8 rounds" in a["source"]
    assert b["median_mps"] < a["median_mps"]


def test_history_inside_an_ab_side_is_refused(store, capsys):
    assert cli.main(["ab", "count-local", "--", "count-local", "--history", store]) == 2
    assert "--history inside a side" in capsys.readouterr().err
    assert not os.path.exists(store)


def test_ab_takes_its_own_history_option_in_every_spelling():
    split = cli.split_ab_argv
    assert split(["--history", "count-local", "--", "count-local"]) == \
        (["--history"], ["count-local"], ["count-local"])
    assert split(["--history", "h.sqlite", "count-local", "--", "count-local"]) == \
        (["--history", "h.sqlite"], ["count-local"], ["count-local"])
    assert split(["--history=h.sqlite", "--budget=5", "--history", "--kernel", "6.1",
                  "count-local", "--", "count-local"]) == \
        (["--history=h.sqlite", "--budget=5", "--history"], ["--kernel", "6.1", "count-local"],
         ["count-local"])


@pytest.mark.parametrize("command", [
    [*SHORT, "count-local", "HISTORY"],
    ["report", "--quick", "--only", "count-local", "-o", "{tmp}/r.html", "HISTORY"],
    ["ab", "HISTORY", "-w", "0", "-d", "0.2", "count-local", "--", "count-local"],
])
def test_a_store_benchbpf_cannot_use_is_refused_before_anything_runs(tmp_path, capsys, command):
    command = [w.replace("{tmp}", str(tmp_path)) for w in command]
    at = command.index("HISTORY")
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"not a database at all" * 10)
    newer = str(tmp_path / "newer.sqlite")
    Store(newer).close()
    import sqlite3
    with sqlite3.connect(newer) as c:
        c.execute("UPDATE benchbpf_schema SET version = ?", (history.SCHEMA_VERSION + 1,))
    foreign = str(tmp_path / "foreign.sqlite")
    with sqlite3.connect(foreign) as c:
        c.execute("CREATE TABLE invoices (n INTEGER)")
    for store, why in ((str(corrupt), "corrupt.sqlite: not an SQLite database"),
                       (newer, "is newer than this benchbpf's"),
                       (foreign, "not a benchbpf history store (it holds tables invoices)"),
                       ("mysql://db/bench", "unknown URL scheme 'mysql'")):
        assert cli.main([*command[:at], "--history", store, *command[at + 1:]]) == 2
        out, err = capsys.readouterr()
        assert "error: --history: history store " in err and store in err and why in err
        assert out == "" and "Setting up" not in err and "round" not in err
    assert not os.path.exists(tmp_path / "r.html")


def check_kept(status, out, err, json_path, store, why):
    """The run ended well, printed and saved; the store named, with why it
    did not take it, and exit status 4."""
    assert status == 4
    assert "Summary: hits" in out
    assert Result.from_json(json_path).samples
    assert f"warning: history store {store}" in err and why in err
    assert f"; not recorded, the run is kept (printed and saved to {json_path})" in err


def test_a_read_only_store_costs_only_the_record(tmp_path, capsys):
    store = str(tmp_path / "ro.sqlite")
    history.record(make_result(), store)
    os.chmod(store, 0o444)
    out_json = str(tmp_path / "r.json")
    status = cli.main([*SHORT, "count-local", "--history", store, "--json", out_json])
    out, err = capsys.readouterr()
    # Warned of before the run, which goes ahead.
    assert "the run goes ahead and recording it is tried when it ends" in err
    check_kept(status, out, err, out_json, store, "read-only (mode 0444)")
    os.chmod(store, 0o644)
    assert len(rows(store)) == 1


def test_an_unreachable_server_costs_only_the_record(tmp_path, capsys):
    pytest.importorskip("psycopg", reason="psycopg is not installed (benchbpf[history])")
    url = "postgresql://127.0.0.1:1/x"
    out_json = str(tmp_path / "r.json")
    status = cli.main([*SHORT, "count-local", "--history", url, "--json", out_json])
    out, err = capsys.readouterr()
    check_kept(status, out, err, out_json, url, "cannot connect")


def test_a_store_corrupted_during_the_run_costs_only_the_record(tmp_path):
    # A real command whose store is fine when checked, then overwritten
    # while the benchmark runs (3 s after its first 0.2 s sample).
    store = str(tmp_path / "h.sqlite")
    history.record(make_result(), store)
    out_json = str(tmp_path / "r.json")
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchbpf", "-w0", "-d3", "--interval", "0.2", "count-local",
         "--history", store, "--json", out_json],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": ROOT})
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("Iter"):
            break
    for name in os.listdir(tmp_path):
        if name.startswith("h.sqlite"):
            os.unlink(tmp_path / name)
    with open(store, "wb") as f:
        f.write(b"overwritten by something else" * 100)
    out, err = proc.communicate(timeout=120)
    check_kept(proc.returncode, "".join(lines) + out, err, out_json, store,
               "not an SQLite database")


def test_the_command_adds_a_saved_ab(store, tmp_path, capsys):
    path = str(tmp_path / "ab.json")
    make_ab().to_json(path)
    assert cli.main(["history", "--history", store, "add", path]) == 0
    assert f"{path}: 2 new runs" in capsys.readouterr().out
    assert [r["source"].split(": ")[0] for r in rows(store)] == [path, path]
    assert cli.main(["history", "--history", store, "add", path]) == 0
    assert "0 new runs, 2 already in the store" in capsys.readouterr().out
    (tmp_path / "x.json").write_text('{"format": "x"}')
    assert cli.main(["history", "--history", store, "add", str(tmp_path / "x.json")]) == 2
    assert "x.json: neither a benchbpf report" in capsys.readouterr().err
