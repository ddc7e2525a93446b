"""Benchmarks measured inside a VM booting another kernel.

    >>> import benchbpf.vm
    >>> r = benchbpf.vm.run("trig-fentry", kernel="6.12", warmup=1, duration=2)
    >>> r.metadata["kernel"], r.metadata["vm"]["accel"]
    >>> rs = benchbpf.vm.matrix("trig-kprobe", kernels=["6.1", "6.12", "host"])
    >>> rs.to_dataframe()[["kernel", "median"]]

A kernel is "host" (this machine's, run here without a VM), a path to a
vmlinuz whose modules lie beside it as Debian's package lays them out
(DIR/boot/vmlinuz-R and DIR/lib/modules/R), or a Debian kernel package
version ("6.12", "6.1", "6.1.0-57", "6.12.117+deb12", or the package name):
the package is fetched with `apt-get download` and unpacked with
`dpkg-deb -x` into ~/.cache/benchbpf/kernels, never installed.

The guest is booted by virtme-ng (vng) on QEMU with this machine's root
filesystem read-only; it runs this same benchbpf, with this same
interpreter, and writes its Results into a directory shared read-write
with the host.  Several benchmarks run per boot (run_many()): Python alone
takes seconds to start in an emulated guest.

Where KVM cannot be used (no /dev/kvm, no vmx/svm, or PVM's KVM, which
QEMU cannot drive) the guest is emulated by QEMU's TCG.  Counts are then
real, but timings are those of an emulator: every Result says so
(metadata["vm"]["accel"], repr, summary line, report), and compare()
refuses to set an emulated figure against a real one unless asked.
"""
import dataclasses
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from ..harness import _errors, _precision, _runner
from ..harness._children import reap
from .._core import UnsupportedError
# Kernel packages are _kernels' job; these names are vm's public ones too.
from ._kernels import Kernel, VMError, cache_dir, fetch_package, package_for, resolve_kernel
from ..results.result import Result
from ..results.resultset import ResultSet, Unsupported

__all__ = ["Kernel", "resolve_kernel", "run", "run_many", "matrix", "features",
           "accel_choice", "cache_dir", "VMError"]

#: Guest size: the kernel bench's runs here use 1-2 producers.
GUEST_CPUS = 2
GUEST_MEMORY = "2G"


def _nominal_s(options):
    """How long a run with these options takes on real CPUs, s, at most:
    a precision run measures up to its duration in short runs, each with a
    warm-up of up to 5 s when it is "auto"."""
    precision = options.get("precision")
    warmup = options.get("warmup")
    duration = options.get("duration")
    if duration is None:
        duration = _precision.DURATION_S if precision is not None else 5
    if warmup is None:
        warmup = _precision.AUTO if precision is not None else 1
    warmup = _precision.AUTO_WARMUP_CAP_S if _precision.is_auto(warmup) else float(warmup)
    if precision is None:
        return warmup + float(duration)
    runs = float(duration) / _precision.RUN_S
    return float(duration) + runs * warmup


# ---- how to virtualise ----

def accel_choice():
    """("kvm" or "tcg", why).  KVM needs a usable /dev/kvm backed by vmx or
    svm; PVM's KVM (kvm_pvm) has neither and QEMU aborts on it."""
    if os.path.isdir("/sys/module/kvm_pvm"):
        return "tcg", ("/dev/kvm is PVM (kvm_pvm), which QEMU cannot drive (it aborts "
                       "setting MSR 0x10a): emulated with TCG")
    if not os.path.exists("/dev/kvm"):
        return "tcg", "no /dev/kvm: emulated with TCG"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg", "/dev/kvm is not readable and writable here: emulated with TCG"
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f
                          if line.startswith("flags")), [])
    except OSError:
        flags = []
    if "vmx" not in flags and "svm" not in flags:
        return "tcg", "the CPU shows neither vmx nor svm: emulated with TCG"
    return "kvm", "/dev/kvm with hardware virtualisation"


