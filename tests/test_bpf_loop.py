"""bpf-loop: bpf_loop() iterations counted in BPF, the kernel bench's "ops" report."""
import os
import re

import pytest

import benchbpf
import leakcheck
from benchbpf import bpf_loop
from benchbpf.results._lines import progress_line, summary_line
from benchbpf.results.result import Result, Sample

from conftest import (SHORT, SHORT_SAMPLES, TP, TRIGGERS, counts_where_ran,
                      fentry_runs_or_says_why,
                      rejected_before_loading, run_in_own_pid_namespace, run_or_skip)

NAME = "bpf-loop"
#: Our programs (bpf_loop_tp, bpf_loop_fentry, producer_whoami) and maps
#: (bpf_loop.bss, .rodata).
PREFIXES = ("bpf_loop", "producer_whoami")
MAX_LOOPS = 1 << 23
OPS_SUMMARY = re.compile(r"^Summary: throughput +\d+\.\d{3} \u00b1 +\d+\.\d{3} M ops/s "
                         r"\( *\d+\.\d{3}M ops/prod\), latency +\d+\.\d{3} ns/op$")


def run(**kw):
    return run_or_skip(bpf_loop.loop, **kw)


@pytest.mark.fast
def test_registry_has_the_benchmark():
    assert benchbpf.list_benchmarks("bpf_loop") == [NAME]
    assert bpf_loop.BENCHMARKS == {"loop": NAME}
    info = benchbpf.describe(NAME)
    assert info.report == "ops"
    assert info.needs_bpf
    assert info.max_consumers == 0 and info.default_consumers == 0
    assert info.extra == ("loop_errors",)
    p = info.params["nr_loops"]
    assert (p.cli, p.default, p.min, p.max) == ("--nr_loops", 10, 1, MAX_LOOPS)
    assert bpf_loop.MAX_LOOPS == MAX_LOOPS
    t = info.params["trigger"]
    assert t.default == "auto" and t.choices == bpf_loop.TRIGGERS == ("auto", "fentry", "tp")


@pytest.mark.fast
def test_default_run_counts_iterations(no_leaks):
    r = run()
    assert r.name == NAME
    assert len(r.samples) == SHORT_SAMPLES and len(r.warmup_samples) == 1
    assert counts_where_ran(r.samples), r.samples
    assert all(s.extra["loop_errors"] == 0 and s.drops == 0 for s in r.samples)
    assert r.metadata["trigger"] in TRIGGERS
    assert r.metadata["report"] == "ops"
    assert r.params["nr_loops"] == 10 and r.params["trigger"] == "auto"
    assert r.params["consumers"] == 0
    assert OPS_SUMMARY.match(r.summary()), r.summary()


def test_hits_are_whole_bpf_loop_calls(no_leaks):
    """Every completed bpf_loop() call adds its nr_loops iterations at once."""
    r = run(nr_loops=7)
    assert all(s.hits > 0 and s.hits % 7 == 0 for s in r.samples + r.warmup_samples)


def test_largest_accepted_nr_loops_runs(no_leaks):
    """1 << 23 is what bpf_loop() accepts: it runs, with no error, and the
    figure counts real iterations (whole calls of 1 << 23)."""
    r = run(nr_loops=MAX_LOOPS)
    assert sum(s.hits for s in r.samples) > 0
    assert all(s.hits % MAX_LOOPS == 0 for s in r.samples)
    assert all(s.extra["loop_errors"] == 0 for s in r.samples)


def test_explicit_tracepoint_trigger(no_leaks):
    r = run(trigger="tp")
    assert r.metadata["trigger"] == TP
    assert r.params["trigger"] == "tp"
    assert counts_where_ran(r.samples)


def test_fentry_trigger_runs_or_says_why(no_leaks):
    r = fentry_runs_or_says_why(bpf_loop.loop, NAME, PREFIXES)
    assert counts_where_ran(r.samples)


@pytest.mark.fast
@pytest.mark.parametrize("value", [0, -1, MAX_LOOPS + 1, 1 << 32, 1 << 40])
def test_nr_loops_out_of_range_rejected_before_loading(value):
    with rejected_before_loading(ValueError, f"nr_loops={value}", f"1..{MAX_LOOPS}"):
        bpf_loop.loop(nr_loops=value, **SHORT)


@pytest.mark.fast
@pytest.mark.parametrize("kw, exc, words", [
    (dict(nr_loops="10"), TypeError, ("nr_loops",)),
    (dict(nr_loops=10.0), TypeError, ("nr_loops",)),
    (dict(trigger="kprobe"), ValueError, ("trigger", "'fentry'")),
    (dict(consumers=1), ValueError, ("consumers=1",)),
    (dict(cmp_str_len=8), TypeError, ("cmp_str_len",)),
])
def test_bad_options_rejected_before_loading(kw, exc, words):
    with rejected_before_loading(exc, *words):
        benchbpf.run(NAME, **{**SHORT, **kw})


# ---- a bpf_loop() failure at run time voids the run ----

def _var_offset(btf_id, section, var):
    types = leakcheck.bpftool("btf", "dump", "id", str(btf_id))["types"]
    by_id = {t["id"]: t for t in types}
    for t in types:
        if t["kind"] == "DATASEC" and t["name"] == section:
            for v in t["vars"]:
                if by_id[v["type_id"]]["name"] == var:
                    return v["offset"], v["size"]
    raise AssertionError(f"no {var} in {section}")


