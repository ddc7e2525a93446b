"""lpm-trie: operations on an LPM trie, the kernel bench's lpm-trie-* benchmarks.

The trie holds (or, for insert, receives) keys 0 .. ``nr_entries`` - 1 at
``prefix_len`` bits: no gaps and no partly filled branches, the worst case.
Each producer runs an XDP program through BPF_PROG_TEST_RUN in a loop; a run
makes 10000 operations in one ``bpf_loop()``, timed in BPF.  The operation's
per-key work is the kernel bench's: make the next key (or a random one with
``random=True``), then

- ``noop()``: nothing (the harness: bpf_loop and the test run);
- ``baseline()``: the key alone (what lookup and update cost besides the map);
- ``lookup()``: a lookup in the full trie (a miss fails the run);
- ``insert()``: BPF_NOEXIST into the empty trie, emptied again after the last key;
- ``update()``: BPF_EXIST in the full trie;
- ``delete()``: a delete from the full trie, refilled after the last key;
- ``free()``: the kernel's free of a full trie, timed by fentry/fexit on
  bpf_map_free_deferred (producers create, fill and close tries).

Reports, as the kernel bench's: noop, baseline, lookup and update print the
"ops" lines (M ops/s over the interval, ns/op); insert and delete print
M ops/s and ns/op per second of BPF-timed time (the resets left out; the
per-interval BPF time is ``Sample.extra["duration_ns"]``); free prints K
ops/s and ms/op the same way.  ``frac_rates(result)`` gives those rates.

Options (kernel bench flags ``--nr_entries``, ``--prefix_len``, ``--random``)::

    nr_entries  required, 1 .. 100000000 (the trie's capacity), and what
                half the free memory can hold for the benchmarks that fill it
    prefix_len  32, 1 .. 32 with 2**prefix_len >= nr_entries
    random      False; not for insert, delete, free

insert, delete and free take one producer.  Bad values and combinations raise
ValueError before anything is loaded.

Where the kernel refuses fentry (here: a locked-down kernel), ``free()``
raises benchbpf.UnsupportedError before anything else is loaded.  The kernel
bench's object holds those fentry/fexit programs for every lpm-trie
benchmark, so there none of the seven runs on such a kernel; here the other
six do.

    >>> from benchbpf import lpm_trie
    >>> r = lpm_trie.lookup(10000, duration=3)
    >>> print(r)             # Summary: throughput ... M ops/s ..., latency ... ns/op
"""
import math

from ..results import _lines as _report
from ..results._lines import PLUS_MINUS
from ..harness._runner import run

__all__ = ["noop", "baseline", "lookup", "insert", "update", "delete", "free",
           "frac_rates", "BENCHMARKS", "MAX_ENTRIES", "NR_LOOPS"]

#: Function name -> benchmark name.
BENCHMARKS = {op: f"lpm-trie-{op}" for op in
              ("noop", "baseline", "lookup", "insert", "update", "delete", "free")}
#: The trie's capacity, so the most nr_entries.
MAX_ENTRIES = 100_000_000
#: Operations per program run.
NR_LOOPS = 10000
#: Parameters whose bound this machine sets, and what sets it.
MACHINE_LIMITS = {"nr_entries": "what half the free memory holds"}
#: What the report's suites and the manual's examples give the required
#: nr_entries: the trie size of upstream's examples.
REQUIRED_PARAMS = {name: {"nr_entries": 10000} for name in BENCHMARKS.values()}

# report kind -> (rate divisor, rate letter, latency divisor, latency unit)
_FRAC = {"lpm_trie_frac": (1e6, "M", 1.0, "ns"), "lpm_trie_free": (1e3, "K", 1e6, "ms")}


def frac_rates(result):
    """Per-sample rates of `result` per second of BPF-timed time (hits /
    duration_ns), in the report's unit (M/s for insert and delete, K/s for
    free), a tuple; NaN for a sample that timed nothing."""
    div = _FRAC.get(result.report, (1e6,))[0]
    return tuple(s.hits / div / (s.extra["duration_ns"] / 1e9) if s.extra["duration_ns"]
                 else math.nan for s in result.samples)


def progress_line(report, index, sample, producers, interval_ns):
    """The kernel bench's Iter line for insert, delete and free."""
    div, letter, _, _ = _FRAC[report]
    dur = sample.extra["duration_ns"]
    rate = sample.hits / div / (dur / 1e9) if dur else math.nan
    return (f"Iter {index:3d} ({(sample.interval_ns - interval_ns) / 1000.0:7.3f}us): "
            f"hits {rate:8.3f}{letter}/s ({rate / producers:7.3f}{letter}/prod)")


