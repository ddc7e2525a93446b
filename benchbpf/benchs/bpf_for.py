"""bpf-for: the cost of one iteration of bpf_for(), the open-coded numeric
iterator (bpf_iter_num_new / _next / _destroy kfuncs).

Producers call getpgid() in a loop; on each call a BPF program makes
``bpf_loop(1000, ...)`` calls of a callback that loops ``nr_loops`` times with
``bpf_for()`` over an empty body and adds nr_loops to the count, as the kernel
bench's bench_bpf_for.c.  A hit is one iteration; ``print(result)`` is the
kernel bench's "ops" summary (M ops/s, latency in ns per iteration).

    >>> from benchbpf import bpf_for
    >>> r = bpf_for.loop(nr_loops=1000, duration=3)

Same run: ``benchbpf.run("bpf-for", nr_loops=1000)``, ``benchbpf --nr_loops 1000
bpf-for`` (kernel bench: ``bench --nr_loops 1000 bpf-for``).

``nr_loops`` (default 1000) is 1 .. 2**23, what bpf_iter_num_new() accepts;
anything else is a ValueError before anything is loaded (the kernel bench
takes any number and counts iterations the iterator refused to run).  As for
bpf-loop, an event makes its 1000 calls while that is at most 2**24
iterations (nr_loops up to 16777), else fewer (at least one): an event runs
with preemption off, and a bpf_for() iteration costs ~10x a bpf_loop() one.
The per-iteration figure is the same.  Trigger as bpf-loop: fentry on getpgid() (the kernel
bench's) where the kernel loads it, else the syscalls/sys_enter_getpgid
tracepoint (``trigger="auto"``, ``"fentry"``, ``"tp"``).
"""
from ..harness._runner import run

__all__ = ["loop", "BENCHMARKS", "MAX_LOOPS", "TRIGGERS"]

#: Function name -> benchmark name.
BENCHMARKS = {"loop": "bpf-for"}
#: The longest range bpf_iter_num_new() accepts (the kernel's BPF_MAX_LOOPS).
MAX_LOOPS = 1 << 23
#: Values of the `trigger` parameter: what runs the BPF program on getpgid().
TRIGGERS = ("auto", "fentry", "tp")


def loop(nr_loops=1000, *, trigger="auto", **options):
    """bpf-for: 1000 bpf_for() loops of nr_loops iterations per getpgid().

    nr_loops: 1 .. 2**23 (kernel bench ``--nr_loops``, default 1000).
    trigger: "auto", "fentry" or "tp".  Common options as for benchbpf.run;
    no consumers.  Returns a Result whose hits are iterations."""
    return run("bpf-for", nr_loops=nr_loops, trigger=trigger, **options)
