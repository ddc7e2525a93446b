"""bpf-hashmap-lookup, bpf-hashmap-full-update: BPF-timed samples per CPU."""
import re
import statistics
import subprocess
import sys

import pytest

import benchbpf
from benchbpf import _core, hashmap
from benchbpf.results.result import Result

from conftest import (SHORT, TRIGGERS, fentry_runs_or_says_why, rejected_before_loading,
                      run_in_own_pid_namespace)

LOOKUP, FULL = "bpf-hashmap-lookup", "bpf-hashmap-full-update"
#: hashmap_* programs and hashmap_.bss/.rodata, hash_map_* maps.
PREFIXES = ("hashmap_", "hash_map_", "producer_whoami")
LOOKUP_LINE = re.compile(r"^cpu\d{2}: lookup \d+\.\d{3}M \u00b1 \d+\.\d{3}M events/sec "
                         r"\(approximated from \d+ samples of ~\d+ms\)$")
FULL_LINE = re.compile(r"^\d+:hash_map_full_perf \d+ events per sec$")


def lookup(**kw):
    try:
        return hashmap.lookup(**{**SHORT, **kw})
    except benchbpf.UnsupportedError as e:
        pytest.skip(f"{LOOKUP}: {e}")


@pytest.mark.fast
def test_registry_and_kernel_options():
    assert benchbpf.list_benchmarks("hashmap") == [FULL, LOOKUP]
    p = benchbpf.describe(LOOKUP).params
    kernel = {"key_size": ("--key_size", 4), "map_flags": ("--map_flags", 0),
              "max_entries": ("--max_entries", 1000), "nr_entries": ("--nr_entries", 500),
              "nr_loops": ("--nr_loops", 1000000)}
    for name, (cli, default) in kernel.items():
        assert (p[name].cli, p[name].default) == (cli, default)
    assert (p["key_size"].min, p["key_size"].max) == (4, 1024)
    assert p["nr_loops"].max == 1 << 23
    assert p["min_sample_ms"].default == 10
    assert set(benchbpf.describe(FULL).params) == {"min_sample_ms", "trigger"}


def test_lookup_keeps_per_cpu_samples_of_at_least_the_floor():
    r = lookup(nr_loops=10000)
    stats = hashmap.cpu_stats(r)
    assert stats, r.series
    for cpu, s in stats.items():
        assert f"cpu{cpu:02d}.time_ns" in r.series and f"cpu{cpu:02d}.ops" in r.series
        # Every kept sample covers at least min_sample_ms of timed lookups,
        # whole batches of nr_loops lookups each.
        assert min(s.times_ns) >= 10e6, s.times_ns
        for ops in r.series[f"cpu{cpu:02d}.ops"]:
            assert ops > 0 and ops % 10000 == 0
    assert sum(len(r.series[k]) for k in r.series if k.endswith(".ops")) == \
        sum(s.extra["runs"] for s in r.samples)
    assert all(s.extra["misses"] == 0 for s in r.samples)
    assert "10 ms" in r.metadata["sample_rule"]
    assert r.metadata["trigger"] in TRIGGERS
    lines = r.summary().splitlines()
    assert lines and all(LOOKUP_LINE.match(x) for x in lines), lines
    back = Result.from_json(r.to_json())
    assert back.series == r.series


def test_run_to_run_spread_is_small():
    """The kernel bench's design gave runs from 57 to 363 M/s (6x) with its
    defaults here and from 53 to 5599 M/s for 4096 keys of 65536; with
    per-CPU keys, lookups counted as done and samples of at least 10 ms,
    short runs of short batches (10000 lookups, ~0.2 ms) agree within a few
    per cent on a quiet machine.  The bound leaves room for the host: BPF's
    clock also runs while the hypervisor holds the vCPU, and a neighbour
    thrashing the caches slows lookups (up to 1.4x seen under load)."""
    medians = []
    for _ in range(4):
        r = lookup(nr_loops=10000)
        rates = [x for s in hashmap.cpu_stats(r).values() for x in s.rates_mps]
        assert rates
        medians.append(statistics.median(rates))
    assert max(medians) / min(medians) < 2.0, medians


