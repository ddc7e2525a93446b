"""bpf-for: bpf_for() iterations counted in BPF, the kernel bench's "ops" report;
its nr_loops edges; and upstream's run_bench_bpf_for.sh against benchbpf."""
import os
import re
import shutil
import subprocess
import sys

import pytest

import benchbpf
from benchbpf import bpf_for

from conftest import (SHORT, SHORT_SAMPLES, TP, TRIGGERS, fentry_runs_or_says_why,
                      rejected_before_loading, run_or_skip)

NAME = "bpf-for"
PREFIXES = ("bpf_for", "producer_whoami")
OPS = re.compile(r"^Summary: throughput +\d+\.\d{3} \u00b1 +\d+\.\d{3} M ops/s "
                 r"\( *\d+\.\d{3}M ops/prod\), latency +\d+\.\d{3} ns/op$")


@pytest.mark.fast
def test_registry_has_the_benchmark():
    assert benchbpf.list_benchmarks("bpf_for") == [NAME]
    info = benchbpf.describe(NAME)
    assert info.report == "ops" and info.max_consumers == 0
    p = info.params["nr_loops"]
    assert (p.cli, p.default, p.min, p.max) == ("--nr_loops", 1000, 1, 1 << 23)
    assert info.params["trigger"].choices == bpf_for.TRIGGERS


@pytest.mark.fast
def test_default_run_counts_whole_loops(no_leaks):
    r = run_or_skip(bpf_for.loop)
    assert len(r.samples) == SHORT_SAMPLES
    assert sum(s.hits for s in r.samples) > 0
    assert all(s.hits % 1000 == 0 for s in r.samples + r.warmup_samples)
    assert r.metadata["trigger"] in TRIGGERS
    assert OPS.match(r.summary()), r.summary()


@pytest.mark.parametrize("nr_loops", [1, 7, 1 << 23])
def test_nr_loops_edges_run(nr_loops, no_leaks):
    r = run_or_skip(bpf_for.loop, nr_loops=nr_loops)
    assert sum(s.hits for s in r.samples + r.warmup_samples) > 0
    assert all(s.hits % nr_loops == 0 for s in r.samples + r.warmup_samples)


def test_tracepoint_trigger(no_leaks):
    r = run_or_skip(bpf_for.loop, trigger="tp")
    assert r.metadata["trigger"] == TP


def test_fentry_trigger_runs_or_says_why(no_leaks):
    fentry_runs_or_says_why(bpf_for.loop, NAME, PREFIXES)


@pytest.mark.fast
@pytest.mark.parametrize("nr_loops", [0, -1, (1 << 23) + 1])
def test_bad_nr_loops_refused_before_loading(nr_loops):
    with rejected_before_loading(ValueError, f"nr_loops={nr_loops}", "1..8388608"):
        bpf_for.loop(nr_loops=nr_loops, **SHORT)


@pytest.mark.fast
def test_consumers_refused():
    with rejected_before_loading(ValueError, "consumers=1"):
        bpf_for.loop(consumers=1, **SHORT)


#: Upstream's tools/testing/selftests/bpf/benchs/run_bench_bpf_for.sh (with
#: its run_common.sh beside it), unchanged: not part of this repository.
SCRIPTS = os.environ.get("BENCHBPF_KERNEL_BENCHS")


@pytest.mark.skipif(not SCRIPTS or not os.path.exists(
    os.path.join(SCRIPTS or "", "run_bench_bpf_for.sh")),
    reason="set BENCHBPF_KERNEL_BENCHS to a directory holding upstream's "
           "run_bench_bpf_for.sh and run_common.sh (it takes ~12 minutes)")
def test_upstream_run_script_runs_against_benchbpf(tmp_path):
    """The script runs `sudo ./bench -w3 -d10 -a -p T --nr_loops N bpf-for`
    from the directory above benchs/: ./bench is benchbpf there."""
    (tmp_path / "benchs").mkdir()
    for f in ("run_bench_bpf_for.sh", "run_common.sh"):
        shutil.copy(os.path.join(SCRIPTS, f), tmp_path / "benchs" / f)
    bench = tmp_path / "bench"
    bench.write_text(f"#!/bin/sh\nPYTHONPATH={os.getcwd()} exec {sys.executable} "
                     "-W ignore -m benchbpf \"$@\"\n")
    bench.chmod(0o755)
    env = dict(os.environ)
    if not shutil.which("sudo"):    # root already: a sudo that just runs it
        (tmp_path / "bin").mkdir()
        sudo = tmp_path / "bin" / "sudo"
        sudo.write_text("#!/bin/sh\nexec \"$@\"\n")
        sudo.chmod(0o755)
        env["PATH"] = f"{tmp_path / 'bin'}:{env['PATH']}"
    out = subprocess.run(["bash", "benchs/run_bench_bpf_for.sh"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=3600)
    print(out.stdout)
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("bpf_for:")]
    assert len(lines) == 50, out.stdout
    assert all(re.match(r"^bpf_for: +throughput: \d+\.\d+ \u00b1 \d+\.\d+ M ops/s, "
                        r"latency: \d+\.\d+ ns/op$", ln) for ln in lines), lines
