"""The suite report (benchbpf report) and the comparison of two runs (benchbpf compare)."""
import base64
import json
from dataclasses import replace as dataclasses_replace
import os
import re
import signal
import subprocess
import sys

import pytest

import benchbpf
from benchbpf.tools import cli, report
from benchbpf.harness.features import features, missing_features
from benchbpf.results.result import Result, Sample


#: What this module's runs load: nothing of it may stay loaded after it.
PREFIXES = ("trig_",)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "benchbpf", *args],
                          capture_output=True, text=True, timeout=300)


def unsupported_here():
    """A benchmark this kernel refuses (trig-fentry where fentry is refused), or None."""
    probed = features()
    refused = [n for n in benchbpf.list_benchmarks() if missing_features(n, probed)]
    return "trig-fentry" if "trig-fentry" in refused else (refused[0] if refused else None)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """One quick CLI report over a narrow selection: two benchmarks without
    BPF, one with, and one this kernel refuses if there is one."""
    d = tmp_path_factory.mktemp("report")
    refused = unsupported_here()
    only = "count-*,trig-rawtp" + (f",{refused}" if refused else "")
    out = run_cli("report", "--quick", "--only", only, "-o", str(d / "r.html"),
                  "--json", str(d / "r.json"))
    return out, d, refused


def test_no_benchmark_is_named_like_a_subcommand():
    # `benchbpf NAME` runs a benchmark; `benchbpf report` must stay the subcommand.
    assert set(cli.SUBCOMMANDS) == {"report", "compare", "host-drift", "ab", "system", "history",
                                    "show"}
    assert not set(cli.SUBCOMMANDS) & set(benchbpf.list_benchmarks())


def test_subcommand_must_come_first(capsys):
    assert cli.main(["-w1", "report"]) == 2
    assert "report is a subcommand" in capsys.readouterr().err


def test_benchmark_invocations_still_run_benchmarks():
    out = run_cli("-q", "-w0", "-d0.2", "--interval", "0.1", "count-local")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1].startswith("Summary: hits")


def test_select_globs_and_comma_lists():
    assert report.select("count-*") == ["count-global", "count-local"]
    assert report.select("trig-rawtp, count-l*") == ["count-local", "trig-rawtp"]
    assert "selftest" not in report.select()
    assert set(report.select()) == set(benchbpf.list_benchmarks()) - {"selftest"}
    with pytest.raises(ValueError, match="'nomatch' matches no benchmark"):
        report.select("count-*,nomatch")
    with pytest.raises(ValueError, match="selftest is left out"):
        report.select("selftest")


def test_plan_quick_options_and_prog_stats():
    plan = report.plan(quick=True, only="count-local,trig-tp,local-storage-tasks-trace")
    plan = {name: (options, cost) for name, options, cost in plan}
    assert plan["count-local"] == (report.QUICK, None)  # loads no BPF: no cost run
    # The measured run never pays for the statistics; a separate run gives the cost.
    assert plan["trig-tp"] == (report.QUICK, {**report.QUICK, "prog_stats": True})
    assert plan["local-storage-tasks-trace"][0]["nr_procs"] == \
        report.QUICK_PARAMS["local-storage-tasks-trace"]["nr_procs"]
    full = report.plan(only="trig-tp", prog_stats=False)
    assert full == [("trig-tp", {}, None)]              # the CLI's defaults
    for name, options, cost in report.plan(quick=True):  # every option passes the checks
        benchbpf.check(name, **options)
        if cost is not None:
            benchbpf.check(name, **cost)


def test_only_nomatch_is_an_error(tmp_path):
    html = tmp_path / "r.html"
    out = run_cli("report", "--quick", "--only", "nomatch*", "-o", str(html))
    assert out.returncode == 2
    assert "'nomatch*'" in out.stderr and "matches no benchmark" in out.stderr
    assert not html.exists()


