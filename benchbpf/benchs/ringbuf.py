"""BPF ring buffer and perf buffer throughput: rb-libbpf, rb-custom, pb-libbpf, pb-custom.

Producers call getpgid() in a loop; a BPF program on that syscall emits a
batch of small records (``batch_cnt``, default 500, of ``record_size``
bytes, default 8) into a BPF ring buffer or a perf buffer.  One consumer
thread reads them, through libbpf's ring_buffer / perf_buffer API
(``consumer="libbpf"``) or through a minimal reader that walks the mmapped
buffer directly (``consumer="custom"``).  A hit is one record read by the
consumer, a drop one record the BPF side could not emit because the buffer
was full.  Extra per-sample counters: ``wakeups``, the times the consumer
thread slept and was woken (its voluntary context switches: waits for a
notification, plus, for pb-libbpf's reader, at most ten 100 ms poll
timeouts a second; the other readers wait without a timeout, as the
kernel bench's readers do, and are woken at the end: the custom ones
through an eventfd, rb-libbpf's by a record in a small ring of its own), and
``polls``, the poll calls that returned data (a poll on a non-empty buffer
returns at once, without a notification).  Notification sampling shows as
fewer wakeups per hit.  ``runs`` counts the BPF producer program's runs
for this process and ``calls`` the process's getpgid() calls: over a whole
run (warm-up included) ``hits + drops == batch_cnt * runs`` and
``runs == calls`` exactly, because the last sample first stops the
producers and reads what is left in the buffer.

The custom ring buffer reader reads as the kernel bench's does: a pass that
reaches a record still being written ends without publishing how far it
read, so the next wake-up reads and counts those records again (and the
producer, seeing them unread, keeps forcing wake-ups in sampled mode).
``count_once=True`` (``rb_count_once``) publishes first, each record
counted once, and the identity above holds for it too; by default rb-custom
only guarantees ``hits + drops >= batch_cnt * runs``.  The figures differ:
results/side-by-side-2cpu.md has both.

    >>> import benchbpf
    >>> r = benchbpf.ringbuf(producers=4)                  # rb-libbpf
    >>> r = benchbpf.ringbuf(consumer="custom", sampled=True, sample_rate=500)
    >>> r = benchbpf.perfbuf(consumer="custom", back_to_back=True)
    >>> print(r)            # hits ... M/s (... M/prod), drops ..., total operations ...
    >>> r.throughput_mbps   # hits * record_size, MB/s

The same runs through the generic runner take the kernel bench's option
names: ``benchbpf.run("rb-libbpf", rb_sampled=True, rb_sample_rate=500)``.

Keyword  ->  kernel bench option (benchmark parameter)
    back_to_back   --rb-b2b          rb_b2b
    use_output     --rb-use-output   rb_use_output   (ring buffer only)
    batch_cnt      --rb-batch-cnt    rb_batch_cnt
    sampled        --rb-sampled      rb_sampled
    sample_rate    --rb-sample-rate  rb_sample_rate
    record_size    (8 in the kernel bench)          record_size
    ring_size      (512 KiB in the kernel bench)    ringbuf_sz  (ring buffer)
    buffer_pages   (128 in the kernel bench)        perfbuf_sz  (perf buffer)
    bench_producer --rb-bench-producer rb_bench_producer (newest kernel bench)
    count_once     --rb-count-once   rb_count_once   (rb-custom only; not a kernel flag)
    trigger        "auto", "fentry" or "tp"         trigger

``sample_rate`` implies ``sampled=True``; giving it with ``sampled=False``
is a ValueError.  Invalid combinations raise ValueError before anything is
loaded: back-to-back with several producers, a consumer count other than 1
(0 with bench_producer), a record bigger than the buffer, and every
configuration that could never wake the consumer again.  A ring buffer
keeps at most ring_size - 1 bytes waiting (a reservation fails once the
producer is a whole ring ahead), in records of record_size plus an 8-byte
header rounded up to 8: so record_size <= ring_size - 16, and sampled,
sample_rate <= (ring_size - 1) // record bytes (32767 for the default
512 KiB ring of 16-byte records; 255 for a 4 KiB ring).  A perf buffer
writes while at most its size - 1 bytes are in use, and the sample after
a loss also carries a 24-byte lost-samples record: record_size <=
buffer bytes - 44.  Perf buffers also wake the consumer whenever half the
buffer filled, so sample_rate has no such bound there, but a sampled
back-to-back perf buffer whose batch never reaches sample_rate would stall.
Unlike the kernel bench, the perf buffers accept sample_rate > batch_cnt
elsewhere, where it does no harm.

Trigger: the kernel bench fires its producers from fentry on getpgid().
``trigger="auto"`` (default) uses fentry where the kernel loads it and else
the ``syscalls/sys_enter_getpgid`` tracepoint; ``Result.metadata["trigger"]``
says which ran.  Figures are comparable only between runs with the same
trigger.

``benchbpf.ringbuf`` is this module, and calling it runs ``ringbuf()``:
``benchbpf.ringbuf(producers=4)``, ``benchbpf.ringbuf.STUDIES``,
``benchbpf.ringbuf.study(name)`` (also ``benchbpf.ringbuf_study(name)``),
which returns a ``Study``: a mapping of label to Result with ``table()``,
an HTML view and ``plot()``.
"""
import math
import os
import statistics
from collections.abc import Mapping

