"""Local storage: cache gets over task storage maps, the hash map control,
storage creation; the kernel bench's local_storage and creates reports."""
import collections
import dataclasses
import json
import re
import threading
import time

import pytest

try:    # imported before any leak check: importing it starts a thread
    import pandas
except ImportError:
    pandas = None

import benchbpf
from benchbpf import _core, local_storage
from benchbpf.results._lines import progress_line, summary_line
from benchbpf.results.result import Result, Sample

from leakcheck import held_ids
from conftest import (SHORT, SHORT_SAMPLES, TRIGGERS, counts_where_ran, nested_counts_where_ran,
                      producer_ran,
                      fentry_runs_or_says_why,
                      ours_left_behind, rejected_before_loading, run_in_own_pid_namespace,
                      run_or_skip)

CACHE = ("local-storage-cache-seq-get", "local-storage-cache-int-get",
         "local-storage-cache-hashmap-control")
CREATE = "local-storage-create"
#: Our programs (local_storage_*, producer_whoami) and maps: local_st.* data,
#: the arrays of maps, inner maps (ls_*), the create benchmark's maps.
PREFIXES = ("local_st", "producer_whoami", "array_of_local_", "array_of_hash_m", "ls_",
            "task_storage_ma", "sk_storage_map")
LS_SUMMARY = re.compile(r"^Summary: hits throughput +\d+\.\d{3} \u00b1 +\d+\.\d{3} M ops/s, "
                        r"hits latency +\d+\.\d{3} ns/op, important_hits throughput +"
                        r"\d+\.\d{3} \u00b1 +\d+\.\d{3} M ops/s$")


def run(name, **kw):
    return run_or_skip(name, **kw)


@pytest.mark.fast
def test_registry_has_the_benchmarks():
    assert benchbpf.list_benchmarks("local_storage") == list(CACHE) + [CREATE]
    assert set(local_storage.BENCHMARKS.values()) == set(CACHE) | {CREATE}
    for name in CACHE:
        info = benchbpf.describe(name)
        assert info.report == "local_storage" and info.needs_bpf
        assert info.max_producers == 1 and info.max_consumers == 0
        p = info.params["nr_maps"]
        assert (p.cli, p.default, p.min, p.max) == ("--nr_maps", 1000, 1, 1000)
        k = info.params["hashmap_nr_keys_used"]
        assert (k.cli, k.default, k.min, k.max) == ("--hashmap_nr_keys_used", 1000, 1, 4194304)
    info = benchbpf.describe(CREATE)
    assert info.report == "creates"
    assert info.params["storage_type"].choices == local_storage.STORAGE_TYPES
    assert info.params["storage_type"].default == "socket"
    b = info.params["batch_size"]
    assert (b.cli, b.default, b.min) == ("--batch-size", 32, 1)


