"""``trig-*``: what it costs to fire a BPF program from each kind of hook.

A hit is one run of the counting code: the attached BPF program adding one
to its CPU's counter, or for the two baselines a user-space counter.  The
figure is hits per second (``Result.mean`` etc., in M/s).

* Baselines, no BPF: ``syscall_count`` (a getpgid() loop) and
  ``usermode_count`` (a loop calling the unprobed uprobe target).
* Kernel-driven, batched: each producer loops on BPF_PROG_TEST_RUN of a
  raw_tp "driver" program that fires the hooked event ``batch_iters`` times
  per run (1..1000, default 100; the kernel bench's ``--trig-batch-iters``).
  ``kprobe*``/fentry/fexit hook bpf_get_numa_node_id(), which the driver calls;
  tp/rawtp/fmodret hook the bpf_modify_return_test_tp() kfunc path (the
  bpf_test_run:bpf_trigger_tp tracepoint).  ``kernel_count`` attaches
  nothing: its driver only counts, ``batch_iters`` per run, the in-kernel
  ceiling.  Each sample also counts the producers' test runs (extra counter
  ``driver_runs``): hits / driver_runs is the iterations per run.
  ``stacktrace=True`` (the kernel bench's ``-s``/``--stacktrace``) has the
  hooked program also take a 128-frame stack trace (bpf_get_stack) per hit;
  as in the kernel bench only the hooked kernel-side programs honour it
  (not kernel_count, not the uprobes).
* ``kprobe_multi_all`` / ``kretprobe_multi_all``: kprobe_multi /
  kretprobe_multi while an empty kprobe-multi program sits on every other
  traceable kernel function (available_filter_functions, kernel only, less
  the recursion-prone functions the kernel bench skips).  Where the kernel
  has no kprobe-multi links they raise UnsupportedError before loading
  anything of theirs (the features() probe "kprobe_multi").
* ``syscall_count`` calls getpgid() on the calling thread's own id, as the
  kernel bench's compiled loop does (not the pid 0 shortcut).
* User-space probes: ``uprobe(kind, ret=, multi=)`` probes one of three
  functions of this extension, called in a loop: the kernel bench's
  "nop", "push" and "ret" targets, instruction for instruction as its
  build compiles them (benchmark files at -O2, frame pointers): ``nop;
  ret``, a frame set up around a call (``push %rbp`` is the probed
  instruction), and a bare ``ret``.  On x86-64 also "nop5" and "nop10": a
  5-byte (``nopl 0x0(%rax,%rax,1)``) or 10-byte (``cs nopw``) nop, then
  ``ret``: the multi-byte nops kernels can probe without a trap (upstream's
  ``trig-*-nop5`` benchmarks, later renamed -nop10 with the 10-byte nop; both
  are offered).  Whether this kernel's uprobes take such a nop is probed
  (features "uprobe_nop5", "uprobe_nop10") before anything is loaded.
  ``usdt(site)`` fires a USDT probe site: "nop" (a 1-byte nop), "nop5" or
  "nop10" (a 1-byte nop followed by a 5- or 10-byte one, usdt.h's x86-64
  layout).

Every function takes the common options as keywords (warmup, duration,
interval, producers, affinity, prod_affinity, verbose, prog_stats, callback); these
benchmarks take no consumer.  Where the kernel refuses the hook (fentry
on a locked-down kernel, no kprobes, ...) they raise
benchbpf.UnsupportedError naming the feature and the kernel's answer,
before anything is measured.

    >>> import benchbpf
    >>> r = benchbpf.trigger.rawtp(duration=3, producers=2, batch_iters=100)
    >>> r.median, r.metadata["trigger"]
"""
from ..harness._runner import is_bool, run

__all__ = [
    "syscall_count", "usermode_count", "kernel_count", "tp", "rawtp", "kprobe",
    "kretprobe", "kprobe_multi", "kretprobe_multi", "fentry", "fexit", "fmodret",
    "kprobe_multi_all", "kretprobe_multi_all", "uprobe", "usdt", "uprobe_name",
    "BENCHMARKS", "UPROBE_KINDS", "USDT_SITES",
]

#: The uprobe targets, as the kernel bench names them (nop5, nop10: x86-64).
UPROBE_KINDS = ("nop", "push", "ret", "nop5", "nop10")

#: The USDT probe sites (nop5, nop10: x86-64).
USDT_SITES = ("nop", "nop5", "nop10")

