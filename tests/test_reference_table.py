"""scripts/reference_table.py maps the reference rows to benchbpf calls (--dry-run: nothing runs)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "reference_table.py"
REFS = ROOT.parent / "shared" / "reference"


def dry_run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), "--dry-run", *args],
                          capture_output=True, text=True, timeout=120)


def test_dry_run_on_shared_reference_files():
    files = sorted(REFS.glob("*.md")) if REFS.is_dir() else []
    if not files:
        pytest.skip(f"no reference files in {REFS}")
    out = dry_run(*map(str, files))
    assert out.returncode == 0, out.stderr
    # The shared files' sampled perf buffer rows (with or without -c 1) map to a call.
    assert re.search(r"-> benchbpf\.run\('pb-libbpf', duration=3, (consumers=1, )?"
                     r"rb_sampled=True\)", out.stdout), out.stdout
    # Every row maps to a call or says why not (the tmp-file test below checks
    # the "not implemented" note on a row no benchmark has).
    rows = out.stdout.count("\n    -> ")
    assert re.fullmatch(rf"{rows} rows, \d+ runnable, \d+ distinct runs",
                        out.stdout.rstrip().splitlines()[-1]), out.stdout


def test_dry_run_parses_both_table_kinds(tmp_path):
    ref = tmp_path / "kernel-bench-newest-2cpu.md"
    ref.write_text(
        "Runs `-w1 -d3`.\n\n"
        "| benchmark | default batch (100) | --trig-batch-iters 1 |\n|---|---|---|\n"
        "| trig-tp | 22.5 / 19.6 | 2.64 / 2.38 |\n"
        "| trig-syscall-count | 7.69 / 7.81 | 7.84 / 7.05 |\n\n"
        "| benchmark | pass 1 | pass 2 |\n|---|---|---|\n"
        "| rb-libbpf / pb-libbpf, `-c 1` | 6.01 (drops 0.037) / 0.091 | 5.55 / 0.074 |\n"
        "| same, `-c 1 --rb-sampled` | 8.45 / 9.30 | 7.75 / 8.38 |\n"
        "| no-such-bench | 1.0 | 1.0 |\n")
    out = dry_run(str(ref))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "-> benchbpf.run('trig-tp', duration=3, trig_batch_iters=1)" in text
    assert "--trig-batch-iters dropped" in text          # ignored by the kernel's syscall loop
    assert "-> benchbpf.run('pb-libbpf', duration=3, consumers=1, rb_sampled=True)" in text
    assert "not implemented in benchbpf" in text
    assert "9 rows, 8 runnable" in text
