"""Results over time: a store of runs and the series read from it.

Above the analysis layer and below the tools: ``record()`` writes Results
into a store (SQLite by default, PostgreSQL by URL), ``series()`` reads
them back as a pandas DataFrame, one series per benchmark, parameters,
machine and emulation, so unlike runs never mix; ``changes()`` finds
where a series changed, by Apache Otava's E-Divisive means.

    >>> from benchbpf import history
    >>> history.record(benchbpf.run("count-local"))          # doctest: +SKIP
    >>> history.series("count-local", by="kernel")           # doctest: +SKIP
"""
import contextlib
import json
import warnings

from . import _changes, _html, _rows, _store
from ._changes import detect, detector_venv, install_detector, series_changes
from ._store import NAMES, HistoryError, HistoryUnavailable, Store, default_location

__all__ = ["record", "runs", "series", "Store", "HistoryError", "HistoryUnavailable",
           "HistoryWarning",
           "default_location", "check", "SCHEMA_VERSION", "ENV", "BY", "changes",
           "series_changes", "detect", "install_detector", "detector_venv", "DETECTOR_REQUIREMENT",
           "MAX_PVALUE", "WINDOW", "html"]

#: The store schema this benchbpf writes; a store of a newer one is refused.
SCHEMA_VERSION = _store.SCHEMA_VERSION
#: The environment variable naming the store: a file path or a postgresql:// URL.
ENV = _store.ENV
#: The change-point detector install_detector() installs, at the version measured.
DETECTOR_REQUIREMENT = _changes.DETECTOR_REQUIREMENT
#: The default threshold of a change point's t-test p-value (Otava's).
MAX_PVALUE = _changes.MAX_PVALUE
#: The detector's window, points (Otava's default).
WINDOW = _changes.WINDOW
#: What a series' runs can be laid out by (series(by=...)): the column each
#: names.
BY = {"date": "started", "commit": "benchbpf_commit", "kernel": "kernel_release"}


class HistoryWarning(UserWarning):
    """A run could not be recorded: the run itself is kept (printed, saved,
    returned); only its row in the store is missing."""


@contextlib.contextmanager
def _opened(store):
    if isinstance(store, Store):
        yield store
        return
    s = Store(store)
    try:
        yield s
    finally:
        s.close()


def check(store=None):
    """Open and close `store` (a Store, path, URL or None: the default) to
    refuse a bad one before a run: HistoryError naming what is wrong;
    HistoryUnavailable (a HistoryError) where it is a store that cannot
    take runs now (read-only, server down), which a run may go ahead of."""
    with _opened(store):
        pass


def record(result_or_set, store=None, source=None, strict=False):
    """Write a Result, each Result of a ResultSet (a report, --repeat runs,
    a grid sweep) or of a Sweep, or both sides of an ABResult (each one run
    made of its rounds, the comparison's outcome in its source) into the
    history `store` (a Store, a file path, a postgresql:// URL, or None:
    default_location()); `source` notes the file it came from.  Returns how
    many runs were new (one already stored, same series, start and figure,
    is not stored twice).  A store that cannot take them is a
    HistoryWarning and 0, never an exception, so the run is not lost;
    with strict=True (importing files, whose runs are kept in them) it is
    the HistoryError."""
    rows = _rows.rows(result_or_set, source)
    try:
        with _opened(store) as s:
            return s.insert(rows)
    except HistoryError as e:
        if strict:
            raise
        warnings.warn(HistoryWarning(f"{e}; the run is kept but not recorded"),
                      stacklevel=2)
        return 0


def _check_by(by):
    if by not in BY:
        raise ValueError(f"by={by!r}: one of {', '.join(BY)}")


