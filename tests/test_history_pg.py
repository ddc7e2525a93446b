"""The history store on a real PostgreSQL server: the one .ci/run starts
and names in $BENCHBPF_TEST_POSTGRES (CI), else a throwaway cluster of
Debian's postgresql started for this module by scripts/ci_postgres.sh (in a
temporary directory, on a free port) and stopped after.  Skipped, saying
why, only where no server can be started; a server named but unreachable
is an error, not a skip."""
import os
import subprocess
import tempfile
import urllib.parse
import uuid

import pytest

from benchbpf import history
from benchbpf.history import HistoryError, Store
from test_history import (check_migrated_from_version_1, make_result, make_version_1,
                          write_at_once)

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed "
                                                "(pip install 'benchbpf[history]')")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The server the tests use when set: postgresql://USER[:PASSWORD]@HOST:PORT,
#: no database (each test makes and drops its own), as .ci/run sets it.
SERVER_ENV = "BENCHBPF_TEST_POSTGRES"
CI_POSTGRES = os.path.join(ROOT, "scripts", "ci_postgres.sh")


def _named_server(url):
    """$BENCHBPF_TEST_POSTGRES, checked: a server URL that answers."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres") or parts.path not in ("", "/"):
        pytest.fail(f"{SERVER_ENV}={url!r}: must be postgresql://USER@HOST:PORT, without "
                    "a database (each test makes its own)", pytrace=False)
    url = url.rstrip("/")
    try:
        psycopg.connect(f"{url}/postgres", connect_timeout=10).close()
    except psycopg.Error as e:
        # CI started this server for the suite: a skip would hide that it is gone.
        pytest.fail(f"{SERVER_ENV}={url}: cannot connect: {e}", pytrace=False)
    return url


@pytest.fixture(scope="module")
def server():
    """postgresql://USER@HOST:PORT: $BENCHBPF_TEST_POSTGRES, else a cluster
    of this module's own."""
    if os.environ.get(SERVER_ENV):
        yield _named_server(os.environ[SERVER_ENV])
        return
    top = tempfile.mkdtemp(prefix="benchbpf-pg-")
    start = subprocess.run([CI_POSTGRES, "start", top], capture_output=True, text=True,
                           timeout=300)
    if start.returncode != 0:
        subprocess.run([CI_POSTGRES, "stop", top], capture_output=True, timeout=300)
        pytest.skip(f"no PostgreSQL server could be started: {start.stderr.strip()[-300:]}")
    try:
        yield start.stdout.strip()
    finally:
        subprocess.run([CI_POSTGRES, "stop", top], capture_output=True, timeout=300)


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
