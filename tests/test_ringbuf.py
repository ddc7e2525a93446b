"""rb-libbpf, rb-custom, pb-libbpf, pb-custom: real BPF producers, real consumers."""
import os
import subprocess
import sys
import types

import pytest

import benchbpf
import importlib

ringbufs = importlib.import_module("benchbpf.ringbuf")

from benchbpf.results.result import Result, Sample
from conftest import (SHORT, SHORT_SAMPLES, TP, TRIGGERS, fentry_runs_or_says_why,
                      ours_left_behind, rejected_before_loading, run_in_own_pid_namespace,
                      run_or_skip)

BENCHES = ringbufs.BENCHMARKS
#: Our programs (rb_tp, rb_fentry, pb_tp, pb_fentry, producer_whoami) and
#: maps (ringbuf, perfbuf, and the skeletons' ringbuf_.bss, perfbuf_.rodata, ...).
PREFIXES = ("rb_", "pb_", "ringbuf", "perfbuf", "producer_whoami")


def our_progs_loaded():
    """Programs and maps of this family this process still holds or nobody holds."""
    return ours_left_behind(PREFIXES)


PAGE = os.sysconf("SC_PAGE_SIZE")


def test_leak_prefixes_see_every_object_of_a_run():
    """While a run holds them, the module's leak check lists the buffer
    maps themselves and the whoami program, not only the skeletons' data."""
    seen = {}

    def look(sample, index, warmup):
        if index == 0:
            seen[name] = set(ours_left_behind(PREFIXES, timeout=0))

    for name, buf in (("rb-libbpf", "ringbuf"), ("pb-libbpf", "perfbuf")):
        run_or_skip(name, warmup=0, duration=0.2, interval=0.2, callback=look)
        assert {buf, "producer_whoami"} <= seen[name], seen[name]


def total(r, counter):
    return sum(s.count(counter) for s in r.samples)


def whole_run(r, counter):
    """A counter over the whole run, warm-up included."""
    return sum(s.count(counter) for s in r.warmup_samples + r.samples)


def assert_records_add_up(r):
    """Every record the BPF producer emitted was read (a hit) or dropped,
    once: hits + drops = rb_batch_cnt * the program's own runs, over the
    whole run; and the program ran for this process's getpgid() calls only."""
    hits, drops = whole_run(r, "hits"), whole_run(r, "drops")
    runs, calls = whole_run(r, "runs"), whole_run(r, "calls")
    assert runs > 0
    if r.name == "rb-custom" and not r.params["rb_count_once"]:
        # The kernel bench's reader reads a pass again after stopping at a
        # record still being written: it can only count more.
        assert hits + drops >= r.params["rb_batch_cnt"] * runs, (hits, drops, runs)
    else:
        assert hits + drops == r.params["rb_batch_cnt"] * runs, (hits, drops, runs)
    assert runs == calls, (runs, calls)


@pytest.mark.fast
@pytest.mark.parametrize("name", BENCHES)
def test_each_benchmark_moves_records(name):
    r = run_or_skip(name)
    assert r.name == name
    assert len(r.samples) == SHORT_SAMPLES
    assert total(r, "hits") > 0
    for s in r.samples:
        assert set(s.extra) == {"wakeups", "polls", "runs", "calls", "producer_cpu_ns"}
    assert_records_add_up(r)
    assert r.metadata["trigger"] in TRIGGERS
    assert r.params["record_size"] == 8 and r.params["rb_batch_cnt"] == 500
    line = r.summary()
    assert line.startswith("Summary: hits") and "M/prod" in line
    assert "drops" in line and "total operations" in line


