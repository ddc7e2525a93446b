"""Kernel feature probes: what they report agrees with what benchmarks meet."""
import time

import pytest

import benchbpf
from benchbpf.harness.features import Feature, Features, features

import leakcheck
from conftest import SHORT

pytestmark = pytest.mark.fast

NAMES = ["tracepoint", "raw_tp", "tp_btf", "kprobe", "kretprobe", "kprobe_multi",
         "fentry", "fexit", "fmod_ret", "uprobe", "uprobe_nop5", "uprobe_nop10", "uretprobe",
         "uprobe_multi", "prog_test_run_raw_tp", "trigger_kfunc", "bpf_lsm", "prog_test_run_xdp",
         "ringbuf", "perf_event_array", "bloom_filter", "task_storage", "hash", "bpf_loop",
         "bpf_strncmp", "lpm_trie", "may_goto", "bpf_iter_num", "bpf_crypto", "bpf_enable_stats"]

#: feature -> a benchmark that needs exactly that attach kind
NEEDED_BY = {
    "raw_tp": "rename-rawtp",
    "kprobe": "rename-kprobe",
    "kretprobe": "rename-kretprobe",
    "fentry": "rename-fentry",
    "fexit": "rename-fexit",
}


def our_objects():
    """Names of loaded programs and maps from the probes."""
    names = [o.get("name", "") for (kind, _), o in leakcheck.kernel_objects().items()
             if kind in ("prog", "map")]
    return [n for n in names
            if n.startswith(("feat_", "features", "rename_"))]


def left_loaded(timeout=3.0):
    """Probe objects still listed after the kernel's deferred frees."""
    deadline = time.monotonic() + timeout
    objs = our_objects()
    while objs and time.monotonic() < deadline:
        time.sleep(0.05)
        objs = our_objects()
    return objs


@pytest.fixture(scope="module")
def feats():
    return features(refresh=True)


def test_every_feature_is_probed(feats):
    assert isinstance(feats, Features)
    assert list(feats) == NAMES
    for name, f in feats.items():
        assert isinstance(f, Feature) and f.name == name
        assert isinstance(f.supported, bool) and isinstance(f.errno, int)
        assert f.detail and f.detail[0].islower()


def test_every_declared_need_is_a_probed_feature(feats):
    """What the C tables declare a benchmark needs (and a choice adds) are
    names features() probes, so missing_features() can tell; a table naming
    no feature of its own is one of those that need none."""
    from benchbpf.harness.features import requirements
    from benchbpf.harness._runner import describe
    declared = set()
    for name in benchbpf.list_benchmarks():
        info = describe(name)
        declared.update(info.needs)
        for p in info.params.values():
            if p.choice_needs is not None:
                assert len(p.choice_needs) == len(p.choices), (name, p.name)
                declared.update(n for n in p.choice_needs if n)
                for value, need in zip(p.choices, p.choice_needs):
                    got = requirements(name, **{p.name: value})
                    assert (need in got) if need else got == info.needs, (name, value, got)
    assert declared and declared <= set(feats), declared - set(feats)
    with pytest.raises(ValueError, match="no-such-bench"):
        requirements("no-such-bench")


def test_errno_and_detail_agree_with_verdict(feats):
    for f in feats.values():
        if f.supported:
            assert f.errno == 0 and f.errno_name == "", f
            assert "refused" not in f.detail, f
        else:
            assert f.errno > 0, f
            assert f.errno_name in f.detail and "refused" in f.detail, f


def test_mapping_is_immutable(feats):
    with pytest.raises(TypeError):
        feats["fentry"] = None
    with pytest.raises(AttributeError):
        feats.extra = 1
    with pytest.raises(AttributeError):
        feats["fentry"].supported = True


def test_table_names_every_feature(feats):
    text = str(feats)
    lines = text.splitlines()
    assert lines[0].split() == ["feature", "supported", "errno", "detail"]
    assert [line.split()[0] for line in lines[1:]] == NAMES
    assert text in repr(feats)
    assert sorted(feats.supported() + feats.unsupported()) == sorted(NAMES)


def test_cached_unless_refreshed(feats):
    assert features() is features()
    again = features(refresh=True)
    assert again == feats