def test_two_producers_never_miss():
    """With one key shared by all CPUs (the kernel bench's design), two CPUs
    rewrite it under each other's lookups: tens of thousands of misses a
    second here, each ending a batch early.  Each CPU has its own key now."""
    r = lookup(producers=2, nr_loops=100000)
    assert sum(s.extra["events"] for s in r.samples) > 0
    assert all(s.extra["misses"] == 0 for s in r.samples)


@pytest.mark.parametrize("kw", [
    dict(key_size=4, nr_entries=1, max_entries=1, nr_loops=1),
    dict(key_size=1024, nr_entries=64, max_entries=64, nr_loops=6400),
    dict(map_flags=0x1 | 0x40 | 0x80, nr_entries=1, max_entries=1 << 24, nr_loops=1 << 23),
    dict(nr_loops=1000, min_sample_ms=1),
    dict(nr_loops=100000, min_sample_ms=1000, warmup=0, duration=1.2, interval=0.4),
])
def test_lookup_range_edges(kw):
    setups = _core.setup_count()
    r = lookup(**kw)
    assert _core.setup_count() == setups + 1
    assert all(s.extra["misses"] == 0 for s in r.samples)
    assert sum(s.extra["events"] for s in r.samples) > 0
    floor = kw.get("min_sample_ms", 10) * 1e6
    assert all(t >= floor for s in hashmap.cpu_stats(r).values() for t in s.times_ns)


@pytest.mark.fast
@pytest.mark.parametrize("kw, word", [
    (dict(key_size=3), "key_size"), (dict(key_size=1025), "key_size"),
    (dict(map_flags=0x2), "map_flags"), (dict(map_flags=0x10), "map_flags"),
    (dict(map_flags=-1), "map_flags"),
    (dict(nr_entries=1001), "max_entries"), (dict(nr_entries=500, nr_loops=499), "nr_loops"),
    (dict(nr_loops=(1 << 23) + 1), "nr_loops"), (dict(max_entries=0), "max_entries"),
    (dict(min_sample_ms=0), "min_sample_ms"), (dict(min_sample_ms=1001), "min_sample_ms"),
    (dict(min_sample_ms=1, interval=5, duration=5, warmup=0), "interval"),
    (dict(consumers=1), "consumers"), (dict(trigger="kprobe"), "trigger"),
])
def test_bad_values_raise_before_loading(kw, word):
    with rejected_before_loading((ValueError, TypeError), word):
        hashmap.lookup(**{**SHORT, **kw})


@pytest.mark.parametrize("call, name", [(hashmap.lookup, LOOKUP), (hashmap.full_update, FULL)])
def test_fentry_runs_or_says_why(call, name):
    r = fentry_runs_or_says_why(call, name, PREFIXES)
    assert hashmap.cpu_stats(r)


@pytest.mark.parametrize("name", [LOOKUP, FULL])
def test_counts_inside_its_own_pid_namespace(name):
    got, outer_pid = run_in_own_pid_namespace(name, nr_loops=10000) if name == LOOKUP else \
        run_in_own_pid_namespace(name)
    assert sum(got["hits"]) > 0, got
    assert got["filter_tgids"] == [outer_pid] != [got["pid"]], (got, outer_pid)


@pytest.mark.fast
def test_full_update_reports_the_kernel_line():
    try:
        r = hashmap.full_update(**SHORT)
    except benchbpf.UnsupportedError as e:
        pytest.skip(f"{FULL}: {e}")
    stats = hashmap.cpu_stats(r)
    assert stats
    for s in stats.values():
        assert min(s.times_ns) >= 10e6
    ops = [o for k, v in r.series.items() if k.endswith(".ops") for o in v]
    assert ops and all(o % hashmap.FULL_UPDATE_LOOPS == 0 for o in ops)
    lines = r.summary().splitlines()
    assert lines and all(FULL_LINE.match(x) for x in lines), lines


