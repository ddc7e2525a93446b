"""local-storage-tasks-trace: what BPF task local storage costs RCU Tasks
Trace while many tasks exist.

Setup starts ``nr_procs`` tasks (default 1000, up to 15000 as in the
original study; cloned sharing this process's memory, so 15000 start in
about a second) that sleep 0..3 s and call getpgid(), in a loop; a BPF
program creates and deletes task local storage on every getpgid() of this
process and of those tasks, and one producer thread calls getpgid() in a
loop.  Every interval measures:

- the rcu_tasks_trace kthread's CPU ticks (stime in /proc/PID/stat; the
  kthread is found by name unless ``kthread_pid`` is given): extra counter
  ``kthread_ticks``;
- the grace periods that ended (``gp_count``) and, of those whose latency
  was measured (``gp_timed``), the latency sum in ns (``gp_ns``).

``print(result)`` is the kernel bench's summary::

    SUMMARY tasks_trace grace period latency	avg 30512.331 us	stddev 2114.042 us
    SUMMARY ticks per tasks_trace grace period	avg 0.412	stddev 0.081

(mean and stdev over the intervals that saw a grace period of the
per-interval averages, as the kernel bench computes them).

**Grace-period latency, and where it comes from** (``metadata
["gp_latency_source"]``).  The kernel bench times the span from
rcu_tasks_trace_pregp_step() to rcu_tasks_trace_postgp() with fentry;
that is used where the kernel loads it.  Where fentry is refused, the
latency comes from the kthread's context switches (tp_btf/sched_switch):
at each one BPF reads the grace-period sequence number of the kthread's
struct rcu_tasks.  Only that kthread starts and ends its grace periods,
while running, right around the two functions the kernel bench times, so
each start and end is known to within one run of the kthread (usually
microseconds, against grace periods of milliseconds).  The estimate takes
the middles of those runs; ``result.series["gp_bracket_ns"]`` holds, per
interval, the mean half-width of the bracket.  Where neither loads, the
latency is reported unavailable with the reason (``metadata
["gp_latency_unavailable"]``) and the ticks still come out.

Every forked task is killed and reaped when the run ends, whatever ends
it (Ctrl-C, a failed setup, an exception); they also die with the thread
that forked them.

    >>> from benchbpf import rcu_tasks_trace
    >>> r = rcu_tasks_trace.tasks_trace(nr_procs=1000, duration=10)
    >>> print(r); r.metadata["gp_latency_source"]
    >>> rcu_tasks_trace.gp_latency_us(r), rcu_tasks_trace.ticks_per_gp(r)
"""
import math
import statistics

from ..results import _lines as _report
from ..harness._runner import run

__all__ = ["tasks_trace", "gp_latency_us", "substitute_gp_latency_us", "ticks_per_gp",
           "summary_lines",
           "BENCHMARKS", "MAX_PROCS"]

#: Function name -> benchmark name.
BENCHMARKS = {"tasks_trace": "local-storage-tasks-trace"}
#: The most sleeping tasks nr_procs may start.
MAX_PROCS = 15000
#: Parameters whose bound this machine sets, and what sets it.
MACHINE_LIMITS = {"kthread_pid": "0 or the pid of the kthread here"}
#: What a quick report suite runs with: 1000 sleeping tasks forked and
#: reaped per run cost setup time; 100 still churn storage.
QUICK_PARAMS = {"local-storage-tasks-trace": {"nr_procs": 100}}


def tasks_trace(nr_procs=1000, kthread_pid=0, *, trigger="auto", **options):
    """local-storage-tasks-trace with nr_procs (1..15000) sleeping tasks.

    kthread_pid: the rcu_tasks_trace kthread (0: found by name; another
    process is a ValueError before anything starts).  trigger:
    what runs the storage program on getpgid() ("auto", "fentry", "tp").
    Common options as for benchbpf.run; one producer, no consumers."""
    return run("local-storage-tasks-trace", nr_procs=nr_procs, kthread_pid=kthread_pid,
               trigger=trigger, **options)


def _stats(values):
    if not values:
        return (math.nan, math.nan)
    return (statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0)


def gp_latency_us(result):
    """(mean, stdev) over the intervals of `result` of the average
    grace-period latency, us; NaN when no latency was measured."""
    return _stats([s.extra["gp_ns"] / 1e3 / s.extra["gp_timed"]
                   for s in result.samples if s.extra["gp_timed"]])


def substitute_gp_latency_us(result):
    """(mean, stdev) over intervals of the context-switch estimate's average
    grace-period latency, us, from a run with gp_check=True (fentry timing
    beside it, in gp_latency_us): the substitute checked against the kernel
    bench's method on the same grace periods.  NaN when none was timed;
    ValueError when `result` ran without gp_check."""
    if "substitute_gp_ns" not in result.series:
        raise ValueError(f"{result.name}: no substitute timing in this result: "
                         "run with gp_check=True (CLI --gp-check)")
    timed, ns = result.series["substitute_gp_timed"], result.series["substitute_gp_ns"]
    return _stats([n / 1e3 / t for t, n in zip(timed, ns) if t])


def ticks_per_gp(result):
    """(mean, stdev) over the intervals of `result` of the kthread's ticks
    per grace period."""
    return _stats([s.extra["kthread_ticks"] / s.extra["gp_count"]
                   for s in result.samples if s.extra["gp_count"]])


def summary_lines(result):
    """The kernel bench's two SUMMARY lines of `result`, one string: the
    grace-period latency (us, or why it is unavailable) and the ticks per
    grace period."""
    lat = gp_latency_us(result)
    if math.isnan(lat[0]):
        why = result.metadata.get("gp_latency_unavailable") or \
            "no grace period was timed in the measured intervals"
        first = f"SUMMARY tasks_trace grace period latency\tunavailable: {why}"
    else:
        first = f"SUMMARY tasks_trace grace period latency\tavg {lat[0]:.3f} us\t" \
                f"stddev {lat[1]:.3f} us"
    ticks = ticks_per_gp(result)
    return first + f"\nSUMMARY ticks per tasks_trace grace period\tavg {ticks[0]:.3f}\t" \
                   f"stddev {ticks[1]:.3f}"


def progress_lines(index, sample):
    """The kernel bench's two per-interval lines."""
    e = sample.extra
    lat = e["gp_ns"] / e["gp_timed"] if e["gp_timed"] else math.nan
    ticks = e["kthread_ticks"] / e["gp_count"] if e["gp_count"] else math.nan
    return (f"Iter {index}\t avg tasks_trace grace period latency\t{lat:f} ns\n"
            f"Iter {index}\t avg ticks per tasks_trace grace period\t{ticks:f}")


_report.register("tasks_trace", summary=summary_lines,
                 progress=lambda index, sample, producers, interval_ns:
                 progress_lines(index, sample))
