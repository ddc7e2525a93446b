"""Trigger family: every benchmark runs for real (or says why it cannot)."""
import os
import pytest

import benchbpf
from benchbpf import trigger

import leakcheck
from conftest import (SHORT, SHORT_SAMPLES, copy_package, counts_where_ran, ours_left_behind,
                      run_or_skip)

KERNEL_DRIVEN = ["trig-kernel-count", "trig-tp", "trig-rawtp", "trig-kprobe",
                 "trig-kretprobe", "trig-kprobe-multi", "trig-kretprobe-multi",
                 "trig-kprobe-multi-all", "trig-kretprobe-multi-all",
                 "trig-fentry", "trig-fexit", "trig-fmodret"]
#: The kernel-driven ones with a hooked program, which take stacktrace.
HOOKED = [n for n in KERNEL_DRIVEN if n != "trig-kernel-count"]
UPROBES = [trigger.uprobe_name(kind, ret, multi)
           for multi in (False, True) for ret in (False, True)
           for kind in trigger.UPROBE_KINDS]
USDT = ["trig-usdt-" + site for site in trigger.USDT_SITES]
USER_COUNTED = ["trig-syscall-count", "trig-usermode-count"]
ALL = USER_COUNTED + KERNEL_DRIVEN + UPROBES + USDT

#: Hook kinds a locked-down kernel may refuse, and the feature each names.
MAY_BE_REFUSED = {
    "trig-kprobe": "kprobes", "trig-kretprobe": "kretprobes",
    "trig-kprobe-multi": "kprobe-multi", "trig-kretprobe-multi": "kretprobe-multi",
    "trig-kprobe-multi-all": "kprobe-multi", "trig-kretprobe-multi-all": "kretprobe-multi",
    "trig-fentry": "fentry", "trig-fexit": "fexit", "trig-fmodret": "fmod_ret",
    "trig-uprobe-nop5": "5-byte nop", "trig-uprobe-multi-nop5": "5-byte nop",
    "trig-uprobe-nop10": "10-byte nop", "trig-uretprobe-nop10": "10-byte nop",
    "trig-uprobe-multi-nop10": "10-byte nop", "trig-uretprobe-multi-nop10": "10-byte nop",
}
ERRNO_NAMES = ("EPERM", "ENOENT", "EOPNOTSUPP", "ENOTSUPP", "ENOSYS", "EINVAL")


def left_behind():
    """trig_ objects this process holds, or nobody holds once the kernel had
    time for deferred frees (other processes' runs on this machine close
    theirs meanwhile, and those are listed, unheld, until freed)."""
    return ours_left_behind(("trig_",))


@pytest.mark.fast
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
        if name in HOOKED:
            p = info.params["stacktrace"]
            assert (p.cli, p.type, p.default) == ("--stacktrace", "bool", False)
        else:
            assert "stacktrace" not in info.params
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


@pytest.mark.fast
def test_python_api_maps_batch_iters():
    r = trigger.rawtp(warmup=0, duration=0.4, interval=0.2, producers=2, batch_iters=7)
    assert r.params["trig_batch_iters"] == 7 and r.params["producers"] == 2
    assert "x7 " in r.metadata["trigger"]
    assert counts_where_ran(r.samples)


