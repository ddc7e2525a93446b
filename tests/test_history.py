"""The history store (benchbpf.history) and `benchbpf history`, on real
SQLite files: round trip, series keys, refusals, two writers at once."""
import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

from benchbpf import history
from benchbpf.history import HistoryError, HistoryWarning, Store
from benchbpf.results.result import Result, Sample
from benchbpf.results.resultset import ResultSet
from benchbpf.tools import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_result(rate_mps=100.0, name="count-local", params=None, started="2026-12-01T10:00:00+00:00",
                kernel="6.18.0", commit="aaaa1111", cpu="Test CPU", nr_cpus=2, vm=None, n=20,
                machine_id=None):
    """A Result whose samples are rate_mps +- 1 %, in 0.1 s intervals; without
    machine_id its fingerprint is one from before machine ids were read."""
    hits = [int(rate_mps * 1e5 * (1 + 0.01 * ((i % 5) - 2) / 2)) for i in range(n)]
    meta = {"kernel": kernel, "machine": "x86_64", "cpu_model": cpu, "nr_cpus": nr_cpus,
            "benchbpf_version": "0.1.0", "started": started,
            "fingerprint": {"kernel_release": kernel, "kernel_version": "#1 SMP",
                            "cpu_model": cpu, "nr_cpus": nr_cpus, "machine": "x86_64",
                            "git_commit": commit}}
    if vm:
        meta["vm"] = vm
    if machine_id:
        meta["fingerprint"]["machine_id"] = machine_id
    return Result(name=name, params=params or {"producers": 1, "work_per_hit": 0},
                  samples=[Sample(100_000_000, h) for h in hits], metadata=meta)


@pytest.fixture
def store_path(tmp_path):
    return str(tmp_path / "history.sqlite")


def test_round_trip_keeps_each_field(store_path):
    r = make_result(123.0)
    assert history.record(r, store_path) == 1
    df = history.series("count-local", store=store_path)
    assert len(df) == 1
    row = df.iloc[0]
    assert row["median_mps"] == pytest.approx(r.median)
    ci = r.mean_ci_mps
    assert (row["ci_low_mps"], row["ci_high_mps"]) == pytest.approx((ci.low, ci.high))
    assert row["ci_low_mps"] < row["median_mps"] < row["ci_high_mps"]
    assert row["params"] == {"producers": 1, "work_per_hit": 0}
    assert row["kernel_release"] == "6.18.0" and row["kernel_build"] == "#1 SMP"
    assert row["benchbpf_commit"] == "aaaa1111" and row["benchbpf_version"] == "0.1.0"
    assert row["cpu_model"] == "Test CPU" and row["nr_cpus"] == 2
    assert row["emulated"] is None
    assert json.loads(row["fingerprint"])["git_commit"] == "aaaa1111"
    assert row["started"] == "2026-12-01T10:00:00+00:00"


def test_a_result_set_is_one_row_per_result(store_path):
    rs = ResultSet([make_result(100.0, params={"producers": p}) for p in (1, 2, 3)])
    assert history.record(rs, store_path) == 3
    df = history.series("count-local", store=store_path)
    assert sorted(p["producers"] for p in df["params"]) == [1, 2, 3]
    assert df["series"].nunique() == 3
    one = history.series("count-local", params={"producers": 2}, store=store_path)
    assert len(one) == 1 and one.iloc[0]["params"] == {"producers": 2}


def test_series_never_mix_machines_or_emulated_runs(store_path):
    history.record(make_result(100.0), store_path)
    history.record(make_result(101.0, started="2026-12-02T10:00:00+00:00"), store_path)
    history.record(make_result(100.0, nr_cpus=8), store_path)
    history.record(make_result(3.0, kernel="6.1.0", vm={"emulated": True, "accel": "tcg"}),
                   store_path)
    df = history.series("count-local", store=store_path)
    assert df.groupby("series").size().sort_values().tolist() == [1, 1, 2]
    emulated = df[df["emulated"].notna()]
    assert emulated["emulated"].tolist() == ["TCG"]
    assert emulated["series"].iloc[0] not in set(df[df["emulated"].isna()]["series"])
    assert len(history.series("count-local", emulated=False, store=store_path)) == 3
    assert len(history.series("count-local", machine="8 CPUs", store=store_path)) == 1


