"""What a BPF figure depends on besides the benchmark: the machine's fingerprint.

Read when a run starts and stored in ``Result.metadata["fingerprint"]``:
kernel release, version and command line (``mitigations=`` and friends),
CPU vulnerability mitigations, the BPF JIT settings, ``bpf_stats_enabled``,
whether kernel BTF is there, CPU model, count, SMT and frequency governors,
libbpf, benchbpf and Python versions, and the git commit of the benchbpf
source tree when it is one.  A value that cannot be read is None.

``differences(a, b)`` lists what differs between two fingerprints, as
``compare()`` and the pytest gate report it.
"""
import functools
import os
import platform
import subprocess

from .._version import __version__

__all__ = ["fingerprint", "differences", "FINGERPRINT_KEYS"]

_VULNERABILITIES = "/sys/devices/system/cpu/vulnerabilities"
_CPU_SYSFS = "/sys/devices/system/cpu"

#: Every key of a fingerprint, in the order differences() reports them.
FINGERPRINT_KEYS = (
    "kernel_release", "kernel_version", "kernel_cmdline", "cpu_vulnerabilities",
    "bpf_jit_enable", "bpf_jit_harden", "bpf_jit_kallsyms", "bpf_stats_enabled",
    "btf", "machine", "cpu_model", "nr_cpus", "smt_active", "cpu_governors",
    "libbpf_version", "benchbpf_version", "python_version", "git_commit",
)

# Fields that describe the build, not the machine: listed as differences
# too, but they cannot explain a kernel's figure by themselves.
_BUILD_KEYS = ("benchbpf_version", "python_version", "git_commit")


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _read_int(path):
    text = _read(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _vulnerabilities():
    try:
        names = sorted(os.listdir(_VULNERABILITIES))
    except OSError:
        return None
    return {n: _read(os.path.join(_VULNERABILITIES, n)) for n in names}


def _governors():
    """Frequency governors in use, as a sorted list (None without cpufreq)."""
    found = set()
    try:
        cpus = [d for d in os.listdir(_CPU_SYSFS) if d[3:].isdigit() and d.startswith("cpu")]
    except OSError:
        return None
    for cpu in cpus:
        gov = _read(os.path.join(_CPU_SYSFS, cpu, "cpufreq", "scaling_governor"))
        if gov:
            found.add(gov)
    return sorted(found) or None


def _smt_active():
    value = _read_int(os.path.join(_CPU_SYSFS, "smt", "active"))
    return None if value is None else bool(value)


@functools.lru_cache(maxsize=1)
def _git_commit():
    """HEAD of the git tree benchbpf is loaded from, with "-dirty" when it has
    uncommitted changes; None outside a git tree.  Read once per process."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
        "kernel_cmdline": _read("/proc/cmdline"),
        "cpu_vulnerabilities": _vulnerabilities(),
        "bpf_jit_enable": _read_int("/proc/sys/net/core/bpf_jit_enable"),
        "bpf_jit_harden": _read_int("/proc/sys/net/core/bpf_jit_harden"),
        "bpf_jit_kallsyms": _read_int("/proc/sys/net/core/bpf_jit_kallsyms"),
        "bpf_stats_enabled": _read_int("/proc/sys/kernel/bpf_stats_enabled"),
        "btf": os.path.exists("/sys/kernel/btf/vmlinux"),
        "machine": platform.machine(),
        "cpu_model": _cpu_model(),
        "nr_cpus": os.cpu_count(),
        "smt_active": _smt_active(),
        "cpu_governors": _governors(),
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
