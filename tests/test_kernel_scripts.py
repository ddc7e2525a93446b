"""The kernel's own run_bench_*.sh scripts run unchanged against benchbpf as ./bench.

The scripts come from Debian's linux-source-6.12 (scripts/install.sh installs it;
BENCHBPF_KERNEL_SRC may point at an extracted tree instead): their benchs/ directory is
extracted once into a cache and every script is run as the kernel documents it, from a
directory holding benchs/ and ./bench, with `bash benchs/run_bench_X.sh`.

./bench is a small wrapper (written below) that:
  - records every command line the script gives it; the test then checks each one with
    benchbpf's own parser and checks (benchbpf.tools.cli.check_command: flags, which benchmark
    they apply to, every value's range), so a flag benchbpf would refuse fails the test
    wherever it stands in a loop;
  - runs benchbpf for real, printing its output for the script to parse, on the first
    command line of each shape (the same flags with other numbers; and on every command
    line until REAL_BUDGET real runs in the script, 0 by default); the other command lines
    of a shape already run print nothing and exit 0 (the bloom filter script alone has
    8000 of them);
  - rewrites the script's -w/-d (or adds them) to WARMUP/DURATION seconds in samples of
    INTERVAL, so that a script takes seconds, not hours.
`sudo` is run as the command it prefixes where the machine has no sudo (tests run as root).
A command line the kernel's bench refuses as well (KERNEL_REFUSES) may be refused: the
bloom script asks for 75000 entries of 2-byte values, more than 2 bytes can hold, and the
kernel bench exits 1 there too (its script goes on).
A script that stops because the kernel refuses one of its benchmarks (exit 3, "cannot run
here") is skipped with benchbpf's reason, once what ran before it has been checked.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile

import pytest

import benchbpf
from benchbpf.tools import cli
from benchbpf.harness.features import features, missing_features

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERSION = "6.12"
TARBALL = f"/usr/src/linux-source-{VERSION}.tar.xz"
BENCHS = "tools/testing/selftests/bpf/benchs"
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                     "benchbpf", f"linux-source-{VERSION}-benchs")
WARMUP, DURATION, INTERVAL = 0, 0.3, 0.1
#: A script's own loop is not ours to shorten: run_bench_bloom_filter_map.sh forks some
#: 60000 processes for its 8000 command lines (about a minute on an idle 2-CPU machine,
#: 4 minutes beside a load of 12), so the limit is generous; it catches a hang.
SCRIPT_TIMEOUT_S = 1800
REAL_BUDGET = 0

SCRIPTS = ("bloom_filter_map", "bpf_hashmap_full_update", "bpf_loop", "htab_mem",
           "local_storage", "local_storage_rcu_tasks_trace", "rename", "ringbufs",
           "strncmp", "trigger", "uprobes")

#: benchbpf's refusals of command lines the kernel bench refuses too, with its check.
KERNEL_REFUSES = (
    # bench_bloom_filter_map.c, setup(): "Not enough unique values" when value_size < 8
    # and nr_entries > 2^(8 * value_size).
    "needs more distinct values than",
)

WRAPPER = r"""#!/bin/bash
# ./bench for the kernel's run_bench_*.sh (tests/test_kernel_scripts.py): records every
# command line; runs benchbpf for real on the first of each shape and the first
# @BUDGET@ of the script, with -w/-d rewritten short.
log=@LOG@
printf '%q ' "$@" >> "$log/argv"; printf '\n' >> "$log/argv"
shape="${*//[0-9]/}"; shape="${shape//[^A-Za-z_=-]/_}"
n=0; [ -e "$log/real" ] && read -r n < "$log/real"
if [ -e "$log/shape$shape" ] && [ "$n" -ge @BUDGET@ ]; then exit 0; fi
: > "$log/shape$shape"; n=$((n + 1)); echo "$n" > "$log/real"
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	-w|-d|--warmup|--duration) shift ;;
	-w*|-d*|--warmup=*|--duration=*) ;;
	*) args+=("$1") ;;
	esac
	shift
done
printf '%q ' "${args[@]}" > "$log/run$n.argv"
PYTHONPATH=@REPO@ @PYTHON@ -m benchbpf -w@WARMUP@ -d@DURATION@ --interval @INTERVAL@ \
	"${args[@]}" > "$log/run$n.out" 2> "$log/run$n.err"