@pytest.mark.parametrize("name, kw", [
    ("rb-libbpf", dict(rb_sampled=True, rb_sample_rate=1000)),
    ("rb-custom", dict(rb_b2b=True, rb_count_once=True)),
    ("pb-custom", dict(rb_b2b=True)),
    ("pb-libbpf", dict(rb_batch_cnt=1)),
    ("rb-custom", dict(producers=2, rb_use_output=True, record_size=200, rb_count_once=True)),
    ("rb-custom", dict(rb_sampled=True, rb_count_once=True)),
    ("rb-libbpf", dict(rb_bench_producer=True, consumers=0)),
    ("rb-custom", dict(ringbuf_sz=PAGE, rb_batch_cnt=100, rb_count_once=True)),  # mostly drops
])
def test_records_add_up(name, kw):
    """Hits are records read once each, drops records refused: together
    every record the program emitted, whatever the mode.  A reader that
    counted a record twice, or lost one, fails here."""
    r = run_or_skip(name, **kw)
    assert whole_run(r, "hits") > 0
    assert_records_add_up(r)


def test_throughput_is_payload_bytes_per_second():
    # 2 M records/s and 3 M records/s of 64 bytes: 160 MB/s on average.
    samples = [Sample(500_000_000, hits=1_000_000), Sample(250_000_000, hits=750_000)]
    r = Result(name="rb-custom", params={"record_size": 64}, samples=samples,
               metadata={"report": "hits_drops"})
    assert r.throughput_mbps == pytest.approx(160.0)
    other = Result(name="count-local", params={}, samples=samples, metadata={})
    with pytest.raises(ValueError, match="record_size"):
        other.throughput_mbps


@pytest.mark.parametrize("name", BENCHES)
def test_back_to_back_never_overflows(name):
    # One batch at a time, read before the next: the buffer cannot fill.
    r = run_or_skip(name, rb_b2b=True)
    assert total(r, "hits") > 0
    assert total(r, "drops") == 0


@pytest.mark.parametrize("name", BENCHES)
def test_sampling_sends_fewer_wakeups(name):
    """One record per syscall: unsampled, the consumer is woken for nearly
    every record; sampled every 50, it sleeps until 50 are waiting."""
    base = run_or_skip(name, rb_batch_cnt=1, warmup=0.2, duration=1.0)
    sampled = run_or_skip(name, rb_batch_cnt=1, rb_sampled=True, rb_sample_rate=50,
                          warmup=0.2, duration=1.0)
    hits_b, hits_s = total(base, "hits"), total(sampled, "hits")
    wake_b, wake_s = total(base, "wakeups"), total(sampled, "wakeups")
    assert hits_b > 0 and hits_s > 0 and wake_b > 0
    # Sampled every 50, whatever the load: a notification once 50 records wait, and
    # the consumer's 100 ms poll timeouts (1.2 s of run; twice that as slack).  Records
    # that land between the consumer's last read and its sleep shorten its next wait
    # without a wake-up of their own (a fresh machine's CI saw 1 in 48.9), so the bound
    # is one per 25: still half the rate of a consumer woken for every other record.
    records_s = hits_s + total(sampled, "drops")
    assert wake_s <= records_s / 25 + 2 * 1.2 / 0.1, (wake_s, records_s)
    # Unsampled, a consumer that keeps up sleeps between records and is woken for
    # most of them; one starved of CPU by load finds records waiting and is rarely
    # woken, so the two compare only where it kept up.
    if wake_b / hits_b > 1 / 25:
        assert wake_s / hits_s < wake_b / hits_b
    assert total(sampled, "polls") > 0


def test_ringbuf_output_api():
    r = run_or_skip("rb-custom", rb_use_output=True)
    assert r.params["rb_use_output"] is True
    assert total(r, "hits") > 0


@pytest.mark.parametrize("name,size", [("rb-custom", 65536), ("rb-libbpf", 4096),
                                       ("pb-custom", 65516), ("pb-libbpf", 1000)])
def test_large_records(name, size):
    extra = {"rb_use_output": True} if name.startswith("rb") else {}
    r = run_or_skip(name, record_size=size, **extra)
    assert r.params["record_size"] == size
    assert total(r, "hits") > 0
    assert_records_add_up(r)


