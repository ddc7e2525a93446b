"""sockmap: every mode runs for real over loopback TCP, every option's range
edges are real runs or refusals before loading, and no socket, file,
attachment or BPF object outlives a run, whichever way it ends."""
import os
import re

import pytest

import benchbpf
from benchbpf import sockmap

import leakcheck
from conftest import SHORT, ours_left_behind, rejected_before_loading

PREFIX = "skmap_"
INT32_MAX = 2**31 - 1
INT32_MIN = -2**31
MAX_STRP = 64 * 1024
BPF_MODES = [m for m in sockmap.MODES if not m.endswith("-normal")]


@pytest.fixture(autouse=True)
def nothing_left():
    """Each test leaves no socket, descriptor, thread or skmap_ object."""
    before = leakcheck.snapshot()
    yield
    _, leaks = leakcheck.settle(before)
    assert not leaks, leaks
    assert ours_left_behind((PREFIX,)) == []


def totals(r, counter):
    return sum(s.count(counter) for s in r.samples)


@pytest.mark.fast
def test_registry_matches_the_kernel_bench():
    info = benchbpf.describe("sockmap")
    assert (info.family, info.report) == ("sockmap", "sockmap")
    assert (info.default_consumers, info.max_consumers, info.max_producers) == (2, 2, 1)
    assert info.always_pinned
    mode = info.params["mode"]
    assert mode.choices == ("rx-normal", "rx-pass", "rx-verdict-egress", "rx-verdict-ingress",
                            "tx-normal", "tx-pass", "tx-verdict-ingress", "tx-verdict-egress")
    assert mode.default == "rx-verdict-egress" and mode.choice_flags
    p = info.params
    assert (p["rx_strp"].cli, p["rx_strp"].default, p["rx_strp"].min, p["rx_strp"].max) == \
        ("--rx-strp", 0, 0, MAX_STRP)
    assert (p["delay_consumer"].cli, p["delay_consumer"].default, p["delay_consumer"].min,
            p["delay_consumer"].max) == ("--delay-consumer", 0, INT32_MIN, INT32_MAX)
    assert (p["producer_duration"].cli, p["producer_duration"].default,
            p["producer_duration"].min, p["producer_duration"].max) == \
        ("--producer-duration", 0, 0, INT32_MAX)
    assert info.extra == ("send_calls", "read_calls", "verdict_drops")


@pytest.mark.fast
@pytest.mark.parametrize("mode", sockmap.MODES)
def test_every_mode_moves_checked_data(mode):
    """Data is sent, and received (every byte checked against the file's
    pattern by the consumer) in every sample; the programs see bytes in the
    BPF modes and none where nothing is attached; the threads are pinned as
    -c 2 -p 1 -a pins them; the sockets exist while it runs."""
    open_sockets = []

    def look(sample, index, warmup):
        if not open_sockets:
            open_sockets.append(len(leakcheck.sockets()))
    before = len(leakcheck.sockets())
    r = sockmap.sockmap(mode, callback=look, **SHORT)
    assert open_sockets[0] == before + 5    # listener, c1, p1, c2, p2
    # per run, not per sample: on a busy machine a pinned thread may get
    # no CPU for a whole interval
    assert totals(r, "drops") > 0 and totals(r, "send_calls") > 0, r.samples
    assert totals(r, "false_hits") > 0 and totals(r, "read_calls") > 0
    assert totals(r, "false_hits") <= sum(s.drops for s in r.warmup_samples + r.samples)
    if mode in BPF_MODES:
        assert totals(r, "hits") > 0, r.samples
    else:
        assert totals(r, "hits") == 0
    nr_cpus = os.cpu_count()
    assert r.metadata["consumer_cpus"] == (0, 1 % nr_cpus)
    assert r.metadata["producer_cpus"] == (2 % nr_cpus,)
    assert r.params["affinity"] is True and r.params["mode"] == mode
    assert r.metadata["trigger"].startswith(mode + ":")