def _accel(asked):
    """(accel, why) for accel= "auto", "kvm" or "tcg"."""
    if asked not in ("auto", "kvm", "tcg"):
        raise ValueError(f"accel={asked!r}: must be 'auto', 'kvm' or 'tcg'")
    chosen, reason = accel_choice()
    if asked == "auto":
        return chosen, reason
    if asked == "kvm" and chosen != "kvm":
        raise UnsupportedError(f"accel='kvm': {reason.split(': emulated')[0]}")
    return asked, f"asked for {asked.upper()}"


def _vng():
    """virtme-ng's vng: the one installed beside this interpreter first (a virtual
    environment's bin/, as scripts/install.sh makes, need not be on PATH), else PATH's."""
    beside = os.path.join(os.path.dirname(sys.executable), "vng")
    return beside if os.access(beside, os.X_OK) else shutil.which("vng")


def _vng_env():
    """The environment vng runs in: vng starts virtme-run through the shell, by
    name, so the folder vng is in leads PATH (a virtual environment's bin/
    need not be on it)."""
    env = dict(os.environ)
    vng = _vng()
    if vng:
        env["PATH"] = os.pathsep.join(p for p in (os.path.dirname(vng), env.get("PATH")) if p)
    return env


def tools_missing():
    """What is missing to boot a guest, as a sentence, or None."""
    missing = [] if _vng() else ["vng"]
    if not shutil.which("qemu-system-x86_64"):
        missing.append("qemu-system-x86_64")
    if not shutil.which("depmod") and not os.path.exists("/usr/sbin/depmod") \
            and not os.path.exists("/sbin/depmod"):
        missing.append("depmod (kmod)")
    if not shutil.which("busybox"):
        missing.append("busybox (busybox-static)")
    if missing:
        return (f"cannot boot a guest: {', '.join(missing)} not found "
                "(scripts/install.sh installs qemu-system-x86, kmod, busybox-static and virtme-ng)")
    return None


# ---- one boot ----

def _package_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _vng_command(kernel, rundir, accel, cpus, memory, serve=False):
    # --verbose sends the guest kernel's console into vng.log, so that a guest
    # that dies says why; loglevel=4 keeps it to warnings, oopses and panics.
    cmd = [_vng() or "vng", "--run", kernel.vmlinuz, "--force-9p", "--cpus", str(cpus),
           "--memory", memory, "--rwdir", rundir, "--verbose", "--append", "loglevel=4"]
    if accel == "tcg":
        cmd.append("--disable-kvm")
    # The guest's PATH lacks this interpreter and benchbpf: run both by path.
    cmd += ["--", "env", f"PYTHONPATH={_package_root()}", sys.executable, "-m",
            "benchbpf.guests._guest", rundir] + (["--serve"] if serve else [])
    return cmd


def _new_rundir():
    runs = os.path.join(cache_dir(), "runs")
    os.makedirs(runs, exist_ok=True)
    # Not under /tmp: the guest sees /tmp as a throwaway overlay.
    return tempfile.mkdtemp(prefix="vm-", dir=runs)


class _GuestDied(VMError):
    """The guest stopped before it wrote its answer (a panic, QEMU gone):
    what stopped, with what its kernel said, and its console's end (_console)."""

    def __init__(self, head, console):
        super().__init__(head + console)
        self.head, self.console = head, console