rc=$?
echo "$rc" > "$log/run$n.rc"
cat "$log/run$n.out"; cat "$log/run$n.err" >&2
exit $rc
"""


def _benchs_dir():
    """benchs/ of the kernel source: BENCHBPF_KERNEL_SRC, else extracted once from
    Debian's tarball into CACHE."""
    src = os.environ.get("BENCHBPF_KERNEL_SRC")
    if src:
        return os.path.join(src, BENCHS)
    if os.path.exists(os.path.join(CACHE, "run_common.sh")):
        return CACHE
    if not os.path.exists(TARBALL):
        pytest.skip(f"{TARBALL} is not installed (apt-get install linux-source-{VERSION}; "
                    "scripts/install.sh does) and BENCHBPF_KERNEL_SRC is not set")
    prefix = f"linux-source-{VERSION}/{BENCHS}/"
    tmp = CACHE + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    with tarfile.open(TARBALL, "r:xz") as tar:
        for m in tar:
            if m.isfile() and m.name.startswith(prefix) and m.name.endswith(".sh") \
                    and "/" not in m.name[len(prefix):]:
                with tar.extractfile(m) as f, \
                        open(os.path.join(tmp, os.path.basename(m.name)), "wb") as out:
                    out.write(f.read())
    shutil.rmtree(CACHE, ignore_errors=True)
    os.rename(tmp, CACHE)
    return CACHE


@pytest.fixture(scope="module")
def benchs():
    return _benchs_dir()


def _setup(tmp_path, benchs):
    work, log, path = tmp_path / "work", tmp_path / "log", tmp_path / "bin"
    for d in (work, log, path):
        d.mkdir()
    shutil.copytree(benchs, work / "benchs")
    wrapper = WRAPPER
    for key, value in (("LOG", shlex.quote(str(log))), ("BUDGET", str(REAL_BUDGET)),
                       ("REPO", shlex.quote(REPO)), ("PYTHON", shlex.quote(sys.executable)),
                       ("WARMUP", str(WARMUP)), ("DURATION", str(DURATION)),
                       ("INTERVAL", str(INTERVAL))):
        wrapper = wrapper.replace(f"@{key}@", value)
    (work / "bench").write_text(wrapper)
    (work / "bench").chmod(0o755)
    env = dict(os.environ)
    if shutil.which("sudo") is None:
        # An exported bash function: no process per call (the bloom script makes 8000).
        env["BASH_FUNC_sudo%%"] = '() {  "$@"\n}'
    env["BENCHBPF_PROGRESS"] = "0"
    return work, log, env


def _runs(log):
    """The real runs of a script: (argv, rc, stdout, stderr) in order."""
    n = int((log / "real").read_text()) if (log / "real").exists() else 0
    runs = []
    for i in range(1, n + 1):
        rc = log / f"run{i}.rc"
        runs.append((shlex.split((log / f"run{i}.argv").read_text()),
                     int(rc.read_text()) if rc.exists() else None,
                     (log / f"run{i}.out").read_text(), (log / f"run{i}.err").read_text()))
    return runs


def _bench_name(argv):
    names = [a for a in argv if a in benchbpf.list_benchmarks()]
    assert names, argv
    return names[-1]


def _parsed(work, script_text, report, line):
    """What the script's own parse functions make of a summary line: {name: value}.
    run_common.sh's sed expressions echo the line back when they do not match."""
    funcs = {"hits_drops": ("hits", "drops", "total"), "false_hits": ("percentage",),
             "ops": ("ops",), "local_storage": ("local_storage",),
             "htab_mem": ("htab_mem",)}.get(report, ())
    out = {}
    for fn in funcs:
        prelude = "source ./benchs/run_common.sh"
        if fn == "htab_mem":   # defined in run_bench_htab_mem.sh itself
            m = re.search(r"^htab_mem\(\)\n\{.*?^\}", script_text, re.S | re.M)
            assert m, "run_bench_htab_mem.sh has no htab_mem()"
            prelude = m.group(0)
        p = subprocess.run(["bash", "-c", prelude + '\n' + fn + ' "$1"', "_", line],
                           cwd=work, capture_output=True, text=True, check=True)
        out[fn] = p.stdout.strip()
    return out


NUMBER = r"[0-9]+\.[0-9]+"
#: bench_htab_mem.c's final printf: "per-prod-op %7.2lf \u00B1 %7.2lfk/s, memory usage
#: %7.2lf \u00B1 %7.2lfMiB, peak memory usage %7.2lfMiB".
HTAB_MEM_SUMMARY = re.compile(r"^Summary: per-prod-op +\d+\.\d{2} \u00b1 +\d+\.\d{2}k/s, "
                              r"memory usage +\d+\.\d{2} \u00b1 +\d+\.\d{2}MiB, "
                              r"peak memory usage +\d+\.\d{2}MiB$")


