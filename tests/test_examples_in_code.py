"""The examples the code itself shows (not the manual's pages, which
tests/test_examples.py runs) are accepted as written: every `benchbpf ab`
line of `benchbpf ab --help`'s examples, and the benchbpf.ab() call of
benchbpf.ab's docstring, are checked by the code's own parsing and checks,
stopped where the rounds would start (they compare for tens of seconds)."""
import contextlib
import io
import re
import shlex

import pytest

import benchbpf
from benchbpf import ab as ab_module
from benchbpf.tools import cli

from test_examples import check_line


class _Stop(BaseException):
    """The rounds were about to start."""


def _ab_help_examples():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli.main(["ab", "--help"])
    assert status in (0, None)
    text = out.getvalue()
    block = text[text.index("examples:"):].splitlines()[1:]
    lines = []
    for line in block:
        if not line.startswith("  "):
            break
        words = shlex.split(line)
        at = words.index("benchbpf") if "benchbpf" in words else None
        if at is not None:
            lines.append(words[at + 1:])
    return lines


AB_EXAMPLES = _ab_help_examples()


def test_ab_help_has_examples():
    assert len(AB_EXAMPLES) >= 4 and all(argv[0] == "ab" for argv in AB_EXAMPLES)


@pytest.mark.parametrize("argv", AB_EXAMPLES, ids=shlex.join)
def test_every_ab_help_example_is_accepted(argv, monkeypatch):
    checked = check_line(argv, monkeypatch)
    assert checked.status is None and checked.stopped_at, (
        f"`benchbpf {shlex.join(argv)}` was refused (exit {checked.status}):\n"
        f"{checked.output}")


def test_ab_docstring_example_is_accepted(monkeypatch):
    """Its >>> lines run until the rounds would start: the call's sides
    parse and pass every check."""
    code = [m[1] for m in re.finditer(r"^\s*>>> (.*)$", ab_module.__doc__, re.M)]
    calls = [i for i, line in enumerate(code) if "benchbpf.ab(" in line]
    assert calls, "benchbpf.ab's docstring shows no call"

    def stop(*args, **kwargs):
        raise _Stop()
    monkeypatch.setattr(ab_module, "_runner_for", stop)
    namespace = {"benchbpf": benchbpf}
    with pytest.raises(_Stop):
        exec("\n".join(code[:calls[0] + 1]), namespace)


def test_a_bad_side_is_refused_before_the_stop(monkeypatch):
    """The check can fail: a side the code refuses is not taken for accepted."""
    checked = check_line(["ab", "selftest", "--", "selftest", "--bpf-work", "-1"], monkeypatch)
    assert checked.status == 2 and checked.stopped_at is None
