"""Change points of the stored series, by Apache Otava's E-Divisive means.

Why Otava, and why in its own virtual environment (results/history-changes-2cpu.md
has the measurements):

- Of the two E-Divisive packages, Otava (Apache, the continuation of
  Hunter, released 2026) is maintained; MongoDB's
  signal-processing-algorithms was last released in 2024, requires
  Python ~3.11 exactly and numpy < 2.
- Otava's significance step is Student's t-test on the segments either
  side (Hunter's variant), deterministic: the same series gives the same
  change points, which a record and a CI job need.  The original
  algorithm's permutation test is random and O(n^2) per permutation.
- Neither installs beside this project's numpy 2.4 / scipy 1.17: Otava
  pins numpy 2.2 and scipy < 1.17.  So it runs as a tool does, in a venv
  of its own (install_detector(), or $BENCHBPF_DETECTOR_PYTHON naming an
  interpreter that has it), fed JSON through a pipe (_edivisive.py); the
  core and the benchbpf[history] extra do not move.
"""
import datetime
import json
import os
import subprocess
import sys

from ._store import HistoryError

#: What install_detector() installs: the detector, at the version measured.
DETECTOR_REQUIREMENT = "apache-otava==0.8.0"
#: The environment variable naming a Python interpreter that can import otava.
DETECTOR_ENV = "BENCHBPF_DETECTOR_PYTHON"
#: Otava's default threshold: a change point's t-test p-value must be below it.
MAX_PVALUE = 0.001
#: Otava's default window of its split step, points.
WINDOW = 50
_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_edivisive.py")


def detector_venv():
    """Where install_detector() puts the detector's venv: "detector" beside
    the default SQLite store ($XDG_DATA_HOME/benchbpf/detector)."""
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"),
                                                           ".local", "share")
    return os.path.join(data, "benchbpf", "detector")


def _can_import(python):
    return subprocess.run([python, "-c", "import otava.analysis"], capture_output=True,
                          timeout=120).returncode == 0


def detector_python():
    """The interpreter that runs the detector: $BENCHBPF_DETECTOR_PYTHON,
    else detector_venv()'s, else this one if it has otava.  HistoryError
    saying how to install it when none has."""
    named = os.environ.get(DETECTOR_ENV)
    if named:
        if not os.access(named, os.X_OK) or not _can_import(named):
            raise HistoryError(f"{DETECTOR_ENV}={named}: not a Python that can import otava")
        return named
    venv = os.path.join(detector_venv(), "bin", "python")
    if os.access(venv, os.X_OK):
        return venv
    if _can_import(sys.executable):
        return sys.executable
    raise HistoryError(f"the change-point detector ({DETECTOR_REQUIREMENT}) is not installed: "
                       "run `benchbpf history install-detector` (it makes a venv in "
                       f"{detector_venv()}), or set {DETECTOR_ENV}")


