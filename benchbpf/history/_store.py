"""The history store: one table of runs, in SQLite or PostgreSQL.

Plain DB-API, not SQLAlchemy Core: the store is one table and a version
table with portable SQL types (TEXT, INTEGER, DOUBLE PRECISION), so the two
dialects differ only in the parameter mark (? against %s), the id column
and how a file is opened.  sqlite3 is in the standard library, so the
default store needs nothing installed; PostgreSQL needs psycopg 3 only
(the benchbpf[history] extra), not an ORM and its own driver on top.
"""
import json
import os
import stat
import urllib.parse

#: The schema this benchbpf writes.  A store of a newer one is refused: an
#: older benchbpf cannot know what the newer columns mean.  Version 2: a run
#: is stored once (the same file added twice adds nothing).
SCHEMA_VERSION = 2
#: The environment variable naming the store (a file path or a
#: postgresql:// URL); the default is DEFAULT_NAME in the user's data
#: directory ($XDG_DATA_HOME/benchbpf, else ~/.local/share/benchbpf).
ENV = "BENCHBPF_HISTORY"
#: The default store's file name.
DEFAULT_NAME = "history.sqlite"
#: How long a writer waits for another one's lock, s.
BUSY_TIMEOUT_S = 60.0

#: The run table's columns after its id, with their portable SQL types.
COLUMNS = (
    ("series", "TEXT NOT NULL"),          # hash of benchmark, params, machine, emulation
    ("benchmark", "TEXT NOT NULL"),
    ("params", "TEXT NOT NULL"),          # canonical JSON: sorted keys, no spaces
    ("median_mps", "DOUBLE PRECISION"),   # hits, M/s
    ("mean_mps", "DOUBLE PRECISION"),
    ("ci_low_mps", "DOUBLE PRECISION"),   # 95 % interval of the mean
    ("ci_high_mps", "DOUBLE PRECISION"),
    ("started", "TEXT"),                  # ISO 8601, UTC
    ("started_s", "DOUBLE PRECISION"),    # the same, Unix time: the order
    ("kernel_release", "TEXT"),
    ("kernel_build", "TEXT"),             # uname -v
    ("kernel_commit", "TEXT"),
    ("machine", "TEXT NOT NULL"),         # hash of MACHINE_KEYS
    ("machine_label", "TEXT"),            # cpu model, cpus, architecture
    ("cpu_model", "TEXT"),
    ("nr_cpus", "INTEGER"),
    ("benchbpf_version", "TEXT"),
    ("benchbpf_commit", "TEXT"),
    ("emulated", "TEXT"),                 # "TCG" for an emulated guest, else NULL
    ("fingerprint", "TEXT"),              # JSON
    ("source", "TEXT"),                   # the file a run was imported from
)
NAMES = tuple(name for name, _ in COLUMNS)


class HistoryError(Exception):
    """The history store cannot be used: the message names the store and
    what is wrong with it (unknown URL scheme, unreachable server, not a
    benchbpf store, read-only, a newer schema...)."""


class HistoryUnavailable(HistoryError):
    """The store is a benchbpf store, or may be, but cannot take runs now: a
    read-only file, a server that does not answer or refuses the
    connection.  Unlike the other refusals it may pass by itself, so a
    command runs anyway and tries the write when it ends."""


def default_location():
    """$BENCHBPF_HISTORY, else history.sqlite in $XDG_DATA_HOME/benchbpf
    (~/.local/share/benchbpf when XDG_DATA_HOME is unset)."""
    if os.environ.get(ENV):
        return os.environ[ENV]
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"),
                                                           ".local", "share")
    return os.path.join(data, "benchbpf", DEFAULT_NAME)


def _is_url(location):
    return "://" in str(location)


