"""xdp-lb: the kernel bench's XDP load balancer scenarios, each validated (verdict,
output packet, counters) before it is timed in BPF."""
import re
import subprocess
import sys

import pytest

import benchbpf
import leakcheck
from benchbpf.results import bpf_timing
from benchbpf import xdp_lb

from conftest import rejected_before_loading, run_or_skip

NAME = "xdp-lb"
#: Our program (xdp_lb), its .bss/.rodata (xdp_lb_b.*) and maps (xlb_*).
PREFIXES = ("xdp_lb", "xlb_")
#: Short BPF-timed runs: a few batches, whatever the host's load.
BRIEF = dict(warmup=0, duration=0.3, interval=0.1)
#: The kernel bench's scenarios, in its order.
UPSTREAM = (
    "tcp-v4-lru-hit", "tcp-v4-ch", "tcp-v6-lru-hit", "tcp-v6-ch", "udp-v4-lru-hit",
    "udp-v6-lru-hit", "tcp-v4v6-lru-hit", "tcp-v4-lru-diverse", "tcp-v4-ch-diverse",
    "tcp-v6-lru-diverse", "tcp-v6-ch-diverse", "udp-v4-lru-diverse", "tcp-v4-lru-miss",
    "udp-v4-lru-miss", "tcp-v4-lru-warmup", "tcp-v4-syn", "tcp-v4-rst-miss", "pass-v4-no-vip",
    "pass-v6-no-vip", "pass-v4-icmp", "pass-non-ip", "drop-v4-frag", "drop-v4-options",
    "drop-v6-frag",
)
HUMAN = re.compile(r"^(?P<sc>[a-z0-9-]+): median \d+\.\d\d ns/op, stddev \d+\.\d\d, "
                   r"p99 \d+\.\d\d \((?P<n>\d+) samples\)$")
MACHINE = re.compile(r"^RESULT scenario=(?P<sc>[a-z0-9-]+) samples=(?P<n>\d+) "
                     r"median=[\d.]+ stddev=[\d.]+ cv=[\d.]+ min=[\d.]+ p99=[\d.]+ max=[\d.]+$")


def brief(scenario, **kw):
    return run_or_skip(xdp_lb.scenario, name=scenario, **{**BRIEF, **kw})


@pytest.mark.fast
def test_registry_has_upstreams_scenarios():
    assert benchbpf.list_benchmarks("xdp_lb") == [NAME]
    info = benchbpf.describe(NAME)
    assert info.report == "bpf_timing" and info.needs_bpf
    assert info.max_consumers == 0
    p = info.params["scenario"]
    assert p.cli == "--scenario" and p.required and p.default is None
    assert p.choices == xdp_lb.SCENARIOS == UPSTREAM
    assert len(p.choice_help) == 24
    assert xdp_lb.describe_scenarios()["pass-non-ip"] == "Non-IP (ARP), earliest XDP_PASS exit"
    assert sorted(sum(xdp_lb.GROUPS.values(), ())) == sorted(UPSTREAM)


@pytest.mark.parametrize("scenario", UPSTREAM)
def test_each_scenario_validates_and_times(scenario, no_leaks):
    """Setup validated the verdict, packet and counters of one run of the
    scenario (else it raised); then batches were timed in BPF."""
    r = brief(scenario)
    assert r.params["scenario"] == scenario
    assert r.metadata["scenario"] == scenario
    assert r.samples, "no timed batch"
    timing = r.metadata["bpf_timing"]
    iters = timing["batch_iters"]
    assert all(s.hits == iters and s.interval_ns > 0 for s in r.samples)
    assert timing["calibration"]["fixed"] == (scenario == "tcp-v4-lru-warmup")
    if scenario == "tcp-v4-lru-warmup":
        assert iters == 6500        # upstream's fixed batch
    assert r.metadata["trigger"] == f"BPF_PROG_TEST_RUN xdp_lb x{iters + 1}"
    m = HUMAN.match(r.summary())
    assert m and m.group("sc") == scenario, r.summary()
    m = MACHINE.match(xdp_lb.machine_line(r))
    assert m and m.group("sc") == scenario and int(m.group("n")) == xdp_lb.stats(r).samples
    raw, iqr = xdp_lb.stats(r, filtered=False), xdp_lb.stats(r)
    assert raw.samples == len(r.samples) == iqr.samples + iqr.removed


@pytest.mark.parametrize("fault, scenario, words", [
    ("packet", "tcp-v4-lru-hit", ("output packet differs", "offset 0x005")),
    ("packet", "tcp-v6-ch", ("output packet differs",)),
    ("verdict", "udp-v4-lru-hit", ("verdict XDP_PASS", "expected XDP_TX")),
    ("counters", "tcp-v4-syn", ("XDP_TX counted", "connection table misses")),
    ("counters", "drop-v4-frag", ("XDP_DROP counted",)),
])
def test_a_failed_validation_fails_the_run_naming_the_scenario(fault, scenario, words,
                                                               no_leaks):
    with pytest.raises(benchbpf.BenchmarkError) as info:
        xdp_lb.scenario(scenario, validate_fault=fault, **BRIEF)
    msg = str(info.value)
    assert f"scenario {scenario} failed validation" in msg, msg
    for w in words:
        assert w in msg, msg


def test_verdict_fault_needs_an_encapsulating_scenario():
    with rejected_before_loading(ValueError, "validate_fault='verdict'", "pass-non-ip"):
        xdp_lb.scenario("pass-non-ip", validate_fault="verdict", **BRIEF)


