"""Build benchbpf: BPF objects -> skeletons -> the benchbpf._core extension."""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "build", "gen")
BTF = "/sys/kernel/btf/vmlinux"
SBIN = ["/usr/sbin", "/usr/local/sbin", "/sbin"]


class BuildError(Exception):
    pass


def _tool(name, env_var):
    path = os.environ.get(env_var) or shutil.which(name) or shutil.which(
        name, path=os.pathsep.join(SBIN))
    if not path:
        raise BuildError(
            f"{name} not found: install it (apt-get install clang llvm bpftool) "
            f"or set {env_var}")
    return path


def _pkg_config(*args):
    try:
        out = subprocess.run(["pkg-config", *args, "libbpf"], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.split()


def _stale(target, sources):
    if not os.path.exists(target):
        return True
    t = os.path.getmtime(target)
    return any(os.path.getmtime(s) > t for s in sources)


def _run(cmd, stdout=None):
    print(" ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=stdout)


def build_bpf():
    """Compile every bpf/*.bpf.c and generate its skeleton in build/gen."""
    os.makedirs(GEN, exist_ok=True)
    vmlinux_h = os.path.join(GEN, "vmlinux.h")
    bpftool = _tool("bpftool", "BPFTOOL")
    clang = _tool("clang", "CLANG")
    if not os.path.exists(vmlinux_h):
        if not os.path.exists(BTF):
            raise BuildError(
                f"{BTF} is missing: benchbpf needs a kernel built with "
                "CONFIG_DEBUG_INFO_BTF=y to generate vmlinux.h")
        tmp = vmlinux_h + ".tmp"
        with open(tmp, "w") as f:
            _run([bpftool, "btf", "dump", "file", BTF, "format", "c"], stdout=f)
        os.replace(tmp, vmlinux_h)
    headers = glob.glob(os.path.join(HERE, "bpf", "*.h")) + [vmlinux_h]
    skeletons = []
    for src in sorted(glob.glob(os.path.join(HERE, "bpf", "*.bpf.c"))):
        family = os.path.basename(src)[: -len(".bpf.c")]
        obj = os.path.join(GEN, family + ".bpf.o")
        skel = os.path.join(GEN, family + ".skel.h")
        if _stale(obj, [src] + headers):
            _run([clang, "-g", "-O2", "-Wall", "-target", "bpf",
                  "-D__TARGET_ARCH_x86", "-I", os.path.join(HERE, "bpf"),
                  "-I", GEN, "-c", src, "-o", obj])
        if _stale(skel, [obj]):
            tmp = skel + ".tmp"
            with open(tmp, "w") as f:
                _run([bpftool, "gen", "skeleton", obj, "name", family + "_bpf"],
                     stdout=f)
            os.replace(tmp, skel)
        skeletons.append(skel)
    return skeletons


class BuildExt(build_ext):
    def run(self):
        try:
            skeletons = build_bpf()
        except BuildError as e:
            raise SystemExit(f"benchbpf build error: {e}") from None
        for ext in self.extensions:
            ext.depends = list(ext.depends) + skeletons
        super().run()


def _extension():
    cflags = _pkg_config("--cflags") or []
    libs = _pkg_config("--libs") or ["-lbpf"]
    extra_compile = ["-std=gnu11", "-O2", "-Wall", "-Wno-missing-field-initializers",
                     "-fno-strict-aliasing"] + cflags
    extra_link = list(libs) + ["-lelf", "-lz", "-lpthread"]
    if os.environ.get("BENCHBPF_SANITIZE"):
        san = "-fsanitize=" + os.environ["BENCHBPF_SANITIZE"]
        extra_compile += [san, "-fno-omit-frame-pointer", "-g", "-O1"]
        extra_link += [san]
    return Extension(
        "benchbpf._core",
        sources=sorted(glob.glob("csrc/*.c")),
        include_dirs=["csrc", "bpf", GEN],
        depends=sorted(glob.glob("csrc/*.h") + glob.glob("bpf/*.h")),
        extra_compile_args=extra_compile,
        extra_link_args=extra_link,
    )


setup(ext_modules=[_extension()], cmdclass={"build_ext": BuildExt})