def test_probing_leaves_nothing_loaded():
    features(refresh=True)
    assert left_loaded() in (None, [])


def test_probes_need_no_benchmark_run_state():
    """Probing between runs works and does not disturb the next run."""
    features(refresh=True)
    r = benchbpf.run("rename-base", **SHORT)
    assert all(s.hits > 0 for s in r.samples)


@pytest.mark.parametrize("feature", sorted(NEEDED_BY))
def test_features_agree_with_benchmarks(feats, feature):
    """A feature reported unsupported is exactly one a benchmark cannot use,
    and the benchmark's error carries the same errno."""
    f = feats[feature]
    bench = NEEDED_BY[feature]
    try:
        r = benchbpf.run(bench, **SHORT)
    except benchbpf.UnsupportedError as e:
        assert not f.supported, f"{feature} probed as supported but {bench} raised: {e}"
        assert e.errno == f.errno, (e, f)
    else:
        assert f.supported, f"{feature} probed as unsupported but {bench} ran: {f}"
        assert all(s.hits > 0 for s in r.samples)
    assert left_loaded() in (None, [])


def test_ring_buffer_family_agrees(feats):
    """rb-*/pb-* benchmarks exist once that family lands; skip until then."""
    pairs = [("ringbuf", "rb-libbpf"), ("perf_event_array", "pb-libbpf")]
    known = set(benchbpf.list_benchmarks())
    pairs = [(f, b) for f, b in pairs if b in known]
    if not pairs:
        pytest.skip("no ring buffer benchmarks registered yet")
    for feature, bench in pairs:
        try:
            benchbpf.run(bench, **SHORT)
        except benchbpf.UnsupportedError:
            assert not feats[feature].supported
        else:
            assert feats[feature].supported
    assert left_loaded() in (None, [])


def _btf_has_func(name):
    """An oracle independent of the core: bpftool's dump of the kernel's BTF."""
    import shutil
    import subprocess
    tool = shutil.which("bpftool") or "/usr/sbin/bpftool"
    out = subprocess.run([tool, "btf", "dump", "file", "/sys/kernel/btf/vmlinux"],
                         capture_output=True, text=True, check=True).stdout
    return f"FUNC '{name}'" in out


def test_trigger_kfunc_probe_agrees_with_kernel_btf(feats):
    """The tp/rawtp/fmodret drivers call a kfunc of Linux 6.10: the probe
    looks it up in the kernel's BTF and names it either way."""
    f = feats["trigger_kfunc"]
    assert "bpf_modify_return_test_tp" in f.detail
    assert f.supported == _btf_has_func("bpf_modify_return_test_tp")
    if not f.supported:
        assert f.errno_name == "ENOENT" and "6.10" in f.detail


@pytest.mark.parametrize("name", ["trig-tp", "trig-rawtp", "trig-fmodret"])
def test_trigger_kfunc_benchmarks_need_it(feats, name):
    from benchbpf.harness.features import missing_features, requirements
    assert "trigger_kfunc" in requirements(name)
    if feats["trigger_kfunc"].supported:
        assert "trigger_kfunc" not in missing_features(name, feats)
    else:
        with pytest.raises(benchbpf.UnsupportedError, match="bpf_modify_return_test_tp"):
            benchbpf.run(name, **SHORT)


def test_bpf_lsm_probe_decides_socket_storage(feats):
    """socket storage (local-storage-create's default) needs a BPF LSM that
    runs; the probe, -l and the run agree, and task storage does not need it."""
    from benchbpf.harness.features import missing_features
    f = feats["bpf_lsm"]
    assert "socket_post_create" in f.detail
    assert ("bpf_lsm" in missing_features("local-storage-create", feats)) != f.supported
    assert "bpf_lsm" not in missing_features("local-storage-create", feats,
                                             storage_type="task")
    if f.supported:
        r = benchbpf.run("local-storage-create", **SHORT)
        assert r.total_hits > 0
        return
    with pytest.raises(benchbpf.UnsupportedError) as e:
        benchbpf.run("local-storage-create", **SHORT)
    assert "BPF LSM" in str(e.value) and f.detail in str(e.value)
