"""The command line speaks the kernel bench's flags and prints its lines."""
import fcntl
import json
import os
import re
import signal
import subprocess
import time
import sys
from pathlib import Path

import pytest

import benchbpf

ROOT = Path(__file__).resolve().parent.parent
ITER = re.compile(r"^Iter +\d+ \( *-?\d+\.\d{3}us\): hits +\d+\.\d{3}M/s \( *\d+\.\d{3}M/prod\), "
                  r"drops +\d+\.\d{3}M/s, total operations +\d+\.\d{3}M/s$")


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "benchbpf", *args],
                          capture_output=True, text=True, timeout=120,
                          env=None if env is None else {**os.environ, **env})


QUICK = ("-w0", "-d0.4", "--interval", "0.2")


@pytest.mark.fast
def test_list():
    out = cli("-l")
    assert out.returncode == 0
    assert "Available benchmarks:" in out.stdout and "- count-local" in out.stdout


@pytest.mark.fast
def test_run_prints_iter_and_summary_lines(tmp_path):
    path = tmp_path / "r.json"
    out = cli("-w1", "-d", "2", "-p", "2", "count-local", "--json", str(path))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "Setting up benchmark 'count-local'..."
    assert lines[1] == "Benchmark 'count-local' started."
    iters = [l for l in lines if l.startswith("Iter")]
    assert len(iters) == 3 and all(ITER.match(l) for l in iters), iters
    assert lines[-1].startswith("Summary: hits")
    saved = json.loads(path.read_text())
    assert saved["name"] == "count-local" and saved["params"]["producers"] == 2
    assert len(saved["samples"]) == 2


@pytest.mark.fast
def test_quiet_is_the_kernel_benchs():
    # The kernel bench's -q drops the set-up and started lines, not the Iter lines.
    out = cli("-q", "-w0", "-d1", "--interval", "0.5", "count-global")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [l for l in lines if l.startswith("Iter")] and lines[-1].startswith("Summary:")
    assert not [l for l in lines if l.startswith(("Setting up", "Benchmark"))]


@pytest.mark.fast
def test_version():
    import benchbpf
    for flag in ("-V", "--version"):
        out = cli(flag)
        assert out.returncode == 0
        assert out.stdout.startswith(f"benchbpf {benchbpf.__version__} (libbpf v")


@pytest.mark.fast
def test_bad_flag_is_one_line_and_a_pointer():
    out = cli("--no-such-flag", "count-local")
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        "benchbpf: unrecognized arguments: --no-such-flag",
        "Try `benchbpf --help' for more information."]


@pytest.mark.fast
def test_per_benchmark_help():
    out = cli("rb-libbpf", "--help")
    assert out.returncode == 0
    text = out.stdout
    assert text.startswith("benchbpf rb-libbpf: BPF ring buffer")
    assert re.search(r"--rb-batch-cnt NUM +.*\(default 500, 1\.\.4000\)", text)
    assert "--trigger auto|fentry|tp" in text and "--ringbuf-sz NUM" in text
    assert "--nr_loops" not in text


def test_list_describes_and_marks_what_cannot_run():
    import benchbpf
    out = cli("-l")
    probed = benchbpf.features()
    lines = {l.split()[1]: l for l in out.stdout.splitlines()[1:]}
    assert lines["count-local"].startswith("- count-local ")
    assert "each producer increments its own atomic counter" in lines["count-local"]
    for name, feature in (("trig-fentry", "fentry"), ("trig-rawtp", "prog_test_run_raw_tp"),
                          ("trig-kprobe", "kprobe"), ("rb-libbpf", "ringbuf")):
        cannot = not probed[feature].supported
        assert lines[name].startswith("!" if cannot else "-"), lines[name]
        assert (f"[cannot run: no {feature}" in lines[name]) == cannot


@pytest.mark.fast
def test_errors_name_flags_not_python_names():
    out = cli("--rb-batch-cnt", "0", "rb-libbpf")
    assert out.returncode == 2
    assert "--rb-batch-cnt 0 out of range: must be an int in 1..4000" in out.stderr
    assert "rb_batch_cnt" not in out.stderr
    out = cli("-d", "0.3", "--interval", "0.2", "count-local")
    assert out.returncode == 2 and "-d 0.3 is not a whole number" in out.stderr


@pytest.mark.fast
def test_unknown_benchmark_suggests_the_closest_name():
    out = cli("--nr_loops", "5", "bpf-lop")
    assert out.returncode == 2
    assert "unknown benchmark 'bpf-lop'; did you mean bpf-loop" in out.stderr
    assert "does not apply" not in out.stderr


