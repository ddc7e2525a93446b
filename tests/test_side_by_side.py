"""scripts/side_by_side.py against a stand-in for the kernel's bench binary."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "side_by_side.py"

# Prints what the kernel bench prints: one warm-up and two kept samples.
FAKE_BENCH = """#!/bin/sh
[ -n "$FAIL" ] && { echo "failed to load skeleton" >&2; exit 1; }
echo "Setting up benchmark '$3'..."
echo "Iter   0 ( 12.000us): hits  500.000M/s (500.000M/prod), drops    0.000M/s, total operations  500.000M/s"
echo "Iter   1 ( -3.000us): hits  110.000M/s (110.000M/prod), drops    0.000M/s, total operations  110.000M/s"
echo "Iter   2 (  4.000us): hits   90.000M/s ( 90.000M/prod), drops    0.000M/s, total operations   90.000M/s"
[ -n "$SLOW_THIRD" ] && echo "Iter   3 (  2.000us): hits  400.000M/s (400.000M/prod), drops    0.000M/s, total operations  400.000M/s"
echo "Summary: hits  100.000 \u00b1 14.142M/s (100.000M/prod), drops    0.000 \u00b1 0.000M/s, total operations  100.000 \u00b1 14.142M/s"
"""


def fake_bench(tmp_path):
    path = tmp_path / "bench"
    path.write_text(FAKE_BENCH)
    path.chmod(0o755)
    return path


def run(tmp_path, *args, env=None):
    raw = tmp_path / "raw.json"
    out = subprocess.run([sys.executable, str(SCRIPT), str(fake_bench(tmp_path)), "-n", "1",
                          "-w", "1", "-d", "1", "--raw", str(raw), *args],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, **(env or {})})
    return out, json.loads(raw.read_text()) if raw.exists() else None


def test_alternates_all_sides_and_tabulates(tmp_path):
    out, raw = run(tmp_path, "--config", "-p1 count-local")
    assert out.returncode == 0, out.stderr
    (row,) = raw
    assert row["error"] is None
    # the stand-in's summary mean, and the spread of its kept samples only
    assert row["means"]["kernel"] == [100.0]
    assert abs(row["spreads"]["kernel"][0] - 0.14142) < 1e-4
    # both benchbpf sides really ran count-local
    assert row["means"]["cli"][0] > 0 and row["means"]["api"][0] > 0
    line = next(l for l in out.stdout.splitlines() if l.startswith("| `-p1 count-local`"))
    assert "| 100.0 |" in line and "14.1 %" in line
    assert "API / CLI: median" in out.stdout


def test_figure_median_takes_each_runs_median_interval(tmp_path):
    # The summary still says 100; the kept intervals are 110, 90 and 400.
    out, raw = run(tmp_path, "--config", "-p1 count-local", "--sides", "kernel",
                   "--figure", "median", env={"SLOW_THIRD": "1"})
    assert out.returncode == 0, out.stderr
    (row,) = raw
    assert row["means"]["kernel"] == [100.0]
    assert row["interval_medians"]["kernel"] == [110.0]
    line = next(l for l in out.stdout.splitlines() if l.startswith("| `-p1 count-local`"))
    assert line.split("|")[2].strip() == "110.0"
    assert "each run's median of kept intervals" in out.stdout


def test_a_failing_side_is_reported_not_fatal(tmp_path):
    out, raw = run(tmp_path, "--config", "-p1 count-local", "--sides", "kernel,cli",
                   env={"FAIL": "1"})
    assert out.returncode == 0, out.stderr
    assert raw[0]["error"].startswith("kernel:")
    assert "failed to load skeleton" in out.stdout
    assert "within 0.95–1.05: 0 of 0" in out.stdout


def test_rejects_a_missing_binary(tmp_path):
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "nope")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "not an executable" in out.stderr


def _parse(text, warmup=1):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import side_by_side
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return side_by_side.parse_output(text, warmup)


def test_parses_the_map_families_report_lines():
    local_storage = (
        "Iter   0 ( 12.000us): hits   40.000M/s important_hits   40.000M/s\n"
        "Iter   1 ( -3.000us): hits   47.000M/s important_hits   47.000M/s\n"
        "Summary: hits throughput   47.298 \u00b1 0.180 M ops/s, hits latency   21.142 ns/op, "
        "important_hits throughput   47.298 \u00b1 0.180 M ops/s\n")
    assert _parse(local_storage) == (47.298, [47.0])
    # Full update and lookup print per-CPU lines and no Summary.  A full-update
    # line is one CPU's speed (its last run): a producer that moved between
    # CPUs prints two, and the figure is their mean.  Lookup lines are each
    # CPU's throughput: the figure is their sum.
    full_update = "0:hash_map_full_perf 14100000 events per sec\n1:hash_map_full_perf 900000 events per sec\n"
    assert _parse(full_update)[0] == 7.5
    lookup = ("cpu00: lookup 20.500M \u00b1 1.000M events/sec (approximated from 32 samples of ~10ms)\n"
              "cpu01: lookup 1.500M \u00b1 0.100M events/sec (approximated from 2 samples of ~10ms)\n")
    assert _parse(lookup)[0] == 22.0
    with pytest.raises(Exception, match="no Summary"):
        _parse("Setting up benchmark 'x'...\n")