class _Guest:
    """One boot of one kernel running a list of jobs; always cleans up."""

    def __init__(self, kernel, jobs, accel, accel_why, progress, timeout, cpus, memory):
        self.kernel, self.jobs = kernel, jobs
        self.accel, self.accel_why = accel, accel_why
        self.progress, self.timeout = progress, timeout
        self.cpus, self.memory = cpus, memory
        self.boot_s = None
        self.boots, self.reboot_reason = 0, None

    def _say(self, text):
        if self.progress:
            self.progress(f"[{self.kernel.spec}] {text}")

    def run(self):
        rundir = _new_rundir()
        self.boot_s = None
        self.boots += 1
        proc = None
        log_path = os.path.join(rundir, "vng.log")
        try:
            with open(os.path.join(rundir, "jobs.json"), "w") as f:
                json.dump(self.jobs, f)
            cmd = _vng_command(self.kernel, rundir, self.accel, self.cpus, self.memory)
            self._say(f"booting {self.kernel.release} ({self.accel.upper()}: {self.accel_why})")
            started = time.monotonic()
            with open(log_path, "w") as log:
                proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        cwd=rundir, env=_vng_env())
            outcome = self._wait(proc, rundir, started)
            if outcome is None:
                said, ending = _console(log_path)
                raise _GuestDied(f"the {self.kernel.release} guest ({self.kernel.source}) "
                                 f"stopped without reporting back (vng exit "
                                 f"{proc.returncode}){said}", ending)
            return outcome
        finally:
            if proc is not None:
                _stop(proc)
            shutil.rmtree(rundir, ignore_errors=True)

    def _wait(self, proc, rundir, started):
        done = os.path.join(rundir, "done.json")
        prog = os.path.join(rundir, "progress")
        seen = 0
        deadline = started + self.timeout
        while True:
            if os.path.exists(prog):
                with open(prog, "rb") as f:
                    f.seek(seen)
                    chunk = f.read()
                cut = chunk.rfind(b"\n") + 1     # whole lines only
                seen += cut
                for line in chunk[:cut].decode(errors="replace").splitlines():
                    if line == "booted" and self.boot_s is None:
                        self.boot_s = time.monotonic() - started
                        self._say(f"booted in {self.boot_s:.0f} s; running")
                    elif line:
                        self._say(line)
            if os.path.exists(done):
                with open(done) as f:
                    return json.load(f)
            if proc.poll() is not None:
                if not os.path.exists(done):   # written just before the guest stopped?
                    return None
                with open(done) as f:
                    return json.load(f)
            if time.monotonic() > deadline:
                raise VMError(f"the {self.kernel.release} guest did not finish within "
                              f"{self.timeout:.0f} s (timeout=); it was stopped")
            time.sleep(0.2)