@pytest.mark.parametrize("name", ["trig-kernel-count", "trig-rawtp"])
@pytest.mark.parametrize("batch", [1, 7, 1000])
def test_driver_runs_the_asked_iterations(name, batch):
    """Hits per BPF_PROG_TEST_RUN call equal trig_batch_iters: counted, not
    read back from the parameter.  The sampler reads the two counters one
    after the other, so a sampler preempted between the reads moves runs
    from one sample to the next; that happens at a few boundaries at most,
    so the median sample is exact to within one batch per producer and 1e-4
    of its runs, while a driver off by one iteration per run is off by all
    its runs in every sample."""
    producers = 2
    r = benchbpf.run(name, trig_batch_iters=batch, producers=producers,
                     warmup=0.2, duration=1.2, interval=0.1)
    assert len(r.samples) >= 10
    errors = sorted(
        abs(s.hits - batch * s.extra["driver_runs"])
        / (batch * (producers + 1e-4 * s.extra["driver_runs"]))
        for s in r.samples)
    assert all(s.extra["driver_runs"] > 0 and s.hits > 0 for s in r.samples)
    assert errors[len(errors) // 2] <= 1, errors
    assert left_behind() == []


@pytest.mark.fast
@pytest.mark.parametrize("value", [0, -1, 1001, 10**6])
def test_batch_iters_out_of_range_is_rejected_before_loading(value):
    with pytest.raises(ValueError, match="trig_batch_iters"):
        trigger.tp(batch_iters=value, **SHORT)
    with pytest.raises(ValueError, match="trig_batch_iters"):
        benchbpf.run("trig-kernel-count", trig_batch_iters=value, **SHORT)
    assert left_behind() == []


@pytest.mark.fast
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


@pytest.mark.fast
def test_uprobe_names():
    assert trigger.uprobe_name() == "trig-uprobe-nop"
    assert trigger.uprobe_name("push", ret=True) == "trig-uretprobe-push"
    assert trigger.uprobe_name("ret", multi=True) == "trig-uprobe-multi-ret"
    assert trigger.uprobe_name("nop", ret=True, multi=True) == "trig-uretprobe-multi-nop"
    assert trigger.uprobe_name("nop10", ret=True, multi=True) == "trig-uretprobe-multi-nop10"
    assert len(set(UPROBES)) == 20
    # upstream's names, the -nop5 ones and their -nop10 renames
    for n in ("trig-uprobe-nop5", "trig-uretprobe-nop5", "trig-uprobe-multi-nop5",
              "trig-uretprobe-multi-nop5", "trig-usdt-nop5", "trig-uprobe-nop10",
              "trig-uretprobe-nop10", "trig-uprobe-multi-nop10",
              "trig-uretprobe-multi-nop10", "trig-usdt-nop10"):
        assert n in ALL and n in benchbpf.list_benchmarks("trigger")


@pytest.mark.fast
def test_uprobe_function_runs_the_variant():
    try:
        r = trigger.uprobe("push", ret=True, multi=True, **SHORT)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert r.name == "trig-uretprobe-multi-push"
    assert "push" in r.metadata["trigger"] and "return" in r.metadata["trigger"]
    assert counts_where_ran(r.samples)


@pytest.mark.parametrize("site", ["nop5", "nop10"])
def test_uprobe_on_multibyte_nop_runs_or_is_refused_as_features_says(site):
    """A uprobe on a multi-byte nop runs where features() found the kernel
    takes one, and elsewhere is refused before loading with the probe's own
    words; the USDT site with that nop runs either way (the probe sits on
    its 1-byte nop)."""
    feature = benchbpf.features()["uprobe_" + site]
    setups = benchbpf._core.setup_count()
    if feature.supported:
        r = trigger.uprobe(site, **SHORT)
        assert counts_where_ran(r.samples)
        assert f"call of the {site} target (uprobe)" == r.metadata["trigger"]
    else:
        with pytest.raises(benchbpf.UnsupportedError) as info:
            trigger.uprobe(site, **SHORT)
        assert feature.detail in str(info.value)
        assert info.value.errno == feature.errno
        assert benchbpf._core.setup_count() == setups + 1
    from benchbpf.harness.features import requirements
    assert "uprobe_" + site in requirements("trig-uprobe-" + site)
    r = trigger.usdt(site, **SHORT)
    assert r.name == f"trig-usdt-{site}"
    assert f"trig_{site} (nop, {site})" in r.metadata["trigger"]
    assert counts_where_ran(r.samples)
    assert left_behind() == []


@pytest.mark.parametrize("name", ["trig-kprobe-multi-all", "trig-kretprobe-multi-all"])
def test_multi_all_is_decided_by_the_kprobe_multi_probe(name):
    """-multi-all asks the kernel (the features() probe) before it loads or
    lists anything: refused with that probe's reason where kprobe-multi links
    are missing, and -l marks it."""
    from benchbpf.harness.features import missing_features, requirements
    assert requirements(name) == ("kprobe_multi",)
    feature = benchbpf.features()["kprobe_multi"]
    if feature.supported:
        r = benchbpf.run(name, **SHORT)
        assert int(r.metadata["kprobe_multi_all_functions"]) > 1000
        assert counts_where_ran(r.samples)
    else:
        assert missing_features(name) == ("kprobe_multi",)
        seen = []
        with pytest.raises(benchbpf.UnsupportedError) as info:
            benchbpf.run(name, callback=lambda *a: seen.append(a), **SHORT)
        assert feature.detail in str(info.value) and not seen
        assert info.value.errno == feature.errno
    assert left_behind() == []


def test_multi_all_marked_in_list():
    import io
    from benchbpf.tools import cli
    out = io.StringIO()
    cli._list(out)
    lines = {line.split()[1]: line for line in out.getvalue().splitlines()[1:]}
    probed = benchbpf.features()
    for name, feature in (("trig-kprobe-multi-all", "kprobe_multi"),
                          ("trig-uprobe-nop10", "uprobe_nop10"),
                          ("trig-uprobe-nop5", "uprobe_nop5")):
        mark = lines[name].split()[0]
        assert mark == ("-" if probed[feature].supported else "!"), lines[name]


def _xlated_bytes(prog_name):
    """bytes_xlated of the program named prog_name this process holds."""
    mine = {oid for kind, oid in leakcheck.held_ids() if kind == "prog"}
    sizes = [p["bytes_xlated"] for p in leakcheck.bpftool("prog", "list")
             if p["id"] in mine and p.get("name") == prog_name]
    assert len(sizes) == 1, sizes
    return sizes[0]


@pytest.mark.parametrize("name", ["trig-rawtp", "trig-tp"])
def test_stacktrace_loads_and_runs_the_stack_walk(name):
    """stacktrace=True (-s) runs the hooked program with its bpf_get_stack()
    call: the program the kernel holds is longer than without it (the
    verifier drops the call as dead code when stacktrace is off), and it
    still counts every hit."""
    sizes = {}
    for on in (False, True):
        seen = []

        def look(sample, index, warmup):
            if not seen:
                seen.append(_xlated_bytes(name.replace("-", "_")))
        r = benchbpf.run(name, stacktrace=on, callback=look, **SHORT)
        assert r.params["stacktrace"] is on
        assert ("+stack" in r.metadata["trigger"]) is on
        assert counts_where_ran(r.samples)
        sizes[on] = seen[0]
    assert sizes[True] > sizes[False], sizes
    assert left_behind() == []


def test_stacktrace_is_refused_where_upstream_ignores_it():
    with pytest.raises(TypeError, match="stacktrace"):
        benchbpf.run("trig-kernel-count", stacktrace=True, **SHORT)
    with pytest.raises(TypeError, match="stacktrace"):
        trigger.uprobe("nop", stacktrace=True, **SHORT)
    with pytest.raises(TypeError, match="stacktrace"):
        trigger.rawtp(stacktrace="yes", **SHORT)


def test_cli_short_stacktrace_flag(capsys):
    from benchbpf.tools import cli
    assert cli.main(["-q", "-w0", "-d0.2", "--interval", "0.2", "-s", "trig-rawtp"]) == 0
    out = capsys.readouterr().out
    assert "Trigger: BPF_PROG_TEST_RUN" in out and " +stack\n" in out, out
    assert cli.main(["-q", "-w0", "-d0.2", "-s", "trig-uprobe-nop"]) == 2
    assert "--stacktrace does not apply to trig-uprobe-nop" in capsys.readouterr().err


def test_usdt_site_is_checked():
    with pytest.raises(ValueError, match="site"):
        trigger.usdt("nop7")


@pytest.fixture
def overlaid_package(tmp_path):
    """benchbpf's package seen through an overlay mount, as a guest's /tmp or
    a container's root shows it: the same file underneath, another device."""
    import subprocess
    lower, upper, work, merged = (tmp_path / d for d in ("lower", "upper", "work", "merged"))
    for d in (lower, upper, work, merged):
        d.mkdir()
    copy_package(lower)
    mount = subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                            f"lowerdir={lower},upperdir={upper},workdir={work}", str(merged)],
                           capture_output=True, text=True)
    if mount.returncode:
        pytest.skip(f"cannot mount an overlay here: {mount.stderr.strip()}")
    try:
        yield merged
    finally:
        subprocess.run(["umount", str(merged)], check=True)


@pytest.mark.parametrize("name", ["trig-uprobe-nop", "trig-uprobe-multi-nop"])
def test_uprobe_target_loaded_through_an_overlay_fires(overlaid_package, name):
    """The uprobe goes on the file underneath the overlay, which is the one
    mapped: the check that the target file was not replaced must accept it."""
    import subprocess
    import sys
    if "multi" in name and not benchbpf.features()["uprobe_multi"]:
        pytest.skip("this kernel has no uprobe_multi")
    code = ("import benchbpf, json; r = benchbpf.run(%r, warmup=0, duration=0.4, "
            "interval=0.2); print(json.dumps([benchbpf.__file__, [s.hits for s in r.samples]]))"
            % name)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(overlaid_package)),
                         cwd=str(overlaid_package))
    assert out.returncode == 0, out.stderr
    import json
    where, hits = json.loads(out.stdout.strip().splitlines()[-1])
    assert where.startswith(str(overlaid_package))
    assert sum(hits) > 0
