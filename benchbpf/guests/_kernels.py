"""Kernels for guests to boot: this machine's ("host"), a vmlinuz with its
modules beside it, or a Debian kernel package fetched into a per-user cache
(`apt-get download`, unpacked with `dpkg-deb -x`, never installed).
benchbpf.vm boots them, and offers these names (benchbpf.vm.resolve_kernel,
Kernel, VMError, cache_dir, ...) as its own."""
import dataclasses
import fcntl
import os
import platform
import re
import shutil
import subprocess
import tempfile

from .._core import BenchmarkError

class VMError(BenchmarkError):
    """The guest could not be booted or did not report back, or its kernel
    package could not be fetched."""


def cache_dir():
    """Per-user cache: $BENCHBPF_CACHE, else $XDG_CACHE_HOME/benchbpf, else ~/.cache/benchbpf."""
    d = os.environ.get("BENCHBPF_CACHE")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "benchbpf")


@dataclasses.dataclass(frozen=True)
class Kernel:
    """A kernel to boot: spec as given, vmlinuz path, release, where it came from.
    spec "host" is this machine's kernel (vmlinuz None: no VM)."""
    spec: str
    vmlinuz: "str | None"
    release: str
    source: str

    @property
    def is_host(self):
        """True for this machine's own kernel (runs here, in no VM)."""
        return self.source == "host"


_PKG_RE = re.compile(r"^linux-image-(\d+\.\d+\.\d+(?:-\d+)?(?:\+deb\d+)?)-amd64$")


def _version_key(version):
    """Natural order of "6.1.0-57" or "6.12.117+deb12": numbers compared as numbers."""
    return tuple((0, int(t)) if t.isdigit() else (1, t) for t in re.split(r"[.\-+~]", version))


def _debian_arch():
    try:
        return subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def package_for(spec, names=None):
    """The Debian package name of kernel version `spec` ("6.12" -> the newest
    linux-image-6.12.*-amd64 apt knows).  names: package names to choose
    from (default: apt-cache's).  ValueError naming what exists if none fits."""
    if names is None:
        if _debian_arch() != "amd64":
            raise ValueError(f"kernel={spec!r}: fetching Debian kernels needs an amd64 "
                             "Debian system (dpkg --print-architecture); pass a vmlinuz path")
        try:
            out = subprocess.run(["apt-cache", "pkgnames", "linux-image-"], capture_output=True,
                                 text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            raise ValueError(f"kernel={spec!r}: cannot ask apt-cache for kernel packages "
                             f"({e}); pass a vmlinuz path") from None
        names = out.split()
    if spec.startswith("linux-image-"):
        if spec in names:
            return spec
        spec = spec[len("linux-image-"):]
        if spec.endswith("-amd64"):
            spec = spec[:-len("-amd64")]
    versions = {}
    for n in names:
        m = _PKG_RE.match(n)
        if m:
            versions[m.group(1)] = n
    fits = [v for v in versions
            if v == spec or any(v.startswith(spec + sep) for sep in ".-+")]
    if not fits:
        known = sorted({".".join(v.split(".")[:2]) for v in versions}, key=_version_key)
        raise ValueError(f"kernel={spec!r}: no Debian package linux-image-{spec}*-amd64 "
                         f"(apt knows versions {', '.join(known) or 'none: run apt-get update'}); "
                         "pass a version like 6.12 or 6.1.0-57, or a vmlinuz path")
    return versions[max(fits, key=_version_key)]


def _release_of(vmlinuz):
    base = os.path.basename(vmlinuz)
    return base[len("vmlinuz-"):] if base.startswith("vmlinuz-") else None


def _modules_dir(vmlinuz, release):
    root = os.path.dirname(os.path.dirname(os.path.abspath(vmlinuz)))
    return os.path.join(root, "lib", "modules", release)


def _check_vmlinuz(spec, vmlinuz):
    if not os.path.isfile(vmlinuz):
        raise ValueError(f"kernel={spec!r}: {vmlinuz} is not a file")
    release = _release_of(vmlinuz)
    if release is None:
        raise ValueError(f"kernel={spec!r}: {vmlinuz} is not named vmlinuz-RELEASE "
                         "(as DIR/boot/vmlinuz-RELEASE beside DIR/lib/modules/RELEASE)")
    mods = _modules_dir(vmlinuz, release)
    if not os.path.isdir(mods):
        raise ValueError(f"kernel={spec!r}: no modules beside it: {mods} does not exist "
                         "(lay it out as DIR/boot/vmlinuz-RELEASE, DIR/lib/modules/RELEASE)")
    return release


class _DirLock:
    """flock on a directory: nothing is created, nothing stays behind."""

    def __init__(self, path):
        self.path = path
        self.fd = -1

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)   # releases the lock
        self.fd = -1


def _unpacked(pkg_dir):
    boot = os.path.join(pkg_dir, "boot")
    if not os.path.isdir(boot):
        return None
    images = sorted(f for f in os.listdir(boot) if f.startswith("vmlinuz-"))
    return os.path.join(boot, images[0]) if images else None


def fetch_package(pkg, progress=None):
    """Unpack Debian package `pkg` into the cache (once); its vmlinuz path."""
    kernels = os.path.join(cache_dir(), "kernels")
    os.makedirs(kernels, exist_ok=True)
    target = os.path.join(kernels, pkg)
    found = _unpacked(target)
    if found:
        return found
    with _DirLock(kernels):
        found = _unpacked(target)   # another process may have fetched it meanwhile
        if found:
            return found
        if progress:
            progress(f"fetching {pkg} (apt-get download, dpkg-deb -x into {kernels})")
        work = tempfile.mkdtemp(prefix=".fetch-", dir=kernels)
        try:
            got = subprocess.run(["apt-get", "download", "-q", pkg], cwd=work,
                                 capture_output=True, text=True)
            debs = [f for f in os.listdir(work) if f.endswith(".deb")]
            if got.returncode != 0 or not debs:
                raise VMError(f"apt-get download {pkg} failed: "
                              f"{(got.stderr or got.stdout).strip()[-400:]}")
            root = os.path.join(work, "root")
            got = subprocess.run(["dpkg-deb", "-x", os.path.join(work, debs[0]), root],
                                 capture_output=True, text=True)
            if got.returncode != 0:
                raise VMError(f"dpkg-deb -x {debs[0]} failed: {got.stderr.strip()[-400:]}")
            if not _unpacked(root):
                raise VMError(f"{pkg} holds no boot/vmlinuz-*")
            os.rename(root, target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return _unpacked(target)


def resolve_kernel(spec, fetch=True, progress=None):
    """The Kernel that `spec` names: "host", a vmlinuz path, or a Debian
    kernel version (fetched into the cache unless fetch=False, which only
    checks that a package fits).  ValueError naming the spec if not."""
    if not isinstance(spec, str) or not spec:
        raise TypeError(f"kernel={spec!r}: must be 'host', a vmlinuz path or a Debian "
                        "kernel version such as '6.12'")
    if spec == "host":
        return Kernel("host", None, platform.release(), "host")
    if os.sep in spec or spec.startswith("vmlinuz") or os.path.exists(spec):
        path = os.path.abspath(spec)
        return Kernel(spec, path, _check_vmlinuz(spec, path), path)
    pkg = package_for(spec)
    if not fetch:
        return Kernel(spec, None, "", pkg)
    vmlinuz = fetch_package(pkg, progress)
    return Kernel(spec, vmlinuz, _check_vmlinuz(spec, vmlinuz), f"Debian package {pkg}")