class _ServingGuest:
    """A guest booted once that runs jobs one at a time (_guest.serve) until
    closed, its QEMU on the host CPUs given; close() always cleans up."""

    def __init__(self, kernel, accel, accel_why, host_cpus, say, timeout):
        self.kernel, self.accel, self.accel_why = kernel, accel, accel_why
        self.host_cpus, self.say, self.timeout = tuple(host_cpus), say, timeout
        self.proc = self.rundir = None
        self.asked, self.seen, self.boot_s, self.started = 0, 0, None, None

    def start(self):
        self.rundir = _new_rundir()
        cmd = _vng_command(self.kernel, self.rundir, self.accel, len(self.host_cpus),
                           GUEST_MEMORY, serve=True)
        self.say(f"[{self.kernel.spec}] booting {self.kernel.release} on host CPU(s) "
                 f"{','.join(map(str, self.host_cpus))} ({self.accel.upper()}: "
                 f"{self.accel_why})")
        self.started = time.monotonic()
        cpus = self.host_cpus
        with open(os.path.join(self.rundir, "vng.log"), "w") as log:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, cwd=self.rundir, env=_vng_env(),
                preexec_fn=lambda: os.sched_setaffinity(0, cpus))

    def _progress(self):
        """Relay the guest's new progress lines; note when it booted."""
        prog = os.path.join(self.rundir, "progress")
        if not os.path.exists(prog):
            return
        with open(prog, "rb") as f:
            f.seek(self.seen)
            chunk = f.read()
        cut = chunk.rfind(b"\n") + 1
        self.seen += cut
        for line in chunk[:cut].decode(errors="replace").splitlines():
            if line == "booted" and self.boot_s is None:
                self.boot_s = time.monotonic() - self.started
                self.say(f"[{self.kernel.spec}] booted in {self.boot_s:.0f} s")

    def _died(self):
        return VMError(f"the {self.kernel.release} guest ({self.kernel.source}) stopped "
                       f"(vng exit {self.proc.returncode})"
                       + "".join(_console(os.path.join(self.rundir, "vng.log"))))

    def wait_booted(self):
        deadline = self.started + self.timeout
        while self.boot_s is None:
            self._progress()
            if self.boot_s is not None:
                break
            if self.proc.poll() is not None:
                raise self._died()
            if time.monotonic() > deadline:
                raise VMError(f"the {self.kernel.release} guest did not boot within "
                              f"{self.timeout:.0f} s; it was stopped")
            time.sleep(0.2)

    def _ask_file(self, job):
        self.asked += 1
        path = os.path.join(self.rundir, f"ask-{self.asked}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(job, f)
        os.rename(path + ".tmp", path)
        return os.path.join(self.rundir, f"answer-{self.asked}.json")

    def ask(self, job, timeout):
        """The guest's answer to one job (a dict, as _guest._run_job's)."""
        answer = self._ask_file(job)
        deadline = time.monotonic() + timeout
        while not os.path.exists(answer):
            if self.proc.poll() is not None:
                raise self._died()
            if time.monotonic() > deadline:
                raise VMError(f"the {self.kernel.release} guest did not answer within "
                              f"{timeout:.0f} s")
            time.sleep(0.02)
        with open(answer) as f:
            return json.load(f)

    def close(self):
        try:
            if self.proc is not None and reap(self.proc, 0) is None:
                self._ask_file({"kind": "quit"})
                reap(self.proc, 10)
        except OSError:
            pass
        finally:
            if self.proc is not None:
                _stop(self.proc)
            if self.rundir is not None:
                shutil.rmtree(self.rundir, ignore_errors=True)


class GuestPair:
    """The two sides of an A/B comparison of kernels (ab(mode="kernels")): a
    guest per side's kernel, both kept booted, each on half of this
    machine's CPUs; round(index) runs each side once in its guest, in a
    random order.  A context manager: leaving it stops both guests."""

    def __init__(self, a, b, warmup, duration, interval, rng, say=None, accel="auto"):
        why = tools_missing()
        if why:
            raise UnsupportedError(why)
        cpus = sorted(os.sched_getaffinity(0))
        half = len(cpus) // 2
        if half < 1:
            raise ValueError("a comparison of kernels boots two guests, each on half of "
                             f"the CPUs: this process may use {len(cpus)}")
        self.halves = (cpus[:half], cpus[half:2 * half])
        self.sides = {"a": a, "b": b}
        self.lengths = {"warmup": warmup, "duration": duration, "interval": interval}
        self.rng, self.say = rng, say or (lambda line: None)
        self.kernels = {k: resolve_kernel(s.kernel, progress=self.say)
                        for k, s in self.sides.items()}
        self.accel, self.accel_why = _accel(accel)
        self.guests, self.marker = {}, None

    def __enter__(self):
        from ..harness._concurrency import RunMarker
        try:
            self.marker = RunMarker("vm-pair").__enter__()
            timeout = 900.0
            for (key, k), cpus in zip(self.kernels.items(), self.halves):
                self.guests[key] = _ServingGuest(k, self.accel, self.accel_why, cpus,
                                                 self.say, timeout)
                self.guests[key].start()
            for g in self.guests.values():
                g.wait_booted()
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, *exc):
        for g in self.guests.values():
            g.close()
        self.guests = {}
        if self.marker is not None:
            self.marker.__exit__(None, None, None)
            self.marker = None
        return False

    def round(self, index):
        """Each side once in its guest, in a random order: (A's Result, B's
        Result, the side that ran first, None, None)."""
        order = ["a", "b"]
        self.rng.shuffle(order)
        got = {}
        for key in order:
            side, guest = self.sides[key], self.guests[key]
            options = {**side.options, **self.lengths}
            job = _job(side.name, options)
            answer = guest.ask(job, timeout=600 + 10 * _nominal_s(options))
            vm_meta = _vm_metadata(guest.kernel, guest.accel, guest.accel_why, guest.boot_s)
            vm_meta["cpus"] = len(guest.host_cpus)
            if "error" in answer:
                _raise_guest_error(guest.kernel, answer["error"])
            got[key] = _finish(guest.kernel, answer, vm_meta)
        return got["a"], got["b"], order[0], None, None