from .._callable import callable_module
from ..harness import _progress
from ..results._plot import MIN_MAX_LABEL, _axes, legend_outside, log_scale_fits
from ..harness._runner import run
from ..harness._sweep import Sweep, run_calls
from ..results.result import Result
from ..results.resultset import ResultSet, format_table, format_table_html, table_rows, warnings_of
from ..results.stats import median_ci

__all__ = [
    "ringbuf", "perfbuf", "BENCHMARKS", "CONSUMERS", "TRIGGERS", "STUDIES", "study", "Study",
    "Studies", "KERNEL_SCRIPT_STUDIES",
    "single_producer_parallel", "single_producer_sampled", "back_to_back",
    "back_to_back_sampled", "ringbuf_sample_rate_sweep", "perfbuf_sample_rate_sweep",
    "reserve_vs_output", "reserve_vs_output_sampled", "same_cpu", "multi_producer",
    "perfbuf_multi_producer", "record_size_sweep",
    "SAMPLE_RATES", "PRODUCER_COUNTS", "RECORD_SIZES",
]

#: The four benchmarks, in the kernel script's order.
BENCHMARKS = ("rb-libbpf", "rb-custom", "pb-libbpf", "pb-custom")
#: Values of ringbuf()'s and perfbuf()'s `consumer`: libbpf's reader or the
#: kernel bench's own.
CONSUMERS = ("libbpf", "custom")
#: Values of the `trigger` option: what runs the BPF producer on getpgid().
TRIGGERS = ("auto", "fentry", "tp")

#: Sample rates (= batch counts) of the kernel script's back-to-back sweeps.
SAMPLE_RATES = (1, 5, 10, 25, 50, 100, 250, 500, 1000, 2000, 3000)
#: Producer counts of the kernel script's multi-producer runs.
PRODUCER_COUNTS = (1, 2, 3, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52)
#: Record sizes of record_size_sweep(), bytes.
RECORD_SIZES = (8, 64, 256, 1024, 4096, 16384, 65536)


# Friendly keyword -> benchmark parameter, per buffer kind.
_RB_NAMES = {
    "back_to_back": "rb_b2b",
    "use_output": "rb_use_output",
    "batch_cnt": "rb_batch_cnt",
    "sampled": "rb_sampled",
    "sample_rate": "rb_sample_rate",
    "record_size": "record_size",
    "ring_size": "ringbuf_sz",
    "bench_producer": "rb_bench_producer",
    "count_once": "rb_count_once",
    "trigger": "trigger",
}
_PB_NAMES = {
    "back_to_back": "rb_b2b",
    "batch_cnt": "rb_batch_cnt",
    "sampled": "rb_sampled",
    "sample_rate": "rb_sample_rate",
    "record_size": "record_size",
    "buffer_pages": "perfbuf_sz",
    "trigger": "trigger",
}