def _check_parsed(work, script_text, name, out):
    lines = out.strip().splitlines()
    assert lines, f"{name} printed nothing"
    report = benchbpf.describe(name).report
    if report == "tasks_trace":     # the script runs it --quiet and parses nothing
        return
    last = lines[-1]
    parsed = _parsed(work, script_text, report, last)
    if report == "htab_mem":
        # The script's sed wants one space after each "±", but the kernel bench prints
        # "%7.2lf ± %7.2lfk/s": a deviation under 1000.00 is padded and only the peak
        # is parsed, from the kernel's bench as from benchbpf. Its line is the kernel's.
        assert HTAB_MEM_SUMMARY.match(last), last
        assert re.search(r"peak mem: " + NUMBER + "MiB$", parsed["htab_mem"]), parsed
        return
    for fn, value in parsed.items():
        assert value != last.strip() and re.search(NUMBER, value), \
            f"{fn}() of run_common.sh does not parse {name}'s last line {last!r}: {value!r}"
        assert last.strip() not in value, (fn, value)
    if report not in ("hashmap_full_update", "hashmap_lookup", "creates"):
        assert last.startswith("Summary:"), last


def _refused(argv, rc, err):
    """The reason benchbpf gave for a benchmark the kernel cannot run, else None."""
    name = _bench_name(argv)
    if rc == 3 and "cannot run here" in err and missing_features(name, features()):
        return next(l for l in err.splitlines() if "cannot run here" in l).strip()
    return None


def _trigger_args(script_text):
    """run_bench_trigger.sh takes the tests to run as arguments: the default list
    without the ones this kernel refuses (those are run alone, below)."""
    m = re.search(r"def_tests=\((.*?)\)", script_text, re.S)
    names = [t for t in m.group(1).replace("\\", " ").split()]
    probed = features()
    ok = [t for t in names if not missing_features(f"trig-{t}", probed)]
    return ok, [t for t in names if t not in ok]


@pytest.mark.parametrize("script", SCRIPTS)
def test_kernel_script_runs_unchanged(script, benchs, tmp_path):
    path = os.path.join(benchs, f"run_bench_{script}.sh")
    if not os.path.exists(path):
        pytest.skip(f"{path}: not in this kernel source")
    text = open(path).read()
    work, log, env = _setup(tmp_path, benchs)
    args, refused = [], []
    if script == "trigger":
        args, refused = _trigger_args(text)
        assert args, "no trigger benchmark runs here"
    p = subprocess.run(["bash", f"benchs/run_bench_{script}.sh", *args], cwd=work, env=env,
                       capture_output=True, text=True, timeout=SCRIPT_TIMEOUT_S)
    runs = _runs(log)
    assert runs, f"run_bench_{script}.sh never ran ./bench:\n{p.stdout}\n{p.stderr}"

    # Every command line the script gave, run or not, passes benchbpf's checks.
    lines = [shlex.split(l) for l in (log / "argv").read_text().splitlines()]
    for argv in lines:
        try:
            cli.check_command(argv)
        except (ValueError, TypeError) as e:
            if not any(k in str(e) for k in KERNEL_REFUSES):
                raise AssertionError(f"./bench {shlex.join(argv)}: {e}") from None

    skip = None
    for i, (argv, rc, out, err) in enumerate(runs):
        if rc == 2 and any(k in err for k in KERNEL_REFUSES):
            continue
        if rc != 0:
            why = _refused(argv, rc, err)
            assert why and i == len(runs) - 1 and p.returncode != 0, \
                f"./bench {shlex.join(argv)} exited {rc}:\n{err}"
            skip = why
            break
        _check_parsed(work, text, _bench_name(argv), out)
    if skip:
        pytest.skip(f"run_bench_{script}.sh stops at a benchmark this kernel refuses "
                    f"(after {len(runs) - 1} good runs): {skip}")
    assert p.returncode == 0, f"run_bench_{script}.sh exited {p.returncode}:\n" \
                              f"{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
    # The kernel's refusals of the trigger script's other tests, said as benchbpf says them.
    for t in refused:
        q = subprocess.run(["bash", "-c", f"./bench -w2 -d5 -a trig-{t}"], cwd=work,
                           env=env, capture_output=True, text=True, timeout=120)
        assert q.returncode == 3 and "cannot run here" in q.stderr, (t, q.stderr)
