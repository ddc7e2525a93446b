"""The command line speaks the kernel bench's flags and prints its lines."""
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ITER = re.compile(r"^Iter +\d+ \( *-?\d+\.\d{3}us\): hits +\d+\.\d{3}M/s \( *\d+\.\d{3}M/prod\), "
                  r"drops +\d+\.\d{3}M/s, total operations +\d+\.\d{3}M/s$")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "benchbpf", *args],
                          capture_output=True, text=True, timeout=120)


def test_list():
    out = cli("-l")
    assert out.returncode == 0
    assert "Available benchmarks:" in out.stdout and "- count-local" in out.stdout


def test_run_prints_iter_and_summary_lines(tmp_path):
    path = tmp_path / "r.json"
    out = cli("-w1", "-d", "2", "-p", "2", "count-local", "--json", str(path))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "Setting up benchmark 'count-local'..."
    iters = [l for l in lines if l.startswith("Iter")]
    assert len(iters) == 3 and all(ITER.match(l) for l in iters), iters
    assert lines[-1].startswith("Summary: hits")
    saved = json.loads(path.read_text())
    assert saved["name"] == "count-local" and saved["params"]["producers"] == 2
    assert len(saved["samples"]) == 2


def test_quiet_prints_only_summary():
    out = cli("-q", "-w0", "-d1", "--interval", "0.5", "count-global")
    assert out.returncode == 0, out.stderr
    assert not [l for l in out.stdout.splitlines() if l.startswith("Iter")]


def test_bad_flags_are_errors():
    assert cli("-p", "0", "count-local").returncode == 2
    out = cli("nope-bench")
    assert out.returncode == 2 and "unknown benchmark 'nope-bench'" in out.stderr
    out = cli("-c", "1", "count-local")
    assert out.returncode == 2 and "takes no consumer" in out.stderr


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    cmd = "./scripts/install.sh && python3 -m pytest -q tests"
    assert cmd in readme and cmd in ci