def _bench_name(prefix, consumer):
    if consumer not in CONSUMERS:
        raise ValueError(f"consumer={consumer!r}: must be one of "
                         f"{', '.join(repr(c) for c in CONSUMERS)}")
    return f"{prefix}-{consumer}"


def _params(func, names, friendly, options):
    """Map friendly keywords to benchmark parameters, refusing both spellings."""
    sampled, rate = friendly.get("sampled"), friendly.get("sample_rate")
    if rate is not None:
        if sampled is False:
            raise ValueError(f"{func}: sample_rate={rate!r} has no effect with "
                             "sampled=False (drop it, or pass sampled=True)")
        friendly["sampled"] = True
    params = {}
    for key, value in friendly.items():
        if value is None:
            continue
        kernel = names[key]
        if kernel in options:
            raise TypeError(f"{func}: got both {key}= and {kernel}=; pass one")
        params[kernel] = value
    return {**options, **params}


def ringbuf(consumer="libbpf", *, back_to_back=None, use_output=None, batch_cnt=None,
            sampled=None, sample_rate=None, record_size=None, ring_size=None,
            bench_producer=None, count_once=None, trigger=None, **options):
    """Run rb-libbpf (consumer="libbpf") or rb-custom (consumer="custom").

    - back_to_back: one batch at a time on one CPU, the consumer triggering
      the next after reading (single producer only).
    - use_output: emit with bpf_ringbuf_output() (copies the record) instead
      of bpf_ringbuf_reserve() + submit (writes its first 8 bytes).
    - batch_cnt: records per getpgid() call (1..4000, default 500).
    - sampled / sample_rate: notify the consumer only once sample_rate
      records (default 500) are waiting; sample_rate implies sampled.
    - record_size: bytes per record (8..1 MiB, default 8).
    - ring_size: ring bytes, a power of 2 (default: 512 KiB, grown to hold
      32 records).
    - bench_producer: newest kernel bench's --rb-bench-producer (rb-libbpf,
      no consumer: sets consumers=0 unless given).
    - count_once: rb-custom only: count each record once instead of as the
      kernel bench's reader does (see the module's docstring).
    - trigger: "auto" (default), "fentry" or "tp".

    Other keywords (`options`): the common options (warmup, duration,
    interval, producers, consumers, affinity, prod_affinity, cons_affinity,
    verbose, prog_stats, callback) or kernel-named parameters (rb_b2b=...).
    Returns the Result (hits: records read, M/s); ValueError for values out
    of range or that do not go together, TypeError for a parameter given
    under both names.
    """
    name = _bench_name("rb", consumer)
    if bench_producer:
        options.setdefault("consumers", 0)
    kw = _params("ringbuf", _RB_NAMES, dict(
        back_to_back=back_to_back, use_output=use_output, batch_cnt=batch_cnt,
        sampled=sampled, sample_rate=sample_rate, record_size=record_size,
        ring_size=ring_size, bench_producer=bench_producer, count_once=count_once,
        trigger=trigger), options)
    return run(name, **kw)


def perfbuf(consumer="libbpf", *, back_to_back=None, batch_cnt=None, sampled=None,
            sample_rate=None, record_size=None, buffer_pages=None, trigger=None,
            **options):
    """Run pb-libbpf (consumer="libbpf") or pb-custom (consumer="custom").

    Records go out with bpf_perf_event_output() into the current CPU's perf
    buffer.

    - back_to_back, batch_cnt, trigger: as ringbuf().
    - sampled / sample_rate: the perf event wakes the consumer every
      sample_rate samples (at most batch_cnt back-to-back); sample_rate
      implies sampled.
    - record_size: bytes per sample (8..65516: a perf record is < 64 KiB).
    - buffer_pages: data pages per CPU, a power of 2 (default 128).

    Other keywords (`options`) and what it returns and raises: as ringbuf().
    """
    name = _bench_name("pb", consumer)
    kw = _params("perfbuf", _PB_NAMES, dict(
        back_to_back=back_to_back, batch_cnt=batch_cnt, sampled=sampled,
        sample_rate=sample_rate, record_size=record_size, buffer_pages=buffer_pages,
        trigger=trigger), options)
    return run(name, **kw)


