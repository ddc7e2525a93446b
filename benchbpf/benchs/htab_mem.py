"""htab-mem: hashmap elements written and deleted in batches, and the
memory the map uses.

Producers make syscalls; on each of this process's, a BPF program (on the
syscall's tracepoint, as the kernel bench attaches it) writes or deletes 64
elements of a hashmap (``value_size`` bytes, preallocated or not), keys
from its CPU's number in steps of the number of producers:

- ``"overwrite"``: update 64 elements (one op per getpgid());
- ``"batch_add_batch_del"``: update 64, then delete them (two ops);
- ``"add_del_on_diff_cpu"``: producers in pairs take turns: one adds 64
  new elements on getpgid(), the other deletes them on getppid().

``print(result)`` is the kernel bench's summary::

    Summary: per-prod-op   xxx.xx ±    x.xxk/s, memory usage    x.xx ±    x.xxMiB, peak memory usage    x.xxMiB

Ops per producer are normalised by each interval's real length.

**Memory, and where it comes from** (``metadata["memory_source"]``).  The
kernel charges a map's memory to the memory cgroup of the task that
created it.  benchbpf makes a memory cgroup of its own beside the one this
process is in, moves only the creating thread into it while the map is
created, and moves it back: the cgroup's kernel memory (cgroup v1
``memory.kmem.usage_in_bytes``; v2 ``memory.current``) is then the map's,
elements freed but still waiting for an RCU grace period and the
allocator's caches included, and nothing of the rest of the process.  The
kernel bench moves its whole process into a cgroup v2 and reads
``memory.current``; where the memory controller is bound to cgroup v1 that
file does not exist and it prints 0 MiB.  Without any memory cgroup, the
figure is the map's ``memlock`` from /proc/self/fdinfo, the kernel's own
estimate (elements in the map times their size, plus the fixed part).
The extra counters are ``memory_bytes`` (at each sample) and
``peak_memory_bytes`` (so far).

    >>> from benchbpf import htab_mem
    >>> r = htab_mem.htab_mem("batch_add_batch_del", producers=2, duration=3)
    >>> print(r); r.metadata["memory_source"]
"""
import math
import statistics

from ..results import _lines as _report
from ..harness._runner import run

__all__ = ["htab_mem", "summary_line", "progress_line", "USE_CASES", "BENCHMARKS"]

#: Function name -> benchmark name.
BENCHMARKS = {"htab_mem": "htab-mem"}
#: Values of `use_case`, in the kernel bench's order.
USE_CASES = ("overwrite", "batch_add_batch_del", "add_del_on_diff_cpu")
_MIB = 1048576.0


def htab_mem(use_case="overwrite", *, preallocated=False, value_size=8, **options):
    """htab-mem: use_case (see USE_CASES; add_del_on_diff_cpu needs an even
    number of producers), preallocated (kernel bench ``--preallocated``),
    value_size 1..4096 bytes (``--value-size``, default 8).  Common options
    as for benchbpf.run; no consumers.  Returns the Result (hits:
    operations, M/s; extra counters memory_bytes and peak_memory_bytes)."""
    return run("htab-mem", use_case=use_case, preallocated=preallocated,
               value_size=value_size, **options)


def _per_prod_k(sample, producers):
    return sample.hits / producers / 1e3 / sample.interval_s if sample.interval_ns else 0.0


def progress_line(index, sample, producers, interval_ns):
    """The kernel bench's per-interval line for `sample` number `index`:
    how far the interval ran over `interval_ns` (us), operations per
    producer (k/s, over `producers`) and the map's memory (MiB)."""
    return (f"Iter {index:3d} ({(sample.interval_ns - interval_ns) / 1000.0:7.3f}us): "
            f"per-prod-op {_per_prod_k(sample, producers):7.2f}k/s, memory usage "
            f"{sample.extra['memory_bytes'] / _MIB:7.2f}MiB")


def summary_line(r):
    """The kernel bench's Summary line of htab-mem Result `r`: per-producer
    operations (k/s), memory usage (MiB), each mean +- stdev, and the peak
    memory (MiB)."""
    ops = [_per_prod_k(s, r.producers) for s in r.samples]
    mem = [s.extra["memory_bytes"] / _MIB for s in r.samples]

    def ms(xs):
        if not xs:
            return (math.nan, math.nan)
        return statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0
    (om, osd), (mm, msd) = ms(ops), ms(mem)
    peak = max((s.extra["peak_memory_bytes"] for s in r.samples), default=0) / _MIB
    return (f"Summary: per-prod-op {om:7.2f} \u00b1 {osd:7.2f}k/s, memory usage "
            f"{mm:7.2f} \u00b1 {msd:7.2f}MiB, peak memory usage {peak:7.2f}MiB")


_report.register("htab_mem", summary=summary_line, progress=progress_line)
