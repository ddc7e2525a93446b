"""xdp-lb: a Katran-style XDP load balancer, timed in BPF, scenario by scenario.

The kernel bench's xdp-lb: an XDP program (``bpf/xdp_lb.bpf.c``) that parses
a packet, looks its VIP up, finds the flow in its CPU's connection table (an
LRU hash) or picks a real from the VIP's consistent-hash ring (jhash of
source and ports), counts per-VIP and per-real statistics and encapsulates
the packet towards the real (IPIP, IPv4-in-IPv6 or IP6IP6), run by
BPF_PROG_TEST_RUN over one built packet.  Each of the 24 scenarios is the
kernel bench's: TCP and UDP over IPv4 and IPv6, warm and cold connection
tables, one flow or 4096 (``-diverse``) or 16M (``-lru-miss``), consistent
hashing alone (``-ch``), SYN and RST, and the early exits (unknown VIP,
ICMP, ARP, fragments, IP options).

Before anything is timed, one run of the scenario is validated: its
verdict (XDP_TX, XDP_PASS or XDP_DROP), the packet it returns (the expected
encapsulation, byte for byte, or the packet unchanged) and the statistics
counters the program keeps (packets per verdict, connection-table misses).
A scenario that fails validation raises benchbpf.BenchmarkError naming the
scenario and what differed.  Every timed run's verdict is checked too.

Timing is the BPF-side timing every BPF-timed family shares
(``benchbpf.bpf_timing``): batches calibrated to ~10 ms (``tcp-v4-lru-warmup``
uses upstream's fixed 6500), timed with bpf_ktime_get_ns(), each batch one
sample of the Result; the run ends once each producer has 200 batches (or at
``duration``).  ``print(result)`` is upstream's line::

    tcp-v4-lru-hit: median 104.93 ns/op, stddev 4.72, p99 120.06 (29 samples)

and ``machine_line(result)`` its ``RESULT scenario=... median=...`` line
(the CLI's ``--machine-readable``).

    >>> from benchbpf import xdp_lb
    >>> r = xdp_lb.scenario("tcp-v4-lru-hit")
    >>> xdp_lb.stats(r).median_ns, r.metadata["bpf_timing"]["calibration"]
    >>> rs = xdp_lb.scenarios()             # all 24, a ResultSet
    >>> print(xdp_lb.table(rs))

CLI: ``benchbpf xdp-lb --scenario tcp-v4-lru-hit``, ``benchbpf
--list-scenarios``, ``--machine-readable`` (upstream's flags; its
``run_bench_xdp_lb.sh`` runs unchanged with benchbpf as ``./bench``).
"""
from ..harness import _progress
from ..results import bpf_timing
from ..harness._runner import check, describe, run
from ..results.resultset import ResultSet

__all__ = ["scenario", "scenarios", "table", "stats", "summary_line", "machine_line",
           "describe_scenarios", "BENCHMARK", "SCENARIOS", "GROUPS", "DURATION"]

#: The benchmark's name.
BENCHMARK = "xdp-lb"

#: The scenarios, in the kernel bench's order (its table of scenarios).
SCENARIOS = tuple(describe(BENCHMARK).params["scenario"].choices)

#: The kernel bench's run script's groups, in its order.
GROUPS = {
    "Single-flow baseline": ("tcp-v4-lru-hit", "tcp-v4-ch", "tcp-v6-lru-hit", "tcp-v6-ch",
                             "udp-v4-lru-hit", "udp-v6-lru-hit", "tcp-v4v6-lru-hit"),
    "Diverse flows (4K src addrs)": ("tcp-v4-lru-diverse", "tcp-v4-ch-diverse",
                                     "tcp-v6-lru-diverse", "tcp-v6-ch-diverse",
                                     "udp-v4-lru-diverse"),
    "TCP flags": ("tcp-v4-syn", "tcp-v4-rst-miss"),
    "LRU stress": ("tcp-v4-lru-miss", "udp-v4-lru-miss", "tcp-v4-lru-warmup"),
    "Early exits": ("pass-v4-no-vip", "pass-v6-no-vip", "pass-v4-icmp", "pass-non-ip",
                    "drop-v4-frag", "drop-v4-options", "drop-v6-frag"),
}