# ---- the studies of the kernel's run_bench_ringbufs.sh ----
#
# Each runs with affinity on, as the kernel script's "-a" (consumer on
# CPU 0, producers after it, wrapping around the CPUs when there are more
# threads than CPUs: 32 producers on 2 CPUs run 16 to a CPU, the consumer
# sharing CPU 0); pass affinity=False, or CPU lists, to override.  Every other
# keyword goes to each run (warmup, duration, trigger=...), except
# progress: a bar over the study's runs (see benchbpf.sweep), and budget:
# with precision=, the wall time the study may take (see study()).
# Each study is planned first (_StudyPlan: its runs, not started), so that
# study() can interleave the runs of all of them.


def _opts(options):
    opts = dict(options)
    if opts.get("affinity") is None and "prod_affinity" not in opts \
            and "cons_affinity" not in opts:
        opts["affinity"] = True
    return opts


class _StudyPlan:
    """One study's runs, not started: calls [(label, benchmark, options)],
    and for a sweep (benchmark, parameter, values)."""

    def __init__(self, calls, sweep=None):
        self.calls, self.sweep = calls, sweep

    def build(self, results):
        """The study's value from the Results of its calls: a Sweep or {label: Result}."""
        if self.sweep is not None:
            name, param, values = self.sweep
            return Sweep(name, param, values, tuple(results))
        return dict(zip((c[0] for c in self.calls), results))


def _run_plans(title, plans, progress, budget):
    """Run the plans' calls, one progress bar: each plan's value, in order.
    With precision= the calls are interleaved (_runner.run_interleaved),
    all of them checked before the first loads."""
    calls = [(str(label), name, kw) for plan in plans for label, name, kw in plan.calls]
    results = run_calls(f"ringbuf {title}", calls, progress, budget)
    out, at = [], 0
    for plan in plans:
        out.append(plan.build(results[at:at + len(plan.calls)]))
        at += len(plan.calls)
    return out


def _execute(title, plan, progress, budget):
    return _run_plans(title, [plan], progress, budget)[0]


def _each(options, **params):
    opts = _opts(options)
    return _StudyPlan([(b, b, {**opts, **params}) for b in BENCHMARKS])


def _sweep(title, name, param, values, options_for):
    values = tuple(values)
    if not values:
        raise ValueError(f"{title}: no values to sweep")
    return _StudyPlan([(f"{param}={v!r}", name, options_for(v)) for v in values],
                 sweep=(name, param, values))


def _plan_single_producer_parallel(**options):
    return _each(options)


def _plan_single_producer_sampled(**options):
    return _each(options, rb_sampled=True)


def _plan_back_to_back(**options):
    return _each(options, rb_b2b=True)


def _plan_back_to_back_sampled(**options):
    return _each(options, rb_b2b=True, rb_sampled=True)


def _sample_rate_sweep(title, name, rates, options):
    opts = _opts(options)
    return _sweep(title, name, "rb_sample_rate", rates,
                  lambda r: {**opts, "rb_b2b": True, "rb_sampled": True,
                             "rb_batch_cnt": r, "rb_sample_rate": r})


def _plan_ringbuf_sample_rate_sweep(rates=SAMPLE_RATES, **options):
    return _sample_rate_sweep("ringbuf_sample_rate_sweep", "rb-custom", rates, options)


def _plan_perfbuf_sample_rate_sweep(rates=SAMPLE_RATES, **options):
    return _sample_rate_sweep("perfbuf_sample_rate_sweep", "pb-custom", rates, options)