@pytest.mark.parametrize("nr_maps", [1, 17, 1000])
def test_seq_get_counts_gets_and_important_gets(no_leaks, nr_maps):
    r = run(CACHE[0], nr_maps=nr_maps)
    assert len(r.samples) == SHORT_SAMPLES
    assert r.metadata["report"] == "local_storage"
    assert r.metadata["trigger"] in TRIGGERS
    assert r.total_hits > 0
    for s in r.samples + r.warmup_samples:
        assert s.hits % 10000 == 0, s                   # whole loops of 10000 gets
        assert s.hits > 0 or not producer_ran(s), s
        assert s.extra["failed_gets"] == 0
        # map 0 is every nr_maps-th get of a loop starting at index 0
        per_loop = -(-10000 // nr_maps)
        assert s.important_hits == s.hits // 10000 * per_loop
    assert LS_SUMMARY.match(r.summary()), r.summary()


@pytest.mark.fast
def test_int_get_adds_four_important_gets_in_ten(no_leaks):
    r = run(CACHE[1], nr_maps=10)
    for s in r.samples:
        loops = s.hits // 14000
        assert s.hits == loops * 14000                      # 10 + 4 gets per 10 indices
        assert loops > 0 or not producer_ran(s), s
        assert s.important_hits == loops * 5000             # 1 + 4 per 10


def test_hashmap_control_fills_the_whole_map_once(no_leaks):
    """The largest key count: every lookup finds its key (the whole
    4194304-key map is filled), within seconds."""
    import time
    t0 = time.monotonic()
    r = run(CACHE[2], nr_maps=1, hashmap_nr_keys_used=local_storage.HASHMAP_SZ)
    assert time.monotonic() - t0 < 60
    assert r.total_hits > 0
    assert all((s.hits > 0 or not producer_ran(s)) and s.extra["failed_gets"] == 0
               for s in r.samples)
    assert all(s.important_hits == s.hits for s in r.samples)


def test_hashmap_control_smallest_key_count(no_leaks):
    r = run(CACHE[2], nr_maps=1000, hashmap_nr_keys_used=1)
    assert all(s.hits > 0 and s.extra["failed_gets"] == 0 for s in r.samples)
    assert all(s.important_hits * 1000 >= s.hits for s in r.samples)


def test_adjust_overhead_runs_a_control_and_subtracts(no_leaks):
    try:
        r = local_storage.seq_get(nr_maps=17, adjust_overhead=True, **SHORT)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert r.control is not None and r.control.params["skip_access"] is True
    assert r.params["skip_access"] is False and r.metadata["overhead_control"] is True
    assert r.control.name == r.name and r.control.params["nr_maps"] == 17
    assert r.adjusted_latency_ns == pytest.approx(r.latency_ns - r.control_latency_ns)
    d = json.loads(r.to_json())
    assert d["overhead"]["adjusted_ns_per_op"] == pytest.approx(r.adjusted_latency_ns)
    back = Result.from_json(r.to_json())
    assert back == r and back.control == r.control
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.control = None
    assert "rlimit_nofile" in r.metadata


def test_cliff_is_one_run_per_map_count(no_leaks):
    try:
        sw = local_storage.cliff(nr_maps=(1, 17), **SHORT)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert sw.param == "nr_maps" and sw.values == (1, 17)
    assert [r.params["nr_maps"] for r in sw.results] == [1, 17]
    assert all(sum(s.hits for s in r.samples) > 0 for r in sw.results)


def test_cliff_adjusts_overhead_and_checks_every_count_first(no_leaks):
    setups = _core.setup_count()
    with pytest.raises(ValueError, match="nr_maps=1001"):
        local_storage.cliff(nr_maps=(1, 1001), adjust_overhead=True, **SHORT)
    assert _core.setup_count() == setups, "a run started before the bad count was seen"
    try:
        sw = local_storage.cliff(nr_maps=(1, 2), adjust_overhead=True, **SHORT)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    for r in sw.results:
        assert r.control is not None and r.control.params["skip_access"] is True
        assert r.adjusted_latency_ns == r.latency_ns - r.control_latency_ns
    # The point of the study, in its printout and its table.
    text = str(sw).splitlines()
    assert "control ns/op" in text[1] and "adjusted ns/op" in text[1]
    for line, r in zip(text[2:], sw.results):
        assert f"{r.control_latency_ns:.2f}" in line and f"{r.adjusted_latency_ns:.2f}" in line
    row = sw.table()[0]
    assert (row.control_latency_ns, row.adjusted_latency_ns) == \
        (sw.results[0].control_latency_ns, sw.results[0].adjusted_latency_ns)
    if pandas is None:
        pytest.skip("pandas is not installed")
    df = sw.to_dataframe()
    assert list(df.control_latency_ns) == [r.control_latency_ns for r in sw.results]
    assert list(df.adjusted_latency_ns) == [r.adjusted_latency_ns for r in sw.results]


def test_no_control_means_no_adjusted_figure():
    r = Result(name="x", params={}, samples=[Sample(10**9, 10**6)])
    assert r.control is None and r.adjusted_latency_ns is None
    assert r.control_latency_ns is None and "control" not in r.as_dict()
    with pytest.raises(TypeError):
        Result(name="x", params={}, samples=[], control="not a result")


@pytest.mark.fast
def test_create_task_storage(no_leaks):
    r = run(CREATE, storage_type="task", batch_size=4)
    assert r.metadata["trigger"] == "tp_btf/sched_process_fork"
    assert counts_where_ran(r.samples)
    for s in r.samples:
        assert s.extra["create_errs"] == 0 and s.extra["owner_errs"] == 0
    assert re.match(r"^Summary: creates +\d+\.\d{3} \u00b1 +\d+\.\d{3}k/s \( *\d+\.\d{3}k/prod\), "
                    r"\d+\.\d{2} kmallocs/create$", r.summary()), r.summary()


@pytest.mark.parametrize("batch_size", [1, 1024])
def test_create_batch_size_edges(no_leaks, batch_size):
    r = run(CREATE, storage_type="task", batch_size=batch_size, producers=1)
    assert counts_where_ran(r.samples)


def test_create_socket_runs_or_names_the_lsm(no_leaks):
    setups = _core.setup_count()
    try:
        r = benchbpf.run(CREATE, storage_type="socket", **SHORT)
    except benchbpf.UnsupportedError as e:
        assert "LSM" in str(e) and "socket_post_create" in str(e), str(e)
        assert _core.setup_count() == setups + 1
        assert ours_left_behind(PREFIXES) == []
        pytest.skip(str(e))
    assert counts_where_ran(r.samples)


@pytest.mark.fast
@pytest.mark.parametrize("name, kw, exc, words", [
    (CACHE[0], dict(nr_maps=0), ValueError, ("nr_maps=0", "1..1000")),
    (CACHE[0], dict(nr_maps=1001), ValueError, ("nr_maps=1001", "1..1000")),
    (CACHE[2], dict(hashmap_nr_keys_used=0), ValueError, ("hashmap_nr_keys_used=0",)),
    (CACHE[2], dict(hashmap_nr_keys_used=4194305), ValueError, ("1..4194304",)),
    (CACHE[1], dict(nr_maps="10"), TypeError, ("nr_maps",)),
    (CACHE[0], dict(producers=2), ValueError, ("producers=2",)),
    (CACHE[0], dict(consumers=1), ValueError, ("consumers=1",)),
    (CREATE, dict(storage_type="inode"), ValueError, ("storage_type", "'task'")),
    (CREATE, dict(batch_size=0), ValueError, ("batch_size=0",)),
    (CREATE, dict(batch_size=1025), ValueError, ("batch_size=1025", "1..1024")),
])
def test_bad_options_rejected_before_loading(name, kw, exc, words):
    with rejected_before_loading(exc, *words):
        benchbpf.run(name, **{**SHORT, **kw})


def test_adjust_overhead_contradiction_rejected_before_loading():
    with rejected_before_loading(ValueError, "skip_access"):
        local_storage.seq_get(adjust_overhead=True, skip_access=True, **SHORT)
    with rejected_before_loading(TypeError, "adjust_overhead"):
        local_storage.int_get(adjust_overhead="yes", **SHORT)
    with rejected_before_loading(ValueError, "benchmark"):
        local_storage.cliff(benchmark="hashmap_control")


def test_fentry_trigger_runs_or_says_why(no_leaks):
    r = fentry_runs_or_says_why(local_storage.seq_get, "local-storage-cache-seq-get",
                                PREFIXES)
    assert counts_where_ran(r.samples)


@pytest.mark.parametrize("name", CACHE)
def test_explicit_tracepoint_trigger(no_leaks, name):
    r = run(name, nr_maps=2, trigger="tp")
    assert r.metadata["trigger"] == TRIGGERS[1] and r.params["trigger"] == "tp"
    assert counts_where_ran(r.samples)


def test_counts_inside_its_own_pid_namespace():
    """Only this process's gets count, also where its /proc cannot tell
    its pid: the filter holds the id BPF sees."""
    got, outer_pid = run_in_own_pid_namespace(CACHE[0], nr_maps=1)
    assert nested_counts_where_ran(got), got
    assert got["filter_tgids"] == [outer_pid] != [got["pid"]], (got, outer_pid)


# ---- the kernel bench's lines (local_storage_report_*, local-storage-create) ----

def test_local_storage_summary_is_the_kernel_format():
    samples = [Sample(10**9, h, important_hits=i)
               for h, i in ((40_000_000, 4_000_000), (50_000_000, 5_000_000),
                            (60_000_000, 6_000_000))]
    r = Result(name=CACHE[0], params={"producers": 1}, samples=samples,
               metadata={"report": "local_storage"})
    assert summary_line(r) == (
        "Summary: hits throughput   50.000 \u00b1 10.000 M ops/s, hits latency   20.000 ns/op, "
        "important_hits throughput    5.000 \u00b1 1.000 M ops/s")
    assert progress_line("local_storage", 2, Sample(1_000_012_500, 47_000_587,
                                                      important_hits=1_000_012), 1) == \
        "Iter   2 ( 12.500us): hits   47.000M/s important_hits    1.000M/s"


def test_creates_lines_are_the_kernel_format():
    samples = [Sample(10**9, 20_000, extra={"kmallocs": 40_000, "create_errs": 0,
                                            "owner_errs": 0}),
               Sample(10**9, 30_000, extra={"kmallocs": 60_000, "create_errs": 1,
                                            "owner_errs": 2})]
    r = Result(name=CREATE, params={"producers": 2, "storage_type": "task"}, samples=samples,
               metadata={"report": "creates"})
    assert r.summary() == ("Summary: creates   25.000 \u00b1 7.071k/s ( 12.500k/prod), "
                      "2.00 kmallocs/create\npthread_create() errors 2 create_errs 1")
    assert progress_line("creates", 0, samples[0], 2) == \
        "Iter   0 (  0.000us): creates   20.000k/s ( 10.000k/prod), 2.00 kmallocs/create"


LOW_NOFILE = """
import os, resource, warnings
import benchbpf
warnings.simplefilter("ignore")
in_use = len(os.listdir("/proc/self/fd"))
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
# Enough for the core's own headroom, far fewer than 1000 maps.
resource.setrlimit(resource.RLIMIT_NOFILE, (in_use + 120, hard))
r = benchbpf.run("local-storage-cache-seq-get", nr_maps=1000, warmup=0.2, duration=0.4,
                 interval=0.2)
# Over the run: a sample in which the producer got no CPU (a loop over 1000 maps takes
# 25 ms of it) may count nothing.
print(sum(s.hits for s in r.samples), sum(s.important_hits for s in r.samples))
"""


def test_1000_maps_under_a_low_open_files_limit():
    """1000 maps run where far fewer descriptors may be open at once: the
    maps go into the array in smaller batches, no limit needs raising."""
    import subprocess
    import sys

    import leakcheck
    out = subprocess.run([sys.executable, "-c", LOW_NOFILE], capture_output=True, text=True,
                         env=leakcheck._clean_env(), timeout=120)
    if "UnsupportedError" in out.stderr:
        pytest.skip(out.stderr.strip().splitlines()[-1])
    assert out.returncode == 0, out.stderr
    hits, important = map(int, out.stdout.split())
    assert hits > 0 and important * 1000 == hits  # map 0 once per 1000 gets


def test_skip_access_is_a_program_of_its_own(no_leaks):
    """The gets' program tests nothing per get that the kernel bench's does
    not: the overhead control (skip_access=True) is another program, and
    only it lacks the get."""
    from loaded import programs_while_running

    names = {}
    for skip in (False, True):
        progs, _ = programs_while_running(run, ["local_storage_"], name=CACHE[0], nr_maps=1,
                                          skip_access=skip, **SHORT)
        (names[skip], insns), = progs.items()
        gets = [t for _, _, t in insns if "task_storage_get" in t]
        assert bool(gets) != skip, (skip, gets)
    assert names == {False: "local_storage_get_tp", True: "local_storage_skip_tp"}


BPF_MAP_TYPE_TASK_STORAGE = 29


def test_cache_gets_create_no_task_storage_map_beside_the_inner_ones():
    """Each task's storage cache has 16 slots, one per task storage map, the
    least used taken when a map is created.  The create benchmark's map, left
    in the object, made a 17th beside 16 inner maps and cost int-get with 16
    maps about a sixth of its speed; the kernel bench's object has none.  The
    inner maps' descriptors are held only while they are put in the array of
    maps; a map of the object would be held for the whole run."""
    snapshots, done = [], threading.Event()

    def watch():
        while not done.is_set():
            snapshots.append(held_ids(map_type=BPF_MAP_TYPE_TASK_STORAGE))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        r = run(CACHE[1], nr_maps=16, **SHORT)
    finally:
        done.set()
        watcher.join()
    assert r.mean > 0
    held = collections.Counter(i for snap in snapshots for i in snap)
    assert len(snapshots) > 20
    assert all(n < len(snapshots) / 2 for n in held.values()), (len(snapshots), held)
