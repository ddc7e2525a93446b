"""bpf-nop: the empty BPF-timed loop, the baseline of BPF-side timing.

A syscall program, run through BPF_PROG_TEST_RUN by each producer, loops
``batch_iters`` times over nothing (a counter, its bound and may_goto) between
two ``bpf_ktime_get_ns()`` reads; ``batch_iters`` is calibrated to ~10 ms
batches before the run, and the run ends once every producer has 200 batches
(or at ``duration``).  What any BPF-timed figure (xdp-lb, ...) costs beyond
this is its own work.

Each batch is one sample of the Result (``benchbpf.bpf_timing`` explains the
shape; ``bpf_timing.stats(r)`` gives ns/op, IQR-filtered or raw), and
``print(result)`` is the kernel bench's line::

    bpf-nop: median 1.59 ns/op, stddev 0.12, p99 1.98 (224 samples)

    >>> from benchbpf import bpf_nop, bpf_timing
    >>> r = bpf_nop.nop()
    >>> bpf_timing.stats(r).median_ns, r.metadata["bpf_timing"]["calibration"]

Same run: ``benchbpf.run("bpf-nop")``, ``benchbpf bpf-nop`` (kernel bench:
``bench bpf-nop``).  No consumer.
"""
from ..harness._runner import run

__all__ = ["nop", "BENCHMARKS"]

#: Function name -> benchmark name.
BENCHMARKS = {"nop": "bpf-nop"}


def nop(**options):
    """bpf-nop: the empty loop, timed in BPF.  Common options (warmup,
    duration: the longest the run may take; producers, affinity, ...) as for
    benchbpf.run.  Returns a Result whose samples are the timed batches."""
    return run("bpf-nop", **options)