def _reserve_vs_output(opts):
    return _StudyPlan([("reserve", "rb-custom", opts),
                  ("output", "rb-custom", {**opts, "rb_use_output": True})])


def _plan_reserve_vs_output(**options):
    return _reserve_vs_output({**_opts(options), "rb_b2b": True})


def _plan_reserve_vs_output_sampled(**options):
    return _reserve_vs_output({**_opts(options), "rb_sampled": True})


def _plan_same_cpu(cpu=0, **options):
    opts = {**options, "prod_affinity": [cpu], "cons_affinity": [cpu]}
    return _StudyPlan([(b, b, {**opts, "rb_batch_cnt": 1, "rb_sample_rate": 1})
                  for b in BENCHMARKS])


def _producer_counts(counts):
    if counts is not None:
        return tuple(counts)
    limit = max(4, 2 * (os.cpu_count() or 1))
    return tuple(n for n in PRODUCER_COUNTS if n <= limit)


def _plan_multi_producer(producer_counts=None, **options):
    return _sweep("multi_producer", "rb-libbpf", "producers",
                  _producer_counts(producer_counts),
                  lambda n: {**_opts(options), "producers": n, "rb_batch_cnt": 50})


def _plan_perfbuf_multi_producer(producer_counts=None, **options):
    return _sweep("perfbuf_multi_producer", "pb-libbpf", "producers",
                  _producer_counts(producer_counts),
                  lambda n: {**_opts(options), "producers": n, "rb_batch_cnt": 50,
                             "rb_sample_rate": 50})


def _plan_record_size_sweep(sizes=RECORD_SIZES, name="rb-custom", **options):
    opts = _opts(options)
    return _sweep("record_size_sweep", name, "record_size", sizes,
                  lambda size: {**opts, "record_size": size})


def single_producer_parallel(progress=None, budget=None, **options):
    """Single producer, parallel consumer: {benchmark: Result} for all four.

    `options` go to each run (common options, trigger=...; affinity on
    unless given); progress: a bar over the runs (as benchbpf.sweep);
    budget: with precision=, the wall time, s, after which no run starts
    (as study())."""
    return _execute("single_producer_parallel", _plan_single_producer_parallel(**options),
                    progress, budget)


def single_producer_sampled(progress=None, budget=None, **options):
    """As single_producer_parallel(), with notification sampling (rate 500).

    `options` go to each run (common options, trigger=...; affinity on
    unless given); progress: a bar over the runs (as benchbpf.sweep);
    budget: with precision=, the wall time, s, after which no run starts
    (as study())."""
    return _execute("single_producer_sampled", _plan_single_producer_sampled(**options),
                    progress, budget)


def back_to_back(progress=None, budget=None, **options):
    """Back-to-back (producer and consumer alternate on one CPU), all four.

    `options` go to each run (common options, trigger=...; affinity on
    unless given); progress: a bar over the runs (as benchbpf.sweep);
    budget: with precision=, the wall time, s, after which no run starts
    (as study())."""
    return _execute("back_to_back", _plan_back_to_back(**options), progress, budget)


def back_to_back_sampled(progress=None, budget=None, **options):
    """Back-to-back with notification sampling, all four.

    `options` go to each run (common options, trigger=...; affinity on
    unless given); progress: a bar over the runs (as benchbpf.sweep);
    budget: with precision=, the wall time, s, after which no run starts
    (as study())."""
    return _execute("back_to_back_sampled", _plan_back_to_back_sampled(**options),
                    progress, budget)


def ringbuf_sample_rate_sweep(rates=SAMPLE_RATES, progress=None, budget=None, **options):
    """rb-custom back-to-back, batch = sample rate = each of `rates`: a Sweep over rb_sample_rate.

    `options` go to each run (common options, trigger=...; affinity on
    unless given); progress: a bar over the runs (as benchbpf.sweep);
    budget: with precision=, the wall time, s, after which no run starts
    (as study())."""
    return _execute("ringbuf_sample_rate_sweep",
                    _plan_ringbuf_sample_rate_sweep(rates, **options), progress, budget)


