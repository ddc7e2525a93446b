"""Progress of work made of many runs: one bar, the current run in its postfix.

A helper that runs many benchmarks opens a session around them and runs
each through run(); a session opened inside another (a sweep inside a
study) joins the outer one, so there is one bar.  With tqdm the bar is
tqdm.auto's (terminal or Jupyter); without it, one line per run on stderr."""
import contextlib
import contextvars
import os
import sys

from ..results.result import is_bool

_session = contextvars.ContextVar("benchbpf_progress", default=None)


def _in_jupyter():
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if hasattr(ipython, "get_ipython") else None
    return shell is not None and hasattr(shell, "kernel")


def env_switch(name):
    """An on/off environment variable: False for "0", "false", "no", "off",
    True for "1", "true", "yes", "on" (any case), None when unset or empty,
    else the value itself (lowered)."""
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return None
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    return value


def wanted(progress):
    """progress=True/False forces; None: as the environment variable
    BENCHBPF_PROGRESS says ("0" off, "1" on) where set, else on when stderr
    is a terminal or the code runs in a Jupyter kernel.  (Notebooks executed
    to be saved run with BENCHBPF_PROGRESS=0: no bar in their outputs.)"""
    if progress is None:
        env = env_switch("BENCHBPF_PROGRESS")
        if isinstance(env, bool):
            return env
        isatty = getattr(sys.stderr, "isatty", None)
        return bool(isatty and isatty()) or _in_jupyter()
    if not is_bool(progress):
        raise TypeError(f"progress={progress!r}: must be True, False or None")
    return bool(progress)


class _Lines:
    """The bar without tqdm: a line on stderr as each run starts."""

    def __init__(self, desc, total):
        self.desc, self.total, self.n = desc, total, 0

    def start(self, label):
        total = f"/{self.total}" if self.total else ""
        print(f"{self.desc} [{self.n + 1}{total}] {label}", file=sys.stderr, flush=True)

    def done(self):
        self.n += 1

    def add_total(self, count):
        self.total += count

    def close(self):
        pass


class _Tqdm:
    def __init__(self, tqdm, desc, total):
        self.bar = tqdm(total=total or None, desc=desc, unit="run", file=sys.stderr,
                        dynamic_ncols=True)

    def start(self, label):
        self.bar.set_postfix_str(label)

    def done(self):
        self.bar.update(1)

    def add_total(self, count):
        self.bar.total = (self.bar.total or 0) + count
        self.bar.refresh()

    def close(self):
        self.bar.close()


def _bar(desc, total):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _Lines(desc, total)
    return _Tqdm(tqdm, desc, total)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during work made of many runs (a sweep, a study, a report): the runs
    that had finished are kept.  `partial` is a ResultSet of them, its metadata
    marked ``incomplete`` (with ``finished_runs`` and ``planned_runs``); `path` is
    where it was saved (None if it could not be), and the message says both."""

    def __init__(self, message, partial, path):
        super().__init__(message)
        self.partial, self.path = partial, path


class _Session:
    def __init__(self, desc, total, bar):
        self.desc, self.total, self.bar, self.results = desc, total, bar, []


def interrupted_dir():
    """Where partial results of interrupted work are saved."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(cache, "benchbpf", "interrupted")


def save_partial(partial, desc):
    """Save a partial ResultSet under interrupted_dir(): its path, or None."""
    import time
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in desc)[:60]
    path = os.path.join(interrupted_dir(),
                        f"{slug}-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.json")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial.save(path)
    except OSError:
        return None
    return path


def _interrupted(state):
    from ..results.resultset import ResultSet
    done = len(state.results)
    partial = ResultSet(state.results, metadata={
        "incomplete": True, "interrupted": state.desc, "finished_runs": done,
        "planned_runs": state.total or None})
    path = save_partial(partial, state.desc) if done else None
    where = f"saved to {path} (benchbpf.ResultSet.load), and in the exception's " \
            ".partial" if path else "in the exception's .partial"
    planned = f" of {state.total}" if state.total else ""
    message = f"{state.desc}: interrupted after {done}{planned} runs; the finished " \
              f"runs are {where}" if done else f"{state.desc}: interrupted before any " \
              "run finished"
    print(f"benchbpf: {message}", file=sys.stderr, flush=True)
    return Interrupted(message, partial, path)


@contextlib.contextmanager
def session(desc, total=0, progress=None):
    """Show progress of the runs made inside (total: how many, 0 if not
    known yet).  Inside another session, adds `total` to its bar instead.
    Ctrl-C inside the outermost session raises Interrupted with the runs that
    had finished (see finished())."""
    outer = _session.get()
    if outer is not None:
        if total:
            outer.total += total
            if outer.bar:
                outer.bar.add_total(total)
        yield
        return
    bar = _bar(desc, total) if wanted(progress) else False
    state = _Session(desc, total, bar)
    token = _session.set(state)
    try:
        yield
    except Interrupted:
        raise
    except KeyboardInterrupt:
        if bar:
            bar.close()
            bar = None
        raise _interrupted(state) from None
    finally:
        _session.reset(token)
        if bar:
            bar.close()


def finished(result):
    """Record a Result of the current session (kept if Ctrl-C comes later); returns it."""
    state = _session.get()
    if state is not None:
        state.results.append(result)
    return result


@contextlib.contextmanager
def step(label):
    """One run of the current session, shown as `label` while it runs."""
    state = _session.get()
    bar = state.bar if state is not None else None
    if bar:
        bar.start(label)
    yield
    if bar:
        bar.done()


def run(fn, name, label=None, **options):
    """fn(name, **options) (benchbpf.run, given by the caller so that progress
    imports nothing of the runner) as one step, shown as `label` (default:
    the name)."""
    with step(label or name):
        return finished(fn(name, **options))
