"""Trigger family: every benchmark runs for real (or says why it cannot)."""
import pytest

import benchbpf
from benchbpf import trigger

import leakcheck
from conftest import SHORT, SHORT_SAMPLES, counts_where_ran, run_or_skip

KERNEL_DRIVEN = ["trig-kernel-count", "trig-tp", "trig-rawtp", "trig-kprobe",
                 "trig-kretprobe", "trig-kprobe-multi", "trig-kretprobe-multi",
                 "trig-fentry", "trig-fexit", "trig-fmodret"]
UPROBES = [trigger.uprobe_name(kind, ret, multi)
           for multi in (False, True) for ret in (False, True)
           for kind in trigger.UPROBE_KINDS]
USER_COUNTED = ["trig-syscall-count", "trig-usermode-count"]
ALL = USER_COUNTED + KERNEL_DRIVEN + UPROBES + ["trig-usdt-nop"]

#: Hook kinds a locked-down kernel may refuse, and the feature each names.
MAY_BE_REFUSED = {
    "trig-kprobe": "kprobes", "trig-kretprobe": "kretprobes",
    "trig-kprobe-multi": "kprobe-multi", "trig-kretprobe-multi": "kretprobe-multi",
    "trig-fentry": "fentry", "trig-fexit": "fexit", "trig-fmodret": "fmod_ret",
}
ERRNO_NAMES = ("EPERM", "ENOENT", "EOPNOTSUPP", "ENOTSUPP", "ENOSYS", "EINVAL")


def left_behind():
    return leakcheck.left_behind("trig_")


def test_registry_has_the_whole_family():
    assert set(ALL) <= set(benchbpf.list_benchmarks("trigger"))
    for name in ALL:
        info = benchbpf.describe(name)
        assert info.max_consumers == 0 and info.default_consumers == 0
        if name in KERNEL_DRIVEN:
            p = info.params["trig_batch_iters"]
            assert (p.cli, p.default, p.min, p.max) == ("--trig-batch-iters", 100, 1, 1000)
        else:
            assert "trig_batch_iters" not in info.params
    assert not benchbpf.describe("trig-syscall-count").needs_bpf


@pytest.mark.parametrize("name", ALL)
def test_runs_and_counts_hits(name):
    r = run_or_skip(name)
    assert len(r.samples) == SHORT_SAMPLES
    assert counts_where_ran(r.samples) and all(s.drops == 0 for s in r.samples), r.samples
    assert r.mean > 0
    assert r.metadata["trigger"]
    if name in KERNEL_DRIVEN:
        assert r.params["trig_batch_iters"] == 100
    assert left_behind() == []


@pytest.mark.parametrize("name", sorted(MAY_BE_REFUSED))
def test_refused_hooks_say_what_and_leave_nothing(name):
    """Where the kernel refuses the hook, the error names the feature and
    the kernel's errno, and nothing stays loaded; elsewhere it just runs."""
    seen = []
    try:
        r = benchbpf.run(name, **SHORT, callback=lambda *a: seen.append(a))
    except benchbpf.UnsupportedError as e:
        msg = str(e)
        assert MAY_BE_REFUSED[name] in msg and any(n in msg for n in ERRNO_NAMES), msg
        assert not seen, "samples were taken before the refusal"
    else:
        assert counts_where_ran(r.samples)
    assert left_behind() == []


def test_python_api_maps_batch_iters():
    r = trigger.rawtp(warmup=0, duration=0.4, interval=0.2, producers=2, batch_iters=7)
    assert r.params["trig_batch_iters"] == 7 and r.params["producers"] == 2
    assert "x7 " in r.metadata["trigger"]
    assert counts_where_ran(r.samples)


@pytest.mark.parametrize("name", ["trig-kernel-count", "trig-rawtp"])
@pytest.mark.parametrize("batch", [1, 7, 1000])
def test_driver_runs_the_asked_iterations(name, batch):
    """Hits per BPF_PROG_TEST_RUN call equal trig_batch_iters: counted, not
    read back from the parameter.  A sample boundary can split at most one
    run per producer, and the two counters are read one after the other (a
    few runs may land in between at batch 1), so each sample is exact to
    within one batch per producer and 1e-4 of its runs: a driver off by one
    iteration per run is off by all its runs."""
    producers = 2
    r = benchbpf.run(name, trig_batch_iters=batch, producers=producers, **SHORT)
    for s in r.samples:
        runs = s.extra["driver_runs"]
        assert abs(s.hits - batch * runs) <= batch * (producers + 1e-4 * runs), \
            (s.hits, runs, batch)
    hits = sum(s.hits for s in r.samples)
    runs = sum(s.extra["driver_runs"] for s in r.samples)
    assert runs > 0 and hits > 0
    assert abs(hits / runs - batch) <= batch * producers * len(r.samples) / runs
    assert left_behind() == []


@pytest.mark.parametrize("value", [0, -1, 1001, 10**6])
def test_batch_iters_out_of_range_is_rejected_before_loading(value):
    with pytest.raises(ValueError, match="trig_batch_iters"):
        trigger.tp(batch_iters=value, **SHORT)
    with pytest.raises(ValueError, match="trig_batch_iters"):
        benchbpf.run("trig-kernel-count", trig_batch_iters=value, **SHORT)
    assert left_behind() == []


def test_bad_options_are_rejected():
    with pytest.raises(TypeError, match="trig_batch_iters"):
        benchbpf.run("trig-uprobe-nop", trig_batch_iters=10, **SHORT)
    with pytest.raises(TypeError, match="batch_iters"):
        trigger.kernel_count(trig_batch_iters=10, **SHORT)
    with pytest.raises(TypeError, match="batch_iters"):
        trigger.rawtp(batch_iters=2.5, **SHORT)
    with pytest.raises(ValueError, match="consumer"):
        trigger.rawtp(consumers=1, **SHORT)
    with pytest.raises(ValueError, match="kind"):
        trigger.uprobe("jmp")
    with pytest.raises(TypeError, match="ret"):
        trigger.uprobe("nop", ret="yes")


def test_uprobe_names():
    assert trigger.uprobe_name() == "trig-uprobe-nop"
    assert trigger.uprobe_name("push", ret=True) == "trig-uretprobe-push"
    assert trigger.uprobe_name("ret", multi=True) == "trig-uprobe-multi-ret"
    assert trigger.uprobe_name("nop", ret=True, multi=True) == "trig-uretprobe-multi-nop"
    assert len(set(UPROBES)) == 12


def test_uprobe_function_runs_the_variant():
    try:
        r = trigger.uprobe("push", ret=True, multi=True, **SHORT)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert r.name == "trig-uretprobe-multi-push"
    assert "push" in r.metadata["trigger"] and "return" in r.metadata["trigger"]
    assert counts_where_ran(r.samples)