def summary_line(result):
    """The kernel bench's summary for insert, delete and free: throughput per
    BPF-timed second, latency the mean of duration_ns // hits."""
    div, letter, lat_div, unit = _FRAC[result.report]
    rates = frac_rates(result)
    n = len(rates)
    mean = math.fsum(rates) / n if n else math.nan
    sd = math.sqrt(math.fsum((r - mean) ** 2 for r in rates) / (n - 1)) if n > 1 else 0.0
    # duration_ns / hits is an integer division in the kernel bench.
    lat = math.fsum(s.extra["duration_ns"] // s.hits if s.hits else math.nan
                    for s in result.samples) / n if n else math.nan
    prod = result.producers
    return (f"Summary: throughput {mean:8.3f} {PLUS_MINUS} {sd:5.3f} {letter} ops/s "
            f"({mean / prod:7.3f}{letter} ops/prod), latency {lat / lat_div / prod:8.3f} "
            f"{unit}/op")


def _run(op, nr_entries, prefix_len, random, options):
    # random None: an operation that takes no random (insert, delete, free).
    keys = {} if random is None else {"random": random}
    return run(BENCHMARKS[op], nr_entries=nr_entries, prefix_len=prefix_len, **keys,
               **options)


def noop(nr_entries, prefix_len=32, *, random=False, **options):
    """lpm-trie-noop: bpf_loop() of empty callbacks, the harness overhead.

    nr_entries: keys in the trie, 1..100000000 (required); prefix_len: bits
    per key, 1..32, with 2**prefix_len >= nr_entries; random: random keys.
    `options`: the common options of benchbpf.run.  Returns the Result
    (M ops/s); ValueError for values out of range or that do not go
    together, before anything is loaded."""
    return _run("noop", nr_entries, prefix_len, random, options)


def baseline(nr_entries, prefix_len=32, *, random=False, **options):
    """lpm-trie-baseline: the key generation alone.

    nr_entries: keys in the trie, 1..100000000 (required); prefix_len: bits
    per key, 1..32, with 2**prefix_len >= nr_entries; random: random keys.
    `options`: the common options of benchbpf.run.  Returns the Result
    (M ops/s); ValueError for values out of range or that do not go
    together, before anything is loaded."""
    return _run("baseline", nr_entries, prefix_len, random, options)


def lookup(nr_entries, prefix_len=32, *, random=False, **options):
    """lpm-trie-lookup: lookups of existing keys in a full trie.

    nr_entries: keys in the trie, 1..100000000 (required); prefix_len: bits
    per key, 1..32, with 2**prefix_len >= nr_entries; random: random keys.
    `options`: the common options of benchbpf.run.  Returns the Result
    (M ops/s); ValueError for values out of range or that do not go
    together, before anything is loaded."""
    return _run("lookup", nr_entries, prefix_len, random, options)


def insert(nr_entries, prefix_len=32, **options):
    """lpm-trie-insert: inserts into an empty trie (one producer).

    nr_entries: keys in the trie, 1..100000000 (required); prefix_len: bits
    per key, 1..32, with 2**prefix_len >= nr_entries.  `options`: the common
    options of benchbpf.run.  Returns the Result (M ops/s per BPF-timed
    second: frac_rates); ValueError for values out of range or that do not
    go together, before anything is loaded."""
    return _run("insert", nr_entries, prefix_len, None, options)


def update(nr_entries, prefix_len=32, *, random=False, **options):
    """lpm-trie-update: updates of existing keys in a full trie.

    nr_entries: keys in the trie, 1..100000000 (required); prefix_len: bits
    per key, 1..32, with 2**prefix_len >= nr_entries; random: random keys.
    `options`: the common options of benchbpf.run.  Returns the Result
    (M ops/s); ValueError for values out of range or that do not go
    together, before anything is loaded."""
    return _run("update", nr_entries, prefix_len, random, options)


def delete(nr_entries, prefix_len=32, **options):
    """lpm-trie-delete: deletes from a full trie (one producer).

    nr_entries: keys in the trie, 1..100000000 (required); prefix_len: bits
    per key, 1..32, with 2**prefix_len >= nr_entries.  `options`: the common
    options of benchbpf.run.  Returns the Result (M ops/s per BPF-timed
    second: frac_rates); ValueError for values out of range or that do not
    go together, before anything is loaded."""
    return _run("delete", nr_entries, prefix_len, None, options)


def free(nr_entries, prefix_len=32, **options):
    """lpm-trie-free: the free of a full trie, timed by fentry/fexit (one
    producer; UnsupportedError where the kernel refuses fentry).

    nr_entries: keys in the trie, 1..100000000 (required); prefix_len: bits
    per key, 1..32, with 2**prefix_len >= nr_entries.  `options`: the common
    options of benchbpf.run.  Returns the Result (K ops/s per BPF-timed
    second: frac_rates); ValueError for values out of range or that do not
    go together, before anything is loaded."""
    return _run("free", nr_entries, prefix_len, None, options)


for _kind in _FRAC:
    _report.register(
        _kind, summary=summary_line,
        progress=lambda index, sample, producers, interval_ns, kind=_kind:
        progress_line(kind, index, sample, producers, interval_ns))
