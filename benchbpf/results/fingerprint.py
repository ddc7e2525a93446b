"""What a BPF figure depends on besides the benchmark: the machine's fingerprint.

Read when a run starts and stored in ``Result.metadata["fingerprint"]``:
kernel release, version and command line (``mitigations=`` and friends),
CPU vulnerability mitigations, the BPF JIT settings, ``bpf_stats_enabled``,
whether kernel BTF is there, the machine's identity (``machine_id``: its
/etc/machine-id, hashed, else its hostname, hashed), CPU model, count, SMT, frequency governors and
boost, isolated and nohz_full CPUs, the default IRQ affinity, libbpf, benchbpf and Python versions, and the git commit of the benchbpf
source tree when it is one.  A value that cannot be read is None.

``differences(a, b)`` lists what differs between two fingerprints, as
``compare()`` and the pytest gate report it.
"""
import functools
import hashlib
import hmac
import os
import platform
import socket
import subprocess

from .._version import __version__

__all__ = ["fingerprint", "differences", "FINGERPRINT_KEYS", "read", "CPU_SYSFS",
           "machine_id", "MACHINE_ID_PATH"]

_VULNERABILITIES = "/sys/devices/system/cpu/vulnerabilities"
#: Where the kernel describes the CPUs (cpuN/, smt/, isolated, cpufreq/...).
CPU_SYSFS = "/sys/devices/system/cpu"
#: The machine's identity as systemd keeps it (machine-id(5)).
MACHINE_ID_PATH = "/etc/machine-id"

#: Every key of a fingerprint, in the order differences() reports them.
FINGERPRINT_KEYS = (
    "kernel_release", "kernel_version", "kernel_cmdline", "cpu_vulnerabilities",
    "bpf_jit_enable", "bpf_jit_harden", "bpf_jit_kallsyms", "bpf_stats_enabled",
    "btf", "machine", "machine_id", "cpu_model", "nr_cpus", "smt_active", "cpu_governors",
    "cpu_boost", "isolated_cpus", "nohz_full", "irq_default_affinity",
    "libbpf_version", "benchbpf_version", "python_version", "git_commit",
)

# Keys added in 0.2: a fingerprint from before lacks them, which is no difference.
_ADDED_KEYS = ("cpu_boost", "isolated_cpus", "nohz_full", "irq_default_affinity",
               "machine_id")

# Fields that describe the build, not the machine: listed as differences
# too, but they cannot explain a kernel's figure by themselves.
_BUILD_KEYS = ("benchbpf_version", "python_version", "git_commit")


def read(path):
    """The stripped text of the sysfs or procfs file at path, or None where it cannot
    be read (absent on this kernel or machine, or not permitted)."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _read_int(path):
    text = read(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _vulnerabilities():
    try:
        names = sorted(os.listdir(_VULNERABILITIES))
    except OSError:
        return None
    return {n: read(os.path.join(_VULNERABILITIES, n)) for n in names}


def _governors():
    """Frequency governors in use, as a sorted list (None without cpufreq)."""
    found = set()
    try:
        cpus = [d for d in os.listdir(CPU_SYSFS) if d[3:].isdigit() and d.startswith("cpu")]
    except OSError:
        return None
    for cpu in cpus:
        gov = read(os.path.join(CPU_SYSFS, cpu, "cpufreq", "scaling_governor"))
        if gov:
            found.add(gov)
    return sorted(found) or None


def _cpu_boost():
    """Whether the CPU may boost above its base frequency: cpufreq's boost
    switch, else intel_pstate's no_turbo inverted; None without either."""
    boost = _read_int(os.path.join(CPU_SYSFS, "cpufreq", "boost"))
    if boost is not None:
        return bool(boost)
    no_turbo = _read_int(os.path.join(CPU_SYSFS, "intel_pstate", "no_turbo"))
    return None if no_turbo is None else not no_turbo


def _smt_active():
    value = _read_int(os.path.join(CPU_SYSFS, "smt", "active"))
    return None if value is None else bool(value)