def test_series_lays_runs_out_by_kernel_or_commit(store_path):
    history.record(make_result(100.0, kernel="6.12.0", commit="c1"), store_path)
    history.record(make_result(90.0, kernel="6.18.0", commit="c2",
                               started="2026-12-02T10:00:00+00:00"), store_path)
    assert history.series("count-local", by="kernel", store=store_path)["at"].tolist() == \
        ["6.12.0", "6.18.0"]
    assert history.series("count-local", by="commit", store=store_path)["at"].tolist() == \
        ["c1", "c2"]
    with pytest.raises(ValueError, match=r"by='branch': one of date, commit, kernel"):
        history.series("count-local", by="branch", store=store_path)


def test_an_unknown_benchmark_is_named(store_path):
    history.record(make_result(), store_path)
    with pytest.raises(ValueError, match=r"'nosuch': no run of it .* \(it has count-local\)"):
        history.series("nosuch", store=store_path)


def test_a_newer_schema_is_refused(store_path):
    Store(store_path).close()
    import sqlite3
    with sqlite3.connect(store_path) as c:
        c.execute("UPDATE benchbpf_schema SET version = ?", (history.SCHEMA_VERSION + 1,))
    with pytest.raises(HistoryError, match=rf"schema version {history.SCHEMA_VERSION + 1} "
                                           r"is newer than this benchbpf's"):
        Store(store_path)


def test_corrupt_foreign_and_read_only_files_are_refused(tmp_path):
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"not a database at all" * 10)
    with pytest.raises(HistoryError, match=r"corrupt.sqlite: not an SQLite database"):
        history.check(str(corrupt))
    import sqlite3
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as c:
        c.execute("CREATE TABLE invoices (n INTEGER)")
    with pytest.raises(HistoryError, match=r"not a benchbpf history store \(it holds tables "
                                           r"invoices\)"):
        history.check(str(foreign))
    readonly = tmp_path / "ro.sqlite"
    Store(str(readonly)).close()
    os.chmod(readonly, 0o444)
    with pytest.raises(HistoryError, match=r"ro.sqlite: read-only \(mode 0444\)"):
        history.check(str(readonly))
    # A store whose folder cannot be made: a file stands where it would go.
    (tmp_path / "afile").write_text("x")
    with pytest.raises(HistoryError, match=r"afile/h.sqlite: (Not a directory|File exists)"):
        history.check(str(tmp_path / "afile" / "h.sqlite"))
    with pytest.warns(HistoryWarning):
        assert history.record(make_result(), str(tmp_path / "afile" / "h.sqlite")) == 0
    # A truncated file: the SQLite header, then nothing of its pages.
    truncated = tmp_path / "truncated.sqlite"
    truncated.write_bytes(b"SQLite format 3\x00" + b"\xff" * 84)
    with pytest.raises(HistoryError, match=r"truncated.sqlite"):
        history.check(str(truncated))


def test_a_failed_write_warns_and_keeps_the_run(tmp_path):
    readonly = tmp_path / "ro.sqlite"
    Store(str(readonly)).close()
    os.chmod(readonly, 0o444)
    r = make_result(77.0)
    with pytest.warns(HistoryWarning, match=r"read-only .* the run is kept but not recorded"):
        assert history.record(r, str(readonly)) == 0
    assert r.median == pytest.approx(77.0, rel=0.02)
    with pytest.raises(HistoryError):
        history.record(r, str(readonly), strict=True)


def test_a_bad_url_is_refused():
    with pytest.raises(HistoryError, match=r"unknown URL scheme 'mysql'"):
        history.check("mysql://host/db")
    pytest.importorskip("psycopg", reason="psycopg is not installed (benchbpf[history])")
    # A server that does not answer is named, without the URL's password.
    with pytest.raises(HistoryError, match=r"postgresql://team@127.0.0.1:1/bench: cannot "
                                           r"connect") as e:
        history.check("postgresql://team:secret@127.0.0.1:1/bench")
    assert "secret" not in str(e.value)


