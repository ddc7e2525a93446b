"""Local storage: the bpf_task_storage_get() cache cliff, a hash map control,
and local storage creation.

Cache benchmarks (one producer; each getpgid() of this process runs a
bpf_loop() of 10000 gets):

- ``seq_get()`` (local-storage-cache-seq-get): gets of ``nr_maps`` task
  storage maps, 0, 1, ..., nr_maps-1 in turn, for the calling task (created
  on first get).  A task caches 16 of its storages (the kernel's
  BPF_LOCAL_STORAGE_CACHE_SIZE); past 16 maps the gets miss the cache and
  walk the task's list of storages, and throughput falls: the cliff.
- ``int_get()`` (local-storage-cache-int-get): the same, plus a get of the
  important map 0 after every index divisible by 3 (4 in every 10), which
  keeps map 0 in the cache.
- ``hashmap_control()`` (local-storage-cache-hashmap-control): the loop over
  a hash map of 4194304 (PID_MAX_LIMIT) int keys, all present, each get a
  lookup of a random key below ``hashmap_nr_keys_used``: what a map keyed
  by pid costs instead of task storage.

A hit is one get; a get of map 0 is also an important hit.
``print(result)`` is the kernel bench's summary::

    Summary: hits throughput   47.298 ± 0.180 M ops/s, hits latency   21.142 ns/op, important_hits throughput   47.298 ± 0.180 M ops/s

``result.latency_ns`` is the hits latency (1000 / M gets/s).  It includes
the loop and the getpgid() around the get; ``adjust_overhead=True`` also runs
a matching control, the same loop without the get (``skip_access=True``),
right after, and returns the Result with ``control`` set:
``result.control_latency_ns`` and ``result.adjusted_latency_ns`` (raw minus
control), which is how the original study adjusted its figures.

    >>> from benchbpf import local_storage
    >>> r = local_storage.seq_get(nr_maps=17, adjust_overhead=True, duration=3)
    >>> r.latency_ns, r.control_latency_ns, r.adjusted_latency_ns
    >>> local_storage.cliff(duration=2)       # nr_maps 1, 10, 16, 17, 24, 32, 100, 1000

Setup: the task storage maps are created from user space and put in an
array of maps 128 at a time (one RCU grace period per batch instead of one
per map: 1000 maps in a fraction of a second), each descriptor closed once
the array holds its map, so no run needs more open files than the default
limit (``metadata["rlimit_nofile"]`` says so).  The hash map control's one
map of 4194304 keys is filled with batched updates in a few seconds
(``verbose=True`` prints the progress), and every slot of the array points
to it (the kernel bench creates ``nr_maps`` such maps; the program's work
is the same).  After a run the core waits until the kernel freed every map.

local-storage-create (``create()``): ``storage_type="task"`` creates task
storage from ``tp_btf/sched_process_fork`` for every thread this process
creates (producers create ``batch_size`` threads, then join them);
``"socket"`` (the kernel bench's default) creates socket storage from the
LSM hook ``socket_post_create`` for every socket, which needs the BPF LSM:
where the kernel refuses it or the BPF LSM is not active, UnsupportedError
says so.  The figure is creates per second (``print`` gives k/s and this
process's kmalloc() calls per create, as the kernel bench's line).

Parameters, as the kernel bench's flags::

    nr_maps               --nr_maps               1000  1 .. 1000
    hashmap_nr_keys_used  --hashmap_nr_keys_used  1000  1 .. 4194304
    storage_type          --storage-type          socket  "socket" or "task"
    batch_size            --batch-size            32    1 .. 1024 (the kernel
                                                        bench: no upper bound)

Trigger: the kernel bench runs the gets from fentry on getpgid().
``trigger="auto"`` (default) uses fentry where the kernel loads it and else
the ``syscalls/sys_enter_getpgid`` tracepoint; ``"fentry"`` or ``"tp"``
forces one (``metadata["trigger"]`` says which ran).  Only this process's
getpgid() calls, threads, sockets and kmalloc() calls count (the kernel
bench counts every process's kmalloc() calls).
"""
import dataclasses

from ..harness import _progress
from ..harness._runner import check, is_bool, run
from ..harness._sweep import Sweep

__all__ = ["seq_get", "int_get", "hashmap_control", "create", "cliff", "BENCHMARKS",
           "MAX_NR_MAPS", "HASHMAP_SZ", "CLIFF_NR_MAPS", "STORAGE_TYPES", "TRIGGERS"]

#: Function name -> benchmark name.
BENCHMARKS = {
    "seq_get": "local-storage-cache-seq-get",
    "int_get": "local-storage-cache-int-get",
    "hashmap_control": "local-storage-cache-hashmap-control",
    "create": "local-storage-create",
}
#: The most maps nr_maps may name (the BPF program's array of maps).
MAX_NR_MAPS = 1000
#: Keys of the control hash map (PID_MAX_LIMIT).
HASHMAP_SZ = 4194304
#: The original study's map counts.
CLIFF_NR_MAPS = (1, 10, 16, 17, 24, 32, 100, 1000)
#: Values of create()'s `storage_type`: what each producer creates and frees.
STORAGE_TYPES = ("socket", "task")
#: Values of the `trigger` parameter: what runs the BPF program on getpgid().
TRIGGERS = ("auto", "fentry", "tp")