def test_stream_parser_edges():
    """rx_strp=1 parses one-byte messages, 64 KiB ones run too; the parser
    only exists on the receive side.  rx-pass with a parser delivers, then
    on this kernel stalls after a while (the kernel bench's run does the
    same: its reads of c2 then fail with EAGAIN), so only the whole run is
    asked to have moved data there."""
    for mode, strp in (("rx-verdict-egress", 1), ("rx-verdict-ingress", 1),
                       ("rx-verdict-egress", MAX_STRP), ("rx-verdict-ingress", MAX_STRP),
                       ("rx-pass", 1), ("rx-pass", MAX_STRP)):
        r = sockmap.sockmap(mode, rx_strp=strp, **SHORT)
        every = r.warmup_samples + r.samples
        if mode == "rx-pass":
            assert sum(s.hits for s in every) > 0, (mode, strp)
        else:
            assert totals(r, "hits") > 0 and totals(r, "false_hits") > 0, (mode, strp)
        assert "stream parser" in r.metadata["trigger"]
    for bad in (-1, MAX_STRP + 1):
        with rejected_before_loading(ValueError, "rx_strp"):
            sockmap.sockmap(rx_strp=bad, **SHORT)
    for mode in ("tx-pass", "tx-verdict-egress", "rx-normal"):
        with rejected_before_loading(ValueError, "rx_strp=8", mode):
            sockmap.sockmap(mode, rx_strp=8, **SHORT)


@pytest.mark.parametrize("delay", [INT32_MIN, -1, INT32_MAX])
def test_consumer_that_never_reads(delay):
    """A negative delay (the consumer never reads) or one longer than the
    run: nothing is read, the producer still sends until the sockets are
    full, and the run ends on time (the wait is cut short at the stop)."""
    r = sockmap.sockmap("tx-pass", delay_consumer=delay, **SHORT)
    assert totals(r, "false_hits") == 0 and totals(r, "read_calls") == 0
    assert sum(s.drops for s in r.warmup_samples + r.samples) > 0


def test_consumer_delay_of_two_seconds():
    """The wait starts with the consumer thread, a little before the first
    sample: nothing is read in the first 0.4 s sampled, then reads come."""
    r = sockmap.sockmap("tx-pass", delay_consumer=2, warmup=0, duration=3.2, interval=0.2)
    early = r.samples[:2]
    assert sum(s.false_hits + s.extra["read_calls"] for s in early) == 0, r.samples
    assert totals(r, "false_hits") > 0


def test_producer_duration_edges():
    """producer_duration=1 stops sending once the whole-second clock moved
    past 1 (1 to 2 s in): the last samples of a 3 s run send nothing; the
    largest value sends to the end."""
    r = sockmap.sockmap("tx-pass", producer_duration=1, warmup=0, duration=3, interval=0.25)
    assert totals(r, "drops") > 0
    assert all(s.drops == 0 and s.extra["send_calls"] == 0 for s in r.samples[-4:]), r.samples
    r = sockmap.sockmap("tx-pass", producer_duration=INT32_MAX, warmup=0, duration=3,
                        interval=0.25)
    assert sum(s.drops for s in r.samples[-4:]) > 0
    for bad in (-1, INT32_MAX + 1):
        with rejected_before_loading(ValueError, "producer_duration"):
            sockmap.sockmap(producer_duration=bad, **SHORT)
    with rejected_before_loading(ValueError, "delay_consumer"):
        sockmap.sockmap(delay_consumer=INT32_MAX + 1, **SHORT)


def test_thread_counts_are_the_kernel_bench_s():
    with rejected_before_loading(ValueError, "consumers=1", "exactly 2"):
        benchbpf.run("sockmap", consumers=1, **SHORT)
    with rejected_before_loading(ValueError, "consumers=0"):
        benchbpf.run("sockmap", consumers=0, **SHORT)
    with rejected_before_loading(ValueError, "producers=2"):
        benchbpf.run("sockmap", producers=2, **SHORT)
    with rejected_before_loading(ValueError, "mode"):
        sockmap.sockmap("rx-verdict", **SHORT)
    benchbpf.check("sockmap", consumers=2, producers=1, affinity=True)