def perfbuf_sample_rate_sweep(rates=SAMPLE_RATES, progress=None, budget=None, **options):
    """pb-custom back-to-back, batch = sample rate = each of `rates`: a Sweep over rb_sample_rate.

    `options` go to each run (common options, trigger=...; affinity on
    unless given); progress: a bar over the runs (as benchbpf.sweep);
    budget: with precision=, the wall time, s, after which no run starts
    (as study())."""
    return _execute("perfbuf_sample_rate_sweep",
                    _plan_perfbuf_sample_rate_sweep(rates, **options), progress, budget)


def reserve_vs_output(progress=None, budget=None, **options):
    """rb-custom back-to-back, reserve + submit vs bpf_ringbuf_output(): {"reserve", "output"}.

    `options` go to each run (common options, trigger=...; affinity on
    unless given); progress: a bar over the runs (as benchbpf.sweep);
    budget: with precision=, the wall time, s, after which no run starts
    (as study())."""
    return _execute("reserve_vs_output", _plan_reserve_vs_output(**options), progress, budget)


def reserve_vs_output_sampled(progress=None, budget=None, **options):
    """rb-custom with sampling, reserve + submit vs output: {"reserve", "output"}.

    `options` go to each run (common options, trigger=...; affinity on
    unless given); progress: a bar over the runs (as benchbpf.sweep);
    budget: with precision=, the wall time, s, after which no run starts
    (as study())."""
    return _execute("reserve_vs_output_sampled", _plan_reserve_vs_output_sampled(**options),
                    progress, budget)


def same_cpu(cpu=0, progress=None, budget=None, **options):
    """Consumer and producer competing on one CPU, `cpu`, batch of 1: all four.

    `options` go to each run (common options, trigger=...; affinity on
    unless given); progress: a bar over the runs (as benchbpf.sweep);
    budget: with precision=, the wall time, s, after which no run starts
    (as study())."""
    return _execute("same_cpu", _plan_same_cpu(cpu, **options), progress, budget)


def multi_producer(producer_counts=None, progress=None, budget=None, **options):
    """rb-libbpf with each of `producer_counts` producers, batch 50: a Sweep
    over producers.

    Default counts: the kernel script's (1, 2, 3, 4, 8, ...) up to
    max(4, 2 x CPUs).

    `options` go to each run (common options, trigger=...; affinity on
    unless given); progress: a bar over the runs (as benchbpf.sweep);
    budget: with precision=, the wall time, s, after which no run starts
    (as study())."""
    return _execute("multi_producer", _plan_multi_producer(producer_counts, **options),
                    progress, budget)


def perfbuf_multi_producer(producer_counts=None, progress=None, budget=None, **options):
    """pb-libbpf with each of `producer_counts` producers (default as
    multi_producer()), batch 50, sample rate 50: a Sweep over producers.

    `options` go to each run (common options, trigger=...; affinity on
    unless given); progress: a bar over the runs (as benchbpf.sweep);
    budget: with precision=, the wall time, s, after which no run starts
    (as study())."""
    return _execute("perfbuf_multi_producer",
                    _plan_perfbuf_multi_producer(producer_counts, **options), progress, budget)


def record_size_sweep(sizes=RECORD_SIZES, name="rb-custom", progress=None, budget=None,
                      **options):
    """One benchmark, `name`, over record sizes, bytes, `sizes`: a Sweep over
    record_size.

    Read MB/s with ``[r.throughput_mbps for r in sweep.results]``.  For the
    ring buffer pass rb_use_output=True to copy whole records (reserve +
    submit writes only their first 8 bytes); perf buffer samples are always
    copied whole (sizes up to 65516).

    `options` go to each run (common options, trigger=...; affinity on
    unless given); progress: a bar over the runs (as benchbpf.sweep);
    budget: with precision=, the wall time, s, after which no run starts
    (as study())."""
    return _execute("record_size_sweep", _plan_record_size_sweep(sizes, name, **options),
                    progress, budget)