class Store:
    """An open history store: `Store(location)` with a file path or a
    postgresql:// URL (None: default_location()).  Checks it at once, before
    any run: HistoryError for an unknown URL scheme, an unreachable server,
    a file that is not SQLite or holds another program's tables, a read-only
    file, or a schema newer than SCHEMA_VERSION.  An empty or missing store
    gets the schema.  A context manager; close() ends the connection."""

    def __init__(self, location=None):
        self.location = str(location if location is not None else default_location())
        if _is_url(self.location):
            self._connect_postgres()
        else:
            try:
                self._connect_sqlite()
            except OSError as e:
                # A folder that cannot be made or a file that cannot be read.
                raise HistoryError(f"history store {self.location}: {e.strerror or e}") from None
        try:
            self._prepare()
        except BaseException:
            self.close()
            raise

    def __repr__(self):
        return f"Store({self.where!r})"

    @property
    def where(self):
        """The store's location, without a URL's password."""
        if not _is_url(self.location):
            return self.location
        u = urllib.parse.urlsplit(self.location)
        host = u.hostname or ""
        netloc = (f"{u.username}@" if u.username else "") + host + (f":{u.port}" if u.port else "")
        return urllib.parse.urlunsplit((u.scheme, netloc, u.path, "", ""))

    # -- opening ----------------------------------------------------------
    def _connect_sqlite(self):
        import sqlite3
        self.dialect, self._errors = "sqlite", (sqlite3.Error,)
        path = self.location
        if os.path.exists(path):
            if not os.path.isfile(path):
                raise HistoryError(f"history store {path}: not a file")
            mode = os.stat(path).st_mode
            # Root may write any file: the mode bits say what its owner meant.
            if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or \
                    not os.access(path, os.W_OK):
                raise HistoryUnavailable(f"history store {path}: read-only (mode "
                                   f"{stat.S_IMODE(mode):04o}); runs cannot be recorded")
            with open(path, "rb") as f:
                head = f.read(16)
            if head and head != b"SQLite format 3\x00":
                raise HistoryError(f"history store {path}: not an SQLite database "
                                   f"(it starts with {head[:8]!r}): corrupt or another file")
        else:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        try:
            self._conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S,
                                         isolation_level=None)
            self._conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            # WAL: readers never wait for a writer, writers queue on the lock.
            self._conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.DatabaseError as e:
            self._conn = None
            raise HistoryError(f"history store {path}: not a usable SQLite database "
                               f"({e}): corrupt or another file") from None
        self._id_type = "INTEGER PRIMARY KEY AUTOINCREMENT"

    def _connect_postgres(self):
        scheme = urllib.parse.urlsplit(self.location).scheme
        if scheme not in ("postgresql", "postgres"):
            raise HistoryError(f"history store {self.location!r}: unknown URL scheme "
                               f"{scheme!r}; a store is a file path or a postgresql:// URL")
        try:
            import psycopg
        except ImportError:
            raise HistoryError(f"history store {self.where}: PostgreSQL needs psycopg "
                               "(pip install 'benchbpf[history]')") from None
        self.dialect, self._errors = "postgresql", (psycopg.Error,)
        try:
            self._conn = psycopg.connect(self.location, autocommit=True, connect_timeout=10)
        except psycopg.Error as e:
            self._conn = None
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise HistoryUnavailable(f"history store {self.where}: cannot connect "
                                     f"({first})") from None
        self._id_type = "BIGSERIAL PRIMARY KEY"

    def _sql(self, text):
        return text if self.dialect == "sqlite" else text.replace("?", "%s")

    def execute(self, text, args=()):
        """Run one SQL statement `text`, written with ? marks for the values
        `args`; returns the cursor."""
        return self._conn.execute(self._sql(text), tuple(args))

    def _tables(self):
        if self.dialect == "sqlite":
            q = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        else:
            q = ("SELECT table_name FROM information_schema.tables "
                 "WHERE table_schema = current_schema()")
        return {row[0] for row in self.execute(q)}

    def _prepare(self):
        try:
            tables = self._tables()
        except self._errors as e:
            raise HistoryError(f"history store {self.where}: cannot be read ({e}): "
                               "corrupt or not a database") from None
        if "benchbpf_schema" not in tables:
            if tables:
                raise HistoryError(
                    f"history store {self.where}: not a benchbpf history store (it holds "
                    f"tables {', '.join(sorted(tables))}); name another file or database")
            self._create()
            return
        rows = self.execute("SELECT version FROM benchbpf_schema").fetchall()
        version = max(r[0] for r in rows) if rows else None
        if version is None:
            raise HistoryError(f"history store {self.where}: its schema version is missing")
        if version > SCHEMA_VERSION:
            raise HistoryError(
                f"history store {self.where}: schema version {version} is newer than this "
                f"benchbpf's ({SCHEMA_VERSION}); upgrade benchbpf to use it")
        for v in range(version, SCHEMA_VERSION):
            try:
                self._transaction(MIGRATIONS[v], v + 1)
            except self._errors as e:
                raise HistoryError(f"history store {self.where}: migrating its schema from "
                                   f"version {v} to {v + 1} failed ({e}); it is left at "
                                   f"version {v}") from None

    def _create(self):
        def create(store):
            store.execute("CREATE TABLE benchbpf_schema (version INTEGER NOT NULL)")
            cols = ", ".join(f"{n} {t}" for n, t in COLUMNS)
            store.execute(f"CREATE TABLE runs (id {self._id_type}, {cols})")
            store.execute("CREATE INDEX runs_by_series ON runs (series, started_s)")
            store.execute("CREATE INDEX runs_by_benchmark ON runs (benchmark, started_s)")
            store.execute(_ONCE)
        try:
            self._transaction(create, SCHEMA_VERSION)
        except self._errors as e:
            if "already exists" not in str(e):
                raise HistoryError(f"history store {self.where}: cannot create its "
                                   f"tables ({e})") from None
            # Another process created them first: read its version instead.
            self._prepare()

    def _transaction(self, change, version):
        """change(self) and the version row, all or nothing."""
        self.execute("BEGIN IMMEDIATE" if self.dialect == "sqlite" else "BEGIN")
        try:
            change(self)
            self.execute("DELETE FROM benchbpf_schema")
            self.execute("INSERT INTO benchbpf_schema (version) VALUES (?)", (version,))
        except BaseException:
            self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    # -- rows -------------------------------------------------------------
    def insert(self, rows):
        """Write `rows` (dicts of NAMES) in one transaction; returns how many
        were new (a run already in the store, same series, start and
        figure, is passed over).  HistoryError when the store refuses the
        write."""
        marks = ", ".join("?" for _ in NAMES)
        text = self._sql(f"INSERT INTO runs ({', '.join(NAMES)}) VALUES ({marks}) "
                         "ON CONFLICT DO NOTHING")
        values = [tuple(_cell(row.get(n)) for n in NAMES) for row in rows]
        try:
            self.execute("BEGIN IMMEDIATE" if self.dialect == "sqlite" else "BEGIN")
            try:
                cur = self._conn.cursor()
                cur.executemany(text, values)
                # Both drivers sum the rows each statement wrote: passed-over runs add 0.
                added = max(cur.rowcount, 0)
                cur.close()
            except BaseException:
                self.execute("ROLLBACK")
                raise
            self.execute("COMMIT")
        except self._errors as e:
            raise HistoryError(f"history store {self.where}: write failed ({e})") from None
        return added

    def rows(self, where="", args=()):
        """The runs matching the SQL condition `where` (? marks for `args`),
        oldest first, as dicts of "id" and NAMES."""
        text = f"SELECT id, {', '.join(NAMES)} FROM runs"
        if where:
            text += f" WHERE {where}"
        cur = self.execute(text + " ORDER BY started_s, id", args)
        names = ("id",) + NAMES
        return [dict(zip(names, r)) for r in cur]

    def count(self):
        """How many runs the store holds."""
        return self.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def close(self):
        """End the connection (again: nothing)."""
        conn, self._conn = getattr(self, "_conn", None), None
        if conn is not None:
            conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _cell(value):
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True)
    return value


#: What makes a run stored once: its series, start and figure.
_ONCE = "CREATE UNIQUE INDEX runs_once ON runs (series, started, median_mps)"


def _store_runs_once(store):
    """1 -> 2: drop repeated runs (a file added twice), keeping the first,
    then the unique index that keeps them out."""
    store.execute("DELETE FROM runs WHERE started IS NOT NULL AND median_mps IS NOT NULL "
                  "AND id NOT IN (SELECT MIN(id) FROM runs GROUP BY series, started, median_mps)")
    store.execute(_ONCE)


#: version -> the change taking a store from it to version + 1, run in one
#: transaction with the version row (Store._prepare applies them in turn).
MIGRATIONS = {1: _store_runs_once}
