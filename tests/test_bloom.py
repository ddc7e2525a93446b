"""bloom-*, hashmap-*: bloom filter map operations counted per CPU in BPF."""
import math
import re
import subprocess
import sys

import pytest

import benchbpf
from benchbpf import bloom
from benchbpf.results._lines import progress_line, summary_line
from benchbpf.results.result import Result, Sample

from conftest import (SHORT, SHORT_SAMPLES, TP, TRIGGERS, counts_where_ran,
                      fentry_runs_or_says_why,
                      rejected_before_loading, run_in_own_pid_namespace, run_or_skip)

ALL = ["bloom-lookup", "bloom-update", "bloom-false-positive",
       "hashmap-without-bloom", "hashmap-with-bloom"]
#: Our programs and maps: bloom_lookup_*, bloom_update_*, bloom_hashmap_*,
#: producer_whoami, bloom_map and the skeleton's bloom_bp.* data maps.
PREFIXES = ("bloom_", "producer_whoami")
SUMMARY = re.compile(r"^Summary: (\d+) false hits of (\d+) total operations\. "
                     r"Percentage =  (\d+\.\d\d|nan) %$")
ITER = re.compile(r"^Iter +\d+ \( *-?\d+\.\d{3}us\): (\d+) false hits of (\d+) total "
                  r"operations\. Percentage = (\d+\.\d\d|nan) %$")


def run(name, **kw):
    return run_or_skip(name, **kw)


def totals(r):
    keep = r.samples
    return (sum(s.hits for s in keep), sum(s.drops for s in keep),
            sum(s.false_hits for s in keep))


@pytest.mark.fast
def test_registry_has_the_family():
    assert benchbpf.list_benchmarks("bloom") == ALL
    assert list(bloom.BENCHMARKS.values()) == ALL
    for name in ALL:
        info = benchbpf.describe(name)
        assert info.needs_bpf
        assert info.max_consumers == 0 and info.default_consumers == 0
        assert info.report == ("false_hits" if name == "bloom-false-positive"
                               else "hits_drops")
        p = info.params
        assert list(p) == ["nr_entries", "nr_hash_funcs", "value_size", "trigger"]
        # The kernel bench's flags, defaults and ranges (nr_entries capped).
        assert (p["nr_entries"].cli, p["nr_entries"].default, p["nr_entries"].min,
                p["nr_entries"].max) == ("--nr_entries", 1000, 1, bloom.MAX_ENTRIES)
        assert (p["nr_hash_funcs"].cli, p["nr_hash_funcs"].default, p["nr_hash_funcs"].min,
                p["nr_hash_funcs"].max) == ("--nr_hash_funcs", 3, 1, 15)
        assert (p["value_size"].cli, p["value_size"].default, p["value_size"].min,
                p["value_size"].max) == ("--value_size", 8, 2, 256)
        assert p["trigger"].choices == bloom.TRIGGERS and p["trigger"].default == "auto"


@pytest.mark.fast
@pytest.mark.parametrize("name", ALL)
def test_each_benchmark_runs_and_counts(name, no_leaks):
    r = run(name)
    assert r.name == name and len(r.samples) == SHORT_SAMPLES
    assert r.metadata["trigger"] in TRIGGERS
    assert r.params["nr_entries"] == 1000 and r.params["nr_hash_funcs"] == 3
    assert r.params["value_size"] == 8 and r.params["trigger"] == "auto"
    hits, drops, false_hits = totals(r)
    if name in ("bloom-lookup", "bloom-update"):
        # Every peek finds its value (no false negatives), every push succeeds.
        assert counts_where_ran(r.samples), r.samples
        assert drops == 0 and false_hits == 0
    elif name == "hashmap-without-bloom":
        # Random keys are never in the hashmap: every lookup is a drop.
        assert all(s.drops > 0 for s in r.samples), r.samples
        assert hits == 0 and false_hits == 0
    elif name == "hashmap-with-bloom":
        # Most keys are ruled out by the filter (hits); its false positives
        # are looked up and missing (drops).  No false hits counted here.
        assert all(s.hits > 0 and s.drops > 0 for s in r.samples), r.samples
        assert drops < hits and false_hits == 0
    else:
        # Each false positive is counted twice, as a drop and a false hit
        # (a sample may split the two increments of the last one).
        assert all(s.hits > 0 and s.false_hits > 0 for s in r.samples), r.samples
        assert abs(drops - false_hits) <= 4 * r.producers
        assert 0 < r.false_positive_pct < 100