def test_bench_producer_counts_in_bpf():
    r = run_or_skip(benchbpf.ringbuf, bench_producer=True)
    assert r.params["consumers"] == 0 and r.params["rb_bench_producer"] is True
    every = r.warmup_samples + r.samples
    # No consumer: the ring fills once (hits), then every record is a drop.
    assert sum(s.hits for s in every) > 0
    assert sum(s.hits + s.drops for s in every) > sum(s.hits for s in every)


def test_explicit_tracepoint_trigger():
    r = run_or_skip("rb-libbpf", trigger="tp")
    assert r.metadata["trigger"] == TP
    assert r.params["trigger"] == "tp"


@pytest.mark.parametrize("name", ["rb-libbpf", "pb-custom"])
def test_fentry_trigger_runs_or_says_why(name, no_leaks):
    r = fentry_runs_or_says_why(lambda **kw: benchbpf.run(name, **kw), name, PREFIXES)
    assert total(r, "hits") > 0


def test_multiple_producers():
    r = run_or_skip("rb-libbpf", producers=2, rb_batch_cnt=50)
    assert r.params["producers"] == 2
    assert total(r, "hits") > 0
    assert r.per_producer_mps == pytest.approx(r.mean / 2)


@pytest.mark.fast
def test_friendly_names_map_to_kernel_options():
    r = run_or_skip(benchbpf.ringbuf, consumer="custom", sample_rate=250, batch_cnt=300)
    assert r.name == "rb-custom"
    assert r.params["rb_sampled"] is True          # sample_rate implies sampled
    assert r.params["rb_sample_rate"] == 250 and r.params["rb_batch_cnt"] == 300
    r = run_or_skip(benchbpf.perfbuf, consumer="custom", back_to_back=True, buffer_pages=64)
    assert r.name == "pb-custom"
    assert r.params["rb_b2b"] is True and r.params["perfbuf_sz"] == 64
    r = run_or_skip(benchbpf.ringbuf)
    assert r.name == "rb-libbpf" and r.params["consumers"] == 1


def test_kernel_option_names_through_run():
    r = run_or_skip("rb-libbpf", rb_sampled=True, rb_sample_rate=100)
    assert r.params["rb_sampled"] is True and r.params["rb_sample_rate"] == 100
    info = benchbpf.describe("rb-libbpf")
    clis = {p.name: p.cli for p in info.params.values()}
    assert clis["rb_b2b"] == "--rb-b2b" and clis["rb_use_output"] == "--rb-use-output"
    assert clis["rb_batch_cnt"] == "--rb-batch-cnt" and clis["rb_sampled"] == "--rb-sampled"
    assert clis["rb_sample_rate"] == "--rb-sample-rate"
    assert info.default_consumers == 1 and info.max_consumers == 1
    assert info.params["trigger"].choices == ("auto", "fentry", "tp")


INVALID = [
    ("rb-libbpf", dict(rb_b2b=True, producers=2), "single producer"),
    ("pb-custom", dict(rb_b2b=True, producers=2), "single producer"),
    ("rb-custom", dict(consumers=0), "exactly one consumer"),
    ("rb-libbpf", dict(rb_bench_producer=True), "consumers=0"),
    ("rb-libbpf", dict(rb_bench_producer=True, consumers=0, rb_sampled=True), "rb_sampled"),
    ("rb-libbpf", dict(ringbuf_sz=4096, record_size=8000), "record_size"),
    ("rb-libbpf", dict(ringbuf_sz=12288), "power of 2"),
    ("rb-custom", dict(rb_sampled=True, rb_sample_rate=100000), "never be woken"),
    ("pb-libbpf", dict(rb_b2b=True, rb_sampled=True, rb_batch_cnt=10, rb_sample_rate=20),
     "stall"),
    ("pb-libbpf", dict(perfbuf_sz=3), "power of 2"),
    ("pb-custom", dict(perfbuf_sz=1, record_size=8000), "record_size"),
    ("pb-custom", dict(record_size=65517), "record_size"),
    ("rb-libbpf", dict(record_size=4), "record_size"),
    ("rb-libbpf", dict(rb_batch_cnt=0), "rb_batch_cnt"),
    ("rb-libbpf", dict(trigger="kprobe"), "trigger"),
]