#: Function name -> benchmark name of the fixed benchmarks (see uprobe()
#: and uprobe_name() for the uprobe family).
BENCHMARKS = {
    "syscall_count": "trig-syscall-count",
    "usermode_count": "trig-usermode-count",
    "kernel_count": "trig-kernel-count",
    "tp": "trig-tp",
    "rawtp": "trig-rawtp",
    "kprobe": "trig-kprobe",
    "kretprobe": "trig-kretprobe",
    "kprobe_multi": "trig-kprobe-multi",
    "kretprobe_multi": "trig-kretprobe-multi",
    "kprobe_multi_all": "trig-kprobe-multi-all",
    "kretprobe_multi_all": "trig-kretprobe-multi-all",
    "fentry": "trig-fentry",
    "fexit": "trig-fexit",
    "fmodret": "trig-fmodret",
    "usdt": "trig-usdt-nop",
}


def _batched(name, batch_iters, options):
    if "trig_batch_iters" in options:
        raise TypeError(f"{name}: pass batch_iters=, not trig_batch_iters=")
    return run(name, trig_batch_iters=batch_iters, **options)


def syscall_count(**options):
    """trig-syscall-count: getpgid() syscalls per second, counted in user
    space; no BPF.  The raw syscall rate.  `options`: the common options
    of benchbpf.run.  Returns the Result (hits: syscalls, M/s)."""
    return run("trig-syscall-count", **options)


def usermode_count(**options):
    """trig-usermode-count: calls of the (unprobed) uprobe target per second,
    counted in user space; no BPF.  The ceiling for the uprobe benchmarks.
    `options`: the common options of benchbpf.run.  Returns the Result
    (hits: calls, M/s)."""
    return run("trig-usermode-count", **options)


def kernel_count(batch_iters=100, **options):
    """trig-kernel-count: the raw_tp driver calls bpf_get_numa_node_id()
    batch_iters times per test run and counts each iteration itself; nothing
    is attached.  The ceiling of the kernel-driven benchmarks.

    batch_iters: 1..1000.  `options`: the common options of benchbpf.run.
    Returns the Result (hits: iterations, M/s)."""
    return _batched("trig-kernel-count", batch_iters, options)


def tp(batch_iters=100, **options):
    """trig-tp: a tracepoint program on bpf_test_run:bpf_trigger_tp, fired
    batch_iters times per driver run.
    batch_iters: hooked events per driver run (1..1000).  `options`:
    stacktrace and the common options of benchbpf.run.  Returns the Result
    (hits: program runs, M/s); UnsupportedError where the kernel refuses
    the hook."""
    return _batched("trig-tp", batch_iters, options)


def rawtp(batch_iters=100, **options):
    """trig-rawtp: a raw tracepoint program on bpf_trigger_tp, fired
    batch_iters times per driver run.
    batch_iters: hooked events per driver run (1..1000).  `options`:
    stacktrace and the common options of benchbpf.run.  Returns the Result
    (hits: program runs, M/s); UnsupportedError where the kernel refuses
    the hook."""
    return _batched("trig-rawtp", batch_iters, options)


def kprobe(batch_iters=100, **options):
    """trig-kprobe: a kprobe on bpf_get_numa_node_id(), called batch_iters
    times per driver run.
    batch_iters: hooked events per driver run (1..1000).  `options`:
    stacktrace and the common options of benchbpf.run.  Returns the Result
    (hits: program runs, M/s); UnsupportedError where the kernel refuses
    the hook."""
    return _batched("trig-kprobe", batch_iters, options)


def kretprobe(batch_iters=100, **options):
    """trig-kretprobe: a kretprobe on bpf_get_numa_node_id().
    batch_iters: hooked events per driver run (1..1000).  `options`:
    stacktrace and the common options of benchbpf.run.  Returns the Result
    (hits: program runs, M/s); UnsupportedError where the kernel refuses
    the hook."""
    return _batched("trig-kretprobe", batch_iters, options)


def kprobe_multi(batch_iters=100, **options):
    """trig-kprobe-multi: a kprobe-multi link on bpf_get_numa_node_id().
    batch_iters: hooked events per driver run (1..1000).  `options`:
    stacktrace and the common options of benchbpf.run.  Returns the Result
    (hits: program runs, M/s); UnsupportedError where the kernel refuses
    the hook."""
    return _batched("trig-kprobe-multi", batch_iters, options)


def kretprobe_multi(batch_iters=100, **options):
    """trig-kretprobe-multi: a kretprobe-multi link on bpf_get_numa_node_id().
    batch_iters: hooked events per driver run (1..1000).  `options`:
    stacktrace and the common options of benchbpf.run.  Returns the Result
    (hits: program runs, M/s); UnsupportedError where the kernel refuses
    the hook."""
    return _batched("trig-kretprobe-multi", batch_iters, options)


