"""sockmap: sk_skb and sk_msg programs on a SOCKMAP, per byte.

The kernel bench's ``sockmap`` benchmark: two loopback TCP connections, c1
<-> p1 and c2 <-> p2.  One producer sendfile()s a 128 KiB file (the bytes
0..9 repeated) without blocking into one socket; consumer 0 reads c2 and
checks every byte; BPF programs on a SOCKMAP carry the data across:

================== ===================================================
mode               path
================== ===================================================
rx-verdict-egress  send(c1) -> p1's stream verdict redirects to p2's
                   egress -> recv(c2)  (the default)
rx-verdict-ingress send(c1) -> p1's stream verdict redirects into c2's
                   receive queue -> recv(c2)
rx-pass            send(p2) -> c2's stream verdict passes it -> recv(c2)
tx-verdict-egress  send(p1): its sk_msg verdict redirects to p2's
                   egress -> recv(c2)
tx-verdict-ingress send(p2): its sk_msg verdict redirects into c2's
                   receive queue -> recv(c2)
tx-pass            send(p2): its sk_msg verdict passes it -> recv(c2)
rx-normal          send(p2) -> recv(c2), no BPF (consumer 1 proxies
                   p1 to p2, idle)
tx-normal          send(p2) -> recv(c2), no BPF
================== ===================================================

``rx_strp=N`` (``--rx-strp N``) adds a stream parser that cuts the
received stream into messages of N bytes (rx-pass and rx-verdict-* only);
a length the receiving socket cannot buffer makes the parser give up, and
the run fails saying so.  ``delay_consumer`` (seconds; negative: consumer 0
never reads) and ``producer_duration`` (seconds, whole seconds as the
kernel bench compares them; 0: to the end) shape the flow.

A sample's counters: ``hits`` the bytes the BPF programs saw, ``drops`` the
bytes sent, ``false_hits`` the bytes received (and checked), extras
``send_calls``, ``read_calls`` and ``verdict_drops`` (redirects the kernel
answered SK_DROP to).  So ``Result.mean`` is the BPF speed in MB/s; the
lines are the kernel bench's::

    Iter   1 ( 12.345us): Send Speed 1578.756 MB/s (12044.950 calls/s), BPF Speed ...
    Summary: total trans     4775 MB ± 1592.219 MB/s

It takes two consumers and one producer, always pinned as ``-a`` pins them
(the kernel bench refuses to run without ``-c 2 -p 1 -a``); those are the
defaults here.  Every socket, the file and every program attachment are
closed and undone at the end of every run, failed or interrupted ones too.

Differences from the kernel bench: its setup refuses rx-normal and tx-normal
("unknown sockmap bench mode"); here they run as described above.  A
strparser that gave up leaves it printing zeros; here the run fails.

    >>> import benchbpf
    >>> r = benchbpf.sockmap.sockmap("tx-verdict-egress", duration=3)
    >>> benchbpf.sockmap.rates(r)
"""
from ..results import _lines as _report
from ..results._lines import PLUS_MINUS
from ..harness._runner import describe, run

__all__ = ["sockmap", "rates", "MODES", "progress_line", "summary_line"]

#: The modes, as the kernel bench's flags name them (--rx-pass ...).
MODES = describe("sockmap").params["mode"].choices


def sockmap(mode="rx-verdict-egress", *, rx_strp=0, delay_consumer=0, producer_duration=0,
            **options):
    """Run the sockmap benchmark in `mode` (see MODES) and return its Result.

    rx_strp: a stream parser cutting the received stream into messages of
    this many bytes, 0..65536 (0: none; rx modes with BPF only);
    delay_consumer: seconds consumer 0 waits before its first read
    (negative: it never reads); producer_duration: whole seconds after
    which the producer stops sending (0: it sends to the end).  The common
    options (warmup, duration, interval, ...) as keywords.  ValueError for
    values out of range or an rx_strp in another mode."""
    return run("sockmap", mode=mode, rx_strp=rx_strp, delay_consumer=delay_consumer,
               producer_duration=producer_duration, **options)


def rates(r):
    """Mean rates of a sockmap Result `r`, a dict: MB/s sent
    ("send_mbps"), seen by BPF ("bpf_mbps") and received ("rcv_mbps"), and
    sendfile()/read() calls per second ("send_calls_per_s",
    "read_calls_per_s")."""
    return {
        "send_mbps": r.stat("drops")[0],
        "bpf_mbps": r.stat("hits")[0],
        "rcv_mbps": r.stat("false_hits")[0],
        "send_calls_per_s": r.stat("send_calls")[0] * 1e6,
        "read_calls_per_s": r.stat("read_calls")[0] * 1e6,
    }


def progress_line(index, sample, producers, interval_ns=1_000_000_000):
    """The kernel bench's line for `sample` number `index`: how far the
    interval ran over `interval_ns` (us), send, BPF and receive speeds
    (MB/s) and calls per second.  `producers` is not used."""
    head = f"Iter {index:3d} ({(sample.interval_ns - interval_ns) / 1000.0:7.3f}us): "
    return head + (f"Send Speed {sample.rate_mps('drops'):8.3f} MB/s "
                   f"({sample.rate_mps('send_calls') * 1e6:8.3f} calls/s), "
                   f"BPF Speed {sample.rate_mps('hits'):8.3f} MB/s, "
                   f"Rcv Speed {sample.rate_mps('false_hits'):8.3f} MB/s "
                   f"({sample.rate_mps('read_calls') * 1e6:8.3f} calls/s)")


def summary_line(r):
    """The kernel bench's summary of sockmap Result `r`: the MB the BPF programs saw over the
    measured samples, added up as it does (truncated to whole MB at each
    sample), and their mean per second (per nominal interval, scaled to a
    second: its per-sample MB at the default 1 s interval)."""
    per_second = 1e9 / r.metadata.get("interval_ns", 1_000_000_000)
    total, mean = 0, 0.0
    for s in r.samples:
        total = int(total + s.hits / 1e6)
        mean += s.hits / 1e6 * per_second / len(r.samples)
    # C's "%8.3lu": at least three digits, zero-padded, in eight columns
    return f"Summary: total trans {f'{total:03d}':>8} MB {PLUS_MINUS} {mean:5.3f} MB/s"


_report.register("sockmap", summary=summary_line, progress=progress_line)
