"""htab-mem: ops per producer and the memory the map uses, from a cgroup of its own."""
import os
import re

import pytest

import benchbpf
from benchbpf import htab_mem

from conftest import SHORT, rejected_before_loading, run_in_own_pid_namespace

NAME = "htab-mem"
PREFIXES = ("htab", "producer_whoami")
SUMMARY = re.compile(r"^Summary: per-prod-op +\d+\.\d{2} \u00b1 +\d+\.\d{2}k/s, memory usage "
                     r"+\d+\.\d{2} \u00b1 +\d+\.\d{2}MiB, peak memory usage +\d+\.\d{2}MiB$")


def run(use_case="overwrite", **kw):
    try:
        return htab_mem.htab_mem(use_case, **{**SHORT, **kw})
    except benchbpf.UnsupportedError as e:
        pytest.skip(f"{NAME}: {e}")


@pytest.mark.fast
def test_registry_and_kernel_options():
    assert benchbpf.list_benchmarks("htab_mem") == [NAME]
    p = benchbpf.describe(NAME).params
    assert (p["use_case"].cli, p["use_case"].default) == ("--use-case", "overwrite")
    assert p["use_case"].choices == htab_mem.USE_CASES
    assert (p["preallocated"].cli, p["preallocated"].default) == ("--preallocated", False)
    assert (p["value_size"].cli, p["value_size"].default, p["value_size"].max) == \
        ("--value-size", 8, 4096)


@pytest.mark.fast
@pytest.mark.parametrize("use_case, producers", [
    ("overwrite", 1), ("batch_add_batch_del", 2), ("add_del_on_diff_cpu", 2)])
def test_use_cases_count_ops_and_memory(use_case, producers):
    r = run(use_case, producers=producers)
    assert sum(s.hits for s in r.samples) > 0, r.samples
    assert all(s.extra["memory_bytes"] > 0 for s in r.samples)
    assert all(s.extra["peak_memory_bytes"] >= s.extra["memory_bytes"] for s in r.samples)
    assert SUMMARY.match(r.summary()), r.summary()
    src = r.metadata["memory_source"]
    assert "memory cgroup" in src or "memlock" in src
    # The cgroup made for the run is gone.
    m = re.match(r"^(\S+)/memory\.", src)
    if m:
        assert not os.path.exists(m.group(1))


def test_memory_moves_with_the_map():
    """A preallocated map of 4096-byte values holds ~32 MiB from the start;
    a non-preallocated one of 8-byte values a fraction of one."""
    small = run(value_size=8)
    big = run(value_size=4096, preallocated=True)
    mem = lambda r: max(s.extra["memory_bytes"] for s in r.samples)   # noqa: E731
    assert mem(big) > 16 * 2**20 > 8 * mem(small), (mem(big), mem(small))


def test_range_edges():
    for kw in (dict(value_size=1), dict(value_size=4096)):
        r = run("batch_add_batch_del", **kw)
        assert sum(s.hits for s in r.samples) > 0


@pytest.mark.fast
@pytest.mark.parametrize("kw, word", [
    (dict(value_size=0), "value_size"), (dict(value_size=4097), "value_size"),
    (dict(use_case="add_only"), "use_case"), (dict(preallocated=2), "preallocated"),
    (dict(use_case="add_del_on_diff_cpu", producers=1), "producers"),
    (dict(use_case="add_del_on_diff_cpu", producers=3), "producers"),
    (dict(consumers=1), "consumers"),
])
def test_bad_values_raise_before_loading(kw, word):
    with rejected_before_loading((ValueError, TypeError), word):
        benchbpf.run(NAME, **{**SHORT, **kw})


def test_counts_inside_its_own_pid_namespace():
    got, outer_pid = run_in_own_pid_namespace(NAME)
    assert sum(got["hits"]) > 0, got
    assert got["filter_tgids"] == [outer_pid] != [got["pid"]], (got, outer_pid)


def test_without_memory_cgroups_the_map_memlock_is_read():
    """Where no memory cgroup can be made (here: the v1 memory hierarchy
    unmounted in a mount namespace of a child), the figure is the map's
    memlock from fdinfo, and it still moves with the map."""
    import shutil
    import subprocess
    import sys

    import leakcheck

    unshare = shutil.which("unshare")
    mnt = "/sys/fs/cgroup/memory"
    if unshare is None or not os.path.ismount(mnt):
        pytest.skip("needs unshare and a cgroup v1 memory hierarchy to hide")
    script = ("import benchbpf, json; from benchbpf import htab_mem; "
              "f = lambda **k: htab_mem.htab_mem('overwrite', warmup=0, duration=0.4, "
              "interval=0.2, **k); a = f(value_size=8); b = f(value_size=4096, "
              "preallocated=True); print(json.dumps([a.metadata['memory_source'], "
              "max(s.extra['memory_bytes'] for s in a.samples), "
              "max(s.extra['memory_bytes'] for s in b.samples)]))")
    out = subprocess.run([unshare, "-m", "sh", "-c", f"umount -l {mnt} && exec "
                          f"{sys.executable} -c \"{script}\""], capture_output=True,
                         text=True, timeout=120, env=leakcheck._clean_env())
    if out.returncode and ("unshare" in out.stderr or "umount" in out.stderr):
        pytest.skip(out.stderr.strip())
    assert out.returncode == 0, out.stderr
    import json
    source, small, big = json.loads(out.stdout.splitlines()[-1])
    assert source.startswith("memlock"), source
    assert big > 16 * 2**20 > 8 * small > 0, (big, small)


def test_trigger_names_real_tracepoints():
    # The trigger is named from the attached programs' sections (bench_set_trigger),
    # never spelled by hand: every tracepoint it names exists in tracefs.
    r = run("add_del_on_diff_cpu", producers=2)
    parts = r.metadata["trigger"].split(" + ")
    assert parts == ["tp/syscalls/sys_enter_getpgid", "tp/syscalls/sys_enter_getppid"]
    for part in parts:
        kind, category, event = part.split("/")
        assert os.path.isdir(f"/sys/kernel/tracing/events/{category}/{event}"), part
    assert run().metadata["trigger"] == "tp/syscalls/sys_enter_getpgid"
