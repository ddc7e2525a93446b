"""Hashmap lookups and updates of a full hashmap, timed in BPF:
bpf-hashmap-lookup and bpf-hashmap-full-update.

Producers call getpgid() in a loop; each call of this process runs a batch
in BPF, timed there with bpf_ktime_get_ns():

- ``lookup()`` (bpf-hashmap-lookup): ``nr_loops`` lookups in a hashmap of
  ``max_entries`` holding ``nr_entries`` keys, as nr_loops // nr_entries
  passes over keys 1 .. nr_entries (the first 4 bytes of a ``key_size``-byte
  key; the rest is fixed).
- ``full_update()`` (bpf-hashmap-full-update): 10000 updates (BPF_ANY) of a
  key not in a full 1000-entry hashmap, which the map refuses.

``print(result)`` is the kernel bench's report, one line per CPU that ran
batches::

    cpu01: lookup 50.739M ± 0.018M events/sec (approximated from 32 samples of ~19ms)
    1:hash_map_full_perf 16191342 events per sec

(± is 2 standard deviations, as the kernel bench prints it.)  The samples
behind each line are kept: ``result.series["cpu01.time_ns"]`` and
``["cpu01.ops"]``, and ``cpu_stats(result)`` gives mean, stdev, count and
mean length per CPU.  The per-interval samples count the operations of the
runs each interval finished (``result.mean``: M operations a second of the
wall clock, all CPUs, syscalls included), with the extra counters ``runs``,
``misses`` and ``events`` (timed batches).

**The sample rule.** A sample is one CPU's consecutive BPF-timed batches
added up until they cover at least ``min_sample_ms`` (default 10 ms), and
its rate counts only the operations really done.  Samples finished during
warm-up are dropped; every sample of the measured intervals is kept.  A
lookup that finds nothing fails the run (benchbpf.BenchmarkError).

Why: the kernel bench takes each batch as a sample whatever its length and
computes its rate as if all nr_loops lookups ran.  Its inner loop stops at
the first lookup that finds nothing, so a batch can end after a fraction
of its lookups and still be counted in full, and a short batch (small
nr_loops) is mostly the two clock reads and whatever interrupt fell in it.
Such samples of a millisecond or less are what make single kernel-bench
runs range from tens to a thousand M events/s.  Its key buffer is also one
global shared by all CPUs, and any process's getpgid() runs the batch;
here each CPU has its own key and only this process's calls count.

Options, as the kernel bench's flags (``--key_size`` ...)::

    key_size     4      4 .. 1024 bytes
    map_flags    0      0x1 (BPF_F_NO_PREALLOC), 0x40 (BPF_F_ZERO_SEED),
                        0x80 (BPF_F_RDONLY_PROG), or a combination
    max_entries  1000   1 .. 2**24
    nr_entries   500    1 .. max_entries, at most 2**23
    nr_loops     1e6    nr_entries .. 2**23 lookups per getpgid()
    min_sample_ms 10    1 .. 1000 (not in the kernel bench)
    trigger      "auto", "fentry" or "tp"

Anything else is a ValueError before anything is loaded.  The kernel bench
fires from fentry on getpgid(); ``trigger="auto"`` uses fentry where the
kernel loads it, else the ``syscalls/sys_enter_getpgid`` tracepoint
(``result.metadata["trigger"]``).

``fill_sweep()`` is the original study's fill-factor sweep in one call:
lookups in a 65536-entry map (map_flags=0x40) holding 4096 .. 65536 keys.

    >>> from benchbpf import hashmap
    >>> r = hashmap.lookup(nr_entries=4096, max_entries=65536, duration=3)
    >>> print(r); hashmap.cpu_stats(r)
    >>> print(hashmap.fill_sweep(duration=2))
"""
import math
import re
import statistics
from dataclasses import dataclass

from ..harness import _progress
from ..results import _lines as _report
from ..harness._runner import run

__all__ = ["lookup", "full_update", "fill_sweep", "cpu_stats", "CpuStats", "FillSweep",
           "BENCHMARKS", "TRIGGERS", "FULL_UPDATE_LOOPS", "SWEEP_ENTRIES"]

#: Function name -> benchmark name.
BENCHMARKS = {"lookup": "bpf-hashmap-lookup", "full_update": "bpf-hashmap-full-update"}
#: Values of the `trigger` parameter: what runs the BPF program on getpgid().
TRIGGERS = ("auto", "fentry", "tp")
#: Updates per getpgid() in bpf-hashmap-full-update (the kernel bench's).
FULL_UPDATE_LOOPS = 10000
#: The fill-factor sweep's nr_entries: 4096 .. 65536 of 65536, in steps of 4096.
SWEEP_ENTRIES = tuple(range(4096, 65536 + 1, 4096))

_SERIES = re.compile(r"cpu(\d+)\.time_ns$")


@dataclass(frozen=True)
class CpuStats:
    """One CPU's samples: rates in M events/s, lengths in ns."""
    cpu: int
    rates_mps: tuple
    times_ns: tuple

    @property
    def n(self):
        """How many samples the CPU kept."""
        return len(self.rates_mps)

    @property
    def mean(self):
        """Mean rate, M events/s."""
        return statistics.fmean(self.rates_mps)

    @property
    def stdev(self):
        """Sample standard deviation of the rates, M events/s (0.0 for one)."""
        return statistics.stdev(self.rates_mps) if self.n > 1 else 0.0

    @property
    def median(self):
        """Median rate, M events/s."""
        return statistics.median(self.rates_mps)

    @property
    def mean_time_ns(self):
        """Mean length of a sample, ns."""
        return statistics.fmean(self.times_ns)