def test_full_update_floor_edges():
    for ms in (1, 1000):
        try:
            r = hashmap.full_update(min_sample_ms=ms, warmup=0, duration=1.2, interval=0.4)
        except benchbpf.UnsupportedError as e:
            pytest.skip(f"{FULL}: {e}")
        assert all(t >= ms * 1e6 for s in hashmap.cpu_stats(r).values() for t in s.times_ns)


def test_fill_sweep_is_one_call():
    sw = hashmap.fill_sweep((4096, 65536), warmup=0, duration=0.4, interval=0.2)
    assert sw.max_entries == 65536 and sw.nr_entries == (4096, 65536)
    assert [r.params["nr_entries"] for r in sw.results] == [4096, 65536]
    assert all(r.params["map_flags"] == 0x40 for r in sw.results)
    rows = sw.rows()
    assert [round(fill) for _, fill, *_ in rows] == [6, 100]
    assert all(mean > 0 for _, _, mean, _, _ in rows)
    assert "| 65536 | 100.00 % |" in sw.table()
    setups = _core.setup_count()
    with pytest.raises(ValueError, match="nr_entries"):
        hashmap.fill_sweep((4096, 70000))
    assert _core.setup_count() == setups


def test_cli_prints_the_kernel_lines():
    out = subprocess.run([sys.executable, "-m", "benchbpf", "-w0", "-d1", "--interval", "0.5",
                          LOOKUP, "--nr_loops", "20000", "--nr_entries", "100",
                          "--map_flags=0x40"],   # hex, as the kernel bench's strtol
                         capture_output=True, text=True, timeout=120)
    assert out.returncode in (0, 3), out.stderr
    if out.returncode == 3:
        pytest.skip(out.stderr)
    tail = [x for x in out.stdout.splitlines() if x.startswith("cpu")]
    assert tail and all(LOOKUP_LINE.match(x) for x in tail), out.stdout


def test_full_update_does_not_look_at_what_updates_return(no_leaks):
    """Per update the program does the kernel bench's work: the update, and
    no test of its result (a full map's refusals are checked from user
    space instead)."""
    from loaded import programs_while_running

    try:
        progs, _ = programs_while_running(hashmap.full_update, ["hashmap_full_update"],
                                          **SHORT)
    except benchbpf.UnsupportedError as e:
        pytest.skip(f"{FULL}: {e}")
    (insns,) = progs.values()
    at = [i for i, x in enumerate(insns) if "htab_map_update_elem" in x[2]]
    assert len(at) == 1, insns
    after = insns[at[0] + 1]
    assert not after[2].startswith("if "), after


def test_full_update_fails_if_the_map_takes_an_update(no_leaks):
    """Make room in the full map while the run goes on: the next update of a
    CPU's key succeeds and stays, and the run fails rather than time
    successful updates."""
    import os
    import threading
    import time

    from leakcheck import bpftool

    def make_room():
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            for fd in os.listdir("/proc/self/fdinfo"):
                try:
                    with open(f"/proc/self/fdinfo/{fd}") as f:
                        m = re.search(r"^map_id:\s*(\d+)", f.read(), re.M)
                    if m and bpftool("map", "show", "id", m.group(1))["name"] == "hash_map_full":
                        bpftool("map", "delete", "id", m.group(1), "key", "0", "0", "0", "0")
                        return
                except Exception:      # closed meanwhile, or not filled yet
                    continue
            time.sleep(0.05)

    t = threading.Thread(target=make_room)
    t.start()
    try:
        with pytest.raises(benchbpf.BenchmarkError, match="full map took an update"):
            hashmap.full_update(warmup=0.4, duration=0.8, interval=0.2)
    except benchbpf.UnsupportedError as e:
        pytest.skip(f"{FULL}: {e}")
    finally:
        t.join()