#: Study name -> function, in the kernel script's order.
STUDIES = {
    "single_producer_parallel": single_producer_parallel,
    "single_producer_sampled": single_producer_sampled,
    "back_to_back": back_to_back,
    "back_to_back_sampled": back_to_back_sampled,
    "ringbuf_sample_rate_sweep": ringbuf_sample_rate_sweep,
    "perfbuf_sample_rate_sweep": perfbuf_sample_rate_sweep,
    "reserve_vs_output": reserve_vs_output,
    "reserve_vs_output_sampled": reserve_vs_output_sampled,
    "same_cpu": same_cpu,
    "multi_producer": multi_producer,
    "perfbuf_multi_producer": perfbuf_multi_producer,
    "record_size_sweep": record_size_sweep,
}

#: Study name -> the function that plans its runs (_plan_<name>), for study().
_PLANS = {name: globals()[f"_plan_{name}"] for name in STUDIES}

#: What the kernel's run_bench_ringbufs.sh runs, in its order: its 62
#: configurations (multi_producer with all of PRODUCER_COUNTS).
KERNEL_SCRIPT_STUDIES = (
    "single_producer_parallel", "single_producer_sampled", "back_to_back",
    "back_to_back_sampled", "ringbuf_sample_rate_sweep", "perfbuf_sample_rate_sweep",
    "reserve_vs_output", "reserve_vs_output_sampled", "same_cpu", "multi_producer",
)


class _ReadOnlyMapping(Mapping):
    """A read-only mapping over the dict self._items."""

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)


class Study(_ReadOnlyMapping):
    """What one study measured: a read-only mapping of label (benchmark name,
    variant or swept value) to Result, with a table, an HTML view and a plot.
    `sweep` is the Sweep for the studies that sweep a parameter, else None."""

    def __init__(self, name, results, sweep=None):
        self.name = name
        self.sweep = sweep
        self._items = dict(results)

    def table(self, counter="hits"):
        """A Row per label (benchbpf.resultset.Row, as Sweep.table()) of the
        `counter`: median, mean, stdev, drops (M/s), latency (ns)."""
        return table_rows(self._items.items(), counter)

    def items(self):
        """(label, Result) pairs, in run order, a list."""
        return list(self._items.items())

    def __str__(self):
        return format_table(f"ring buffer study {self.name}", "", self.table(),
                            warned=warnings_of(self.items()))

    def __repr__(self):
        return f"<Study of {len(self)} results: {self.name}: " \
               f"{', '.join(map(str, self._items))}>"

    def _repr_html_(self):
        return format_table_html(f"ring buffer study {self.name}", "", self.table(),
                                 warned=warnings_of(self.items()))

    def to_resultset(self):
        """The Results as a ResultSet (the swept parameter its axis, if any)."""
        if self.sweep is not None:
            return self.sweep.to_resultset()
        return ResultSet(self._items.values(), metadata={"study": self.name})

    def to_dataframe(self):
        """One row per run (needs pandas): see ResultSet.to_dataframe."""
        return self.to_resultset().to_dataframe()

    def plot(self, ax=None, counter="hits", confidence=0.95):
        """A sweep's plot (Sweep.plot), else one bar per label: the median
        with its confidence interval.  Needs matplotlib."""
        if self.sweep is not None:
            return self.sweep.plot(ax=ax, counter=counter, confidence=confidence)
        ax = _axes(ax)
        labels, meds, lo, hi, wide = [], [], [], [], []
        for label, r in self._items.items():
            xs = r.rates_mps(counter)
            med = statistics.median(xs) if xs else math.nan
            low, high = median_ci(xs, confidence)
            labels.append(str(label))
            meds.append(med)
            lo.append(med - low)
            hi.append(high - med)
            wide.append(bool(xs) and (low, high) == (min(xs), max(xs)))
        bars = ax.bar(labels, meds, yerr=[lo, hi], capsize=3,
                      label=f"median, {confidence:.0%} CI")
        for bar, w in zip(bars, wide):
            if w:   # hatched: its bar is min..max
                bar.set_hatch("//")
        if any(wide):
            from matplotlib.patches import Patch
            ax.add_artist(legend_outside(ax, handles=[
                Patch(facecolor="white", edgecolor="black", hatch="//",
                      label=MIN_MAX_LABEL)]))
        # Rates here span decades (perf buffer 0.14 vs ring buffer 18 M/s): a
        # linear axis would show the small ones as nothing.
        positive = [m for m in meds if m > 0]
        if len(positive) == len(meds) and log_scale_fits(positive):
            ax.set_yscale("log")
            ax.set_ylim(bottom=min([m - d for m, d in zip(meds, lo) if m - d > 0]
                                   or positive) / 2)
        else:
            ax.set_ylim(bottom=0)
        ax.set_ylabel(f"{counter}, M/s (median, {confidence:.0%} CI)")
        ax.set_title(f"ring buffer study {self.name}")
        ax.tick_params(axis="x", labelrotation=30)
        return ax


