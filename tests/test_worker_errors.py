"""A worker's exception comes back as the same kind, with its message,
errno and load log (benchbpf.harness._errors, used by duets and guests)."""
import errno
import json

import pytest

from benchbpf import BenchmarkError, UnsupportedError
from benchbpf.harness import _errors


def _round_trip(exc, **kw):
    try:
        raise exc
    except BaseException as e:
        return json.loads(json.dumps(_errors.to_dict(e, **kw)))


@pytest.mark.parametrize("cls", [UnsupportedError, BenchmarkError, PermissionError,
                                 ValueError, TypeError, OSError])
def test_each_kind_comes_back_as_itself(cls):
    err = _round_trip(cls("it went wrong"))
    back = _errors.from_dict(err, lambda m: f"side A: {m}")
    assert type(back) is cls and str(back) == "side A: it went wrong"


def test_errno_and_log_travel_and_unknown_kinds_are_benchmark_errors():
    e = BenchmarkError("load failed")
    e.errno, e.log = errno.EINVAL, "x" * (_errors.LOG_CHARS + 10) + "verifier says no"
    err = _round_trip(e)
    back = _errors.from_dict(err)
    assert str(back) == "load failed" and back.errno == errno.EINVAL
    assert back.log.endswith("verifier says no") and len(back.log) == _errors.LOG_CHARS
    denied = _errors.from_dict(_round_trip(PermissionError(errno.EPERM, "no")))
    assert isinstance(denied, PermissionError) and denied.errno == errno.EPERM
    # A kind the parent does not know (SystemExit, a library's) is a failed run.
    odd = _errors.from_dict(_round_trip(KeyError("k"), with_traceback=True))
    assert type(odd) is BenchmarkError and "KeyError" in str(odd)
    assert "errno" not in _round_trip(ValueError("v"))