def install_detector(path=None):
    """Make a venv at `path` (default detector_venv()) with
    DETECTOR_REQUIREMENT, by venv and pip; returns its python.  A venv
    there that imports the detector is kept as it is; one that does not is
    made again.  HistoryError with pip's last lines when that fails, or
    when `path` holds files that are not a venv."""
    path = path or detector_venv()
    python = os.path.join(path, "bin", "python")
    if os.access(python, os.X_OK) and _can_import(python):
        return python   # installed already, by whichever Python made the venv
    if os.path.isdir(path) and os.listdir(path) and \
            not os.path.exists(os.path.join(path, "pyvenv.cfg")):
        raise HistoryError(f"installing the detector in {path} failed: the directory holds "
                           "files and is not a venv; name an empty or new one")
    # --clear: a venv left by another Python (one since removed or upgraded)
    # is made again rather than patched, which ensurepip can refuse.
    steps = [[sys.executable, "-m", "venv", "--clear", path],
             [python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
              DETECTOR_REQUIREMENT]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
            raise HistoryError(f"installing the detector in {path} failed: {tail}")
    return python


def detect(series, max_pvalue=MAX_PVALUE, window=WINDOW):
    """The change points of each series (a list of lists of figures), by
    the detector: one list per series of dicts with "index" (the first
    point after the change), "pvalue", "mean_before", "mean_after",
    "sd_before", "sd_after", "n_before", "n_after", "ratio_low" and
    "ratio_high" (the 95 % interval of after/before).  ValueError for
    max_pvalue outside (0, 1) or window under 2."""
    if not 0 < max_pvalue < 1:
        raise ValueError(f"max_pvalue={max_pvalue!r} out of range: 0 < max_pvalue < 1")
    if not isinstance(window, int) or window < 2:
        raise ValueError(f"window={window!r} out of range: an int >= 2")
    request = json.dumps({"series": [[float(x) for x in s] for s in series],
                          "max_pvalue": max_pvalue, "window": window})
    python = detector_python()
    done = subprocess.run([python, _WORKER], input=request, capture_output=True, text=True)
    if done.returncode != 0 and not _can_import(python):
        # A venv whose Python was removed or upgraded since: its interpreter
        # starts, but no longer finds what install_detector() put there.
        raise HistoryError(f"the change-point detector's Python {python} cannot import "
                           "otava: run `benchbpf history install-detector` (it makes the "
                           f"venv again), or set {DETECTOR_ENV}")
    if done.returncode != 0:
        raise HistoryError("the change-point detector failed: "
                           + "\n".join(done.stderr.strip().splitlines()[-5:]))
    return json.loads(done.stdout)["changes"]


def since_epoch(since):
    """`since` (a datetime, an ISO 8601 text such as 2026-12-05T01:00:00Z,
    UTC when it names no zone, or Unix seconds) as Unix seconds.
    ValueError naming it when it is none of these."""
    if isinstance(since, (int, float)) and not isinstance(since, bool):
        return float(since)
    when = since
    if isinstance(since, str):
        try:
            when = datetime.datetime.fromisoformat(since.strip().replace("Z", "+00:00"))
        except ValueError:
            when = None
    if not isinstance(when, datetime.datetime):
        raise ValueError(f"since={since!r}: not a date and time: ISO 8601 such as "
                         "2026-12-05T01:00:00Z (UTC when no zone is given), or Unix seconds")
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.timestamp()


def series_changes(df, max_pvalue=MAX_PVALUE, window=WINDOW, since=None):
    """The change points of each series in `df`, a history.series()
    DataFrame, over each run's median in the order the runs ran, found by
    detect() with `max_pvalue` and `window`; as a DataFrame: one row per
    change with its series, benchmark, params, machine_label, emulated,
    the runs either side (started, commit and kernel, each ``_before`` and
    ``_after``), mean_before and mean_after (M/s), change_pct, ratio_low
    and ratio_high, pvalue, n_before and n_after.

    since (a time, as since_epoch() takes it): only the change points new
    since then, those the runs started since made appear: each series is
    also searched as it was before (its runs started earlier), and a
    change point found there at the same run is left out.  A change that
    moved to another run is new."""
    import pandas as pd
    keyed = [(key, runs.dropna(subset=["median_mps"]).reset_index(drop=True))
             for key, runs in df.groupby("series", sort=False)]
    keyed = [(k, r) for k, r in keyed if len(r) >= 3]
    figures = [list(r["median_mps"]) for _, r in keyed]
    earlier = [0] * len(keyed)
    if since is not None:
        cut = since_epoch(since)
        # The series as it was: its runs up to the first one started since.
        earlier = [next((i for i, t in enumerate(r["started_s"]) if t == t and t >= cut),
                        len(r)) for _, r in keyed]
    searched = [i for i, n in enumerate(earlier) if n >= 3]
    # Both searches in one detector call: one interpreter start.
    found = detect(figures + [figures[i][:earlier[i]] for i in searched], max_pvalue, window) \
        if keyed else []
    old = [set() for _ in keyed]
    for i, changes in zip(searched, found[len(keyed):]):
        old[i] = {c["index"] for c in changes}
    rows = []
    for (key, runs), changes, known in zip(keyed, found[:len(keyed)], old):
        for c in changes:
            if c["index"] in known:
                continue
            before, after = runs.iloc[c["index"] - 1], runs.iloc[c["index"]]
            rows.append({
                "series": key, "benchmark": after["benchmark"], "params": after["params"],
                "machine_label": after["machine_label"], "emulated": after["emulated"],
                "runs": len(runs), "index": c["index"],
                "started_before": before["started"], "started_after": after["started"],
                "commit_before": before["benchbpf_commit"],
                "commit_after": after["benchbpf_commit"],
                "kernel_before": before["kernel_release"],
                "kernel_after": after["kernel_release"],
                "mean_before": c["mean_before"], "mean_after": c["mean_after"],
                "change_pct": (c["mean_after"] / c["mean_before"] - 1) * 100
                if c["mean_before"] else None,
                "ratio_low": c["ratio_low"], "ratio_high": c["ratio_high"],
                "pvalue": c["pvalue"], "n_before": c["n_before"], "n_after": c["n_after"]})
    columns = ["series", "benchmark", "params", "machine_label", "emulated", "runs", "index",
               "started_before", "started_after", "commit_before", "commit_after",
               "kernel_before", "kernel_after", "mean_before", "mean_after", "change_pct",
               "ratio_low", "ratio_high", "pvalue", "n_before", "n_after"]
    return pd.DataFrame(rows, columns=columns)