@functools.lru_cache(maxsize=1)
def _git_commit():
    """HEAD of the git tree benchbpf is loaded from, with "-dirty" when it has
    uncommitted changes; None outside a git tree.  Read once per process."""
    # benchbpf/results/fingerprint.py: the tree is three levels up.
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not os.path.exists(os.path.join(here, ".git")):
        return None
    try:
        head = subprocess.run(["git", "-C", here, "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = head.stdout.strip()
    return commit + "-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else commit


def machine_id(path=MACHINE_ID_PATH):
    """This machine's identity: "machine-id:" and 16 hex digits of an
    HMAC-SHA256 keyed by the machine id at `path`, else "hostname:" and
    16 of the hostname's SHA-256; None when neither can be read.  Two
    guests of one image with the same hostname and CPU still differ by it.
    The machine id itself is never returned: machine-id(5) asks that it stay
    on the machine, so it is hashed with benchbpf's own key, as systemd's
    app-specific ids are, and cannot be matched with other programs' ids."""
    raw = read(path)
    if raw:
        digest = hmac.new(raw.encode(), b"benchbpf machine identity", hashlib.sha256)
        return "machine-id:" + digest.hexdigest()[:16]
    host = socket.gethostname()
    if not host:
        return None
    return "hostname:" + hashlib.sha256(host.encode()).hexdigest()[:16]


_CPU_MODEL = None


def _cpu_model():
    global _CPU_MODEL
    if _CPU_MODEL is None:
        _CPU_MODEL = platform.processor() or "unknown"
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name"):
                        _CPU_MODEL = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
    return _CPU_MODEL


def fingerprint():
    """The machine's fingerprint now, as a dict of FINGERPRINT_KEYS."""
    from .. import _core
    return {
        "kernel_release": platform.release(),
        "kernel_version": platform.version(),
        "kernel_cmdline": read("/proc/cmdline"),
        "cpu_vulnerabilities": _vulnerabilities(),
        "bpf_jit_enable": _read_int("/proc/sys/net/core/bpf_jit_enable"),
        "bpf_jit_harden": _read_int("/proc/sys/net/core/bpf_jit_harden"),
        "bpf_jit_kallsyms": _read_int("/proc/sys/net/core/bpf_jit_kallsyms"),
        "bpf_stats_enabled": _read_int("/proc/sys/kernel/bpf_stats_enabled"),
        "btf": os.path.exists("/sys/kernel/btf/vmlinux"),
        "machine": platform.machine(),
        "machine_id": machine_id(),
        "cpu_model": _cpu_model(),
        "nr_cpus": os.cpu_count(),
        "smt_active": _smt_active(),
        "cpu_governors": _governors(),
        "cpu_boost": _cpu_boost(),
        "isolated_cpus": read(os.path.join(CPU_SYSFS, "isolated")),
        "nohz_full": read(os.path.join(CPU_SYSFS, "nohz_full")),
        "irq_default_affinity": read("/proc/irq/default_smp_affinity"),
        "libbpf_version": _core.libbpf_version(),
        "benchbpf_version": __version__,
        "python_version": platform.python_version(),
        "git_commit": _git_commit(),
    }


def _plain(value):
    if hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def differences(a, b):
    """What differs between fingerprints a and b: a list of lines
    "key: <a> -> <b>", the CPU vulnerabilities one line per entry.
    A Result whose metadata has no fingerprint (older JSON) gives the line
    "fingerprint: missing in ..." instead."""
    if not a or not b:
        if not a and not b:
            return []
        return ["fingerprint: missing in the " + ("first" if not a else "second") + " result"]
    lines = []
    for key in FINGERPRINT_KEYS:
        if key in _ADDED_KEYS and (key not in a or key not in b):
            continue
        va, vb = _plain(a.get(key)), _plain(b.get(key))
        if va == vb:
            continue
        if key == "cpu_vulnerabilities" and isinstance(va, dict) and isinstance(vb, dict):
            for name in sorted(set(va) | set(vb)):
                if va.get(name) != vb.get(name):
                    lines.append(f"cpu_vulnerabilities/{name}: {va.get(name)!r} -> "
                                 f"{vb.get(name)!r}")
            continue
        lines.append(f"{key}: {va!r} -> {vb!r}")
    return lines


def machine_differences(a, b):
    """differences() without the build-only keys (versions of benchbpf and
    Python, git commit): what could change a kernel's figure."""
    return [d for d in differences(a, b) if d.split(":", 1)[0] not in _BUILD_KEYS]
