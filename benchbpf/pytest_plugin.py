"""pytest plugin: regression gates on benchbpf Results.

    def test_ringbuf_throughput(benchbpf_gate):
        r = benchbpf.run("rb-libbpf", duration=3)
        benchbpf_gate.check("rb-libbpf", r, max_drop_pct=30)

`pytest --benchbpf-baseline DIR` compares against DIR/<key>.json and fails a
test whose median fell by more than max_drop_pct; add `--benchbpf-save` to
write the current results as the new baseline instead.  Without a baseline
the check records the result and passes, saying so in the report.
"""
import os
import re

import pytest

from .analysis import compare
from .result import Result


def pytest_addoption(parser):
    group = parser.getgroup("benchbpf", "BPF benchmark regression gates")
    group.addoption("--benchbpf-baseline", metavar="DIR", default=None,
                    help="directory of baseline results (<key>.json)")
    group.addoption("--benchbpf-save", action="store_true", default=False,
                    help="write this run's results to --benchbpf-baseline")


class Gate:
    """Compares Results against a saved baseline, one key per gate."""

    def __init__(self, directory, save, request):
        self.directory = directory
        self.save = save
        self.request = request

    def _path(self, key):
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", key):
            raise ValueError(f"key={key!r}: use letters, digits, '_', '.', '-'")
        return os.path.join(self.directory, key + ".json")

    def check(self, key, result, max_drop_pct=20.0, counter="hits"):
        """Fail if result's median `counter` rate fell more than max_drop_pct below the baseline."""
        if not isinstance(result, Result):
            raise TypeError(f"result must be a benchbpf.Result, not {type(result).__name__}")
        if not 0 <= max_drop_pct < 100:
            raise ValueError(f"max_drop_pct={max_drop_pct!r} out of range: 0 <= pct < 100")
        if self.directory is None:
            self.request.node.user_properties.append(("benchbpf", f"{key}: no baseline"))
            return None
        path = self._path(key)
        if self.save:
            os.makedirs(self.directory, exist_ok=True)
            result.to_json(path)
            return None
        if not os.path.exists(path):
            pytest.fail(f"no baseline {path}: record one with --benchbpf-save")
        cmp = compare(Result.from_json(path), result, counter=counter)
        self.request.node.user_properties.append(("benchbpf", str(cmp)))
        if cmp.change_pct < -max_drop_pct:
            pytest.fail(f"{key}: {cmp} — more than {max_drop_pct}% below the baseline")
        return cmp


@pytest.fixture
def benchbpf_gate(request):
    """A Gate bound to --benchbpf-baseline / --benchbpf-save."""
    cfg = request.config
    return Gate(cfg.getoption("--benchbpf-baseline"), cfg.getoption("--benchbpf-save"), request)
