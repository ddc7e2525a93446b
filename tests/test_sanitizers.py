"""The C core under AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer.

A sanitized copy of the extension is built into a temporary directory
(BENCHBPF_SANITIZE=address,undefined: see setup.py), the Python files are
copied next to it, and the C-touching tests run in a subprocess that imports
that copy, with the sanitizer runtime preloaded into the interpreter.  They
must pass, with no sanitizer report: any memory error or undefined behaviour
aborts the process, and a block that the core or libbpf allocated and never
freed (LeakSanitizer, at exit) fails the test.  CPython's own blocks still
allocated at exit are not ours and are ignored.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _runtime():
    cc = os.environ.get("CC", "gcc")
    try:
        path = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return path if os.path.isabs(path) and os.path.exists(path) else None


@pytest.fixture(scope="module")
def sanitized(tmp_path_factory):
    """(PYTHONPATH, environment) of a sanitized build of benchbpf."""
    libasan = _runtime()
    if libasan is None:
        pytest.skip("no AddressSanitizer runtime (libasan) for this compiler")
    base = tmp_path_factory.mktemp("sanitized")
    lib, tmp = base / "lib", base / "tmp"
    env = dict(os.environ, BENCHBPF_SANITIZE="address,undefined")
    out = subprocess.run([sys.executable, "setup.py", "-q", "build_ext",
                          "--build-lib", str(lib), "--build-temp", str(tmp)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    for py in (ROOT / "benchbpf").glob("*.py"):
        shutil.copy(py, lib / "benchbpf" / py.name)
    run_env = dict(os.environ)
    run_env.pop("BENCHBPF_SANITIZE", None)
    run_env.update(
        PYTHONPATH=str(lib),
        LD_PRELOAD=libasan,
        # exitcode=0 for leaks: they are judged below, where CPython's own
        # (it frees little at exit) can be told from ours.
        ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1",
        LSAN_OPTIONS="exitcode=0",
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1",
        PYTHONDONTWRITEBYTECODE="1",
        BENCHBPF_LOCK_DIR=str(base / "locks"),
    )
    return lib, run_env


def _run(sanitized, args, timeout=300):
    lib, env = sanitized
    out = subprocess.run([sys.executable, *args], cwd=lib.parent, env=env,
                         capture_output=True, text=True, timeout=timeout)
    return out


#: A leak report block whose first frame past the allocator is in our code
#: or in libbpf is ours.
_BLOCK = re.compile(r"^(Direct|Indirect) leak of .*?(?=^\S|\Z)", re.M | re.S)
_ALLOC = re.compile(r"\b(malloc|calloc|realloc|reallocarray|strdup|strndup|"
                    r"aligned_alloc|posix_memalign|memalign)\b")


def our_leaks(stderr):
    ours = []
    for block in _BLOCK.finditer(stderr):
        frames = [l for l in block.group(0).splitlines()[1:] if l.strip().startswith("#")]
        for frame in frames:
            if "asan_malloc" in frame or "libsanitizer" in frame or \
                    (_ALLOC.search(frame) and "interceptor" in frame):
                continue
            if "_core.cpython" in frame or "libbpf.so" in frame or "csrc/" in frame:
                ours.append(block.group(0).strip())
            break
    return ours


def check_clean(out):
    text = out.stderr
    assert "ERROR: AddressSanitizer" not in text, text[-6000:]
    assert "runtime error:" not in text, text[-6000:]   # UBSan
    leaks = our_leaks(text)
    assert not leaks, "\n\n".join(leaks)[:6000]
    assert out.returncode == 0, (out.stdout[-3000:], text[-3000:])


def test_the_copy_under_test_is_the_sanitized_one(sanitized):
    out = _run(sanitized, ["-c", "import benchbpf, benchbpf._core as c; "
                                 "print(benchbpf.__file__); print(c.__file__)"])
    check_clean(out)
    lib, _ = sanitized
    paths = out.stdout.split()
    assert all(p.startswith(str(lib)) for p in paths), paths
    symbols = subprocess.run(["nm", "-D", paths[1]], capture_output=True, text=True).stdout
    assert "__asan_" in symbols and "__ubsan_" in symbols
    # -fno-sanitize-recover: undefined behaviour aborts instead of printing on
    assert re.search(r"__ubsan_handle_\w+_abort", symbols)


def test_core_and_fault_tests_pass_under_sanitizers(sanitized):
    tests = ROOT / "tests"
    out = _run(sanitized, [
        "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore",
        str(tests / "test_core.py"), str(tests / "test_reliability.py"),
        str(tests / "test_prog_stats.py"),
        "-k", "not soak and not many_short_runs and not memlock and not btf "
              "and not tracefs and not capabilities and not unprivileged "
              "and not file_descriptors and not another_process and not killed_process "
              "and not pid_namespace",
    ], timeout=600)
    check_clean(out)
    assert " passed" in out.stdout, out.stdout[-2000:]


def test_every_benchmark_runs_clean_under_sanitizers(sanitized):
    """One run of every benchmark in the registry (every family, failing
    paths included), each selftest fault and rejected options, then more."""
    out = _run(sanitized, [str(ROOT / "scripts" / "soak.py"), "--runs", "10",
                           "--rss-slack-kb", "65536"], timeout=600)
    check_clean(out)
    assert "OK: nothing left behind" in out.stdout, out.stdout[-3000:]


def test_leak_sanitizer_is_watching(sanitized):
    """LeakSanitizer really reports at exit: a block lost on purpose shows."""
    script = ("import ctypes; libc = ctypes.CDLL(None); libc.malloc.restype = ctypes.c_void_p; "
              "p = libc.malloc(4096); p = None")
    out = _run(sanitized, ["-c", script])
    blocks = [b.group(0) for b in _BLOCK.finditer(out.stderr)]
    assert any("4096 byte(s)" in b for b in blocks), out.stderr[-3000:]