@pytest.mark.parametrize("mode", ["rx-verdict-ingress", "tx-verdict-egress", "rx-normal"])
@pytest.mark.parametrize("when", [0, 2])
def test_interrupted_runs_leave_nothing_behind(mode, when):
    """A run stopped mid-way, in warm-up or measuring, by an exception or
    Ctrl-C from its caller, closes every socket and the file and detaches
    every program (the autouse fixture checks sockets, descriptors,
    threads and skmap_ objects)."""
    class Stop(Exception):
        pass

    for exc in (Stop, KeyboardInterrupt):
        def stop(sample, index, warmup):
            if index == when:
                raise exc()
        with pytest.raises(exc):
            sockmap.sockmap(mode, callback=stop, **SHORT)


@pytest.mark.fast
def test_report_lines_are_the_kernel_bench_s():
    r = sockmap.sockmap("tx-verdict-egress", **SHORT)
    line = sockmap.progress_line(0, r.samples[0], 1, r.metadata["interval_ns"])
    assert re.fullmatch(
        r"Iter   0 \( *-?\d+\.\d{3}us\): Send Speed +\d+\.\d{3} MB/s \( *\d+\.\d{3} calls/s\), "
        r"BPF Speed +\d+\.\d{3} MB/s, Rcv Speed +\d+\.\d{3} MB/s \( *\d+\.\d{3} calls/s\)",
        line), line
    # the summary adds up whole MB per sample, as the kernel bench's long does
    total = 0
    for s in r.samples:
        total = int(total + s.hits / 1e6)
    per_s = 1e9 / r.metadata["interval_ns"]
    mean = sum(s.hits / 1e6 * per_s for s in r.samples) / len(r.samples)
    assert r.summary() == \
        f"Summary: total trans {f'{total:03d}':>8} MB \u00b1 {mean:5.3f} MB/s"
    assert re.fullmatch(r"Summary: total trans +\d{3,} MB \u00b1 +\d+\.\d{3} MB/s", r.summary())
    rates = sockmap.rates(r)
    assert rates["bpf_mbps"] == r.mean and rates["send_mbps"] > 0 and rates["rcv_mbps"] > 0


def test_summary_pads_whole_megabytes_to_three_digits():
    """"%8.3lu" of a long that adds each sample's MB as a double, truncating
    at each step as C does: 2.6 + 2.6 MB prints as '     004'."""
    from benchbpf.results.result import Result, Sample
    samples = tuple(Sample(interval_ns=10**9, hits=h) for h in (2_600_000, 2_600_000))
    r = Result(name="sockmap", params={"producers": 1}, samples=samples,
               metadata={"report": "sockmap", "interval_ns": 10**9})
    assert r.summary() == "Summary: total trans      004 MB \u00b1 2.600 MB/s"


def test_cli_speaks_the_kernel_bench_s_flags(capsys):
    """The kernel bench's command line (-c 2 -p 1 -a and a mode flag) runs
    as is, the last mode flag wins, and the lines are its."""
    from benchbpf.tools import cli
    argv = ["-q", "-w0", "-d0.4", "--interval", "0.2", "-c", "2", "-p", "1", "-a",
            "sockmap", "--rx-pass", "--tx-pass"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "Trigger: tx-pass: sk_msg verdict" in out
    assert re.search(r"^Iter   1 .*Send Speed .*BPF Speed .*Rcv Speed .*calls/s\)$", out, re.M)
    assert re.search(r"^Summary: total trans +\d{3,} MB \u00b1 .* MB/s$", out, re.M)
    assert cli.main(["-q", "-w0", "-d0.4", "--interval", "0.2", "--rx-strp", "-5",
                     "sockmap"]) == 2
    assert "--rx-strp -5 out of range" in capsys.readouterr().err
    assert cli.main(["-q", "-w0", "-d0.4", "--interval", "0.2", "--rx-pass",
                     "trig-rawtp"]) == 2
    assert "--rx-pass does not apply to trig-rawtp" in capsys.readouterr().err
    assert cli.main(["sockmap", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "--rx-normal | --rx-pass" in help_text and "--producer-duration" in help_text