@pytest.mark.fast
@pytest.mark.parametrize("name,kw,match", INVALID)
def test_invalid_combinations_raise_before_loading(name, kw, match):
    with pytest.raises(ValueError, match=match):
        benchbpf.run(name, **{**SHORT, **kw})
    assert not our_progs_loaded()


def test_friendly_argument_errors():
    with pytest.raises(ValueError, match="sample_rate"):
        benchbpf.ringbuf(sampled=False, sample_rate=10)
    with pytest.raises(TypeError, match="rb_sampled"):
        benchbpf.ringbuf(sampled=True, rb_sampled=True)
    with pytest.raises(ValueError, match="consumer"):
        benchbpf.perfbuf(consumer="kernel")
    with pytest.raises(TypeError, match="use_output"):
        benchbpf.perfbuf(use_output=True, **SHORT)
    with pytest.raises(ValueError, match="unknown study"):
        ringbufs.study("nope")
    assert not our_progs_loaded()


@pytest.mark.fast
def test_layout_of_the_python_api():
    assert isinstance(ringbufs, types.ModuleType)
    # benchbpf.ringbuf is the module itself (STUDIES reachable), and callable.
    assert benchbpf.ringbuf is ringbufs and callable(benchbpf.ringbuf)
    assert benchbpf.ringbuf.STUDIES is ringbufs.STUDIES
    assert benchbpf.perfbuf is ringbufs.perfbuf
    assert benchbpf.ringbuf_study is ringbufs.study
    assert set(ringbufs.STUDIES) >= {
        "single_producer_parallel", "single_producer_sampled", "back_to_back",
        "back_to_back_sampled", "ringbuf_sample_rate_sweep", "perfbuf_sample_rate_sweep",
        "reserve_vs_output", "reserve_vs_output_sampled", "same_cpu", "multi_producer",
        "perfbuf_multi_producer", "record_size_sweep"}


def test_all_studies_plan_the_kernel_scripts_62_configurations():
    """ringbuf_study() without a name: run_bench_ringbufs.sh's configurations,
    in its sections' order (planned here, not run)."""
    plans = [ringbufs._PLANS[n](**({"producer_counts": ringbufs.PRODUCER_COUNTS}
                                   if n == "multi_producer" else {}))
             for n in ringbufs.KERNEL_SCRIPT_STUDIES]
    calls = [c for p in plans for c in p.calls]
    assert len(calls) == 62
    assert [n for _, n, _ in calls].count("rb-libbpf") == 5 + 16
    multi = [kw["producers"] for _, n, kw in plans[-1].calls]
    assert multi == [1, 2, 3, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52]
    assert all(kw["rb_batch_cnt"] == 50 for _, _, kw in plans[-1].calls)
    same_cpu = plans[ringbufs.KERNEL_SCRIPT_STUDIES.index("same_cpu")].calls
    assert all(kw["prod_affinity"] == [0] and kw["cons_affinity"] == [0]
               and kw["rb_batch_cnt"] == 1 for _, _, kw in same_cpu)
    # Every other configuration pins as the script's "-a" does, also where
    # the threads outnumber the CPUs (32 producers on 2 CPUs: 16 to a CPU).
    assert all(kw["affinity"] is True for p in plans if p is not plans[
        ringbufs.KERNEL_SCRIPT_STUDIES.index("same_cpu")] for _, _, kw in p.calls)
    assert ringbufs._PLANS["multi_producer"](producer_counts=[32],
                                             affinity=False).calls[0][2]["affinity"] is False


def test_all_studies_refuse_a_bad_option_before_loading():
    with rejected_before_loading(ValueError, "precision=0.9"):
        ringbufs.study(precision=0.9, progress=False)