def study(name=None, progress=None, budget=None, **options):
    """Run one study of STUDIES by name; options go to its function.
    Returns a Study (a mapping of label to Result with table, HTML and plot).
    progress: a bar over the study's runs, as for benchbpf.sweep.

    Without a name, every study of the kernel's run_bench_ringbufs.sh
    (KERNEL_SCRIPT_STUDIES, its 62 configurations, multi_producer over all
    of PRODUCER_COUNTS as the script runs it): a Studies, a mapping of
    study name to Study.  Options then are those of run().

    precision=0.01 makes each configuration a precision run (see run()),
    their short runs interleaved over all the configurations: one run of
    each in turn, then more for those whose interval is still wider than
    the precision, widest first, each until its precision or duration.
    Runs of one configuration are then minutes apart, which is what their
    interval needs (the manual's statistics page).  budget: the wall time, s, after
    which no run starts (each configuration has at least one run); those
    not finished stop "by budget" (Result.stopped_by) with their interval
    as it stands."""
    if name is None:
        plans = [_PLANS[n](**(dict(options, producer_counts=PRODUCER_COUNTS)
                              if n == "multi_producer" else options))
                 for n in KERNEL_SCRIPT_STUDIES]
        values = _run_plans("studies", plans, progress, budget)
        return Studies({n: _study(n, v) for n, v in zip(KERNEL_SCRIPT_STUDIES, values)})
    try:
        plan_for = _PLANS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown study {name!r}; studies: {', '.join(STUDIES)}") from None
    return _study(name, _execute(f"study {name}", plan_for(**options), progress, budget))


def _study(name, value):
    if isinstance(value, Sweep):
        return Study(name, dict(zip(value.values, value.results)), sweep=value)
    return Study(name, value)


class Studies(_ReadOnlyMapping):
    """Several studies: a read-only mapping of study name to Study, printed
    as their tables one after the other."""

    def __init__(self, studies):
        self._items = dict(studies)

    def __str__(self):
        return "\n\n".join(str(s) for s in self._items.values())

    def __repr__(self):
        runs = sum(len(s) for s in self._items.values())
        return f"<Studies: {len(self)} studies, {runs} results: {', '.join(self._items)}>"

    def _repr_html_(self):
        return "".join(s._repr_html_() for s in self._items.values())

    def to_resultset(self):
        """Every Result, metadata "study" naming the study of each in order."""
        results = [r for s in self._items.values() for r in s.values()]
        return ResultSet(results, metadata={
            "studies": [n for n, s in self._items.items() for _ in s]})

    def to_dataframe(self):
        """One row per run (needs pandas), a "study" column first."""
        frames = []
        for n, s in self._items.items():
            df = s.to_dataframe()
            df.insert(0, "study", n)
            frames.append(df)
        import pandas
        return pandas.concat(frames, ignore_index=True)


# benchbpf.ringbuf is this module (STUDIES, study, perfbuf... stay
# reachable as attributes) and calling it runs ringbuf().
callable_module(__name__, "ringbuf")