@pytest.mark.parametrize("flags", [
    ("-o", "{missing}/r.html"),
    ("-o", "{tmp}"),
    ("-o", "{tmp}/r.html", "--json", "{missing}/r.json"),
    ("-o", "{tmp}/same", "--json", "{tmp}/same"),
    (),
])
def test_bad_output_paths_refused_before_running(tmp_path, capsys, flags):
    args = [f.format(tmp=tmp_path, missing=tmp_path / "no" / "such") for f in flags]
    setups = benchbpf._core.setup_count()
    assert cli.main(["report", "--quick", "--only", "trig-rawtp", *args]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "[1/" not in err, err
    assert benchbpf._core.setup_count() == setups, "a benchmark was set up"
    assert not (tmp_path / "r.html").exists()


def test_report_runs_and_writes_html_and_json(suite):
    out, d, refused = suite
    assert out.returncode == 0, out.stderr
    names = ["count-global", "count-local", "trig-rawtp"]
    total = len(names) + bool(refused)
    progress = [line for line in out.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == total, out.stderr
    assert progress[2].startswith(f"[3/{total}] trig-rawtp ... ") and " M/s" in progress[2]

    rs = benchbpf.ResultSet.load(d / "r.json")
    assert rs.names == tuple(names)
    fp = rs.metadata["fingerprint"]
    assert fp["kernel_release"] and fp == dict(rs[0].metadata["fingerprint"])
    assert rs.metadata["report"]["quick"] is True
    assert list(rs.metadata["report"]["only"]) == ["count-*", "trig-rawtp"] + \
        ([refused] if refused else [])
    for r in rs:    # quick options, real samples
        assert r.params["duration"] == report.QUICK["duration"]
        assert len(r.samples) == 9 and r.total_hits > 0
    rawtp = rs.where("trig-rawtp")[0]
    assert rawtp.params["prog_stats"] is False          # measured without statistics
    assert rawtp.program("trig_rawtp").run_cnt > 0      # cost from the separate run
    assert "separate" in rawtp.metadata["prog_stats_source"]
    assert not rs.where("count-local")[0].params["prog_stats"]

    page = (d / "r.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert fp["kernel_release"] in page and "kernel_cmdline" in page
    for name in names:
        assert f"<td><code>{name}</code></td>" in page
    trigger = rawtp.metadata["trigger"]
    assert trigger and report._e(trigger) in page
    assert re.search(r"trig_rawtp: \d+\.\d ns/run", page)
    assert f"{rawtp.median:.3f}" in page
    # Self-contained: nothing fetched from elsewhere.
    assert not re.search(r"(src|href)=\"(?!data:)", page)
    assert "<script" not in page and "<link" not in page
    pngs = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)
    pytest.importorskip("matplotlib")
    assert len(pngs) == 2       # count and trigger families
    assert all(base64.b64decode(p).startswith(b"\x89PNG") for p in pngs)


def test_unsupported_benchmark_listed_with_the_kernels_reason(suite):
    out, d, refused = suite
    if refused is None:
        pytest.skip("this kernel runs every benchmark")
    rs = benchbpf.ResultSet.load(d / "r.json")
    assert [u.name for u in rs.unsupported] == [refused]
    reason = rs.unsupported[0].reason
    assert refused in reason and any(f in reason for f in missing_features(refused))
    assert f"unsupported: {reason}" in out.stderr
    page = (d / "r.html").read_text()
    section = page.split("<h2>Could not run here</h2>", 1)[1]
    assert f"<td><code>{refused}</code></td><td>{report._e(reason)}</td>" in section


def test_suite_json_loads_back_equal(tmp_path):
    refused = unsupported_here()
    rs = report.run_suite(quick=True, only="count-local" + (f",{refused}" if refused else ""))
    assert rs.names == ("count-local",)
    rs.save(tmp_path / "s.json")
    back = benchbpf.ResultSet.load(tmp_path / "s.json")
    assert back == rs
    assert back.unsupported == rs.unsupported and len(back.unsupported) == bool(refused)
    assert back[0].samples == rs[0].samples


def test_failed_benchmark_recorded_and_suite_goes_on(monkeypatch):
    plan = [("selftest", dict(report.QUICK, fault="producer"), None),
            ("count-local", dict(report.QUICK), None)]
    monkeypatch.setattr(report, "plan", lambda *a, **k: plan)
    lines = []
    rs = report.run_suite(quick=True, progress=lines.append)
    assert rs.names == ("count-local",)
    assert [f["name"] for f in rs.metadata["failed"]] == ["selftest"]
    assert lines[0].startswith("[1/2] selftest ... FAILED: ")
    assert "<h2>Failed</h2>" in report.to_html(rs)


def _result(name, rates, family="count", trigger=None):
    samples = [Sample(interval_ns=1_000_000_000, hits=int(r * 1e6)) for r in rates]
    return Result(name=name, params={"warmup": 1, "duration": 5, "producers": 1},
                  samples=samples, metadata={"family": family, "report": "hits_drops",
                                             "trigger": trigger})


def test_html_escapes_everything():
    rs = benchbpf.ResultSet(
        [_result("x<script>", [1, 2, 3], family="<fam>", trigger="a -> <b>&")],
        unsupported=[benchbpf.Unsupported("<u>", "no <fentry> & co")],
        metadata={"fingerprint": {"kernel_release": "<k>"},
                  "report": {"only": ["<o>"]}})
    page = report.to_html(rs)
    for raw in ("<script>", "<fam>", "<b>&", "<u>", "<fentry>", "<k>", "<o>"):
        assert raw not in page
    for escaped in ("x&lt;script&gt;", "a -&gt; &lt;b&gt;&amp;", "no &lt;fentry&gt; &amp; co",
                    "&lt;k&gt;"):
        assert escaped in page


def test_compare_two_reports(suite, tmp_path):
    out, d, refused = suite
    other = report.run_suite(quick=True, only="count-local,trig-syscall-count")
    other.save(tmp_path / "b.json")
    res = run_cli("compare", str(d / "r.json"), str(tmp_path / "b.json"))
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    pair = [line for line in lines if line.startswith("count-local ")]
    assert len(pair) == 1 and "->" in pair[0] and "%" in pair[0]
    # One run per side: medians and change, but no verdict of significance.
    assert "1->1  B/A -: undecided: not enough runs (needs 4 per side) " \
        "(Mann-Whitney U on runs)" in pair[0]
    assert "only in the first: count-global" in lines
    assert "only in the first: trig-rawtp" in lines
    assert "only in the second: trig-syscall-count" in lines
    if refused:
        assert any(line.startswith(f"unsupported only in the first: {refused}: ")
                   for line in lines)


def _runs(name, medians, **kw):
    return [_result(name, [m - 0.1, m, m + 0.1], **kw) for m in medians]


def test_compare_fails_on_a_significant_regression(tmp_path):
    # Four runs a side, every new one about half as fast.
    base = benchbpf.ResultSet(_runs("count-local", [10, 10.2, 9.8, 10.4])
                              + _runs("count-global", [3, 3.1, 2.9, 3.2]))
    new = benchbpf.ResultSet(_runs("count-local", [5, 5.1, 4.9, 5.2])
                             + _runs("count-global", [3.05, 3.0, 3.15, 2.95]))
    base.save(tmp_path / "a.json")
    new.save(tmp_path / "b.json")
    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    res = run_cli("compare", a, b, "--fail-on-regression", "20")
    assert res.returncode == 1
    assert re.search(r"-50\.0%  4->4  B/A 0\.\d{4} \(0\.\d{4}\.\.0\.\d{4}, 95 %\): "
                     r"slower by [\d.]+\.\.[\d.]+ %, beyond the 20 % threshold "
                     r"\(Mann-Whitney U on runs\); p=0\.029, run medians", res.stdout), res.stdout
    # The exit says which benchmark crossed the threshold, by how much, at what p.
    assert "1 regression(s) beyond -20%:" in res.stderr
    assert "count-local: -50.0% beyond -20% (baseline 10.1 -> new 5.05 M/s hits, " \
        "-50.0%), Mann-Whitney U across 4 -> 4 runs p=0.029 < alpha 0.05" in res.stderr
    assert "count-global" not in res.stderr
    assert run_cli("compare", a, b, "--fail-on-regression", "60").returncode == 0
    assert run_cli("compare", b, a, "--fail-on-regression", "20").returncode == 0  # faster
    assert run_cli("compare", a, b).returncode == 0


def test_one_run_a_side_cannot_fail_on_regression_but_says_why(tmp_path):
    # Seven samples each, half as fast: the samples of one run say nothing
    # of the next run, so neither "significant" nor a failed gate.
    a = _result("count-local", [10, 10.1, 9.9, 10.2, 9.8, 10, 10.1])
    b = _result("count-local", [5, 5.1, 4.9, 5.2, 4.8, 5, 5.1])
    a.to_json(tmp_path / "a.json")
    b.to_json(tmp_path / "b.json")
    res = run_cli("compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert res.returncode == 0 and "significant" not in res.stdout.replace(
        "call it significant", "")
    # Baseline first, then new, as in the report's line.
    assert res.stdout.startswith("count-local: hits median 10.000 -> 5.000 M/s (-50.0%): "
                                 "B/A -: undecided: not enough runs (needs 4 per side) "
                                 "(Mann-Whitney U on runs); 1 -> 1 runs: not enough runs")
    res = run_cli("compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                  "--fail-on-regression", "20")
    assert res.returncode == 2
    assert "cannot decide: too few runs" in res.stderr
    assert "count-local: -50.0% over 1 -> 1 runs (needs 4 per side)" in res.stderr


def test_compare_refuses_other_parameters_and_names_the_flag(tmp_path):
    # The user review's case: a sampled ring buffer run against an unsampled baseline.
    common = ["-q", "-w0", "-d0.3", "--interval", "0.1"]
    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    assert run_cli(*common, "rb-libbpf", "--json", a).returncode == 0
    assert run_cli(*common, "--rb-sampled", "rb-libbpf", "--json", b).returncode == 0
    res = run_cli("compare", a, b, "--fail-on-regression", "10")
    assert res.returncode == 2, res.stdout
    assert "parameter rb_sampled: baseline False, new True" in res.stderr
    assert "--different-params" in res.stderr and res.stdout == ""
    res = run_cli("compare", a, b, "--different-params")
    assert res.returncode == 0, res.stderr
    assert "configuration differs (accepted):\n  parameter rb_sampled" in res.stdout
    # Reports too: the same benchmark under other parameters is named, not
    # listed as two unrelated benchmarks.
    ra, rb = (benchbpf.ResultSet([Result.from_json(p)]) for p in (a, b))
    ra.save(tmp_path / "ra.json")
    rb.save(tmp_path / "rb.json")
    res = run_cli("compare", str(tmp_path / "ra.json"), str(tmp_path / "rb.json"))
    assert res.returncode == 2 and "parameter rb_sampled: baseline False, new True" \
        in res.stderr
    res = run_cli("compare", str(tmp_path / "ra.json"), str(tmp_path / "rb.json"),
                  "--different-params")
    assert res.returncode == 0 and "differs: parameter rb_sampled" in res.stdout


def test_repeated_runs_from_the_command_line_compare_across_runs(tmp_path):
    common = ["-q", "-w0", "-d0.3", "--interval", "0.1", "--repeat", "4"]
    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    res = run_cli(*common, "count-local", "--json", a)
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("Summary: hits") == 4 and "Runs: 4, hits median" in res.stdout
    assert run_cli(*common, "count-local", "--json", b).returncode == 0
    rs = benchbpf.ResultSet.load(a)
    assert len(rs) == 4 and rs.names == ("count-local",)
    res = run_cli("compare", a, b)
    assert res.returncode == 0, res.stderr
    line = [x for x in res.stdout.splitlines() if x.startswith("count-local")][0]
    assert re.search(r"4->4  B/A \S+ \(\S+, 95 %\): (slower|faster|same|undecided)\b.*; p=",
                     line), line
    # An old single result as the baseline of repeated runs: a set of one run.
    rs[0].to_json(tmp_path / "one.json")
    res = run_cli("compare", str(tmp_path / "one.json"), b)
    assert res.returncode == 0 and "1->4  B/A -: undecided: not enough runs" in res.stdout


def test_report_repeats_round_the_suite():
    rs = report.run_suite(quick=True, only="count-local,count-global", prog_stats=False,
                          repeat=2)
    assert [r.name for r in rs] == list(report.select("count-local,count-global")) * 2
    assert rs.metadata["report"]["repeat"] == 2
    assert "Each benchmark ran 2 times" in report.to_html(rs)
    with pytest.raises(ValueError, match="repeat=0 out of range"):
        report.run_suite(quick=True, only="count-local", repeat=0)


def test_overlapping_runs_are_marked_in_the_report_and_the_dataframe():
    quiet = _result("count-local", [1, 2, 3])
    loud = dataclasses_replace(_result("count-global", [1, 2, 3]),
                               metadata={"family": "count", "report": "hits_drops",
                                         "concurrent_runs": 2})
    page = report.to_html(benchbpf.ResultSet([quiet, loud]))
    assert page.count("overlapped 2 other benchbpf run(s)") == 1
    assert "1 run(s) overlapped another benchbpf run" in page
    pandas = pytest.importorskip("pandas")
    df = benchbpf.ResultSet([quiet, loud]).to_dataframe()
    assert isinstance(df, pandas.DataFrame)
    assert list(df["concurrent_runs"].fillna(0)) == [0, 2]


def test_compare_two_results(suite, tmp_path):
    out, d, refused = suite
    rs = benchbpf.ResultSet.load(d / "r.json")
    rs.where("count-local")[0].to_json(tmp_path / "a.json")
    benchbpf.run("count-local", **report.QUICK).to_json(tmp_path / "b.json")
    res = run_cli("compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("count-local: hits median ")
    # Different benchmarks are refused, as analysis.compare refuses them,
    # naming the flag that compares them anyway.
    rs.where("trig-rawtp")[0].to_json(tmp_path / "c.json")
    res = run_cli("compare", str(tmp_path / "a.json"), str(tmp_path / "c.json"))
    assert res.returncode == 2 and "measure different things" in res.stderr
    assert "--different-benchmarks" in res.stderr
    res = run_cli("compare", str(tmp_path / "a.json"), str(tmp_path / "c.json"),
                  "--different-benchmarks")
    assert res.returncode == 0 and "DIFFERENT BENCHMARKS" in res.stdout
    # A report against a single result: the result is a set of one run.
    res = run_cli("compare", str(d / "r.json"), str(tmp_path / "a.json"))
    assert res.returncode == 0, res.stderr
    assert any(x.startswith("count-local ") for x in res.stdout.splitlines())
    assert "only in the first: count-global" in res.stdout
    (tmp_path / "x.json").write_text(json.dumps({"format": "other"}))
    res = run_cli("compare", str(tmp_path / "x.json"), str(tmp_path / "a.json"))
    assert res.returncode == 2 and "neither a benchbpf report" in res.stderr


def test_bloom_hashmap_rows_report_total_operations():
    # Lookups of absent keys count as drops: hits alone would read 0 M/s.
    samples = [Sample(interval_ns=1_000_000_000, hits=0, drops=int(d * 1e6))
               for d in (20, 21, 22)]
    r = Result(name="hashmap-without-bloom", params={}, samples=samples,
               metadata={"family": "bloom", "report": "hits_drops"})
    assert report.counter_for(r) == "total_ops"
    assert report.row_stats(r)[0] == pytest.approx(21.0)
    assert "<td>total_ops</td><td class=num><b>21.000</b>" in \
        report.to_html(benchbpf.ResultSet([r]))
    lines = report.compare_sets(benchbpf.ResultSet([r]), benchbpf.ResultSet([r]))[0]
    assert lines[1].startswith("hashmap-without-bloom") and "(total_ops)" in lines[1]


def test_sigterm_stops_the_suite_and_writes_nothing(tmp_path):
    html = tmp_path / "r.html"
    p = subprocess.Popen([sys.executable, "-m", "benchbpf", "report", "--quick", "--only",
                          "trig-kernel-count,trig-tp,trig-rawtp", "-o", str(html)],
                         stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    first = p.stderr.readline()           # the first benchmark finished; the second runs
    p.send_signal(signal.SIGTERM)
    err = first + p.stderr.read()
    assert p.wait(timeout=60) == 143, err
    assert first.startswith("[1/3] trig-kernel-count ... ")
    assert "terminated (SIGTERM)" in err and "[3/3]" not in err
    assert not html.exists()


def test_report_html_parses_with_every_section(suite):
    """The page is well-formed HTML (every opened element closed, in order)
    with its sections, a results row per benchmark and decodable plots."""
    import base64
    from html.parser import HTMLParser

    out, d, refused = suite
    assert out.returncode == 0, out.stderr
    void = {"meta", "br", "img", "hr", "link", "col", "input", "wbr"}

    class Page(HTMLParser):
        def __init__(self):
            super().__init__()
            self.stack, self.headings, self.images, self.rows = [], [], [], []
            self._in = None

        def handle_starttag(self, tag, attrs):
            if tag == "img":
                self.images.append(dict(attrs)["src"])
            if tag not in void:
                self.stack.append(tag)
            if tag in ("h2", "code"):
                self._in = tag

        def handle_endtag(self, tag):
            assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
            self.stack.pop()
            self._in = None

        def handle_data(self, data):
            if self._in == "h2":
                self.headings.append(data.strip())
            elif self._in == "code":
                self.rows.append(data.strip())

    page = Page()
    page.feed((d / "r.html").read_text())
    page.close()
    assert page.stack == []
    assert {"Machine fingerprint", "Results", "Per family", "Could not run here"} <= \
        set(page.headings)
    for name in ("count-global", "count-local", "trig-rawtp"):
        assert name in page.rows
    if page.images:     # matplotlib present: inline PNGs that decode as PNG
        for src in page.images:
            assert src.startswith("data:image/png;base64,")
            assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


def test_ctrl_c_during_a_report_writes_what_finished(tmp_path):
    import signal
    import subprocess
    import sys
    out_json, out_html = tmp_path / "r.json", tmp_path / "r.html"
    p = subprocess.Popen(
        [sys.executable, "-m", "benchbpf", "report", "--quick", "--no-prog-stats",
         "--only", "count-local,count-global,trig-syscall-count,trig-usermode-count",
         "--json", str(out_json), "-o", str(out_html)],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")})
    lines = []
    for line in p.stderr:
        lines.append(line)
        if line.startswith("[1/4]"):
            p.send_signal(signal.SIGINT)     # Ctrl-C while the second one runs
            break
    err = "".join(lines) + p.stderr.read()
    assert p.wait(timeout=60) == 130, err
    assert "interrupted after" in err and f"{out_html} and {out_json}" in err, err
    rs = benchbpf.ResultSet.load(out_json)
    assert rs.metadata["incomplete"] is True and rs.metadata["planned_runs"] == 4
    assert 1 <= rs.metadata["finished_runs"] < 4 and len(rs) >= 1
    assert "INCOMPLETE: interrupted after" in out_html.read_text()
    saved = list((tmp_path / "cache" / "benchbpf" / "interrupted").iterdir())
    assert len(saved) == 1 and benchbpf.ResultSet.load(saved[0]) == rs


def test_program_cost_leaves_out_the_setup_helper():
    # The producers' whoami runs once at set-up, before the measured window.
    try:
        r = benchbpf.run("rb-libbpf", prog_stats=True, warmup=0.2, duration=0.4,
                         interval=0.2)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    names = [p.name for p in r.prog_stats]
    assert "producer_whoami" in names          # the Result keeps every loaded program
    cell = report._prog_cell(r)
    assert "producer_whoami" not in cell and "did not run" not in cell, cell
    assert re.search(r"\w+: \d+\.\d ns/run", cell), cell


def test_coarse_sample_steps_are_stated_beside_the_figure():
    # Local storage gets are counted 10000 per getpgid() (as the kernel bench):
    # at 0.1 s a sample reads a whole number of 0.1 M/s.
    try:
        r = benchbpf.run("local-storage-cache-seq-get", nr_maps=1000, warmup=0.2,
                         duration=0.9, interval=0.1)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert all(s.hits % 10000 == 0 for s in r.samples)
    step = r.count_step()
    assert step % 10000 == 0 and step > 0
    assert r.step_mps() == pytest.approx(step * 1e-6 / 0.1)
    if r.coarse_step_mps():                      # over 1 % of the median
        assert f"in steps of {r.step_mps():.3g} M/s" in repr(r)
        page = report._results_table(benchbpf.ResultSet([r]))
        assert f"in steps of {r.step_mps():.3g}" in page and "counts a batch per event" in page
    fine = benchbpf.run("count-local", warmup=0, duration=0.4, interval=0.2)
    assert fine.coarse_step_mps() is None and "steps" not in repr(fine)


def test_a_budget_bounds_the_passes_round_the_suite():
    rs = report.run_suite(quick=True, only="count-local,count-global", repeat=50,
                                   budget=2, prog_stats=False)
    passes = rs.metadata["report"]["passes"]
    assert 1 <= passes < 50 and rs.metadata["report"]["budget_s"] == 2
    # Whole passes only: every benchmark has as many runs as the others.
    assert [r.name for r in rs].count("count-local") == passes
    assert [r.name for r in rs].count("count-global") == passes
    with pytest.raises(ValueError, match="budget=0"):
        report.run_suite(quick=True, only="count-local", budget=0)