def kprobe_multi_all(batch_iters=100, **options):
    """trig-kprobe-multi-all: trig-kprobe-multi while an empty kprobe-multi
    program is attached to every other traceable kernel function.
    batch_iters: hooked events per driver run (1..1000).  `options`:
    stacktrace and the common options of benchbpf.run.  Returns the Result
    (hits: program runs, M/s); UnsupportedError where the kernel refuses
    the hook."""
    return _batched("trig-kprobe-multi-all", batch_iters, options)


def kretprobe_multi_all(batch_iters=100, **options):
    """trig-kretprobe-multi-all: trig-kretprobe-multi while an empty
    kretprobe-multi program is attached to every other traceable kernel
    function.
    batch_iters: hooked events per driver run (1..1000).  `options`:
    stacktrace and the common options of benchbpf.run.  Returns the Result
    (hits: program runs, M/s); UnsupportedError where the kernel refuses
    the hook."""
    return _batched("trig-kretprobe-multi-all", batch_iters, options)


def fentry(batch_iters=100, **options):
    """trig-fentry: an fentry program on bpf_get_numa_node_id().
    batch_iters: hooked events per driver run (1..1000).  `options`:
    stacktrace and the common options of benchbpf.run.  Returns the Result
    (hits: program runs, M/s); UnsupportedError where the kernel refuses
    the hook."""
    return _batched("trig-fentry", batch_iters, options)


def fexit(batch_iters=100, **options):
    """trig-fexit: an fexit program on bpf_get_numa_node_id().
    batch_iters: hooked events per driver run (1..1000).  `options`:
    stacktrace and the common options of benchbpf.run.  Returns the Result
    (hits: program runs, M/s); UnsupportedError where the kernel refuses
    the hook."""
    return _batched("trig-fexit", batch_iters, options)


def fmodret(batch_iters=100, **options):
    """trig-fmodret: an fmod_ret program on the bpf_modify_return_test_tp()
    kfunc, called batch_iters times per driver run.
    batch_iters: hooked events per driver run (1..1000).  `options`:
    stacktrace and the common options of benchbpf.run.  Returns the Result
    (hits: program runs, M/s); UnsupportedError where the kernel refuses
    the hook."""
    return _batched("trig-fmodret", batch_iters, options)


def uprobe_name(kind="nop", ret=False, multi=False):
    """The benchmark name uprobe(kind, ret, multi) runs, e.g.
    uprobe_name("push", ret=True, multi=True) == "trig-uretprobe-multi-push".
    ValueError for a kind not in UPROBE_KINDS, TypeError for a ret or multi
    that is not a bool."""
    if kind not in UPROBE_KINDS:
        raise ValueError(f"kind={kind!r}: must be one of "
                         + ", ".join(repr(k) for k in UPROBE_KINDS))
    for key, value in (("ret", ret), ("multi", multi)):
        if not is_bool(value):
            raise TypeError(f"{key}={value!r}: must be True or False")
    probe = "uretprobe" if ret else "uprobe"
    return f"trig-{probe}{'-multi' if multi else ''}-{kind}"


def uprobe(kind="nop", *, ret=False, multi=False, **options):
    """trig-u[ret]probe[-multi]-{nop,push,ret}: a BPF uprobe (ret=True: a
    uretprobe) on a function of this extension, called in a loop.

    kind picks the target as the kernel bench names them: "nop" (nop; ret),
    "push" (a frame set up around a call; the probe is on push %rbp),
    "ret" (a bare ret), and on x86-64 "nop5" and "nop10" (a 5- or 10-byte
    nop, then ret).  multi=True attaches through a uprobe-multi link instead
    of a perf-event uprobe.  `options`: the common options of benchbpf.run.
    Returns the Result (hits: program runs, M/s); ValueError for another
    kind, UnsupportedError where the kernel cannot probe the target."""
    return run(uprobe_name(kind, ret, multi), **options)


def usdt(site="nop", **options):
    """trig-usdt-{nop,nop5,nop10}: a BPF USDT program on a probe site of
    this extension, called in a loop.  site "nop": a 1-byte nop; "nop5",
    "nop10" (x86-64): a 1-byte nop followed by a 5- or 10-byte one.
    `options`: the common options of benchbpf.run.  Returns the Result
    (hits: program runs, M/s); ValueError for another site."""
    if site not in USDT_SITES:
        raise ValueError(f"site={site!r}: must be one of "
                         + ", ".join(repr(k) for k in USDT_SITES))
    return run(f"trig-usdt-{site}", **options)
