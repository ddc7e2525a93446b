"""Result, Sample and Comparison as data: pickling, copies, JSON paths, what
their reprs and derived figures say, and the machine fingerprint."""
import copy
import multiprocessing
import pickle
import re

import pytest

import benchbpf
from benchbpf import Result, Sample
from benchbpf.results._lines import summary_line
from benchbpf.results.fingerprint import FINGERPRINT_KEYS, differences
from conftest import SHORT

pytestmark = pytest.mark.fast


def made(name="count-local", report="hits_drops", producers=1, **counts):
    samples = tuple(Sample(interval_ns=500_000_000, extra={"wakeups": 3}, **counts)
                    for _ in range(3))
    return Result(name, {"producers": producers, "prod_affinity": (0, 1)}, samples,
                  warmup_samples=samples[:1],
                  metadata={"report": report, "fingerprint": {
                      "kernel_release": "6.18", "cpu_governors": ["performance"],
                      "cpu_vulnerabilities": {"mds": "Not affected"}}})


def _mean_in_child(result):
    return result.mean


def test_pickle_and_deepcopy_round_trip():
    r = made(hits=1000)
    c = benchbpf.compare(r, made(hits=2000))
    for obj in (r, r.samples[0], c):
        assert pickle.loads(pickle.dumps(obj)) == obj
        assert copy.deepcopy(obj) == obj
    back = pickle.loads(pickle.dumps(r))
    with pytest.raises(TypeError):
        back.metadata["fingerprint"]["kernel_release"] = "x"   # still read-only, deep
    assert back.metadata["fingerprint"]["cpu_governors"] == ("performance",)


def test_results_cross_process_boundaries():
    r = made(hits=1000)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_mean_in_child, (r,)) == r.mean


def test_from_json_takes_a_path_like(tmp_path):
    r = made(hits=1000)
    path = tmp_path / "r.json"
    r.to_json(path)
    assert Result.from_json(path) == r
    assert Result.from_json(str(path)) == r


def test_latency_agrees_with_the_summary_line():
    r = made(report="ops", producers=2, hits=50_000_000)   # 100 M/s, 50 M/s per producer
    assert r.latency_ns == pytest.approx(20.0)
    lat = float(re.search(r"latency +([\d.]+) ns/op", summary_line(r)).group(1))
    assert lat == pytest.approx(r.latency_ns, abs=1e-3)


def test_false_positive_repr_shows_the_rate():
    r = made("bloom-false-positive", report="false_hits", hits=970, false_hits=30)
    assert repr(r) == ("<Result bloom-false-positive: false positives 3.00% "
                       "(90 of 3000 operations) over 3 samples>")


def test_every_run_carries_the_fingerprint_read_at_start():
    r = benchbpf.run("count-local", **SHORT)
    fp = r.metadata["fingerprint"]
    assert set(fp) == set(FINGERPRINT_KEYS)
    with open("/proc/cmdline") as f:
        assert fp["kernel_cmdline"] == f.read().strip()
    assert fp["btf"] is True and fp["nr_cpus"] >= 1
    assert fp["libbpf_version"] == r.metadata["libbpf_version"]
    assert fp["benchbpf_version"] == benchbpf.__version__
    assert isinstance(fp["bpf_jit_enable"], int)
    assert "spectre_v2" in fp["cpu_vulnerabilities"]
    assert fp["git_commit"] is None or re.fullmatch(r"[0-9a-f]{40}(-dirty)?", fp["git_commit"])
    back = Result.from_json(r.to_json())
    assert back.metadata["fingerprint"] == fp and not differences(fp, fp)


def test_malformed_json_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": ')
    for cls in (benchbpf.Result, benchbpf.ResultSet):
        with pytest.raises(ValueError, match=f"{bad}: not JSON"):
            cls.from_json(bad)
        with pytest.raises(ValueError, match=f"{bad}: not JSON"):
            cls.from_json(str(bad))
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"format": "benchbpf-result", "version": 1}')
    with pytest.raises(ValueError, match=f"{wrong}: not a valid Result file: missing"):
        benchbpf.Result.from_json(wrong)
    from benchbpf.tools.pytest_plugin import _load_baseline
    with pytest.raises(ValueError, match=f"{bad}: not JSON"):
        _load_baseline(str(bad))
