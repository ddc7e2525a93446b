"""A worker's exception across a process boundary, as JSON and back.

Runs in other processes (a duet's workers, a guest kernel's benchbpf)
report what they raised as a plain dict, {"type", "message"} with "errno"
and "log" where the exception has them; the parent raises it again as the
same kind of exception, so callers catch the same classes as for a run
here."""
import traceback

from .._core import BenchmarkError, UnsupportedError

__all__ = ["to_dict", "from_dict", "KINDS"]

#: Exception classes a worker's error comes back as, by name; any other
#: becomes a BenchmarkError (the run failed, for a reason of its own).
KINDS = {cls.__name__: cls for cls in (UnsupportedError, BenchmarkError, PermissionError,
                                         ValueError, TypeError, OSError)}
#: How much of a load log, and of a traceback, travels with an error, characters.
LOG_CHARS = 4000
TRACEBACK_CHARS = 2000


def to_dict(exc, with_traceback=False):
    """exc as a JSON-ready dict; with_traceback: the message ends with the
    current traceback's tail (for an exception nobody expected)."""
    message = str(exc)
    if with_traceback:
        message = f"{message}\n{traceback.format_exc()[-TRACEBACK_CHARS:]}"
    err = {"type": type(exc).__name__, "message": message}
    no = getattr(exc, "errno", None)
    if isinstance(no, int):
        err["errno"] = no
    log = getattr(exc, "log", None)
    if log:
        err["log"] = log[-LOG_CHARS:]
    return err


def from_dict(err, wrap=None):
    """The exception (not raised) that err (a to_dict() dict) describes;
    wrap(message) says where it happened (default: the message as sent)."""
    message = err["message"] if wrap is None else wrap(err["message"])
    exc = KINDS.get(err["type"], BenchmarkError)(message)
    for key in ("errno", "log"):
        if err.get(key) is not None:
            try:
                setattr(exc, key, err[key])
            except AttributeError:   # a class without room for it
                pass
    return exc