@pytest.mark.fast
@pytest.mark.parametrize("kw, exc, words", [
    (dict(scenario="tcp-v4-lru"), ValueError, ("scenario='tcp-v4-lru'", "'tcp-v4-lru-hit'")),
    (dict(scenario=3), TypeError, ("scenario=3",)),
    (dict(), ValueError, ("xdp-lb needs scenario", "'drop-v6-frag'")),
    (dict(scenario="pass-non-ip", consumers=1), ValueError, ("consumers=1",)),
    (dict(scenario="pass-non-ip", validate_fault="all"), ValueError, ("validate_fault='all'",)),
    (dict(scenario="pass-non-ip", flow_mask=1), TypeError, ("flow_mask",)),
    (dict(scenario="pass-non-ip", producers=0), ValueError, ("producers=0",)),
])
def test_bad_options_rejected_before_loading(kw, exc, words):
    with rejected_before_loading(exc, *words):
        benchbpf.run(NAME, **{**BRIEF, **kw})


def test_sweep_checks_every_name_before_the_first_run():
    with rejected_before_loading(ValueError, "scenario='nope'"):
        xdp_lb.scenarios(["pass-non-ip", "nope"], **BRIEF)
    with rejected_before_loading(ValueError, "names=()"):
        xdp_lb.scenarios([], **BRIEF)


def test_sweep_gives_a_result_set(no_leaks):
    try:
        rs = xdp_lb.scenarios(["pass-non-ip", "drop-v4-options"], progress=False, **BRIEF)
    except benchbpf.UnsupportedError as e:
        pytest.skip(str(e))
    assert isinstance(rs, benchbpf.ResultSet)
    assert rs.axes == ("scenario",)
    assert [r.params["scenario"] for r in rs] == ["pass-non-ip", "drop-v4-options"]
    table = xdp_lb.table(rs).splitlines()
    assert table[0].startswith("| scenario | description | median ns/op")
    assert table[2].startswith("| pass-non-ip | Non-IP (ARP), earliest XDP_PASS exit | ")


def test_two_producers_each_run_batches(no_leaks):
    r = brief("tcp-v4-ch", producers=2)
    assert r.metadata["bpf_timing"]["target_samples"] == 400
    assert len(r.samples) >= 1


@pytest.mark.fast
def test_run_ends_at_its_batches(no_leaks):
    """As upstream: 200 batches per producer end the run before duration."""
    r = brief("pass-non-ip", duration=60, interval=0.2)
    timing = r.metadata["bpf_timing"]
    assert timing["stopped_by"] == "samples"
    assert len(r.samples) >= timing["target_samples"] == 200


def _cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "benchbpf", *args], capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.fast
def test_cli_list_scenarios():
    for args in (("--list-scenarios",), ("xdp-lb", "--list-scenarios")):
        p = _cli(*args)
        assert p.returncode == 0, p.stderr
        lines = p.stdout.splitlines()
        assert lines[0] == "Available scenarios:"
        assert lines[1] == "  tcp-v4-lru-hit        IPv4 TCP, LRU hit, IPIP encap"
        assert len(lines) == 25


def test_cli_needs_a_scenario_and_a_known_one():
    p = _cli("xdp-lb")
    assert p.returncode == 2 and "--scenario is required" in p.stderr, p.stderr
    assert "Setting up" not in p.stdout
    p = _cli("xdp-lb", "--scenario", "nope")
    assert p.returncode == 2 and "invalid choice: 'nope'" in p.stderr
    p = _cli("-q", "count-local", "--machine-readable")
    assert p.returncode == 2 and "not BPF-timed" in p.stderr


def test_cli_machine_readable_prints_one_result_line():
    p = _cli("-w0", "-d0.3", "--interval", "0.1", "xdp-lb", "--scenario", "pass-v4-icmp",
             "--machine-readable")
    if p.returncode == 3:
        pytest.skip(p.stderr)
    assert p.returncode == 0, p.stderr
    assert MACHINE.match(p.stdout.strip()), p.stdout
    assert p.stdout.strip().startswith("RESULT scenario=pass-v4-icmp ")


def test_cli_human_line():
    p = _cli("-w0", "-d0.3", "--interval", "0.1", "xdp-lb", "--scenario", "drop-v6-frag")
    if p.returncode == 3:
        pytest.skip(p.stderr)
    assert p.returncode == 0, p.stderr
    out = p.stdout.splitlines()
    assert out[0] == "Setting up benchmark 'xdp-lb'..."
    assert HUMAN.match(out[-1]) and out[-1].startswith("drop-v6-frag: "), out
    assert not any(line.startswith("Iter") for line in out)


def test_features_name_what_it_needs():
    from benchbpf.harness.features import requirements
    assert requirements(NAME) == ("prog_test_run_xdp", "may_goto")
    f = benchbpf.features()
    assert "prog_test_run_xdp" in f and "may_goto" in f


def test_nothing_left_loaded_after_runs():
    leakcheck.require_bpftool()
    assert not leakcheck.left_behind("xlb_")
    assert not leakcheck.left_behind("xdp_lb")


def test_machine_line_of_a_built_result():
    r = benchbpf.Result(name=NAME, params={"scenario": "tcp-v4-ch"},
                        samples=[benchbpf.Sample(interval_ns=2000, hits=10)] * 3,
                        metadata={"report": "bpf_timing"})
    assert r.summary() == "tcp-v4-ch: median 200.00 ns/op, stddev 0.00, p99 200.00 (3 samples)"
    assert xdp_lb.machine_line(r) == (
        "RESULT scenario=tcp-v4-ch samples=3 median=200.00 stddev=0.00 cv=0.00 "
        "min=200.00 p99=200.00 max=200.00")
    assert bpf_timing.summary_line(r, "other").startswith("other: ")