def test_false_positive_rate_and_report_lines():
    lines = []
    r = run("bloom-false-positive",
            callback=lambda s, i, w: lines.append(progress_line("false_hits", i, s, 1,
                                                                200_000_000)))
    hits, drops, false_hits = totals(r)
    pct = 100 * false_hits / (hits + drops + false_hits)
    assert r.false_positive_pct == pytest.approx(pct)
    # 1000 entries, 3 hash functions: a 8192-bit filter, (1 - e^(-3000/8192))^3
    # = 2.9 % of lookups are false positives, about 2.8 % as the kernel bench
    # counts (false hits / (lookups + false hits)).
    assert 1.0 < r.false_positive_pct < 6.0
    m = SUMMARY.match(r.summary())
    assert m, r.summary()
    assert int(m.group(1)) == false_hits
    assert int(m.group(2)) == hits + drops + false_hits
    assert float(m.group(3)) == pytest.approx(pct, abs=0.006)
    assert len(lines) == 1 + SHORT_SAMPLES
    assert all(ITER.match(line) for line in lines), lines


def test_small_filter_has_more_false_positives():
    small = run("bloom-false-positive", nr_entries=100, nr_hash_funcs=1)
    # 100 entries, 1 hash function: 140 bits rounded up to 256, so 1 - e^(-100/256)
    # = 32 % of lookups are false positives, 24 % as the kernel bench counts.
    assert 0 < small.false_positive_pct < 100
    assert small.false_positive_pct > 10
    assert small.params["nr_entries"] == 100 and small.params["nr_hash_funcs"] == 1


@pytest.mark.parametrize("name, kw", [
    ("hashmap-with-bloom", dict(value_size=2, nr_entries=20000)),   # keys drawn again
    ("hashmap-with-bloom", dict(value_size=256)),
    ("bloom-lookup", dict(value_size=256, nr_hash_funcs=15)),
    ("bloom-update", dict(nr_entries=1)),
])
def test_other_sizes(name, kw, no_leaks):
    r = run(name, **kw)
    assert counts_where_ran(r.samples)
    for k, v in kw.items():
        assert r.params[k] == v


def test_several_producers():
    r = run("bloom-lookup", producers=2)
    assert r.params["producers"] == 2
    assert counts_where_ran(r.samples)


def test_explicit_tracepoint_trigger():
    r = run("hashmap-with-bloom", trigger="tp")
    assert r.metadata["trigger"] == TP
    assert r.params["trigger"] == "tp"


@pytest.mark.parametrize("name", ["bloom-lookup", "hashmap-without-bloom"])
def test_fentry_trigger_runs_or_says_why(name, no_leaks):
    r = fentry_runs_or_says_why(lambda **kw: benchbpf.run(name, **kw), name, PREFIXES)
    assert totals(r)[0] + totals(r)[1] > 0


@pytest.mark.fast
@pytest.mark.parametrize("key, value, allowed", [
    ("nr_entries", 0, f"1..{bloom.MAX_ENTRIES}"),
    ("nr_entries", bloom.MAX_ENTRIES + 1, f"1..{bloom.MAX_ENTRIES}"),
    ("nr_hash_funcs", 0, "1..15"),
    ("nr_hash_funcs", 16, "1..15"),
    ("value_size", 1, "2..256"),
    ("value_size", 257, "2..256"),
])
@pytest.mark.parametrize("name", ["bloom-lookup", "hashmap-with-bloom"])
def test_out_of_range_params_rejected_before_loading(name, key, value, allowed):
    with rejected_before_loading(ValueError, f"{key}={value}", allowed):
        benchbpf.run(name, **{**SHORT, key: value})


