"""bpf-loop: the cost of one iteration of the bpf_loop() helper.

Producers call getpgid() in a loop; on each call a BPF program makes 1000
bpf_loop() calls of ``nr_loops`` iterations of an empty callback, from the
callback of an outer ``bpf_loop(1000, ...)`` as the kernel bench does.  A hit is
one callback iteration, so the figure is millions of iterations a second,
and ``print(result)`` is the kernel bench's "ops" summary::

    Summary: throughput  363.012 ± 4.861 M ops/s (363.012M ops/prod), latency    2.755 ns/op

where latency is 1000 / (throughput per producer): the time one producer
spends per iteration.

    >>> from benchbpf import bpf_loop
    >>> r = bpf_loop.loop(nr_loops=1000, duration=3)
    >>> r.mean, r.median            # M iterations/s
    >>> r.metadata["trigger"]       # what ran the loops

Same run through the generic runner: ``benchbpf.run("bpf-loop", nr_loops=1000)``
(kernel bench: ``bench --nr_loops 1000 bpf-loop``).

``nr_loops`` must be what the helper accepts, 1 .. 2**23 (the kernel's
BPF_MAX_LOOPS); anything else is a ValueError before anything is loaded.
(The kernel bench takes any value, and above 2**23 reports throughput for
loops the helper refused to run.)  As the kernel bench's program, each
bpf_loop() call adds nr_loops to the count; every sample checks that the
program's nr_loops is still one the helper accepts (the only way its calls
can fail), else the run raises benchbpf.BenchmarkError.
``count_returned=True`` adds what each call reports done instead and
counts failed calls (the per-sample extra counter ``loop_errors``; any
fails the run): a test of each call's result that the kernel bench's loop
does not make.

An event runs with preemption off, so its work is bounded: each getpgid()
makes the kernel bench's 1000 calls while that is at most 2**27 iterations
(nr_loops up to 134217), else fewer (2**27 // nr_loops, at least one).
The per-iteration figure is unaffected; at 2**23 one event still takes
about half a second, which is also how long stopping such a run can take.

Trigger: the kernel bench runs the loops from fentry on getpgid().
``trigger="auto"`` (default) uses fentry where the kernel loads it and else
the ``syscalls/sys_enter_getpgid`` tracepoint; ``"fentry"`` or ``"tp"``
forces one (fentry where refused raises benchbpf.UnsupportedError).
Compare figures only between runs with the same trigger.  Only this
process's getpgid() calls run the loops.
"""
from ..harness._runner import run

__all__ = ["loop", "BENCHMARKS", "MAX_LOOPS", "TRIGGERS"]

#: Function name -> benchmark name.
BENCHMARKS = {"loop": "bpf-loop"}
#: The most iterations one bpf_loop() call accepts (the kernel's BPF_MAX_LOOPS).
MAX_LOOPS = 1 << 23
#: Values of the `trigger` parameter: what runs the BPF program on getpgid().
TRIGGERS = ("auto", "fentry", "tp")


def loop(nr_loops=10, *, count_returned=False, trigger="auto", **options):
    """bpf-loop: 1000 bpf_loop() calls of nr_loops iterations per getpgid().

    nr_loops: iterations per bpf_loop() call, 1 .. 2**23 (kernel bench
    ``--nr_loops``, default 10).  count_returned: count what each call
    reports done (and its failures) rather than nr_loops per call.
    trigger: "auto", "fentry" or "tp".
    Common options (warmup, duration, interval, producers, affinity,
    prod_affinity, verbose, prog_stats, callback) as for benchbpf.run; no
    consumers.
    Returns a Result whose hits are callback iterations."""
    return run("bpf-loop", nr_loops=nr_loops, count_returned=count_returned, trigger=trigger,
               **options)