def _tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:]).rstrip()
    except OSError:
        return "(no console log)"


#: How a guest kernel's console says it stopped working; the first such line
#: names the failure (a BUG or an oops comes before the panic it causes).
_KERNEL_FAILURES = ("BUG:", "Oops:", "general protection fault", "Kernel panic")


def _kernel_said(path):
    """': the kernel said "<line>"' for the first failure line of a guest's
    console (before its call trace scrolls out of _tail), else ''."""
    try:
        with open(path, errors="replace") as f:
            for line in f:
                for mark in _KERNEL_FAILURES:
                    at = line.find(mark)
                    if at >= 0:
                        return f': the kernel said "{line[at:].strip()[:200]}"'
    except OSError:
        pass
    return ""


def _console(path):
    """What a dead guest's error says of its console, in two parts: the
    kernel's failure line (or ''), and the console's last lines."""
    return _kernel_said(path), f"; its console ended with:\n{_tail(path)}"


def _stop(proc):
    """Stop vng and its qemu (its process group), and reap them; reaped by
    _children.reap, since this runs after Ctrl-C or SIGTERM."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        if reap(proc, 0) is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        reap(proc, wait)
    # qemu may outlive vng in the group: make sure nothing of it is left.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    reap(proc)


# ---- jobs and results ----

def _job(name, options):
    """A job for the guest: validated here first, with the host's catalogue."""
    _runner.check(name, **options)
    if "callback" in options:
        raise TypeError("callback=: not available for runs in a guest (progress= shows them)")
    plain = {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}
    try:
        json.dumps(plain)
    except TypeError:
        plain = {k: _plain(v) for k, v in plain.items()}
    return {"kind": "run", "name": name, "options": plain}


def _plain(v):
    import numbers
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if hasattr(v, "item"):   # numpy bool
        return v.item()
    return v


def _raise_guest_error(kernel, err):
    raise _errors.from_dict(err, lambda message: f"{message} [in the {kernel.release} guest]")


def _vm_metadata(kernel, accel, why, boot_s, boots=1, reboot_reason=None):
    from ..results.fingerprint import fingerprint
    host = fingerprint()
    return {
        "kernel_spec": kernel.spec, "kernel_source": kernel.source,
        "engine": "virtme-ng on QEMU", "accel": accel, "accel_reason": why,
        "emulated": accel == "tcg", "cpus": GUEST_CPUS, "memory": GUEST_MEMORY,
        "boot_s": None if boot_s is None else round(boot_s, 1),
        "boots": boots, "reboot_reason": reboot_reason,
        "host_kernel": platform.release(), "host_cpu_model": host.get("cpu_model"),
        "host_nr_cpus": os.cpu_count(),
    }


def _finish(kernel, entry, vm_meta):
    """A guest's answer to one job: a Result, or the exception it raised."""
    if "error" in entry:
        return entry["error"]
    r = Result.from_dict(entry["result"])
    return dataclasses.replace(r, metadata={**r.metadata, "vm": vm_meta})


def _run_host(jobs):
    out = []
    for job in jobs:
        try:
            out.append(_runner.run(job["name"], **job["options"]))
        except UnsupportedError as e:
            out.append(_errors.to_dict(e))
    return out


