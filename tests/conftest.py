"""Shared test helpers: short runs, skips for what this kernel lacks, leak checks."""
import json
import os
import shutil
import subprocess

import pytest

import benchbpf

#: A run long enough to sample real work, short enough for CI.
SHORT = dict(warmup=0.2, duration=0.6, interval=0.2)
SHORT_SAMPLES = 3


def run_or_skip(name, **kw):
    """Run a benchmark; skip (with the kernel's reason) where this kernel lacks a feature."""
    try:
        return benchbpf.run(name, **{**SHORT, **kw})
    except benchbpf.UnsupportedError as e:
        pytest.skip(f"{name}: {e}")


def _bpftool():
    return shutil.which("bpftool") or shutil.which("bpftool", path="/usr/sbin:/sbin")


def loaded_bpf_objects():
    """IDs of every BPF program, map and link loaded on this machine."""
    tool = _bpftool()
    if tool is None:
        return None
    ids = set()
    for kind in ("prog", "map", "link"):
        out = subprocess.run([tool, "-j", kind, "list"], capture_output=True, text=True)
        if out.returncode != 0:
            continue
        for obj in json.loads(out.stdout or "[]"):
            ids.add((kind, obj["id"]))
    return ids


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def nr_threads():
    return len(os.listdir("/proc/self/task"))


@pytest.fixture(scope="session", autouse=True)
def nothing_left_loaded():
    """After the whole suite, nothing it loaded may still be in the kernel:
    no BPF descriptor in this process, and no object loaded meanwhile that
    no process holds (objects other processes on the machine hold are theirs)."""
    import leakcheck

    before = leakcheck.kernel_objects()
    yield
    held = leakcheck.snapshot().bpf_fds
    assert not held, f"BPF descriptors still open after the test suite: {held}"
    orphans = leakcheck.orphaned_objects(before)
    assert not orphans, f"BPF objects left loaded after the test suite: {orphans}"
