"""The regression-gate plugin, driven through pytest itself."""
import json

import benchbpf
from conftest import SHORT

pytest_plugins = ["pytester"]

GATED = """
import benchbpf
def test_gate(benchbpf_gate):
    r = benchbpf.run("count-local", warmup=0.2, duration=0.4, interval=0.2)
    benchbpf_gate.check("count-local", r, max_drop_pct=50)
"""


def test_save_then_pass_then_fail_on_regression(pytester, tmp_path):
    base = tmp_path / "baseline"
    pytester.makepyfile(GATED)
    pytester.runpytest(f"--benchbpf-baseline={base}",
                       "--benchbpf-save").assert_outcomes(passed=1)
    assert (base / "count-local.json").exists()
    pytester.runpytest(
                       f"--benchbpf-baseline={base}").assert_outcomes(passed=1)
    # A baseline 100x faster than anything real makes this run a regression.
    saved = json.loads((base / "count-local.json").read_text())
    for s in saved["samples"]:
        s["hits"] *= 100
    (base / "count-local.json").write_text(json.dumps(saved))
    out = pytester.runpytest(f"--benchbpf-baseline={base}")
    out.assert_outcomes(failed=1)
    out.stdout.fnmatch_lines(["*below the baseline*"])


def test_missing_baseline_fails_with_hint(pytester, tmp_path):
    pytester.makepyfile(GATED)
    out = pytester.runpytest(
                             f"--benchbpf-baseline={tmp_path / 'none'}")
    out.assert_outcomes(failed=1)
    out.stdout.fnmatch_lines(["*record one with --benchbpf-save*"])