def test_consumer_ranges_are_true():
    for c in ("0", "2"):
        out = cli("-c", c, "rb-libbpf")
        assert out.returncode == 2
        assert f"-c {c}: rb-libbpf takes 1 consumer thread(s) (0 with --rb-bench-producer)" \
            in out.stderr
    out = cli("-c", "1", "count-local")
    assert out.returncode == 2 and "count-local takes no consumer" in out.stderr


def test_fractional_duration_and_new_flags_and_trigger_printed(tmp_path):
    path = tmp_path / "r.json"
    out = cli("-w0", "-d0.5", "--interval", "0.25", "--trigger", "tp", "--record-size", "16",
              "--ringbuf-sz", "65536", "rb-custom", "--json", str(path))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-2] == "Trigger: tp/syscalls/sys_enter_getpgid"
    assert lines[-1].startswith("Summary: hits")
    saved = json.loads(path.read_text())
    assert len(saved["samples"]) == 2
    assert (saved["params"]["trigger"], saved["params"]["record_size"],
            saved["params"]["ringbuf_sz"]) == ("tp", 16, 65536)
    out = cli(*QUICK, "--perfbuf-sz", "64", "pb-custom")
    assert out.returncode == 0, out.stderr


def test_help_epilog_examples_work():
    from benchbpf.harness._cmdline import EXAMPLES
    out = cli("--help")
    for example in EXAMPLES:
        assert example in out.stdout
        args = example.split()[1:]
        if "--help" not in args:
            args = ["-w0", "-d0.2", "--interval", "0.1"] + \
                [a for a in args if not re.fullmatch(r"-[wd]\d+", a)]
        res = cli(*args)
        assert res.returncode == 0, (example, res.stderr)