def run_many(jobs, kernel, *, accel="auto", progress=None, timeout=None,
             cpus=GUEST_CPUS, memory=GUEST_MEMORY, errors="raise", probe=False):
    """Run several benchmarks in one boot of `kernel`.

    jobs: (name, options dict) pairs.  Returns a list, in job order, of
    Results, or for a benchmark the guest kernel cannot run, a dict
    {"type": "UnsupportedError", "message": reason}.  Any other error in the
    guest is raised here as the guest raised it (BenchmarkError, ...).
    Every job is validated on the host before anything boots.
    accel: "auto" (KVM where usable, else TCG), "kvm" or "tcg".
    progress: callable taking a line (boot and run progress), or None.
    errors="return": a job's failure is returned as a dict too
    {"type": "BenchmarkError", "message": ...}, so that one failure does not
    hide the other jobs' outcomes.
    probe=True: the guest also probes features() first, in the same boot,
    and the answer is ((Features, {benchmark: missing}), outcomes)."""
    if errors not in ("raise", "return"):
        raise ValueError(f"errors={errors!r}: must be 'raise' or 'return'")
    if accel not in ("auto", "kvm", "tcg"):
        raise ValueError(f"accel={accel!r}: must be 'auto', 'kvm' or 'tcg'")
    if not isinstance(cpus, int) or isinstance(cpus, bool) or not 1 <= cpus <= 64:
        raise ValueError(f"cpus={cpus!r}: must be an int in 1..64")
    specs = [_job(name, dict(options)) for name, options in jobs]
    k = kernel if isinstance(kernel, Kernel) else resolve_kernel(kernel, fetch=False)
    if k.is_host:
        if probe:
            return features("host"), _run_host(specs)
        return _run_host(specs)
    why = tools_missing()
    if why:
        raise UnsupportedError(why)
    if not k.vmlinuz:
        k = resolve_kernel(kernel, progress=progress)
    chosen, reason = _accel(accel)
    if timeout is None:
        # TCG runs several times slower than the nominal durations; be generous.
        nominal = sum(_nominal_s(s["options"]) for s in specs)
        timeout = 600 + 60 * len(specs) + 4 * nominal
    guest = _Guest(k, ([{"kind": "features"}] if probe else []) + specs, chosen, reason,
                   progress, timeout, cpus, memory)
    answer = _boot(guest, accel)
    chosen, reason = guest.accel, guest.accel_why
    if answer.get("fatal"):
        _raise_guest_error(k, answer["fatal"])
    vm_meta = _vm_metadata(k, chosen, reason, guest.boot_s, guest.boots, guest.reboot_reason)
    vm_meta["cpus"], vm_meta["memory"] = cpus, memory
    entries = answer["jobs"]
    probed = _features_answer(k, entries.pop(0)) if probe else None
    out = []
    for entry in entries:
        got = _finish(k, entry, vm_meta)
        if isinstance(got, dict) and got["type"] != "UnsupportedError":
            if errors == "raise":
                _raise_guest_error(k, got)
            got = {**got, "message": f"{got['message']} [in the {k.release} guest]"}
        out.append(got)
    return (probed, out) if probe else out


def _features_answer(k, entry):
    from ..harness.features import Feature, Features
    if "error" in entry:
        _raise_guest_error(k, entry["error"])
    f = Features(Feature(*t) for t in entry["features"])
    return f, {n: tuple(m) for n, m in entry["missing"].items()}


def _boot(guest, asked):
    """guest.run(), holding a run marker (a guest competes with benchbpf runs
    on the host for CPUs), once more where the first boot failed:
    - where KVM was chosen automatically and QEMU fails with it, under TCG;
    - where the guest died without reporting back (seen now and then in
      emulated 6.12 guests, cause not yet known), as it was: the jobs have no
      effect outside the guest, and the run's directory is a new one.
    Either says why (progress; guest.accel_why or guest.reboot_reason).  A
    second failure is raised; a second death says it was both boots."""
    from ..harness._concurrency import RunMarker
    with RunMarker(f"vm-{guest.kernel.release}"):
        try:
            return guest.run()
        except VMError as e:
            first = str(e)
            if guest.accel == "kvm" and asked == "auto" and guest.boot_s is None:
                guest.accel = "tcg"
                guest.accel_why = (f"QEMU failed with KVM ({first.splitlines()[-1][:200]}): "
                                   "emulated with TCG")
            elif isinstance(e, _GuestDied):
                guest.reboot_reason = first
                guest._say(f"{first.splitlines()[0]}; booting it once more")
            else:
                raise
        try:
            return guest.run()
        except _GuestDied as e:
            if guest.reboot_reason is None:
                raise
            raise VMError(f"{e.head}, on both boots{e.console}") from None


