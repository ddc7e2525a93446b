"""The history store on a real PostgreSQL server: Debian's postgresql,
a throwaway cluster started for this module (initdb and pg_ctl as the
postgres user, in a temporary directory, on a free port) and stopped
after.  Skipped, saying why, only where no server can be started."""
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid

import pytest

from benchbpf import history
from benchbpf.history import HistoryError, Store
from test_history import (check_migrated_from_version_1, make_result, make_version_1,
                          write_at_once)

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed "
                                                "(pip install 'benchbpf[history]')")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(*cmd):
    runner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run(runner + list(cmd), capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def server():
    """postgresql://postgres@127.0.0.1:PORT: a cluster of this module's own."""
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not bins:
        pytest.skip("no PostgreSQL server installed (Debian's postgresql package; "
                    "scripts/install.sh installs it)")
    bindir = os.path.dirname(bins[-1])
    top = tempfile.mkdtemp(prefix="benchbpf-pg-")
    data = os.path.join(top, "data")
    if os.geteuid() == 0:
        shutil.chown(top, "postgres", "postgres")
    os.chmod(top, 0o755)
    init = _as_postgres(os.path.join(bindir, "initdb"), "-D", data, "-U", "postgres",
                        "--auth=trust", "-E", "UTF8")
    if init.returncode != 0:
        shutil.rmtree(top, ignore_errors=True)
        pytest.skip(f"initdb failed: {init.stderr.strip()[-300:]}")
    port = _free_port()
    start = _as_postgres(os.path.join(bindir, "pg_ctl"), "-D", data, "-l",
                         os.path.join(top, "log"), "-w", "-t", "60", "-o",
                         f"-p {port} -k {top} -c listen_addresses=127.0.0.1", "start")
    if start.returncode != 0:
        log = open(os.path.join(top, "log")).read()[-300:] if os.path.exists(
            os.path.join(top, "log")) else ""
        shutil.rmtree(top, ignore_errors=True)
        pytest.skip(f"PostgreSQL did not start: {start.stderr.strip()[-300:]} {log}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        _as_postgres(os.path.join(bindir, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop")
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture
def url(server):
    """A fresh database on the server, dropped after the test."""
    name = "bench_" + uuid.uuid4().hex[:12]
    with psycopg.connect(f"{server}/postgres", autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    yield f"{server}/{name}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as c:
        c.execute(f"DROP DATABASE {name} WITH (FORCE)")


def test_round_trip_on_postgresql(url):
    r = make_result(123.0, kernel="6.12.0", commit="c1")
    assert history.record(r, url) == 1
    assert history.record(make_result(3.0, vm={"emulated": True, "accel": "tcg"}), url) == 1
    df = history.series("count-local", store=url)
    assert len(df) == 2 and df["series"].nunique() == 2
    row = df[df["emulated"].isna()].iloc[0]
    ci = r.mean_ci_mps
    assert (row["median_mps"], row["ci_low_mps"], row["ci_high_mps"]) == \
        pytest.approx((r.median, ci.low, ci.high))
    assert row["params"] == {"producers": 1, "work_per_hit": 0}
    assert (row["kernel_release"], row["benchbpf_commit"]) == ("6.12.0", "c1")
    with Store(url) as s:
        assert s.dialect == "postgresql" and s.count() == 2
        assert "postgres@127.0.0.1" in s.where


def test_two_processes_writing_at_once_on_postgresql(url):
    write_at_once(url, 100)
    with Store(url) as s:
        assert s.count() == 200


def test_a_newer_schema_and_a_foreign_database_are_refused(url, server):
    Store(url).close()
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("UPDATE benchbpf_schema SET version = %s", (history.SCHEMA_VERSION + 1,))
    with pytest.raises(HistoryError, match=r"is newer than this benchbpf's"):
        Store(url)
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("DROP TABLE benchbpf_schema")
    with pytest.raises(HistoryError, match=r"not a benchbpf history store \(it holds tables runs\)"):
        Store(url)


def test_a_version_1_database_is_migrated_to_2(url):
    make_version_1(url)
    check_migrated_from_version_1(url)


def test_an_unreachable_server_and_a_missing_database_are_named(server):
    with pytest.raises(HistoryError, match=r"127.0.0.1:1/x: cannot connect"):
        Store(f"postgresql://postgres@127.0.0.1:1/x")
    with pytest.raises(HistoryError, match=r"cannot connect .*nosuchdb"):
        Store(f"{server}/nosuchdb")
    with pytest.warns(history.HistoryWarning, match="the run is kept but not recorded"):
        assert history.record(make_result(), f"{server}/nosuchdb") == 0