@pytest.mark.fast
def test_warnings_are_one_line(tmp_path):
    # Another process's run marker, held: the run warns about it.
    lock_dir = tmp_path / "locks"
    lock_dir.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        fd = os.open(lock_dir / f"{holder.pid}-0.lock", os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        out = cli(*QUICK, "count-local", env={"BENCHBPF_LOCK_DIR": str(lock_dir)})
        os.close(fd)
    finally:
        holder.kill()
        holder.wait()
    assert out.returncode == 0, out.stderr
    # The run's instability warnings (two samples: too few) are lines of their own.
    warn = [l for l in out.stderr.splitlines() if l and not l.startswith("WARNING: hits: ")]
    assert len(warn) == 1 and warn[0].startswith(
        "benchbpf: warning: count-local: another benchbpf run is going on"), out.stderr


@pytest.mark.fast
def test_json_path_is_checked_before_the_run(tmp_path):
    out = cli(*QUICK, "count-local", "--json", str(tmp_path / "no" / "r.json"))
    assert out.returncode == 2
    assert f"--json {tmp_path / 'no' / 'r.json'}: directory" in out.stderr
    assert "Setting up" not in out.stdout
    out = cli(*QUICK, "count-local", "--json", str(tmp_path))
    assert out.returncode == 2 and "is a directory" in out.stderr


@pytest.mark.fast
def test_sigterm_stops_cleanly(tmp_path):
    lock_dir = tmp_path / "locks"
    proc = subprocess.Popen([sys.executable, "-m", "benchbpf", "-w0", "-d60", "count-global"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "BENCHBPF_LOCK_DIR": str(lock_dir)})
    assert proc.stdout.readline().startswith("Setting up")
    assert proc.stdout.readline() == "Benchmark 'count-global' started.\n"
    assert len(os.listdir(lock_dir)) == 1
    threads = len(os.listdir(f"/proc/{proc.pid}/task"))
    assert threads > 1
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert "benchbpf: terminated (SIGTERM): run stopped and cleaned up" in err
    assert os.listdir(lock_dir) == []


def test_bad_flags_are_errors():
    assert cli("-p", "0", "count-local").returncode == 2
    out = cli("nope-bench")
    assert out.returncode == 2 and "unknown benchmark 'nope-bench'" in out.stderr
    out = cli("-c", "1", "count-local")
    assert out.returncode == 2 and "takes no consumer" in out.stderr


@pytest.mark.fast
def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    cmd = "./scripts/install.sh && .venv/bin/python3 -m pytest -q tests"
    assert cmd in readme and cmd in ci
    # Both of README's commands run the interpreter of the venv install.sh makes.
    assert "./scripts/install.sh && .venv/bin/python3 -m benchbpf rb-libbpf" in readme


def test_install_script_installs_only_into_its_venv():
    # Debian's python3 refuses system-wide pip installs (PEP 668): every pip run
    # of install.sh is the venv's, and git ignores the venv.
    script = (ROOT / "scripts" / "install.sh").read_text()
    pips = [line for line in script.splitlines() if "pip install" in line
            and not line.lstrip().startswith("#")]
    assert pips and all(line.lstrip().startswith('"$VENV/bin/python3" -m pip install')
                        for line in pips), pips
    assert 'VENV=.venv' in script and '"$PYTHON" -m venv' in script
    assert "/.venv/" in (ROOT / ".gitignore").read_text().splitlines()


def test_unwritable_or_empty_output_paths_are_refused_before_the_run(tmp_path):
    # Permission bits say yes for root in /proc: the path is really opened.
    existing = tmp_path / "keep.json"
    existing.write_text("old contents")
    for args, flag, path in (
            ((*QUICK, "count-local", "--json", "/proc/x.json"), "--json", "/proc/x.json"),
            ((*QUICK, "count-local", "--json", ""), "--json", "''"),
            (("report", "--quick", "--only", "count-local", "-o", "/proc/x.html"),
             "-o", "/proc/x.html"),
            (("report", "--quick", "--only", "count-local", "-o", ""), "-o", "''"),
            (("report", "--quick", "--only", "count-local", "-o", str(existing),
              "--json", "/proc/x.json"), "--json", "/proc/x.json")):
        out = cli(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert f"benchbpf: error: {flag} {path}: " in out.stderr, out.stderr
        assert "Setting up" not in out.stdout and "count-local" not in out.stderr
    assert existing.read_text() == "old contents"      # checked, not truncated
    assert not os.path.exists("/proc/x.json")
    # A writable new path is left as it was found: no file until the result is saved.
    out = cli(*QUICK, "count-local", "--json", str(tmp_path / "new.json"))
    assert out.returncode == 0 and json.loads((tmp_path / "new.json").read_text())


@pytest.mark.fast
def test_help_of_an_unknown_benchmark_is_an_error():
    out = cli("rb-libbpff", "--help")
    assert out.returncode == 2 and not out.stdout
    assert "unknown benchmark 'rb-libbpff'; did you mean rb-libbpf" in out.stderr
    out = cli("-d", "2", "--help")       # no name: the generic help
    assert out.returncode == 0 and out.stdout.startswith("usage: benchbpf")


@pytest.mark.fast
def test_a_duration_below_one_interval_says_so():
    out = cli("-d", "0.5", "count-local")
    assert out.returncode == 2
    assert "-d 0.5 is shorter than one sampling interval (--interval 1): duration must " \
           "be a whole number of sampling intervals, at least one: seconds in 1..86400" \
        in out.stderr, out.stderr
    with pytest.raises(ValueError, match=r"duration=0\.5 is shorter than one sampling "
                                         r"interval \(interval=1\)"):
        benchbpf.check("count-local", duration=0.5)


def test_bloom_value_size_and_htab_mem_value_size_are_different_flags():
    # As the kernel's run_bench_bloom_filter_map.sh writes it.
    out = cli(*QUICK, "-p", "1", "--nr_hash_funcs", "3", "--nr_entries", "10000",
              "--value_size", "8", "bloom-lookup")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1].startswith("Summary: hits")
    from benchbpf.tools import cli as benchcli
    name, kw = benchcli.check_command(["--value-size", "16", "htab-mem"])
    assert kw["value_size"] == 16
    for argv, flag in ((["--value-size", "8", "bloom-lookup"], "--value-size"),
                       (["--value_size", "8", "htab-mem"], "--value_size")):
        with pytest.raises(ValueError, match=f"{flag} does not apply to"):
            benchcli.check_command(argv)


def test_exit_status_of_each_way_a_run_ends(capsys):
    # One table says it for the run, ab and --kernel alike; the subclasses
    # come out as the kernel's (3), not as a failed run (1).
    from benchbpf.tools import cli as benchcli
    cases = [(ValueError("v"), 2), (TypeError("t"), 2),
             (benchbpf.UnsupportedError("u"), 3), (PermissionError("p"), 3),
             (benchbpf.BenchmarkError("b"), 1), (KeyboardInterrupt(), 130),
             (benchcli.Terminated(), 143), (BrokenPipeError(), 141)]
    assert [benchcli._exit_status(e) for e, _ in cases] == [s for _, s in cases]
    assert all(isinstance(e, benchcli._RUN_ERRORS) for e, s in cases if s in (1, 2, 3))
    # And the command ends with them: the run refuses bad input before it loads.
    assert benchcli.main(["-q", "-w0", "-d0.1", "--interval", "0.2", "count-local"]) == 2
    assert capsys.readouterr().err.startswith(
        "benchbpf: error: -d 0.1 is shorter than one sampling interval")


def _listed_flags(help_text):
    """The flags a `benchbpf NAME --help` lists under "options of this benchmark"."""
    section = help_text.split("options of this benchmark:\n", 1)[1].split("\n\n", 1)[0]
    flags = set()
    for line in section.splitlines():
        if not line.startswith("  -"):
            continue        # a choice's description, or "none besides..."
        words = line.split()
        if len(words) > 1 and words[1] == "|":      # a mode switch: --a | --b | ...
            flags.update(w for w in words if w != "|")
        else:
            flags.add(words[0])
    return flags


def _values(p, flag):
    """Command-line words setting p (through flag) to each value other than its default."""
    if p.choice_flags:
        return [[flag]] if flag[2:] != p.default else []
    if p.type == "bool":
        return [[flag]]
    if p.type == "choice":
        return [[flag, c] for c in p.choices if c != p.default]
    if p.type == "string":
        return [[flag, "x" * n] for n in (max(p.min, 1), p.max)]
    if p.name == "kthread_pid":     # a value must name the real kthread
        return [[flag, str(_kthread_pid("rcu_tasks_trace_kthread"))]]
    return [[flag, str(v)] for v in (p.min, p.max) if v != p.default]


def _kthread_pid(comm):
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == comm:
                return int(entry.name)
        except OSError:
            continue
    pytest.skip(f"no {comm} kthread here")


#: What a parameter needs beside it to make sense (validate refuses it alone).
_COMPANIONS = {"rb_bench_producer": ["-c", "0"], "fault_after_ms": ["--fault", "producer"],
               "bpf_work_every": ["--bpf-work", "1"]}


@pytest.mark.fast
def test_each_benchmarks_help_lists_only_what_it_takes(capsys):
    """`benchbpf NAME --help`, for every benchmark `-l` lists: each option it
    lists is taken (some value of it passes every check before a run), and
    every other benchmark's option is refused as not applying to it."""
    from benchbpf.harness._cmdline import _family_options
    from benchbpf.tools import cli as benchcli
    every = _family_options()
    names = [line.split()[1] for line in cli("-l").stdout.splitlines()[1:]]
    assert "rb-libbpf" in names and len(names) == len(benchbpf.list_benchmarks())
    for name in names:
        assert benchcli.main([name, "--help"]) == 0
        listed = _listed_flags(capsys.readouterr().out)
        info = benchbpf.describe(name)
        by_flag = {f: p for p in info.params.values() for f in p.flags}
        assert listed == set(by_flag), name
        required = [w for p in info.params.values() if p.required
                    for w in _values(p, p.flags[0])[0]]
        for flag, p in by_flag.items():
            errors = []
            for words in _values(p, flag):
                extra = required if p.required else required + _COMPANIONS.get(p.name, [])
                try:
                    benchcli.check_command([*words, *extra, name])
                    break
                except (ValueError, TypeError) as e:
                    errors.append(str(e))
            else:
                assert not errors, (name, flag, errors)
        for flag in set(every) - listed:
            words = _values(every[flag][0][1], flag) or [[flag]]
            with pytest.raises(ValueError, match=f"does not apply to {name}"):
                benchcli.check_command([*words[0], name])
    assert "--rb-count-once" not in _listed_flags(cli("rb-libbpf", "--help").stdout)


@pytest.mark.fast
def test_usage_errors_come_before_setting_up():
    # Each refused by a check of the run itself (a range that depends on
    # another option, a combination the benchmark's validate refuses): all
    # before the run prints its first line.
    for args, said in ((("-w0", "-d0.5", "count-local"),
                        "-d 0.5 is shorter than one sampling interval"),
                       (("--rb-bench-producer", "rb-libbpf"), "pass -c 0"),
                       (("-p2", "--rb-b2b", "rb-custom"), "single producer"),
                       (("--nr_entries", "10", "--prefix_len", "2", "lpm-trie-lookup"),
                        "--prefix_len 2 too small"),
                       (("--rb-count-once", "rb-libbpf"), "does not apply to rb-libbpf"),
                       (("--precision", "5", "--budget", "1e9", "count-local"),
                        "--budget 1000000000 out of range")):
        out = cli(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert said in out.stderr, (args, out.stderr)
        assert out.stdout == "", (args, out.stdout)


def test_cannot_run_names_the_benchmark_once():
    probed = benchbpf.features()
    name = next((n for n, f in (("trig-fentry", "fentry"), ("trig-kprobe", "kprobe"))
                 if not probed[f].supported), None)
    if name is None:
        pytest.skip("this kernel runs fentry and kprobes")
    out = cli("-q", "-w0", "-d1", name)
    assert out.returncode == 3, out.stderr
    line = next(l for l in out.stderr.splitlines() if "cannot run here" in l)
    assert line.startswith(f"benchbpf: {name} cannot run here: ") and line.count(name) == 1


@pytest.mark.fast
def test_help_is_short_and_names_every_subcommand():
    from benchbpf.tools import cli as benchcli
    out = cli("--help")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert len(lines) <= 100, len(lines)
    usage = out.stdout.split("\n\n", 1)[0]
    for word in benchcli.SUBCOMMANDS:
        assert word in usage.split("benchbpf {", 1)[1], word
        assert any(l.startswith(f"  {word} ") for l in lines), word
    # The common options are there, the benchmarks' own behind NAME --help.
    assert "show" in benchcli.SUBCOMMANDS
    for flag in ("-w SEC", "-d SEC", "-p NUM", "--json FILE", "--kernel K"):
        assert flag in out.stdout
    for flag in ("--rb-sampled", "--nr_entries", "--trig-batch-iters"):
        assert not re.search(rf"^ +{flag}\b", out.stdout, re.M), flag
    assert "--rb-sampled" in cli("rb-libbpf", "--help").stdout
    assert cli("--rb-sampled", "-c1", "-q", "-w0", "-d1", "--interval", "0.5",
               "rb-custom").returncode == 0       # still parsed
    listed = cli("-l")
    assert listed.returncode == 0 and "- count-local" in listed.stdout


@pytest.mark.fast
def test_ab_help_states_exit_status_and_every_flag():
    out = cli("ab", "--help")
    assert out.returncode == 0
    status = out.stdout.split("exit status:\n", 1)[1]
    assert [l.split()[0] for l in status.splitlines() if l.startswith("  ") and
            l.split()[0].isdigit()] == ["0", "1", "2", "3", "125", "130"]
    for flag in ("--per-second", "--counter", "--rule", "--fail-on", "--duet", "--json"):
        assert flag in out.stdout


def test_the_manuals_command_page_has_every_subcommand_flag_and_ab_exit_status():
    """docs/reference/cli.md's sections come from the parsers: every
    subcommand (and history's own) with each flag its --help shows, and
    the epilogs, where ab's exit status is."""
    import argparse
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        import benchbpf_docs
    finally:
        sys.path.pop(0)
    from benchbpf.tools import cli as benchcli
    pages = dict(benchbpf_docs.parsers())
    assert {f"cli-{w}" for w in benchcli.SUBCOMMANDS} | {"cli-benchbpf"} <= set(pages)
    assert "cli-history-add" in pages
    for label, parser in pages.items():
        text = "\n".join(benchbpf_docs._parser_markdown(parser))
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:
                assert not any(f"```{{option}} {s}" in text for s in action.option_strings)
                continue
            for flag in action.option_strings:
                assert f"```{{option}} {flag}" in text or f", {flag}" in text, (label, flag)
    ab_page = "\n".join(benchbpf_docs._parser_markdown(pages["cli-ab"]))
    for flag in ("--per-second", "--counter", "--rule", "--fail-on"):
        assert f"```{{option}} {flag}" in ab_page, flag
    status = ab_page.split("exit status:\n", 1)[1]
    assert [l.split()[0] for l in status.splitlines()
            if re.match(r"  \d+ ", l)] == ["0", "1", "2", "3", "125", "130"]


def test_results_saved_before_a_parameter_was_limited_still_compare(tmp_path):
    """A rb-libbpf file saved when every ring buffer benchmark listed
    rb_count_once holds it at its default; rb-libbpf no longer takes it, and
    that is no difference of configuration (a real one still is)."""
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    for path in (old, new):
        _run = cli(*QUICK, "rb-libbpf", "--json", str(path))
        assert _run.returncode == 0, _run.stderr
    d = json.loads(old.read_text())
    d["params"]["rb_count_once"] = False
    old.write_text(json.dumps(d))
    out = cli("compare", str(old), str(new))
    assert out.returncode == 0, out.stderr
    d["params"]["rb_batch_cnt"] = 100
    old.write_text(json.dumps(d))
    out = cli("compare", str(old), str(new))
    assert out.returncode == 2 and "parameter rb_batch_cnt" in out.stderr
    assert "rb_count_once" not in out.stderr
