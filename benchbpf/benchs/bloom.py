"""BPF bloom filter map: bloom-lookup, bloom-update, bloom-false-positive,
hashmap-without-bloom, hashmap-with-bloom.

Producers call getpgid() in a loop; each call runs one BPF program doing
many map operations, counted per CPU in BPF:

- ``lookup()`` (bloom-lookup) / ``update()`` (bloom-update): peek / push
  every element of an array of ``nr_entries`` random values in a bloom
  filter; a hit is one peek or push.
- ``hashmap_without_bloom()`` (hashmap-without-bloom): 1024 lookups of
  random keys in a hashmap holding ``nr_entries`` random keys.  Random keys
  are practically never there, so, as in the kernel bench, every lookup is
  a *drop* and hits stay 0: the figure is drops M/s.
- ``hashmap_with_bloom()`` (hashmap-with-bloom): the same, but each key is
  first asked to a bloom filter holding the hashmap's keys.  A key the
  filter rules out is a hit (no lookup); the others are looked up, and the
  misses among them (the filter's false positives) are drops.
- ``false_positive()`` (bloom-false-positive): hashmap-with-bloom that also
  counts each false positive as a false hit.  ``print(result)`` is the
  kernel bench's line
  ``Summary: N false hits of T total operations. Percentage =  x.xx %``
  and ``result.false_positive_pct`` that percentage.

Setup fills the maps from user space with random values, as the kernel
bench does, before attaching anything: a few seconds for the largest
``nr_entries`` on a 2-CPU machine.

    >>> from benchbpf import bloom
    >>> r = bloom.lookup(nr_hash_funcs=3, duration=3)
    >>> r.mean                          # M peeks/s
    >>> bloom.false_positive(nr_entries=1000).false_positive_pct

Same runs through the generic runner (kernel bench:
``bench --nr_hash_funcs 3 bloom-lookup``):
``benchbpf.run("bloom-lookup", nr_hash_funcs=3)``.

Parameters, named and bounded as the kernel bench's flags except where said::

    nr_entries     --nr_entries     1000  1 .. 5000000, the most the kernel's
                                          run_bench_bloom_filter_map.sh asks
                                          (the kernel bench: up to 2**32 - 1)
    nr_hash_funcs  --nr_hash_funcs  3     1 .. 15
    value_size     --value_size     8     2 .. 256 bytes; below 8 bytes,
                                          nr_entries may not exceed the
                                          2**(8*value_size) distinct values
    trigger        "auto", "fentry" or "tp"

Anything else is a ValueError before anything is loaded.

Trigger: the kernel bench runs its programs from fentry on getpgid().
``trigger="auto"`` (default) uses fentry where the kernel loads it and else
the ``syscalls/sys_enter_getpgid`` tracepoint; ``"fentry"`` or ``"tp"``
forces one (fentry where refused raises benchbpf.UnsupportedError).
``Result.metadata["trigger"]`` says which ran; compare figures only between
runs with the same trigger.  Only this process's getpgid() calls run the
programs.
"""
from ..harness._runner import run

__all__ = [
    "lookup", "update", "false_positive", "hashmap_without_bloom",
    "hashmap_with_bloom", "BENCHMARKS", "TRIGGERS", "MAX_ENTRIES",
]

#: Function name -> benchmark name, in the kernel bench's order.
BENCHMARKS = {
    "lookup": "bloom-lookup",
    "update": "bloom-update",
    "false_positive": "bloom-false-positive",
    "hashmap_without_bloom": "hashmap-without-bloom",
    "hashmap_with_bloom": "hashmap-with-bloom",
}
#: Values of the `trigger` parameter: what runs the BPF program on getpgid().
TRIGGERS = ("auto", "fentry", "tp")
#: Largest nr_entries: what the kernel's run_bench_bloom_filter_map.sh asks at most
#: (keeps setup, which fills every entry, to seconds).
MAX_ENTRIES = 5000000

_DOC_PARAMS = """
    nr_entries: entries of the maps, filled with random values (kernel
    bench ``--nr_entries``, default 1000, 1 .. 5000000).
    nr_hash_funcs: bloom filter hash functions (``--nr_hash_funcs``,
    default 3, 1 .. 15).  value_size: bytes per value (``--value_size``,
    default 8, 2 .. 256).  trigger: "auto", "fentry" or "tp".
    Common options (warmup, duration, interval, producers, affinity,
    prod_affinity, verbose, prog_stats, callback) as for benchbpf.run; no
    consumers.  Returns the Result (M/s); ValueError for values out of
    range, or more entries than value_size bytes have distinct values."""


def _run(name, nr_entries, nr_hash_funcs, value_size, trigger, options):
    return run(name, nr_entries=nr_entries, nr_hash_funcs=nr_hash_funcs,
               value_size=value_size, trigger=trigger, **options)


def lookup(nr_entries=1000, nr_hash_funcs=3, value_size=8, *, trigger="auto", **options):
    return _run("bloom-lookup", nr_entries, nr_hash_funcs, value_size, trigger, options)


def update(nr_entries=1000, nr_hash_funcs=3, value_size=8, *, trigger="auto", **options):
    return _run("bloom-update", nr_entries, nr_hash_funcs, value_size, trigger, options)


def false_positive(nr_entries=1000, nr_hash_funcs=3, value_size=8, *, trigger="auto",
                   **options):
    return _run("bloom-false-positive", nr_entries, nr_hash_funcs, value_size, trigger,
                options)


def hashmap_without_bloom(nr_entries=1000, nr_hash_funcs=3, value_size=8, *,
                          trigger="auto", **options):
    return _run("hashmap-without-bloom", nr_entries, nr_hash_funcs, value_size, trigger,
                options)


def hashmap_with_bloom(nr_entries=1000, nr_hash_funcs=3, value_size=8, *,
                       trigger="auto", **options):
    return _run("hashmap-with-bloom", nr_entries, nr_hash_funcs, value_size, trigger,
                options)


lookup.__doc__ = """bloom-lookup: bloom filter peeks of every element of an array of
    nr_entries random values per getpgid(); hits are peeks.""" + _DOC_PARAMS
update.__doc__ = """bloom-update: bloom filter pushes of every element of an array of
    nr_entries random values per getpgid(); hits are pushes.""" + _DOC_PARAMS
false_positive.__doc__ = """bloom-false-positive: 1024 random keys per getpgid()
    asked to a bloom filter, then (if it says maybe) looked up in a hashmap;
    false hits are the filter's false positives.  result.false_positive_pct
    is the kernel bench's percentage.""" + _DOC_PARAMS
hashmap_without_bloom.__doc__ = """hashmap-without-bloom: 1024 hashmap lookups of
    random keys per getpgid(), no bloom filter.  The keys are (practically)
    never there: every lookup is a drop, hits stay 0.""" + _DOC_PARAMS
hashmap_with_bloom.__doc__ = """hashmap-with-bloom: 1024 random keys per getpgid(),
    each asked to a bloom filter first: ruled out is a hit, looked up and
    found a hit, looked up and missing (a false positive) a drop.""" + _DOC_PARAMS