def runs(name=None, *, params=None, machine=None, by="date", emulated=None, store=None):
    """The runs of benchmark `name` (None: all) in the store, oldest first,
    as dicts of "id", the store's columns (params decoded) and "at".
    `params` (a dict) keeps runs with exactly those parameters; `machine`
    keeps runs whose machine hash starts with it or whose label (cpu model,
    CPUs, architecture, machine id) contains it; `emulated` True or False keeps
    emulated or real runs only.  "series" keys the series (benchmark,
    parameters, machine, emulation): runs of different keys are different
    series.  "at" is what `by` lays them out by: "date" (when it ran),
    "commit" (benchbpf's) or "kernel" (its release).  ValueError for a bad
    `by` or a benchmark the store has no run of (naming those it has)."""
    _check_by(by)
    where, args = [], []
    if name is not None:
        where.append("benchmark = ?")
        args.append(name)
    if params is not None:
        where.append("params = ?")
        args.append(_rows.canonical(dict(params)))
    if emulated is not None:
        where.append("emulated IS NOT NULL" if emulated else "emulated IS NULL")
    with _opened(store) as s:
        found = s.rows(" AND ".join(where), args)
        if not found and name is not None and not s.execute(
                "SELECT 1 FROM runs WHERE benchmark = ? LIMIT 1", (name,)).fetchall():
            have = sorted({r[0] for r in s.execute("SELECT DISTINCT benchmark FROM runs")})
            raise ValueError(f"benchmark {name!r}: no run of it in history store {s.where} "
                             f"(it has {', '.join(have) or 'no runs'})")
    if machine is not None:
        found = [r for r in found if r["machine"].startswith(machine)
                 or machine.lower() in (r["machine_label"] or "").lower()]
    for r in found:
        r["params"] = json.loads(r["params"])
        r["at"] = r[BY[by]]
    return found


def series(name=None, *, params=None, machine=None, by="date", emulated=None, store=None):
    """runs() as a pandas DataFrame, one row per run, with the same
    arguments: `name`, `params`, `machine`, `by`, `emulated` and `store`."""
    import pandas as pd
    return pd.DataFrame(runs(name, params=params, machine=machine, by=by, emulated=emulated,
                             store=store), columns=["id", *NAMES, "at"])


def changes(name=None, *, machine=None, emulated=None, max_pvalue=MAX_PVALUE, window=WINDOW,
            store=None):
    """The change points of the series of benchmark `name` (None: every
    benchmark) in the store, as series_changes() gives them; `machine` and
    `emulated` select series as in series().  A series needs 3 runs."""
    return series_changes(series(name, machine=machine, emulated=emulated, store=store),
                          max_pvalue, window)


def html(out_dir, name=None, *, machine=None, max_pvalue=MAX_PVALUE, store=None):
    """Write the static dashboard into `out_dir`: index.html (every series
    of benchmark `name`, None: all, on machines matching `machine`, the
    most recent change first) and one page per series with its runs, their
    intervals and its change points (p < `max_pvalue`) as inline SVG.
    Returns the paths written, the index first."""
    df = series(name, machine=machine, store=store)
    found = series_changes(df, max_pvalue)
    return _html.write(df, found, out_dir, f"{DETECTOR_REQUIREMENT}, p < {max_pvalue:g}")


def last_runs(result, n, store=None):
    """The last `n` runs in `store` (a Store, path, URL or None: the
    default) of `result`'s series (its benchmark, parameters, machine and
    emulation) on `result`'s kernel release, oldest first, as dicts of
    "id" and the store's columns (params decoded); fewer when the store
    holds fewer.  The pytest gate's baseline from history."""
    key = _rows.row(result)
    kernel = key["kernel_release"]
    where = "series = ? AND " + ("kernel_release = ?" if kernel is not None
                                 else "kernel_release IS NULL")
    args = [key["series"]] + ([kernel] if kernel is not None else [])
    with _opened(store) as s:
        found = s.rows(where, args)[-n:] if n > 0 else []
    for r in found:
        r["params"] = json.loads(r["params"])
    return found


__all__ += ["last_runs"]