def test_a_precision_study_interleaves_and_keeps_to_its_budget():
    try:
        res = ringbufs.study("reserve_vs_output", precision=0.001, budget=4, progress=False)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert list(res) == ["reserve", "output"]
    for r in res.values():
        assert r.stopped_by == "budget" and len(r.runs()) >= 1
        assert r.params["precision"] == 0.001 and r.params["rb_b2b"]
        assert all(total(u, "hits") > 0 for u in r.runs())
    assert not our_progs_loaded()


TINY = dict(warmup=0, duration=0.2, interval=0.2)


def test_study_runs_all_four():
    try:
        res = ringbufs.study("back_to_back", **TINY)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert list(res) == list(BENCHES)
    assert all(r.params["rb_b2b"] for r in res.values())
    assert all(total(r, "hits") > 0 for r in res.values())
    # A Study: a table, an HTML view and a plot, not a plain dict.
    assert isinstance(res, ringbufs.Study) and res.sweep is None
    rows = res.table()
    assert [row[0] for row in rows] == list(BENCHES)
    assert rows[0][1] == res["rb-libbpf"].median
    assert "rb-custom" in str(res) and "<table>" in res._repr_html_()
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = res.plot()
    assert len(ax.patches) == 4
    # Medians two decades apart (the perf buffer's back to back is far slower) go on a
    # log axis, others on a linear one from 0.
    medians = [r.median for r in res.values()]
    if min(medians) > 0 and max(medians) / min(medians) >= 100:
        assert ax.get_yscale() == "log" and ax.get_ylim()[0] > 0
    else:
        assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0


def test_called_module_runs_the_ring_buffer():
    r = benchbpf.ringbuf(**TINY, trigger="tp")
    assert r.name == "rb-libbpf" and total(r, "hits") > 0


def test_same_cpu_study_runs_batches_of_one():
    # Where its threads really run: tests/test_placement.py.
    try:
        res = ringbufs.same_cpu(**TINY)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    for r in res.values():
        assert r.params["rb_batch_cnt"] == 1
        assert total(r, "hits") > 0


def test_sweeps_return_sweeps():
    try:
        rates = ringbufs.perfbuf_sample_rate_sweep(rates=(1, 50), **TINY)
        prods = ringbufs.multi_producer(producer_counts=(1, 2), **TINY)
        sizes = ringbufs.record_size_sweep(sizes=(8, 4096), rb_use_output=True, **TINY)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert isinstance(rates, benchbpf.Sweep) and rates.values == (1, 50)
    assert rates[50].params["rb_batch_cnt"] == 50 and rates[50].params["rb_sampled"]
    assert [r.params["producers"] for r in prods.results] == [1, 2]
    assert all(r.params["rb_batch_cnt"] == 50 for r in prods.results)
    assert [r.params["record_size"] for r in sizes.results] == [8, 4096]
    assert all(r.throughput_mbps > 0 for r in sizes.results)
    with pytest.raises(ValueError, match="no values"):
        ringbufs.multi_producer(producer_counts=())


@pytest.mark.parametrize("name", ["rb-libbpf", "pb-libbpf"])
def test_counts_inside_its_own_pid_namespace(name):
    """In a new pid namespace with its own /proc (as in a container) /proc
    shows only the inner pid; the producer still filters on this process's
    id as the kernel knows it: its own calls emit, no one else's."""
    got, outer_pid = run_in_own_pid_namespace(name)
    assert sum(got["hits"]) > 0, got
    assert got["filter_tgids"] == [outer_pid] != [got["pid"]], (got, outer_pid)


