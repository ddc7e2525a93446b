"""The VM tier: benchbpf run in guests booting Debian's 6.12 and 6.1 kernels.

This host refuses fentry/fexit/fmod_ret, kprobes and BPF LSM programs; 6.12
allows them all, so every benchmark this host cannot run is run and counted
there.  6.1 predates several features: every benchmark either runs there or
raises UnsupportedError naming what 6.1 lacks, as `-l` in that guest says.

Benchmarks are batched, one boot per kernel (Python alone takes seconds to
start in an emulated guest).  Skipped, with the reason, where QEMU or
virtme-ng is missing (scripts/install.sh installs them); kernels are fetched
into ~/.cache/benchbpf/kernels once.  Every test leaves no VM behind.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest

import benchbpf
from benchbpf import vm
from benchbpf.harness._children import reap
from benchbpf.harness.features import requirements
from conftest import REQUIRED_PARAMS, copy_package

#: Every test that boots a guest; the others run on any host.
needs_qemu = pytest.mark.skipif(vm.tools_missing() is not None,
                                reason=str(vm.tools_missing()))

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Short runs: counts are what these tests check (rates under TCG are not
#: performance figures anyway).
QUICK = dict(warmup=0.5, duration=1, interval=0.5)

#: What this host refuses (fentry and friends, kprobes, BPF LSM) and 6.12 allows.
HOST_REFUSED = ("trig-fentry", "trig-fexit", "trig-fmodret", "trig-kprobe", "trig-kretprobe",
                "trig-kprobe-multi", "trig-kretprobe-multi", "rename-kprobe",
                "rename-kretprobe", "rename-fentry", "rename-fexit")

#: What a 6.1 kernel lacks, by the feature names of features(): an
#: UnsupportedError there names one of these words.
LACKING_61 = {"kprobe_multi": ("kprobe-multi", "kretprobe-multi", "kprobe_multi"),
              "uprobe_multi": ("uprobe-multi", "uretprobe-multi", "uprobe_multi"),
              "fmod_ret": ("fmod_ret",),
              "trigger_kfunc": ("bpf_modify_return_test_tp",),
              "may_goto": ("may_goto",), "bpf_iter_num": ("bpf_iter_num",),
              "uprobe_nop5": ("5-byte nop",), "uprobe_nop10": ("10-byte nop",)}


#: Defaults that cost minutes of set-up in an emulated guest, not what is checked:
#: 1000 storage maps are 8 RCU grace periods of batched inserts.
CHEAP_61 = {n: {"nr_maps": 17} for n in ("local-storage-cache-seq-get",
                                          "local-storage-cache-int-get",
                                          "local-storage-cache-hashmap-control")}


def _qemu_pids():
    out = subprocess.run(["pgrep", "-f", "qemu-system-x86_64 -name virtme-ng"],
                         capture_output=True, text=True).stdout
    return {int(p) for p in out.split()}


def _runs_dir():
    d = os.path.join(vm.cache_dir(), "runs")
    return set(os.listdir(d)) if os.path.isdir(d) else set()


@pytest.fixture(scope="module", autouse=True)
def no_vm_left_behind():
    """Whatever happens in this module, no guest of ours outlives it."""
    before_qemu, before_runs = _qemu_pids(), _runs_dir()
    yield
    left = _qemu_pids() - before_qemu
    for pid in left:   # never leave one running, even when failing
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"qemu processes left behind: {left}"
    assert _runs_dir() - before_runs == set(), "run directories left behind"


def _progress(line):
    print(line, file=sys.stderr, flush=True)


def _run_batch(jobs, kernel):
    """vm.run_many() of a batch, errors returned (a guest that dies is booted
    once more by vm itself: test_a_guest_that_dies_*)."""
    return vm.run_many(jobs, kernel, progress=_progress, errors="return", probe=True)


@pytest.fixture(scope="module")
def guest612():
    """One 6.12 boot: every benchmark this host refuses, socket storage, and
    tasks-trace timed both ways, plus count-local for the compare check."""
    jobs = [(n, QUICK) for n in HOST_REFUSED]
    jobs += [("local-storage-create", dict(QUICK, storage_type="socket")),
             ("local-storage-tasks-trace", dict(warmup=1, duration=3, interval=1,
                                                nr_procs=100, gp_check=True)),
             ("count-local", QUICK)]
    started = time.monotonic()
    probed, out = _run_batch(jobs, "6.12")
    print(f"6.12 batch: {time.monotonic() - started:.0f} s", file=sys.stderr)
    return probed, {name: r for (name, _), r in zip(jobs, out)}


@pytest.fixture(scope="module")
def guest61():
    """One 6.1 boot: `-l`'s answer, then every benchmark with quick options.

    The guest imports a copy of the package kept under /tmp, which it sees
    through an overlay (as it sees a checkout there): 6.1 names an overlaid
    mapping by the overlay's path, so the uprobe benchmarks check here that a
    target loaded through an overlay is recognised as the file underneath."""
    from benchbpf.tools.report import QUICK_PARAMS
    names = benchbpf.list_benchmarks()
    jobs = [(n, dict(QUICK, **QUICK_PARAMS.get(n, {}), **REQUIRED_PARAMS.get(n, {}),
                     **CHEAP_61.get(n, {}))) for n in names]
    copy = tempfile.mkdtemp(prefix="benchbpf-guest-", dir="/tmp")
    try:
        copy_package(copy)
        started = time.monotonic()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(vm, "_package_root", lambda: copy)
            probed, out = _run_batch(jobs, "6.1")
        print(f"6.1 batch: {time.monotonic() - started:.0f} s", file=sys.stderr)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    return probed, dict(zip(names, out))


# ---- 6.12: what this host refuses runs and counts ----

@needs_qemu
@pytest.mark.parametrize("name", HOST_REFUSED + ("local-storage-create",))
def test_612_runs_and_counts_what_this_host_refuses(guest612, name):
    _, got = guest612
    r = got[name]
    assert isinstance(r, benchbpf.Result), r
    assert r.total_hits > 0
    assert r.metadata["kernel"].startswith("6.12")
    assert r.emulated == (r.metadata["vm"]["accel"] == "tcg")
    assert r.metadata["vm"]["host_kernel"] == os.uname().release


@needs_qemu
def test_612_socket_storage_loads(guest612):
    """6.12's verifier refused the socket storage program before sock->sk
    was checked for NULL, and that was reported as missing BPF LSM."""
    probed, got = guest612
    assert probed[0]["bpf_lsm"].supported, probed[0]["bpf_lsm"]
    r = got["local-storage-create"]
    assert isinstance(r, benchbpf.Result), r
    assert r.params["storage_type"] == "socket"
    assert r.metadata["trigger"] == "lsm.s/socket_post_create"


@needs_qemu
def test_612_tasks_trace_timed_by_fentry_and_substitute(guest612):
    from benchbpf.rcu_tasks_trace import gp_latency_us, substitute_gp_latency_us
    _, got = guest612
    r = got["local-storage-tasks-trace"]
    assert isinstance(r, benchbpf.Result), r
    assert r.total_hits > 0
    assert r.metadata["gp_latency_source"].startswith("fentry")
    assert "substitute_gp_source" in r.metadata
    assert sum(s.extra["gp_timed"] for s in r.samples) > 0
    assert sum(r.series["substitute_gp_timed"]) > 0
    fentry, substitute = gp_latency_us(r)[0], substitute_gp_latency_us(r)[0]
    assert fentry > 0 and substitute > 0


@needs_qemu
def test_612_guest_list_agrees(guest612):
    probed, got = guest612
    features, missing = probed
    for name in HOST_REFUSED + ("local-storage-create",):
        assert missing[name] == (), (name, missing[name])


@needs_qemu
def test_results_round_trip_and_refuse_comparison_with_real_cpus(guest612, tmp_path):
    _, got = guest612
    r = got["trig-fentry"]
    path = tmp_path / "r.json"
    r.to_json(str(path))
    back = benchbpf.Result.from_json(str(path))
    assert back == r
    assert back.metadata["vm"]["accel"] == r.metadata["vm"]["accel"]
    if not r.emulated:
        pytest.skip("this host runs guests with KVM: nothing to refuse")
    assert "TCG-emulated" in repr(r) and "TCG-emulated" in r.summary()
    host = benchbpf.run("count-local", **QUICK)
    guest = got["count-local"]
    with pytest.raises(ValueError, match="emulated"):
        benchbpf.compare(host, guest)
    benchbpf.compare(host, guest, allow_emulated=True)
    from benchbpf.tools.report import _label
    assert "TCG-emulated" in _label(guest)


# ---- 6.1: runs, or says what 6.1 lacks ----

@needs_qemu
def test_61_every_benchmark_runs_or_names_what_61_lacks(guest61):
    probed, got = guest61
    features, missing = probed
    failed = {n: r["message"] for n, r in got.items()
              if isinstance(r, dict) and r["type"] != "UnsupportedError"}
    assert not failed, failed
    for name, r in got.items():
        if isinstance(r, benchbpf.Result):
            assert r.metadata["kernel"].startswith("6.1.")
            continue
        assert "EINVAL" not in r["message"] or any(
            w in r["message"] for words in LACKING_61.values() for w in words), (name, r)
        lacking = [f for f in requirements(name) if not features[f].supported]
        assert lacking, (name, r["message"])
        assert any(w in r["message"] for f in lacking for w in LACKING_61.get(f, (f,))), \
            (name, lacking, r["message"])


@needs_qemu
def test_61_list_agrees_with_what_happens(guest61):
    probed, got = guest61
    _, missing = probed
    disagree = {n: (missing[n], r if isinstance(r, dict) else "ran")
                for n, r in got.items()
                if bool(missing[n]) != isinstance(r, dict)}
    assert not disagree, disagree


@needs_qemu
def test_61_trigger_kfunc_is_missing_and_named(guest61):
    """6.1 lacks bpf_modify_return_test_tp: trig-tp/-rawtp/-fmodret raised
    EINVAL from the verifier (exit 1) and -l called them runnable."""
    probed, got = guest61
    features, missing = probed
    assert not features["trigger_kfunc"].supported
    assert "bpf_modify_return_test_tp" in features["trigger_kfunc"].detail
    for name in ("trig-tp", "trig-rawtp", "trig-fmodret"):
        assert isinstance(got[name], dict) and got[name]["type"] == "UnsupportedError"
        assert "bpf_modify_return_test_tp" in got[name]["message"]
        assert "trigger_kfunc" in missing[name]


# ---- the CLI, the matrix, interruption ----

def _cli(*args, **kw):
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, "-m", "benchbpf", *args], capture_output=True,
                          text=True, env=env, cwd=REPO, **kw)


@needs_qemu
def test_cli_kernel_runs_trig_fentry(tmp_path):
    out = tmp_path / "r.json"
    p = _cli("--kernel", "6.12", "-w1", "-d2", "trig-fentry", "--json", str(out), timeout=900)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("Kernel: 6.12")
    assert sum(line.startswith("Iter ") for line in lines) == 3
    assert lines[-1].startswith("Summary: hits")
    r = benchbpf.Result.from_json(str(out))
    assert r.total_hits > 0 and r.metadata["kernel"].startswith("6.12")
    assert "booting" in p.stderr and "booted" in p.stderr


def test_cli_kernel_refuses_bad_input_before_booting():
    before = _qemu_pids()
    p = _cli("--kernel", "6.12", "--trig-batch-iters", "0", "trig-fentry",
             timeout=60)
    assert p.returncode == 2 and "--trig-batch-iters 0" in p.stderr, p.stderr
    p = _cli("--kernel", "5.99", "trig-fentry", timeout=60)
    assert p.returncode == 2 and "5.99" in p.stderr, p.stderr
    p = _cli("--kernel", "/nonexistent/vmlinuz-1", "trig-fentry", timeout=60)
    assert p.returncode == 2 and "/nonexistent/vmlinuz-1" in p.stderr
    assert _qemu_pids() - before == set()


@needs_qemu
def test_matrix_host_and_612_by_path():
    k = vm.resolve_kernel("6.12")
    rs = vm.matrix("count-local", kernels=["host", k.vmlinuz], producers=[1, 2], **QUICK)
    assert len(rs) == 4 and not rs.unsupported
    rows = rs._rows()[1]
    assert {row["kernel"] for row in rows} == {os.uname().release, k.release}
    assert all(row["kernel_spec"] in ("host", k.vmlinuz) for row in rows)
    assert all(r.total_hits > 0 for r in rs)
    guests = [r.metadata["vm"] for r in rs if "vm" in r.metadata]
    assert len(guests) == 2 and all(g["boots"] in (1, 2) for g in guests), guests
    assert all((g["boots"] == 2) == (g["reboot_reason"] is not None) for g in guests)


def _panicking_first(boots_to_panic):
    """vm._vng_command with the first `boots_to_panic` guests told to panic
    (sysrq c) instead of running benchbpf: a guest that dies without
    reporting back, as it would on a kernel bug."""
    real, made = vm._vng_command, []

    def command(*args, **kw):
        cmd = real(*args, **kw)
        made.append(cmd)
        if len(made) > boots_to_panic:
            return cmd
        return cmd[:cmd.index("--") + 1] + ["sh", "-c", "echo c > /proc/sysrq-trigger"]
    return command, made


@needs_qemu
def test_a_guest_that_dies_is_booted_once_more_and_says_so(monkeypatch, tmp_path):
    command, made = _panicking_first(1)
    monkeypatch.setattr(vm, "_vng_command", command)
    lines = []
    r, = vm.run_many([("count-local", QUICK)], "6.12", progress=lines.append)
    assert len(made) == 2 and r.total_hits > 0
    meta = r.metadata["vm"]
    assert meta["boots"] == 2, meta
    assert "stopped without reporting back" in meta["reboot_reason"]
    # The console reaches the message: the first guest's panic is in it.
    assert 'the kernel said "Kernel panic - not syncing: sysrq' in meta["reboot_reason"]
    assert any("booting it once more" in line for line in lines), lines
    r.to_json(str(tmp_path / "r.json"))
    back = benchbpf.Result.from_json(str(tmp_path / "r.json")).metadata["vm"]
    assert (back["boots"], back["reboot_reason"]) == (2, meta["reboot_reason"])


@needs_qemu
def test_a_guest_that_dies_twice_is_an_error_naming_both_boots(monkeypatch):
    command, made = _panicking_first(2)
    monkeypatch.setattr(vm, "_vng_command", command)
    before, runs_before = _qemu_pids(), _runs_dir()
    with pytest.raises(vm.VMError, match="on both boots; its console ended with") as e:
        vm.run_many([("count-local", QUICK)], "6.12")
    assert len(made) == 2
    assert 'the kernel said "Kernel panic - not syncing: sysrq' in str(e.value), str(e.value)
    assert _qemu_pids() - before == set()
    assert _runs_dir() - runs_before == set()


@needs_qemu
@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_during_guest_run_stops_the_vm(sig, status):
    env = dict(os.environ, PYTHONPATH=REPO)
    before, runs_before = _qemu_pids(), _runs_dir()
    p = subprocess.Popen([sys.executable, "-m", "benchbpf", "--kernel", "6.12", "-d", "60",
                          "trig-fentry"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env, cwd=REPO)
    try:
        deadline = time.monotonic() + 120
        while not (_qemu_pids() - before) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _qemu_pids() - before, "the guest never started"
        time.sleep(2)
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == status, err
    assert _qemu_pids() - before == set()
    assert _runs_dir() - runs_before == set()


# ---- host side: no guest needed ----

def _held(proc):
    """proc as an exception from a signal handler inside Popen.poll() can
    leave it: its waitpid lock taken for good (how CI once hung on SIGTERM)."""
    assert proc._waitpid_lock.acquire(False)
    return proc


def _in_thread(fn, limit_s=120):
    """fn() in a thread: whether it returned within limit_s (a hang fails,
    it does not stall the suite)."""
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    t.join(limit_s)
    return not t.is_alive()


def test_reap_does_without_popens_lock():
    p = _held(subprocess.Popen(["sleep", "60"]))
    assert reap(p, 0) is None and reap(p, 0.05) is None and p.returncode is None
    p.kill()
    assert _in_thread(lambda: reap(p)) and p.returncode == -signal.SIGKILL
    assert reap(p) == -signal.SIGKILL        # once reaped, stays so
    q = subprocess.Popen([sys.executable, "-c", "raise SystemExit(7)"])
    assert reap(q) == 7 and q.poll() == 7


def test_stopping_a_guest_after_an_interrupted_poll_returns():
    """vng and its group, stopped after Ctrl-C or SIGTERM hit Popen.poll():
    reaped all the same, its whole process group gone."""
    p = _held(subprocess.Popen(["sh", "-c", "sleep 60 & sleep 60; wait"],
                               start_new_session=True))
    assert _in_thread(lambda: vm._stop(p))
    assert p.returncode == -signal.SIGTERM
    assert _live_in_group(p.pid) == []


def _live_in_group(pgid):
    """Processes of group pgid that are not zombies (whose reaping is init's)."""
    live = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            live.append(int(pid))
    return live


def test_guest_side_runs_jobs_on_this_host(tmp_path):
    """The guest's half (benchbpf.guests._guest) run here: jobs in, answers out."""
    from benchbpf.guests import _guest
    jobs = [{"kind": "features"},
            {"kind": "run", "name": "count-local", "options": dict(QUICK)},
            {"kind": "run", "name": "trig-fentry", "options": dict(QUICK)}]
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    assert _guest.main(str(tmp_path)) == 0
    answer = json.loads((tmp_path / "done.json").read_text())
    assert "fatal" not in answer, answer.get("fatal")
    probed, ran, fentry = answer["jobs"]
    assert {f[0] for f in probed["features"]} >= {"fentry", "bpf_lsm", "trigger_kfunc"}
    r = benchbpf.Result.from_dict(ran["result"])
    assert r.total_hits > 0
    if probed["missing"]["trig-fentry"]:
        assert fentry["error"]["type"] == "UnsupportedError"
    progress = (tmp_path / "progress").read_text().splitlines()
    assert progress[0] == "booted" and "running count-local" in progress


def test_a_serving_guest_runs_jobs_one_at_a_time_on_this_host(tmp_path):
    """The guest's serving half (benchbpf.guests._guest.serve) run here: each job as
    the host writes it, each answer whole, until told to quit."""
    import threading
    from benchbpf.guests import _guest

    def ask(n, job):
        (tmp_path / f"ask-{n}.json.tmp").write_text(json.dumps(job))
        os.rename(tmp_path / f"ask-{n}.json.tmp", tmp_path / f"ask-{n}.json")
    ended = []
    t = threading.Thread(target=lambda: ended.append(_guest.serve(str(tmp_path))))
    t.start()
    try:
        ask(1, {"kind": "run", "name": "count-local", "options": dict(QUICK)})
        deadline = time.monotonic() + 60
        while not (tmp_path / "answer-1.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        first = json.loads((tmp_path / "answer-1.json").read_text())
        assert benchbpf.Result.from_dict(first["result"]).total_hits > 0
        ask(2, {"kind": "run", "name": "count-local", "options": {"warmup": -1}})
        while not (tmp_path / "answer-2.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        second = json.loads((tmp_path / "answer-2.json").read_text())
        assert second["error"]["type"] == "ValueError" and "warmup" in second["error"]["message"]
    finally:
        ask(3, {"kind": "quit"})
        t.join(30)
    assert ended == [0] and not t.is_alive()
    assert not (tmp_path / "answer-3.json").exists()


@needs_qemu
def test_ab_of_two_kernels_alternates_between_two_booted_guests():
    """benchbpf.ab with a kernel per side: both guests booted once, each on half
    of the CPUs, runs alternating between them; emulated, and said so."""
    r = benchbpf.ab("--kernel 6.1 count-local", "--kernel 6.12 count-local", max_rounds=8,
                    budget=None, warmup=0.3, duration=0.5, interval=0.1, progress=False,
                    log=_progress)
    assert r.mode == "kernels" and len(r.rounds) == 8
    for rnd in r.rounds:
        assert rnd.a.metadata["kernel"].startswith("6.1.")
        assert rnd.b.metadata["kernel"].startswith("6.12.")
        assert rnd.a.emulated == rnd.b.emulated
        assert rnd.first in ("a", "b") and rnd.a.total_hits > 0 and rnd.b.total_hits > 0
    # One boot per guest for the whole comparison.
    assert len({rnd.a.metadata["vm"]["boot_s"] for rnd in r.rounds}) == 1
    if r.emulated:
        assert "emulated guests: not a performance figure" in str(r)
        assert "emulation" in r.to_markdown()


@pytest.mark.parametrize("spec, names, want", [
    ("6.12", ["linux-image-6.12.113+deb12-amd64", "linux-image-6.12.117+deb12-amd64",
              "linux-image-6.12-rt-amd64", "linux-image-6.1.0-57-amd64"],
     "linux-image-6.12.117+deb12-amd64"),
    ("6.1", ["linux-image-6.1.0-9-amd64", "linux-image-6.1.0-57-amd64",
             "linux-image-6.12.117+deb12-amd64", "linux-image-6.1.0-57-cloud-amd64"],
     "linux-image-6.1.0-57-amd64"),
    ("6.1.0-9", ["linux-image-6.1.0-9-amd64", "linux-image-6.1.0-57-amd64"],
     "linux-image-6.1.0-9-amd64"),
    ("linux-image-6.1.0-9-amd64", ["linux-image-6.1.0-9-amd64"], "linux-image-6.1.0-9-amd64"),
])
def test_kernel_versions_name_debian_packages(spec, names, want):
    assert vm.package_for(spec, names) == want


def test_unknown_kernel_version_names_what_exists():
    with pytest.raises(ValueError, match=r"kernel='5\.99'.*6\.1, 6\.12"):
        vm.package_for("5.99", ["linux-image-6.1.0-57-amd64", "linux-image-6.12.117+deb12-amd64"])


def test_vmlinuz_path_needs_its_modules_beside_it(tmp_path):
    boot = tmp_path / "boot"
    boot.mkdir()
    (boot / "vmlinuz-9.9.9").write_bytes(b"x")
    with pytest.raises(ValueError, match="lib/modules/9.9.9"):
        vm.resolve_kernel(str(boot / "vmlinuz-9.9.9"))
    (tmp_path / "lib" / "modules" / "9.9.9").mkdir(parents=True)
    k = vm.resolve_kernel(str(boot / "vmlinuz-9.9.9"))
    assert k.release == "9.9.9" and not k.is_host
    with pytest.raises(ValueError, match="not a file"):
        vm.resolve_kernel(str(tmp_path / "nothing"))


def test_bad_options_are_refused_before_anything_boots():
    before = _qemu_pids()
    with pytest.raises(ValueError, match="trig_batch_iters=0"):
        vm.run("trig-fentry", kernel="6.12", trig_batch_iters=0)
    with pytest.raises(ValueError, match="unknown benchmark"):
        vm.run("trig-fentri", kernel="6.12")
    with pytest.raises(ValueError, match="accel="):
        vm.run("trig-fentry", kernel="6.12", accel="xen")
    assert _qemu_pids() - before == set()


def test_accel_choice_says_why():
    accel, why = vm.accel_choice()
    assert accel in ("kvm", "tcg") and why
    if os.path.isdir("/sys/module/kvm_pvm"):
        assert accel == "tcg" and "PVM" in why


def test_vng_beside_the_interpreter_is_found_off_path(tmp_path, monkeypatch):
    # scripts/install.sh puts vng in .venv/bin, beside the venv's python3, and the
    # README runs that python3 by path: .venv/bin need not be on PATH.
    bindir = tmp_path / "venv-bin"
    bindir.mkdir()
    monkeypatch.setattr(sys, "executable", str(bindir / "python3"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))

    def missing():
        return vm.tools_missing().split(": ", 1)[1].split(" not found")[0].split(", ")

    assert "vng" in missing()
    (bindir / "vng").write_text("#!/bin/sh\n")
    (bindir / "vng").chmod(0o755)
    assert "vng" not in missing() and "qemu-system-x86_64" in missing()