def write_at_once(store, n):
    """Two processes each record n runs into `store` (a path or URL), one
    transaction per run, at the same time; asserts both finished cleanly."""
    Store(store).close()
    writer = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {ROOT!r}); sys.path.insert(0, {os.path.join(ROOT, 'tests')!r})
        from benchbpf import history
        from test_history import make_result
        store = history.Store({store!r})
        for i in range({n}):
            # One transaction per run, so the two writers interleave.
            assert history.record(make_result(100.0 + i, params={{"writer": sys.argv[1]}}),
                                  store, strict=True) == 1
        store.close()
        """)
    procs = [subprocess.Popen([sys.executable, "-c", writer, w]) for w in "ab"]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]


def test_two_processes_writing_at_once_lose_nothing(store_path):
    n = 150
    write_at_once(store_path, n)
    with Store(store_path) as s:
        assert s.count() == 2 * n
    df = history.series("count-local", store=store_path)
    assert df["params"].map(lambda p: p["writer"]).value_counts().to_dict() == {"a": n, "b": n}


def test_the_command_adds_files_and_shows_a_series(tmp_path, capsys):
    store = str(tmp_path / "h.sqlite")
    one = tmp_path / "one.json"
    make_result(100.0, kernel="6.12.0").to_json(str(one))
    both = tmp_path / "set.json"
    ResultSet([make_result(80.0, kernel="6.18.0", started="2026-12-03T10:00:00+00:00"),
               make_result(81.0, kernel="6.18.0", started="2026-12-04T10:00:00+00:00")]
              ).save(str(both))
    assert cli.main(["history", "--history", store, "add", str(one), str(both)]) == 0
    out = capsys.readouterr().out
    assert "3 runs recorded" in out and "(3 in all)" in out
    # The same files again: nothing twice.
    assert cli.main(["history", "--history", store, "add", str(both), str(one)]) == 0
    out = capsys.readouterr().out
    assert "set.json: 0 new runs, 2 already in the store" in out
    assert "one.json: 0 new runs, 1 already in the store" in out and "(3 in all)" in out
    png = tmp_path / "out.png"
    assert cli.main(["history", "show", "count-local", "--by", "kernel", "--history", store,
                     "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    lines = [l for l in out.splitlines() if l.startswith("  6.")]
    assert [l.split()[:2] for l in lines] == [["6.12.0", "1"], ["6.18.0", "2"]]
    assert png.stat().st_size > 5000
    assert cli.main(["history", "--history", store, "show", "nosuch"]) == 2
    assert "'nosuch': no run of it" in capsys.readouterr().err
    assert cli.main(["history", "--history", store, "add", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
    with Store(store) as s:
        assert s.count() == 3


def test_the_command_refuses_a_bad_store_first(tmp_path, capsys):
    bad = tmp_path / "bad.sqlite"
    bad.write_text("hello")
    assert cli.main(["history", "--history", str(bad), "show", "count-local"]) == 2
    assert "not an SQLite database" in capsys.readouterr().err


def test_the_default_store_is_in_the_data_dir(monkeypatch, tmp_path):
    monkeypatch.delenv(history.ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert history.default_location() == str(tmp_path / "benchbpf" / "history.sqlite")
    monkeypatch.setenv(history.ENV, "postgresql://team@db/bench")
    assert history.default_location() == "postgresql://team@db/bench"


def _stepped(store, n=40, at=25, step=0.10, seed=3, **kw):
    """n runs, 1 % noise, the figure dropping by `step` from run `at` on."""
    import random
    rng = random.Random(seed)
    for i in range(n):
        rate = 100 * (1 + rng.gauss(0, 0.01)) * (1 - step if i >= at else 1)
        history.record(make_result(rate, started=f"2026-11-{1 + i // 2:02d}T{10 + i % 2}:00:00+00:00",
                                   commit=f"c{i}", kernel="6.12" if i < at else "6.18", **kw),
                       store, strict=True)


def test_a_step_is_found_where_it_is_with_its_size(store_path):
    _stepped(store_path)
    found = history.changes("count-local", store=store_path)
    assert len(found) == 1
    c = found.iloc[0]
    assert c["index"] == 25 and (c["commit_before"], c["commit_after"]) == ("c24", "c25")
    assert (c["kernel_before"], c["kernel_after"]) == ("6.12", "6.18")
    assert c["ratio_low"] < c["mean_after"] / c["mean_before"] < c["ratio_high"]
    assert c["ratio_low"] < 0.9 < c["ratio_high"] or abs(c["change_pct"] + 10) < 1.5
    assert c["pvalue"] < history.MAX_PVALUE


def test_a_stable_series_has_no_change_and_emulated_runs_stay_apart(store_path):
    _stepped(store_path, step=0.0)
    # Emulated runs 30 times slower: a change if they were mixed in.
    _stepped(store_path, n=10, step=0.0, seed=4, vm={"emulated": True, "accel": "tcg"})
    found = history.changes("count-local", store=store_path)
    assert found.empty


def test_the_command_prints_each_change(tmp_path, capsys):
    store = str(tmp_path / "h.sqlite")
    _stepped(store)
    assert cli.main(["history", "--history", store, "changes", "count-local"]) == 0
    out = capsys.readouterr().out
    assert "at run 26 of 40" in out and "commit c24 -> c25" in out and "kernel 6.12 -> 6.18" in out
    assert out.rstrip().endswith(f"1 change point (p < 0.001, {history.DETECTOR_REQUIREMENT})")
    assert cli.main(["history", "--history", store, "changes", "--max-pvalue", "2"]) == 2
    assert "max_pvalue=2.0 out of range" in capsys.readouterr().err


def test_an_older_schema_is_migrated_all_or_nothing(store_path, monkeypatch):
    # The path any schema change takes: a store one version behind gets each migration and its version row in
    # one transaction, and a migration that fails leaves the store as it was.
    from benchbpf.history import _store
    history.record(make_result(), store_path)

    def broken(store):
        store.execute("ALTER TABLE runs ADD COLUMN note TEXT")
        store.execute("SELECT no_such_column FROM runs")

    def add_note(store):
        store.execute("ALTER TABLE runs ADD COLUMN note TEXT")

    now = _store.SCHEMA_VERSION
    monkeypatch.setattr(_store, "SCHEMA_VERSION", now + 1)
    monkeypatch.setitem(_store.MIGRATIONS, now, broken)
    import sqlite3
    with pytest.raises(HistoryError, match=rf"from version {now} to {now + 1} failed "
                                           rf".*no_such_column.* left at version {now}"):
        Store(store_path)
    with sqlite3.connect(store_path) as c:
        assert c.execute("SELECT version FROM benchbpf_schema").fetchall() == [(now,)]
        assert "note" not in [r[1] for r in c.execute("PRAGMA table_info(runs)")]
    monkeypatch.setitem(_store.MIGRATIONS, now, add_note)
    with Store(store_path) as s:
        assert s.count() == 1
    with sqlite3.connect(store_path) as c:
        assert c.execute("SELECT version FROM benchbpf_schema").fetchall() == [(now + 1,)]
        assert "note" in [r[1] for r in c.execute("PRAGMA table_info(runs)")]



def make_version_1(store):
    """Turn a new store (path or URL) into one of schema version 1, which
    had no unique index, holding one run twice and another once."""
    history.record(make_result(100.0), store)
    history.record(make_result(90.0, started="2026-12-02T10:00:00+00:00"), store)
    with Store(store) as s:
        names = ", ".join(list(s.rows()[0])[1:])
        s.execute("DROP INDEX runs_once")
        s.execute(f"INSERT INTO runs ({names}) SELECT {names} FROM runs WHERE median_mps > 95")
        s.execute("UPDATE benchbpf_schema SET version = 1")
        assert s.count() == 3


def check_migrated_from_version_1(store):
    with Store(store) as s:
        assert s.execute("SELECT version FROM benchbpf_schema").fetchall() == [(2,)]
        assert s.count() == 2
        assert sorted(round(r["median_mps"]) for r in s.rows()) == [90, 100]
    assert history.record(make_result(100.0), store) == 0
    assert history.record(make_result(100.0, started="2026-12-03T10:00:00+00:00"), store) == 1


def test_a_version_1_store_is_migrated_to_2(store_path):
    make_version_1(store_path)
    check_migrated_from_version_1(store_path)


def test_machine_ids_keep_twin_machines_apart_and_old_rows_in_their_series(store_path):
    # Two guests of one image: same hostname, CPU and count, their own machine-id.
    history.record(make_result(100.0, machine_id="machine-id:1111111111111111"), store_path)
    history.record(make_result(100.0, machine_id="machine-id:2222222222222222"), store_path)
    history.record(make_result(100.0), store_path)
    df = history.series("count-local", store=store_path)
    assert df["machine"].nunique() == 3 and df["series"].nunique() == 3
    # A run without one hashes as every stored row did before machine ids:
    # the docs' series, written then, is still this machine's.
    assert df["machine"].iloc[2] == "12588de377dd2332"
    assert df["machine_label"].tolist()[:2] == [
        "Test CPU, 2 CPUs, x86_64, machine-id:1111111111111111",
        "Test CPU, 2 CPUs, x86_64, machine-id:2222222222222222"]
    assert len(history.series("count-local", machine="machine-id:2222", store=store_path)) == 1


def test_the_machine_id_is_hashed_and_falls_back_to_the_hostname(tmp_path):
    import socket
    from benchbpf.results import fingerprint
    raw = "0123456789abcdef0123456789abcdef"
    (tmp_path / "a").write_text(raw + "\n")
    (tmp_path / "b").write_text(raw.replace("0", "f") + "\n")
    a = fingerprint.machine_id(str(tmp_path / "a"))
    assert a.startswith("machine-id:") and len(a) == len("machine-id:") + 16
    assert raw not in a and raw[:16] not in a
    assert a == fingerprint.machine_id(str(tmp_path / "a"))
    assert a != fingerprint.machine_id(str(tmp_path / "b"))
    host = fingerprint.machine_id(str(tmp_path / "absent"))
    assert host.startswith("hostname:") and socket.gethostname() not in host
    (tmp_path / "empty").write_text("")
    assert fingerprint.machine_id(str(tmp_path / "empty")) == host
    assert fingerprint.fingerprint()["machine_id"] == fingerprint.machine_id()


def test_install_detector_refuses_a_directory_that_is_not_a_venv(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(HistoryError, match="holds files and is not a venv"):
        history.install_detector(str(tmp_path))
    assert os.listdir(tmp_path) == ["notes.txt"]      # nothing cleared


def test_install_detector_keeps_a_working_detector_venv():
    # Run again (install.sh does, possibly under another Python) it keeps
    # the venv it finds working rather than making it anew.
    venv = history.detector_venv()
    cfg = os.path.join(venv, "pyvenv.cfg")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(cfg) or subprocess.run(
            [python, "-c", "import otava.analysis"], capture_output=True).returncode:
        pytest.skip(f"no working detector venv at {venv} (benchbpf history install-detector)")
    before = os.stat(cfg).st_mtime_ns
    assert history.install_detector() == python
    assert os.stat(cfg).st_mtime_ns == before


def test_a_reader_that_goes_away_ends_the_command_quietly(store_path):
    # `benchbpf history show ... | head`: the reader closes the pipe; the
    # command ends with 141, as a shell's SIGPIPE would, and no traceback.
    _stepped(store_path, n=400, at=200)
    p = subprocess.Popen([sys.executable, "-m", "benchbpf", "history", "--history", store_path,
                          "show", "count-local"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=ROOT)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait() == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_a_detector_venv_that_cannot_import_says_to_install_again(tmp_path, monkeypatch):
    # A venv left by a Python since upgraded: its python starts but finds no
    # otava.  The error says how to mend it, not only the worker's traceback.
    if not subprocess.run([sys.executable, "-c", "import otava"], capture_output=True).returncode:
        pytest.skip("this Python imports otava itself")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.delenv("BENCHBPF_DETECTOR_PYTHON", raising=False)
    bin_dir = tmp_path / "benchbpf" / "detector" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    with pytest.raises(HistoryError, match="cannot import otava: run `benchbpf history "
                                           "install-detector`"):
        history.detect([[1.0] * 30 + [2.0] * 30])