#: Default duration, s: long enough for 200 batches of every scenario, as
#: the kernel bench's 600 (a run ends at its 200 batches per producer).
DURATION = 600
#: What the report's suites and the manual's examples give the required
#: scenario: the first of the kernel bench's 24 (scenarios() runs all).
REQUIRED_PARAMS = {BENCHMARK: {"scenario": "tcp-v4-lru-hit"}}


def describe_scenarios():
    """{scenario: description}, the kernel bench's --list-scenarios."""
    p = describe(BENCHMARK).params["scenario"]
    return dict(zip(p.choices, p.choice_help))


def scenario(name, *, duration=DURATION, validate_fault="none", **options):
    """Validate scenario `name`, then time it in BPF: a Result whose samples
    are the timed batches (ns/op: stats(result)).

    name: one of SCENARIOS.  duration: at most this long (seconds; the run
    ends at 200 batches per producer).  validate_fault: "packet", "verdict"
    or "counters" break that validation check on purpose (for tests).
    Common options (warmup, interval, producers, affinity, prod_affinity,
    verbose, prog_stats, callback) as for benchbpf.run; no consumers."""
    return run(BENCHMARK, scenario=name, duration=duration, validate_fault=validate_fault,
               **options)


def scenarios(names=SCENARIOS, *, progress=None, duration=DURATION, **options):
    """Every scenario in `names` (all 24 by default), one run each with the
    same options: a ResultSet with axis "scenario".  Every name and option is
    checked before the first run; a scenario that fails validation raises
    (benchbpf.BenchmarkError names it).  progress: as for benchbpf.sweep."""
    names = (names,) if isinstance(names, str) else tuple(names)
    if not names:
        raise ValueError("names=(): give at least one scenario")
    for n in names:
        check(BENCHMARK, scenario=n, duration=duration, **options)
    results = []
    with _progress.session(BENCHMARK, len(names), progress):
        for n in names:
            with _progress.step(n):
                results.append(scenario(n, duration=duration, **options))
    return ResultSet(results, axes=("scenario",),
                     metadata={"benchmark": BENCHMARK, "grid": {"scenario": list(names)}})


def stats(result, filtered=True):
    """The run's TimingStats in ns/op: IQR-filtered (upstream's figures) or
    of every batch (bpf_timing.stats)."""
    return bpf_timing.stats(result, filtered)


def summary_line(result):
    """Upstream's line for xdp-lb `result`: 'SCENARIO: median X ns/op,
    stddev Y, p99 Z (N samples)' (bpf_timing.summary_line)."""
    return bpf_timing.summary_line(result)


def machine_line(result):
    """Upstream's --machine-readable line for xdp-lb `result`: 'RESULT
    scenario=SCENARIO samples=... median=...' in ns/op
    (bpf_timing.machine_line)."""
    return bpf_timing.machine_line(result)


def table(results):
    """A markdown table of xdp-lb `results` (a ResultSet or any iterable of Results):
    scenario, description, and the IQR-filtered median, p99, stddev and
    sample count in ns/op, as upstream's run script prints them."""
    desc = describe_scenarios()
    lines = ["| scenario | description | median ns/op | p99 | stddev | samples |",
             "|---|---|---:|---:|---:|---:|"]
    for r in results:
        name = r.params["scenario"]
        s = stats(r)
        if s is None:
            lines.append(f"| {name} | {desc[name]} | - | - | - | 0 |")
            continue
        lines.append(f"| {name} | {desc[name]} | {s.median_ns:.2f} | {s.p99_ns:.2f} | "
                     f"{s.stdev_ns:.2f} | {s.samples} |")
    return "\n".join(lines)
