"""Build benchbpf: BPF objects -> skeletons -> the benchbpf._core extension."""
import glob
import os
import platform
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


def _bpf_arch():
    """The arch name libbpf's bpf_tracing.h wants for PT_REGS access."""
    machine = platform.machine()
    return {"x86_64": "x86", "aarch64": "arm64", "s390x": "s390", "ppc64le": "powerpc",
            "riscv64": "riscv", "loongarch64": "loongarch"}.get(machine, machine)


def _system_includes():
    """Multiarch headers (asm/errno.h...) that clang -target bpf does not search."""
    try:
        triple = subprocess.run(["gcc", "-print-multiarch"], capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        triple = ""
    path = os.path.join("/usr/include", triple) if triple else ""
    return ["-idirafter", path] if path and os.path.isdir(path) else []


#: A BPF source holding this line needs clang 15 or newer: clang 14 leaves
#: a pointer's btf_type_tag (__kptr) out of the BTF when its struct is complete.
KPTR_MARKER = "benchbpf-build: kptr"


def _kptr_clang(default):
    """The newest clang >= 15 installed (CLANG_KPTR overrides), else the
    default: its objects then lack kptr BTF, which the benchmark finds and
    reports before loading."""
    path = os.environ.get("CLANG_KPTR")
    if path:
        return path
    for version in range(25, 14, -1):
        found = shutil.which(f"clang-{version}")
        if found:
            return found
    print(f"benchbpf: no clang >= 15 found: objects with kptrs built with {default} "
          "will lack their kptr BTF (apt-get install clang-16)", file=sys.stderr)
    return default


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
        if _stale(obj, [src, os.path.abspath(__file__)] + headers):
            # -mcpu=v3 (32-bit ALU and jumps), as the kernel's selftests
            # build their BPF programs: with the default v1 every 32-bit
            # loop counter costs extra shifts, and the programs measure
            # something slower than the kernel bench's.
            with open(src) as f:
                compiler = _kptr_clang(clang) if KPTR_MARKER in f.read() else clang
            _run([compiler, "-g", "-O2", "-Wall", "-target", "bpf", "-mcpu=v3",
                  f"-D__TARGET_ARCH_{_bpf_arch()}", "-I", os.path.join(HERE, "bpf"),
                  "-I", GEN, *_system_includes(), "-c", src, "-o", obj])
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
        kinds = os.environ["BENCHBPF_SANITIZE"]
        san = "-fsanitize=" + kinds
        extra_compile += [san, "-fno-omit-frame-pointer", "-g", "-O1"]
        if "undefined" in kinds.split(","):
            # Undefined behaviour must fail the run, not scroll past.
            extra_compile.append("-fno-sanitize-recover=all")
        extra_link += [san]
    return Extension(
        "benchbpf._core",
        # The harness in csrc/, the families in csrc/benchs/ (found, not listed:
        # each registers its ops tables itself, see bench.h).
        sources=sorted(glob.glob("csrc/*.c") + glob.glob("csrc/benchs/*.c")),
        include_dirs=["csrc", "bpf", GEN],
        depends=sorted(glob.glob("csrc/*.h") + glob.glob("csrc/benchs/*.h")
                       + glob.glob("bpf/*.h")),
        extra_compile_args=extra_compile,
        extra_link_args=extra_link,
    )


setup(ext_modules=[_extension()], cmdclass={"build_ext": BuildExt})