# ---- the largest values that can still wake the consumer, and one more ----
# A ring buffer keeps at most ringbuf_sz - 1 bytes waiting (a reservation
# fails once the producer is a whole ring ahead), in records of their size
# plus an 8-byte header, rounded to 8: 16 bytes for 8-byte records.  A perf
# buffer writes while at most its size - 1 bytes are in use, and a sample
# after a loss carries a 24-byte lost-samples record: a raw sample of n
# bytes takes 8 + round_up(4 + n, 8).
EDGES = [
    ("rb-libbpf", dict(rb_sampled=True), "rb_sample_rate", (512 * 1024 - 1) // 16),
    ("rb-custom", dict(ringbuf_sz=PAGE, rb_sampled=True), "rb_sample_rate", (PAGE - 1) // 16),
    ("rb-custom", dict(ringbuf_sz=PAGE, rb_use_output=True), "record_size", PAGE - 16),
    ("rb-libbpf", dict(ringbuf_sz=PAGE), "record_size", PAGE - 16),
    ("pb-libbpf", dict(perfbuf_sz=1), "record_size", PAGE - 44),
    ("pb-custom", dict(perfbuf_sz=1), "record_size", PAGE - 44),
]


@pytest.mark.parametrize("name, kw, key, most", EDGES)
def test_largest_allowed_value_wakes_the_consumer(name, kw, key, most):
    r = run_or_skip(name, **kw, **{key: most})
    assert r.params[key] == most
    assert total(r, "hits") > 0
    assert_records_add_up(r)


@pytest.mark.parametrize("name, kw, key, most", EDGES)
def test_one_more_is_refused_before_loading(name, kw, key, most):
    with rejected_before_loading(ValueError, f"{key}={most + 1}", f"at most {most}"):
        benchbpf.run(name, **{**SHORT, **kw, key: most + 1})
    assert not our_progs_loaded()


def test_other_processes_calls_emit_nothing_inside_a_pid_namespace():
    """While another process calls getpgid() as fast as it can, a run inside
    its own pid namespace still emits records for its own calls only."""
    spinner = subprocess.Popen([sys.executable, "-c",
                                "import os\nwhile True: os.getpgid(0)"])
    try:
        got, _ = run_in_own_pid_namespace("rb-custom", rb_count_once=True)
    finally:
        spinner.kill()
        spinner.wait()
    t = got["totals"]
    assert t["runs"] == t["calls"] > 0, t
    assert t["hits"] + t["drops"] == got["params"]["rb_batch_cnt"] * t["runs"], t


def test_custom_reader_counts_as_the_kernel_bench_by_default():
    """rb-custom's default reader is the kernel bench's (a pass stopped at a
    busy record is read again); rb_count_once=True is the exact one, and
    means nothing to libbpf's reader, so it is refused there."""
    info = benchbpf.describe("rb-custom").params["rb_count_once"]
    assert info.default is False
    r = run_or_skip("rb-custom", rb_sampled=True)
    assert r.params["rb_count_once"] is False
    assert_records_add_up(r)
    with pytest.raises(TypeError, match="rb_count_once"):
        benchbpf.check("rb-libbpf", rb_count_once=True)
    with pytest.raises(TypeError, match="rb_bench_producer"):
        benchbpf.check("rb-custom", rb_bench_producer=True, consumers=0)
    assert "rb_count_once" not in benchbpf.describe("pb-custom").params
    assert "rb_count_once" not in benchbpf.describe("rb-libbpf").params


def test_perf_producer_loop_loads_only_the_batch_count(no_leaks):
    """Per record the perf buffer producer does the kernel bench's work:
    its loop reads the batch count (const volatile, as there), and the
    record size is read once per run, not once per record."""
    from loaded import loop_bodies, programs_while_running

    progs, _ = programs_while_running(run_or_skip, ["pb_tp"], bench="pb-libbpf",
                                      consumers=1, **SHORT)
    (insns,) = progs.values()
    (call,) = [x[0] for x in insns if "bpf_perf_event_output" in x[2]]
    (loop,) = [b for b in loop_bodies(insns) if call in (x[0] for x in b)]
    loads = [x for x in loop if "= *(u32 *)" in x[2]]
    assert len(loads) == 1, loop
