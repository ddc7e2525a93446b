"""strncmp-no-helper, strncmp-helper: string comparisons counted in BPF."""
import re

import pytest

import benchbpf
from benchbpf import strncmp

from conftest import (SHORT, SHORT_SAMPLES, TP, fentry_runs_or_says_why,
                      rejected_before_loading, run_in_own_pid_namespace, run_or_skip)

ALL = ["strncmp-no-helper", "strncmp-helper"]
FUNCS = {"strncmp-no-helper": strncmp.no_helper, "strncmp-helper": strncmp.helper}
#: Our programs (strncmp_no_helper_*, strncmp_helper_*, producer_whoami) and
#: maps (strncmp_.bss, ...).
PREFIXES = ("strncmp", "producer_whoami")
MAX_LEN = 4095
SUMMARY = re.compile(r"^Summary: hits +\d+\.\d{3} \u00b1 +\d+\.\d{3}M/s \( *\d+\.\d{3}M/prod\), "
                     r"drops +0\.000 \u00b1 0\.000M/s, total operations +\d+\.\d{3} \u00b1 "
                     r"+\d+\.\d{3}M/s$")


def run(name, **kw):
    return run_or_skip(FUNCS[name], **kw)


@pytest.mark.fast
def test_registry_has_the_family():
    assert benchbpf.list_benchmarks("strncmp") == ALL
    assert list(strncmp.BENCHMARKS.values()) == ALL
    assert strncmp.MAX_CMP_STR_LEN == MAX_LEN
    for name in ALL:
        info = benchbpf.describe(name)
        assert info.report == "hits_drops" and info.needs_bpf
        assert info.max_consumers == 0 and info.default_consumers == 0
        p = info.params["cmp_str_len"]
        assert (p.cli, p.default, p.min, p.max) == ("--cmp-str-len", 32, 1, MAX_LEN)
        assert info.params["trigger"].choices == strncmp.TRIGGERS == ("auto", "fentry", "tp")


@pytest.mark.fast
@pytest.mark.parametrize("name", ALL)
def test_default_run_counts_comparisons(name, no_leaks):
    r = run(name)
    assert r.name == name
    assert len(r.samples) == SHORT_SAMPLES
    assert all(s.hits > 0 and s.drops == 0 for s in r.samples), r.samples
    # The kernel bench attaches these to the tracepoint: so does auto.
    assert r.metadata["trigger"] == TP
    assert r.params["cmp_str_len"] == 32 and r.params["trigger"] == "auto"
    assert r.params["consumers"] == 0
    assert SUMMARY.match(r.summary()), r.summary()


@pytest.mark.parametrize("length", [1, 8, 512, MAX_LEN])
@pytest.mark.parametrize("name", ALL)
def test_every_length_loads_and_compares(name, length, no_leaks):
    """Every comparison finds the string smaller (a hit), at both ends of
    the range too: 1 character, and the whole 4095."""
    r = run(name, cmp_str_len=length)
    assert all(s.hits > 0 for s in r.samples), r.samples
    assert r.params["cmp_str_len"] == length


def test_longer_strings_cost_more(no_leaks):
    """Not a timing threshold: walking 4095 characters byte by byte is
    orders of magnitude more work than walking 1."""
    short = run("strncmp-no-helper", cmp_str_len=1)
    long = run("strncmp-no-helper", cmp_str_len=MAX_LEN)
    assert long.median < short.median


def test_explicit_tracepoint_trigger(no_leaks):
    r = run("strncmp-helper", trigger="tp")
    assert r.metadata["trigger"] == TP and r.params["trigger"] == "tp"


@pytest.mark.parametrize("name", ALL)
def test_fentry_trigger_runs_or_says_why(name, no_leaks):
    r = fentry_runs_or_says_why(FUNCS[name], name, PREFIXES)
    assert all(s.hits > 0 for s in r.samples)


@pytest.mark.fast
@pytest.mark.parametrize("value", [0, -1, MAX_LEN + 1, 1 << 40])
@pytest.mark.parametrize("name", ALL)
def test_cmp_str_len_out_of_range_rejected_before_loading(name, value):
    with rejected_before_loading(ValueError, f"cmp_str_len={value}", f"1..{MAX_LEN}"):
        FUNCS[name](cmp_str_len=value, **SHORT)


@pytest.mark.fast
@pytest.mark.parametrize("kw, exc, words", [
    (dict(cmp_str_len="8"), TypeError, ("cmp_str_len",)),
    (dict(trigger="raw_tp"), ValueError, ("trigger", "'tp'")),
    (dict(consumers=1), ValueError, ("consumers=1",)),
    (dict(nr_loops=10), TypeError, ("nr_loops",)),
])
def test_bad_options_rejected_before_loading(kw, exc, words):
    with rejected_before_loading(exc, *words):
        benchbpf.run("strncmp-helper", **{**SHORT, **kw})


@pytest.mark.parametrize("name", ALL)
def test_counts_inside_its_own_pid_namespace(name):
    """In a new pid namespace with its own /proc (as in a container) /proc
    shows only the inner pid; the comparisons of this process still count."""
    got, outer_pid = run_in_own_pid_namespace(name)
    assert sum(got["hits"]) > 0, got
    assert got["filter_tgids"] == [outer_pid] != [got["pid"]], (got, outer_pid)


def test_no_helper_loop_is_the_kernel_benchs(no_leaks):
    """The per-character loop keeps the target's address in a register, as
    the kernel bench's (barrier_var) does: one 64-bit map address load per
    character (the compared string's), as there, not two."""
    from loaded import loop_bodies, programs_while_running

    progs, _ = programs_while_running(run, ["strncmp_no_helper"], name="strncmp-no-helper",
                                      **SHORT)
    (insns,) = progs.values()
    loops = [b for b in loop_bodies(insns) if sum("*(u8 *)" in t for _, _, t in b) == 2]
    assert len(loops) == 1, loops
    assert len([x for x in loops[0] if x[1] == "18"]) == 1, loops[0]