def cpu_stats(result):
    """{cpu: CpuStats} of a bpf-hashmap-* result, CPUs that kept samples."""
    out = {}
    for name, times in sorted(result.series.items()):
        m = _SERIES.match(name)
        if not m:
            continue
        cpu = int(m.group(1))
        ops = result.series[f"cpu{m.group(1)}.ops"]
        rates = tuple(o * 1e3 / t for o, t in zip(ops, times) if t)
        out[cpu] = CpuStats(cpu, rates, tuple(times))
    return out


def report_lines(result):
    """The kernel bench's final lines for bpf-hashmap-lookup / -full-update."""
    stats = cpu_stats(result)
    if not stats:
        return f"{result.name}: no samples kept (no batch ran on any CPU)"
    if result.report == "hashmap_full_update":
        return "\n".join(f"{cpu}:hash_map_full_perf {int(s.mean * 1e6)} events per sec"
                         for cpu, s in stats.items())
    return "\n".join(
        f"cpu{cpu:02d}: lookup {s.mean:.3f}M \u00b1 {2 * s.stdev:.3f}M events/sec "
        f"(approximated from {s.n} samples of ~{int(s.mean_time_ns // 1e6)}ms)"
        for cpu, s in stats.items())



# The per-interval lines are the shared format of the hashmap_* kinds.
_report.register("hashmap_lookup", summary=report_lines)
_report.register("hashmap_full_update", summary=report_lines)

def lookup(key_size=4, map_flags=0, max_entries=1000, nr_entries=500, nr_loops=1000000, *,
           min_sample_ms=10, trigger="auto", **options):
    """bpf-hashmap-lookup: nr_loops lookups per getpgid(), timed in BPF.

    key_size 4..1024 bytes, map_flags (0x1, 0x40, 0x80, combined or not),
    max_entries 1..2**24, nr_entries 1..max_entries (at most 2**23),
    nr_loops nr_entries..2**23 (kernel bench flags, same defaults).
    min_sample_ms (1..1000, default 10): a sample is one CPU's batches
    added up until they cover that long.  trigger: "auto", "fentry" or
    "tp".  Common options as for benchbpf.run; no consumers.  Returns a
    Result whose series hold each CPU's samples; print(result) gives the
    kernel's lines.  ValueError for values out of range or that do not go
    together, before anything is loaded."""
    return run("bpf-hashmap-lookup", key_size=key_size, map_flags=map_flags,
               max_entries=max_entries, nr_entries=nr_entries, nr_loops=nr_loops,
               min_sample_ms=min_sample_ms, trigger=trigger, **options)


def full_update(*, min_sample_ms=10, trigger="auto", **options):
    """bpf-hashmap-full-update: 10000 updates per getpgid() of a key a full
    1000-entry hashmap refuses, timed in BPF; samples as for lookup().
    min_sample_ms (1..1000) and trigger as for lookup(); `options`: the
    common options of benchbpf.run.  Returns a Result whose series hold
    each CPU's samples."""
    return run("bpf-hashmap-full-update", min_sample_ms=min_sample_ms, trigger=trigger,
               **options)


@dataclass(frozen=True)
class FillSweep:
    """bpf-hashmap-lookup at several fill factors of one map."""
    max_entries: int
    nr_entries: tuple
    results: tuple

    def rows(self):
        """A tuple per run: (nr_entries, fill %, mean of the per-CPU rates in
        M events/s, their stdev, how many samples)."""
        out = []
        for n, r in zip(self.nr_entries, self.results):
            rates = [x for s in cpu_stats(r).values() for x in s.rates_mps]
            mean = statistics.fmean(rates) if rates else math.nan
            sd = statistics.stdev(rates) if len(rates) > 1 else 0.0
            out.append((n, 100.0 * n / self.max_entries, mean, sd, len(rates)))
        return out

    def table(self):
        """A markdown table of the sweep."""
        lines = ["| nr_entries | fill | lookups M/s | stdev | samples |",
                 "|---:|---:|---:|---:|---:|"]
        for n, fill, mean, sd, k in self.rows():
            lines.append(f"| {n} | {fill:.2f} % | {mean:.3f} | {sd:.3f} | {k} |")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


def fill_sweep(nr_entries=SWEEP_ENTRIES, *, max_entries=65536, map_flags=0x40, key_size=4,
               nr_loops=1000000, progress=None, **options):
    """The study's fill-factor sweep: bpf-hashmap-lookup in one map of
    max_entries (65536, map_flags=0x40) holding each of nr_entries keys
    (4096 .. 65536 in steps of 4096), one run each with the same options.
    Every value is checked before the first run.  Returns a FillSweep;
    print() it for a table, .results for the Results.  progress: a bar over
    the runs, as for benchbpf.sweep."""
    values = tuple(nr_entries)
    if not values:
        raise ValueError("nr_entries=(): give at least one number of entries")
    for n in values:
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= max_entries:
            raise ValueError(f"nr_entries={n!r} out of range: allowed 1..{max_entries} "
                             f"(max_entries)")
        if n > nr_loops:
            raise ValueError(f"nr_entries={n!r} is more than nr_loops={nr_loops!r}")
    # The first run checks every other option before anything is loaded.
    results = []
    with _progress.session("bpf-hashmap-lookup fill sweep", len(values), progress):
        for n in values:
            with _progress.step(f"nr_entries={n}"):
                results.append(_progress.finished(lookup(
                    key_size=key_size, map_flags=map_flags, max_entries=max_entries,
                    nr_entries=n, nr_loops=nr_loops, **options)))
    return FillSweep(max_entries, values, tuple(results))