_NOFILE_NOTE = ("unchanged: inner map descriptors are closed once the array of maps "
                "holds them, 128 at a time (fewer where the limit runs out first)")


def _with_note(result, control=None):
    return dataclasses.replace(
        result, control=control,
        metadata={**result.metadata, "rlimit_nofile": _NOFILE_NOTE,
                  "overhead_control": control is not None})


def _cache(name, adjust_overhead, params, options, runner=run):
    if not is_bool(adjust_overhead):
        raise TypeError(f"adjust_overhead={adjust_overhead!r}: must be True or False")
    if adjust_overhead and params.get("skip_access"):
        raise ValueError("adjust_overhead=True with skip_access=True: the run to adjust "
                         "must do the access (skip_access=False)")
    result = runner(name, **params, **options)
    control = None
    if adjust_overhead:
        control = runner(name, **{**params, "skip_access": True}, **options)
    return _with_note(result, control)


def seq_get(nr_maps=1000, *, adjust_overhead=False, skip_access=False, **options):
    """local-storage-cache-seq-get: gets of nr_maps task storage maps in turn.

    nr_maps: 1 .. 1000 (kernel bench ``--nr_maps``, default 1000).
    adjust_overhead: also run the control without the get and set
    Result.control.  skip_access: run only the control.  trigger: "auto",
    "fentry" or "tp".  Common options as for benchbpf.run (one producer,
    no consumer).  Returns the Result (hits: gets, M/s), with
    Result.control when adjust_overhead; ValueError for adjust_overhead
    with skip_access."""
    return _cache(BENCHMARKS["seq_get"], adjust_overhead,
                  dict(nr_maps=nr_maps, skip_access=skip_access), options)


def int_get(nr_maps=1000, *, adjust_overhead=False, skip_access=False, **options):
    """local-storage-cache-int-get: seq_get plus 4 gets of map 0 in every 10.
    nr_maps, adjust_overhead, skip_access, `options` and the Result as for
    seq_get()."""
    return _cache(BENCHMARKS["int_get"], adjust_overhead,
                  dict(nr_maps=nr_maps, skip_access=skip_access), options)


def hashmap_control(hashmap_nr_keys_used=1000, *, nr_maps=1000, adjust_overhead=False,
                    skip_access=False, **options):
    """local-storage-cache-hashmap-control: lookups of random keys below
    hashmap_nr_keys_used (1 .. 4194304, default 1000) in a full 4194304-key
    hash map; nr_maps slots of the array of maps point to it.
    adjust_overhead, skip_access, `options` and the Result as for
    seq_get()."""
    return _cache(BENCHMARKS["hashmap_control"], adjust_overhead,
                  dict(nr_maps=nr_maps, hashmap_nr_keys_used=hashmap_nr_keys_used,
                       skip_access=skip_access), options)


def create(storage_type="socket", *, batch_size=32, **options):
    """local-storage-create: storage created per second, one per new socket
    (storage_type="socket", needs the BPF LSM) or thread ("task");
    batch_size: 1 .. 1024 owners each producer holds at once (default 32).
    `options`: the common options of benchbpf.run.  Returns the Result
    (hits: storages created, M/s)."""
    return run(BENCHMARKS["create"], storage_type=storage_type, batch_size=batch_size,
               **options)


def cliff(nr_maps=CLIFF_NR_MAPS, *, benchmark="seq_get", adjust_overhead=False,
          progress=None, **options):
    """The original study's sweep: one run per map count, a benchbpf Sweep
    (``print(sw)``, ``sw.plot()``, ``sw.to_dataframe()``).  With
    adjust_overhead=True each point also runs its control, as seq_get()
    does.  Every map count is checked before the first run.  progress=: as
    for benchbpf.sweep.  benchmark: "seq_get" or "int_get" (ValueError
    otherwise); `options` go to each run."""
    if benchmark not in ("seq_get", "int_get"):
        raise ValueError(f"benchmark={benchmark!r}: must be 'seq_get' or 'int_get'")
    name = BENCHMARKS[benchmark]
    values = tuple(nr_maps)
    if not values:
        raise ValueError("nr_maps is empty: give at least one map count")
    for v in values:
        check(name, **{**options, "nr_maps": v})
    runs_per_point = 2 if adjust_overhead else 1
    results = []
    with _progress.session(name, len(values) * runs_per_point, progress):
        for v in values:
            def runner(n, _label=f"nr_maps={v}", **kw):
                return _progress.run(run, n, label=_label, **kw)
            results.append(_cache(name, adjust_overhead, {"nr_maps": v}, options, runner))
    return Sweep(name, "nr_maps", values, tuple(results))