def _set_nr_loops(value):
    """Overwrite the running program's nr_loops behind the library's back."""
    (m,) = leakcheck.held_data_maps(".bss", "bpf_loop")
    off, size = _var_offset(m["btf_id"], ".bss", "nr_loops")
    assert size == 4
    cur = leakcheck.bpftool("map", "lookup", "id", str(m["id"]), "key", "0", "0", "0", "0")
    raw = [int(b, 16) for b in cur["value"]]
    raw[off:off + 4] = list(value.to_bytes(4, "little"))
    leakcheck.bpftool("map", "update", "id", str(m["id"]), "key", "0", "0", "0", "0",
             "value", *[str(b) for b in raw])


@pytest.mark.parametrize("count_returned", [False, True])
def test_runtime_bpf_loop_error_fails_the_run(count_returned, no_leaks):
    """Should bpf_loop() refuse a call while the benchmark runs (here: its
    nr_loops raised past the kernel's limit from outside), the run raises
    BenchmarkError naming the error instead of returning a figure: from the
    program's nr_loops by default, from the failed calls themselves with
    count_returned=True."""
    seen = []

    def tamper(sample, index, warmup):
        seen.append(sample)
        if index == 0:
            _set_nr_loops(MAX_LOOPS * 2)

    with pytest.raises(benchbpf.BenchmarkError) as info:
        try:
            bpf_loop.loop(count_returned=count_returned, warmup=0.2, duration=2.0,
                          interval=0.2, callback=tamper)
        except benchbpf.UnsupportedError as e:
            pytest.skip(str(e))
    msg = str(info.value)
    assert not isinstance(info.value, benchbpf.UnsupportedError)
    assert "bpf_loop() failed" in msg and "E2BIG" in msg, msg
    assert f"nr_loops={MAX_LOOPS * 2}" in msg, msg
    # The run stopped at the first interval that saw the failure.
    assert seen[0].hits > 0 and seen[0].extra["loop_errors"] == 0
    assert len(seen) < 11
    if count_returned:
        assert seen[-1].extra["loop_errors"] > 0


@pytest.mark.parametrize("count_returned", [False, True])
def test_count_is_the_kernel_benchs_unless_asked(count_returned, no_leaks):
    """By default each bpf_loop() call adds nr_loops, as the kernel bench's
    program: nothing tests what the call returned.  count_returned=True
    loads the program that adds what each call reports done."""
    from loaded import programs_while_running

    progs, r = programs_while_running(run, ["bpf_loop"], count_returned=count_returned)
    (name, insns), = progs.items()
    assert name == ("bpf_loop_returned_tp" if count_returned else "bpf_loop_tp")
    signed_tests = [t for _, op, t in insns if " s> " in t or " s< " in t]
    assert bool(signed_tests) == count_returned, insns
    assert r.params["count_returned"] is count_returned
    assert all(s.hits > 0 and s.hits % 10 == 0 for s in r.samples)


# ---- the kernel bench's "ops" lines (ops_report_progress / ops_report_final) ----

def _ops_result(hits, producers, interval_ns=1_000_000_000):
    samples = [Sample(interval_ns, h) for h in hits]
    return Result(name=NAME, params={"producers": producers}, samples=samples,
                  metadata={"report": "ops"})


def test_ops_summary_line_is_the_kernel_format():
    # mean 110, sample stddev 10; latency per producer = 1000 / 110 * 2
    r = _ops_result([100_000_000, 110_000_000, 120_000_000], producers=2)
    assert summary_line(r) == r.summary() == (
        "Summary: throughput  110.000 \u00b1 10.000 M ops/s ( 55.000M ops/prod), "
        "latency   18.182 ns/op")
    one = _ops_result([400_000_000], producers=1)
    assert one.summary() == ("Summary: throughput  400.000 \u00b1 0.000 M ops/s "
                        "(400.000M ops/prod), latency    2.500 ns/op")


def test_ops_progress_line_is_the_kernel_format():
    s = Sample(1_000_012_500, 300_003_750)
    assert progress_line("ops", 3, s, 2) == (
        "Iter   3 ( 12.500us): hits  300.000M/s (150.000M/prod)")


# ---- only this process's getpgid() calls count, whatever its pid namespace ----

def test_filter_is_this_process(no_leaks):
    seen = []

    def look(sample, index, warmup):
        if index == 0:
            seen.extend(leakcheck.held_data_vars(".bss", "bpf_loop"))

    run(callback=look)
    (bss,) = seen
    assert bss["filter_tgid"] != 0
    # In the initial pid namespace (the kernel's fixed inode number for it)
    # the id BPF sees is our pid.
    if os.readlink("/proc/self/ns/pid") == "pid:[4026531836]":
        assert bss["filter_tgid"] == os.getpid()


def test_counts_inside_its_own_pid_namespace():
    got, outer_pid = run_in_own_pid_namespace(NAME)
    assert sum(got["hits"]) > 0, got
    assert got["filter_tgids"] == [outer_pid] != [got["pid"]], (got, outer_pid)
