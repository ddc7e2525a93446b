"""``rename-*``: the cost of a BPF program on the task-rename path.

One producer thread renames a thread of this process in a loop by writing
"test_overhead" to a /proc comm file; each completed write is a hit,
counted in user space.  ``comm="process"`` (default) writes
/proc/self/comm as the kernel bench does: the main thread is renamed while
the run lasts and gets its name back at the end.  ``comm="thread"`` writes
/proc/thread-self/comm: the producer renames only itself.
rename-base attaches nothing, every other benchmark attaches one minimal
program of one kind to __set_task_comm or its task_rename tracepoint, so
comparing its figure with rename-base's gives the overhead of that kind.

All functions take ``comm`` and the common options as keywords (warmup, duration,
interval, affinity, prod_affinity, verbose, prog_stats, callback); these benchmarks
take exactly one producer and no consumer.  Where the kernel refuses the
attach kind (no kprobes, no BPF trampolines), they raise
benchbpf.UnsupportedError naming the feature and the kernel's answer.
"""
from ..harness._runner import run

__all__ = ["base", "kprobe", "kretprobe", "rawtp", "fentry", "fexit", "BENCHMARKS"]

#: Function name -> benchmark name, in the kernel bench's order.
BENCHMARKS = {
    "base": "rename-base",
    "kprobe": "rename-kprobe",
    "kretprobe": "rename-kretprobe",
    "rawtp": "rename-rawtp",
    "fentry": "rename-fentry",
    "fexit": "rename-fexit",
}


def base(**options):
    """rename-base: renames with nothing attached (loads no BPF).

    The baseline the other rename benchmarks are compared with.  `options`:
    ``comm`` and the common options of benchbpf.run.  Returns the Result
    (hits: renames, M/s)."""
    return run("rename-base", **options)


def kprobe(**options):
    """rename-kprobe: renames with a kprobe program on __set_task_comm.

    `options`: ``comm`` and the common options of benchbpf.run.  Returns the
    Result (hits: renames, M/s); UnsupportedError where the kernel refuses
    the attach kind."""
    return run("rename-kprobe", **options)


def kretprobe(**options):
    """rename-kretprobe: renames with a kretprobe program on __set_task_comm.

    `options`: ``comm`` and the common options of benchbpf.run.  Returns the
    Result (hits: renames, M/s); UnsupportedError where the kernel refuses
    the attach kind."""
    return run("rename-kretprobe", **options)


def rawtp(**options):
    """rename-rawtp: renames with a raw_tp program on the task_rename tracepoint.

    `options`: ``comm`` and the common options of benchbpf.run.  Returns the
    Result (hits: renames, M/s); UnsupportedError where the kernel refuses
    the attach kind."""
    return run("rename-rawtp", **options)


def fentry(**options):
    """rename-fentry: renames with an fentry program on __set_task_comm.

    `options`: ``comm`` and the common options of benchbpf.run.  Returns the
    Result (hits: renames, M/s); UnsupportedError where the kernel refuses
    the attach kind."""
    return run("rename-fentry", **options)


def fexit(**options):
    """rename-fexit: renames with an fexit program on __set_task_comm.

    `options`: ``comm`` and the common options of benchbpf.run.  Returns the
    Result (hits: renames, M/s); UnsupportedError where the kernel refuses
    the attach kind."""
    return run("rename-fexit", **options)
