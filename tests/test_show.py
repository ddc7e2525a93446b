"""`benchbpf show FILE`: every kind of JSON file benchbpf saves, summarised
from short real runs; files of another kind or a newer version refused."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import benchbpf
from benchbpf.analysis.ab import ABResult
from benchbpf.tools import show

QUICK = ("-q", "-w0", "-d1", "--interval", "0.25")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "benchbpf", *args],
                          capture_output=True, text=True, timeout=300)


def _ok(out):
    assert out.returncode == 0, out.stderr
    return out


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Path of each kind of file benchbpf writes, from short real runs; and
    the Markdown `ab --markdown` printed."""
    d = tmp_path_factory.mktemp("saved")
    paths = {k: str(d / f"{k}.json") for k in ("result", "repeat", "sweep", "report", "ab")}
    _ok(cli(*QUICK, "count-local", "--json", paths["result"]))
    _ok(cli(*QUICK, "--repeat", "2", "--work-per-hit", "5", "count-local",
            "--json", paths["repeat"]))
    benchbpf.sweep("count-local", work_per_hit=[0, 10], warmup=0, duration=1,
                   interval=0.25).save(paths["sweep"])
    _ok(cli("report", "-q", "--quick", "--only", "count-global", "--json", paths["report"]))
    ab = _ok(cli("ab", "-q", "--max-rounds", "8", "-d", "0.3", "--markdown",
                 "--json", paths["ab"], "count-local", "--", "count-local",
                 "--work-per-hit", "10"))
    return paths, ab.stdout


def _measured_line(meta):
    return f"measured: {meta['started']}, kernel {meta['kernel']}, "


@pytest.mark.fast
def test_show_a_result(saved):
    paths, _ = saved
    r = show.load(paths["result"])
    assert isinstance(r, benchbpf.Result)
    out = _ok(cli("show", paths["result"])).stdout
    ci = r.mean_ci_mps
    assert ci is not None       # 4 samples of 0.25 s
    assert out.startswith(f"count-local: hits {r.mean:.3f} M/s mean, 95 % interval "
                          f"{ci.low:.3f}..{ci.high:.3f} M/s\n")
    assert r.summary() in out                   # the kernel bench's line, its units
    assert "parameters: warmup=0, duration=1, interval=0.25, producers=1" in out
    assert "work_per_hit=0" in out
    assert _measured_line(r.metadata) in out


@pytest.mark.fast
def test_show_result_sets_repeat_sweep_report(saved):
    paths, _ = saved
    rep = show.load(paths["repeat"])
    assert isinstance(rep, benchbpf.ResultSet) and len(rep) == 2
    out = _ok(cli("show", paths["repeat"])).stdout.splitlines()
    assert out[0] == "2 repeated runs: 2 runs of count-local"
    assert [l for l in out if l.startswith("  count-local: hits ")] and len(
        [l for l in out if l.startswith("  count-local: hits ")]) == 2
    across = next(l for l in out if l.startswith("across the 2 runs: hits "))
    assert "range" in across and "too few runs for a 95 % interval" in across
    assert any(l.startswith("parameters of every run: ") and "work_per_hit=5" in l
               for l in out)
    assert _measured_line(rep[0].metadata) in "\n".join(out)

    sweep = _ok(cli("show", paths["sweep"])).stdout.splitlines()
    assert sweep[0] == "a sweep over work_per_hit: 2 runs of count-local"
    assert [l.split(":")[0] for l in sweep[1:3]] == ["  0", "  10"]
    assert not any(l.startswith("across") for l in sweep)      # different runs
    assert "work_per_hit" not in next(l for l in sweep if l.startswith("parameters"))

    report = _ok(cli("show", paths["report"])).stdout
    assert report.startswith("a report: 1 runs of count-global\n")
    assert "  count-global: hits " in report


@pytest.mark.fast
def test_show_an_ab_comparison_and_its_markdown(saved):
    paths, markdown = saved
    c = show.load(paths["ab"])
    assert isinstance(c, ABResult)
    out = _ok(cli("show", paths["ab"])).stdout
    assert out.startswith(str(c) + "\n")        # B/A, its interval, the verdict
    assert "settings: mode='interleaved', rule=" in out and "warmup='auto'" in out
    assert _measured_line(c.metadata) in out
    # ab's own Markdown: an automatic warm-up has no unit.
    assert "rounds of auto warm-up + 0.3 s measured" in markdown
    assert "auto s" not in markdown


@pytest.mark.fast
def test_metadata_prints_the_fingerprint(saved):
    paths, _ = saved
    for kind in ("result", "repeat", "ab"):
        fp = json.loads(open(paths[kind]).read())
        fp = (fp["results"][0] if "results" in fp else fp)["metadata"]["fingerprint"]
        out = _ok(cli("show", "--metadata", paths[kind])).stdout
        assert "\nfingerprint:\n" in out and "fingerprint:" not in \
            _ok(cli("show", paths[kind])).stdout
        assert f"  kernel_release: {fp['kernel_release']}\n" in out
        assert f"  bpf_jit_enable: {fp['bpf_jit_enable']}\n" in out


@pytest.mark.fast
def test_unknown_kinds_and_newer_versions_are_refused(saved, tmp_path):
    paths, _ = saved
    newer = json.loads(open(paths["result"]).read())
    newer["version"] += 1
    cases = {"newer.json": (json.dumps(newer), "format version 2, from a newer benchbpf; "
                            "this benchbpf reads version 1"),
             "drift.json": (json.dumps({"windows": [], "span_s": 1}),
                            'not a file benchbpf saved (no "format" field); expected one of: '
                            "benchbpf-result version 1"),
             "other.json": (json.dumps({"format": "pyperf"}), "(format 'pyperf')"),
             "list.json": ("[1, 2]", "(a JSON list)"),
             "text.json": ("not json", "not JSON")}
    for name, (content, said) in cases.items():
        path = tmp_path / name
        path.write_text(content)
        out = cli("show", str(path))
        assert out.returncode == 2 and out.stdout == "", (name, out.stdout)
        assert out.stderr.startswith(f"benchbpf show: error: {path}: "), out.stderr
        assert said in out.stderr, (name, out.stderr)
        with pytest.raises(ValueError, match=str(path)):
            show.load(path)
    out = cli("show", str(tmp_path / "none.json"))
    assert out.returncode == 2 and "none.json: No such file or directory" in out.stderr
    # Every file is checked before any is shown.
    out = cli("show", paths["result"], str(tmp_path / "other.json"))
    assert out.returncode == 2 and out.stdout == ""
    out = _ok(cli("show", paths["result"], paths["ab"]))
    assert out.stdout.startswith(f"== {paths['result']}\n") and f"\n== {paths['ab']}\n" \
        in out.stdout


@pytest.mark.fast
def test_every_format_benchbpf_writes_is_a_kind_show_knows():
    # Every "format" a writer puts in its file (literally, or as a module's
    # FORMAT) is one show reads: a new kind of file cannot be missed.
    root = Path(benchbpf.__file__).parent
    written = set()
    for source in root.rglob("*.py"):
        text = source.read_text()
        written.update(re.findall(r'"format":\s*"(benchbpf-[a-z-]+)"', text))
        written.update(re.findall(r'^\w*FORMAT\s*=\s*"(benchbpf-[a-z-]+)"', text, re.M))
    assert written == set(show.KINDS), written
    with pytest.raises(TypeError, match="not dict"):
        show.text({})
