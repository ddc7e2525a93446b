"""selftest's BPF-side knobs: bpf_work steps on a hit, and bpf_work_every,
which runs them on one counted hit in k.  What the program did is read from
the count it exposes (extra "worked": hits that ran the steps), never from
timing."""
import os

import pytest

import benchbpf
from conftest import rejected_before_loading

QUICK = dict(warmup=0.1, duration=0.3, interval=0.05)


def _worked_and_hits(**kw):
    r = benchbpf.run("selftest", **QUICK, **kw)
    # Warm-up samples too: the counts start at load, on both counters alike.
    samples = r.warmup_samples + r.samples
    return sum(s.extra["worked"] for s in samples), sum(s.hits for s in samples)


def test_without_bpf_work_no_hit_works():
    worked, hits = _worked_and_hits()
    assert hits > 0 and worked == 0


#: How far the two counts may be apart over a run: the hits are swapped and
#: the worked count read a moment apart in each sample, so hits in flight at
#: the last one are in one and not the other; and each CPU's slot starts its
#: count of k with a hit that works.
SLACK = 8 + (os.cpu_count() or 1)


def test_bpf_work_runs_on_every_hit():
    worked, hits = _worked_and_hits(bpf_work=10)
    assert hits > 100 and abs(worked - hits) <= SLACK, (worked, hits)


@pytest.mark.parametrize("every", [2, 5])
def test_bpf_work_every_runs_the_steps_on_one_hit_in_k(every):
    worked, hits = _worked_and_hits(bpf_work=10, bpf_work_every=every)
    assert hits > 100 * every
    assert abs(worked - hits / every) <= SLACK, (worked, hits)


def test_bpf_work_every_needs_bpf_work_and_a_range():
    with rejected_before_loading(ValueError, "bpf_work_every=3", "bpf_work=0"):
        benchbpf.run("selftest", bpf_work_every=3, **QUICK)
    with rejected_before_loading(ValueError, "bpf_work_every=0", "1..1000"):
        benchbpf.run("selftest", bpf_work=5, bpf_work_every=0, **QUICK)