def run(name, *, kernel, accel="auto", progress=None, timeout=None, **options):
    """Run benchmark `name` in a guest booting `kernel` and return its Result
    (metadata["kernel"] the guest's release, metadata["vm"] how it ran).
    Raises UnsupportedError with the guest kernel's reason where it cannot run."""
    got = run_many([(name, options)], kernel, accel=accel, progress=progress, timeout=timeout)[0]
    if isinstance(got, dict):
        raise UnsupportedError(f"{got['message']} [in the {_release(got, kernel)} guest]")
    return got


def _release(err, kernel):
    return kernel if isinstance(kernel, str) else kernel.release


def matrix(name, kernels, *, accel="auto", progress=None, timeout=None, **axes):
    """Benchmark `name` on each kernel of `kernels` ("host" runs here), over
    the grid of `axes` (each a value or a list of values, as sweep's keyword
    form): a ResultSet whose to_dataframe() has a `kernel` column (the
    release that ran) and a `kernel_spec` axis.  What a kernel cannot run is
    in ResultSet.unsupported with the guest kernel's reason."""
    import itertools
    if isinstance(kernels, str) or not kernels:
        raise TypeError(f"kernels={kernels!r}: must be a non-empty list of kernels")
    grid_keys = [k for k, v in axes.items() if isinstance(v, (list, tuple)) and
                 k not in ("prod_affinity", "cons_affinity")]
    fixed = {k: v for k, v in axes.items() if k not in grid_keys}
    combos = [dict(zip(grid_keys, vals), **fixed)
              for vals in itertools.product(*(axes[k] for k in grid_keys))]
    for c in combos:
        _runner.check(name, **c)
    resolved = [resolve_kernel(k, fetch=False) for k in kernels]   # all specs checked first
    results, unsupported = [], []
    for spec, _ in zip(kernels, resolved):
        got = run_many([(name, c) for c in combos], spec, accel=accel, progress=progress,
                       timeout=timeout)
        for c, g in zip(combos, got):
            if isinstance(g, dict):
                unsupported.append(Unsupported(name, f"{spec}: {g['message']}",
                                               {**c, "kernel_spec": spec}))
            else:
                results.append(dataclasses.replace(
                    g, params={**g.params, "kernel_spec": spec}))
    return ResultSet(results, axes=("kernel_spec", *grid_keys), unsupported=unsupported,
                     metadata={"matrix": {"name": name, "kernels": list(kernels)}})


def features(kernel, *, accel="auto", progress=None, timeout=600):
    """What `kernel` lets BPF do, probed in a guest: (Features, {benchmark:
    missing features}), the guest's `benchbpf -l` in data."""
    k = resolve_kernel(kernel, progress=progress)
    if k.is_host:
        from ..harness.features import features as probe, missing_features
        f = probe()
        return f, {n: missing_features(n, f) for n in _runner.list_benchmarks()}
    why = tools_missing()
    if why:
        raise UnsupportedError(why)
    chosen, reason = _accel(accel)
    guest = _Guest(k, [{"kind": "features"}], chosen, reason, progress, timeout,
                   GUEST_CPUS, GUEST_MEMORY)
    answer = _boot(guest, accel)
    if answer.get("fatal"):
        _raise_guest_error(k, answer["fatal"])
    return _features_answer(k, answer["jobs"][0])