@pytest.mark.fast
@pytest.mark.parametrize("kw, words", [
    (dict(value_size=2, nr_entries=65537), ("nr_entries=65537", "value_size=2", "65536")),
    (dict(consumers=1), ("consumers=1",)),
    (dict(trigger="kprobe"), ("trigger", "'fentry'")),
    (dict(nr_entries=10.0), ("nr_entries",)),
])
def test_invalid_combinations_rejected_before_loading(kw, words):
    with rejected_before_loading((ValueError, TypeError), *words):
        benchbpf.run("hashmap-with-bloom", **{**SHORT, **kw})


@pytest.mark.parametrize("name, kw", [
    # As many entries as 2-byte values exist: the largest value_size=2 takes.
    ("bloom-lookup", dict(value_size=2, nr_entries=1 << 16)),
    # Every 2-byte key is in the hashmap: no lookup can miss.
    ("hashmap-with-bloom", dict(value_size=2, nr_entries=1 << 16)),
    # The most entries, with 3-byte values (2**24 of them: enough).
    ("bloom-lookup", dict(value_size=3, nr_entries=bloom.MAX_ENTRIES)),
])
def test_runs_at_the_edges(name, kw, no_leaks):
    r = run(name, **kw)
    assert counts_where_ran(r.samples), r.samples
    assert totals(r)[1] == 0      # lookups find every value they look for
    for k, v in kw.items():
        assert r.params[k] == v


@pytest.mark.fast
@pytest.mark.parametrize("func", sorted(bloom.BENCHMARKS))
def test_python_functions_name_their_benchmark(func):
    try:
        r = getattr(bloom, func)(nr_entries=500, warmup=0, duration=0.2, interval=0.2)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert r.name == bloom.BENCHMARKS[func]
    assert r.params["nr_entries"] == 500


def test_false_positive_pct_is_only_for_false_hit_benchmarks():
    def result(name, report, samples):
        return Result(name=name, params={"producers": 1}, samples=samples,
                      metadata={"report": report})

    r = result("bloom-false-positive", "false_hits",
               [Sample(200_000_000, hits=970, drops=15, false_hits=15),
                Sample(200_000_000, hits=970, drops=15, false_hits=15)])
    assert r.false_positive_pct == pytest.approx(100 * 30 / 2000)
    assert r.summary() == ("Summary: 30 false hits of 2000 total operations. "
                      "Percentage =  1.50 %")
    assert progress_line("false_hits", 3, r.samples[0], 1) == (
        "Iter   3 (-800000.000us): 15 false hits of 1000 total operations. "
        "Percentage = 1.50 %")
    empty = result("bloom-false-positive", "false_hits", [Sample(200_000_000)])
    assert math.isnan(empty.false_positive_pct)
    assert summary_line(empty).endswith("Percentage =  nan %")
    other = result("hashmap-with-bloom", "hits_drops",
                   [Sample(200_000_000, hits=970, drops=30)])
    with pytest.raises(ValueError, match="false_positive_pct"):
        other.false_positive_pct
    # Round trip through JSON keeps the report kind and so the figure.
    assert Result.from_json(r.to_json()).false_positive_pct == r.false_positive_pct


def test_cli_prints_false_hit_lines():
    out = subprocess.run([sys.executable, "-m", "benchbpf", "-w0", "-d1", "--interval",
                          "0.5", "--nr_entries", "2000", "--nr_hash_funcs", "2",
                          "bloom-false-positive"],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0 and "unavailable" in out.stderr:
        pytest.skip(out.stderr.strip())
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    iters = [line for line in lines if line.startswith("Iter")]
    assert len(iters) == 2 and all(ITER.match(line) for line in iters), lines
    assert SUMMARY.match(lines[-1]), lines


@pytest.mark.parametrize("name", ["bloom-lookup", "hashmap-with-bloom"])
def test_counts_inside_its_own_pid_namespace(name):
    """In a new pid namespace with its own /proc (as in a container) /proc
    shows only the inner pid; the filter still holds this process's id as
    the kernel knows it, so its own calls count and no one else's."""
    got, outer_pid = run_in_own_pid_namespace(name)
    assert sum(got["hits"]) > 0, got
    assert got["filter_tgids"] == [outer_pid] != [got["pid"]], (got, outer_pid)
