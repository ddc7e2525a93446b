"""lpm-trie: the seven kernel-bench operations on an LPM trie, each a real
short run; the options' range edges; the combinations refused before loading."""
import re

import pytest

import benchbpf
from benchbpf import lpm_trie
from benchbpf.harness.features import missing_features

from conftest import SHORT, SHORT_SAMPLES, rejected_before_loading, run_or_skip

PREFIXES = ("lpm_", "trie_map", "trie_free_map")
OPS = re.compile(r"^Summary: throughput +\d+\.\d{3} \u00b1 +\d+\.\d{3} M ops/s "
                 r"\( *\d+\.\d{3}M ops/prod\), latency +\d+\.\d{3} ns/op$")
FRAC = re.compile(r"^Summary: throughput +\d+\.\d{3} \u00b1 +\d+\.\d{3} M ops/s "
                  r"\( *\d+\.\d{3}M ops/prod\), latency +\d+\.\d{3} ns/op$")
RUNNABLE = ("noop", "baseline", "lookup", "insert", "update", "delete")


@pytest.mark.fast
def test_registry_has_the_seven():
    assert benchbpf.list_benchmarks("lpm_trie") == [f"lpm-trie-{op}" for op in (
        "noop", "baseline", "lookup", "insert", "update", "delete", "free")]
    info = benchbpf.describe("lpm-trie-lookup")
    p = info.params
    assert (p["nr_entries"].cli, p["nr_entries"].min, p["nr_entries"].max,
            p["nr_entries"].required, p["nr_entries"].default) == \
        ("--nr_entries", 1, 100_000_000, True, None)
    assert (p["prefix_len"].cli, p["prefix_len"].default, p["prefix_len"].min,
            p["prefix_len"].max) == ("--prefix_len", 32, 1, 32)
    assert (p["random"].cli, p["random"].default) == ("--random", False)
    for op in ("insert", "delete", "free"):
        assert benchbpf.describe(f"lpm-trie-{op}").max_producers == 1
    assert benchbpf.describe("lpm-trie-insert").report == "lpm_trie_frac"
    assert benchbpf.describe("lpm-trie-free").report == "lpm_trie_free"


@pytest.mark.fast
@pytest.mark.parametrize("op", RUNNABLE)
def test_each_operation_runs(op, no_leaks):
    r = run_or_skip(getattr(lpm_trie, op), nr_entries=1000)
    assert len(r.samples) == SHORT_SAMPLES
    # A busy machine may leave the producer off the CPU for a whole sample.
    assert sum(s.hits for s in r.samples) > 0, r.samples
    assert all((s.hits > 0) == (s.extra["duration_ns"] > 0) for s in r.samples), r.samples
    assert all(s.hits % lpm_trie.NR_LOOPS == 0 for s in r.samples
               if op in ("noop", "baseline", "lookup", "update"))
    line = r.summary()
    assert (FRAC if op in ("insert", "delete") else OPS).match(line), line
    if op in ("insert", "delete"):
        assert any(x > 0 for x in lpm_trie.frac_rates(r))


def test_insert_and_delete_reset_the_trie(no_leaks):
    """With 10 entries each run empties (insert) or refills (delete) the
    trie: thousands of resets, and the run still counts only operations."""
    for op in ("insert", "delete"):
        r = run_or_skip(getattr(lpm_trie, op), nr_entries=10)
        assert sum(s.hits for s in r.samples) > 100


def test_random_keys(no_leaks):
    for op in ("baseline", "lookup", "update"):
        r = run_or_skip(getattr(lpm_trie, op), nr_entries=100, random=True)
        assert r.params["random"] is True and sum(s.hits for s in r.samples) > 0


def test_range_edges_run(no_leaks):
    run_or_skip(lpm_trie.lookup, nr_entries=1, prefix_len=1)
    run_or_skip(lpm_trie.lookup, nr_entries=2, prefix_len=1)
    run_or_skip(lpm_trie.update, nr_entries=256, prefix_len=8)
    # Largest nr_entries: noop and baseline take it without filling a trie.
    run_or_skip(lpm_trie.baseline, nr_entries=lpm_trie.MAX_ENTRIES)


def test_free_needs_fentry_or_runs(no_leaks):
    try:
        r = lpm_trie.free(nr_entries=100, **SHORT)
    except benchbpf.UnsupportedError as e:
        assert "lpm-trie-free" in str(e) and "fentry" in str(e)
        assert "EPERM" in str(e) or "not permitted" in str(e)
        assert "fentry" in missing_features("lpm-trie-free")
        # The other six need no fentry.
        assert not missing_features("lpm-trie-lookup")
    else:
        assert sum(s.hits for s in r.samples) > 0
        assert r.summary().endswith("ms/op")


@pytest.mark.fast
@pytest.mark.parametrize("kw, words", [
    (dict(), ("lpm-trie-lookup needs nr_entries", "1..100000000")),
    (dict(nr_entries=0), ("nr_entries=0", "1..100000000")),
    (dict(nr_entries=100_000_001), ("nr_entries=100000001", "1..100000000")),
    (dict(nr_entries=10, prefix_len=0), ("prefix_len=0", "1..32")),
    (dict(nr_entries=10, prefix_len=33), ("prefix_len=33", "1..32")),
    (dict(nr_entries=5, prefix_len=2), ("prefix_len=2", "nr_entries=5", "3..32")),
])
def test_bad_values_refused_before_loading(kw, words):
    with rejected_before_loading(ValueError, *words):
        benchbpf.run("lpm-trie-lookup", **SHORT, **kw)


@pytest.mark.parametrize("op", ("insert", "delete", "free"))
def test_single_producer_no_random(op):
    name = f"lpm-trie-{op}"
    with rejected_before_loading(ValueError, "producers=2", "1..1"):
        benchbpf.run(name, nr_entries=10, producers=2, **SHORT)
    with rejected_before_loading(TypeError, "random", name):
        benchbpf.run(name, nr_entries=10, random=True, **SHORT)
    assert "random" not in benchbpf.describe(name).params


def test_a_trie_too_big_for_memory_is_refused():
    with rejected_before_loading(ValueError, "nr_entries=100000000", "free"):
        try:
            benchbpf.check("lpm-trie-lookup", nr_entries=lpm_trie.MAX_ENTRIES)
        except ValueError:
            raise
        else:   # a machine with 25 GB free: nothing to refuse
            pytest.skip("this machine could hold a 100M-entry trie")


def test_consumers_refused():
    with rejected_before_loading(ValueError, "consumers=1"):
        lpm_trie.noop(10, consumers=1, **SHORT)
