"""sk-storage-get: bpf_sk_storage_get() of socket local storage that exists.

The kernel bench's ``sk-storage-get`` (benchs/bench_sk_storage.c), in its two
versions, chosen by ``caller``:

============ ==========================================================
caller       what calls bpf_sk_storage_get()
============ ==========================================================
iter         (the later version, the default) a bpf_iter/tcp program:
             the producer reads the iterator over and over, each pass
             visiting every TCP socket of the network namespace (the
             ``nr_socks`` listening sockets on 127.x.y.z and any other),
             one get each, on a different (cold) socket every time
getsockopt   (the first version) a cgroup/getsockopt program attached to
             this process's cgroup v2: the producer calls getsockopt() on
             ``nr_socks`` TCP sockets in turn, each call making 100 gets
             of that socket's storage
============ ==========================================================

A hit is one get that found the storage (setup's pass creates it and is
not counted); ``print(result)`` is the kernel bench's "ops" summary (M ops/s,
latency in ns per get).  One producer, no consumer, as the kernel bench.

    >>> from benchbpf import sk_storage
    >>> r = sk_storage.get(nr_socks=1000, duration=3)

Same run: ``benchbpf.run("sk-storage-get", nr_socks=1000)``, ``benchbpf
--nr-socks 1000 sk-storage-get`` (kernel bench: ``bench --nr-socks 1000
sk-storage-get``).

``nr_socks`` (``--nr-socks``, default 100000) is 1 .. 2**31-1, the kernel
bench's range, and at most what the kernel lets a process open (fs.nr_open,
less 1024 kept free); anything else is a ValueError before anything is
loaded.  Where RLIMIT_NOFILE is lower than the sockets need, the run raises it
for its duration; where the hard limit may not be raised, it fails naming the
limit: benchbpf.UnsupportedError for root (the machine's policy, as a
container's), PermissionError for other users.  The getsockopt version needs cgroup v2: where
none is mounted the run mounts one for itself (and unmounts it after).  A
kernel that refuses a program kind or the socket storage map raises
benchbpf.UnsupportedError naming it.  Every socket, link and program is
freed at the end of every run, failed or interrupted ones too.

Differences from the kernel bench: its first version calls getsockopt() on a
single socket (``nr_socks=1`` here) and answers every getsockopt() in the
root cgroup; here the program answers only the benchmark's own calls.
Listening sockets skip an address and port another socket holds, where the
kernel bench exits.
"""
from ..harness._runner import run

__all__ = ["get", "BENCHMARKS", "CALLERS", "MAX_SOCKS"]

#: Function name -> benchmark name.
BENCHMARKS = {"get": "sk-storage-get"}
#: Values of the `caller` parameter: what calls bpf_sk_storage_get().
CALLERS = ("iter", "getsockopt")
#: The most sockets the kernel bench's --nr-socks takes (INT_MAX).
MAX_SOCKS = 2**31 - 1
#: Parameters whose bound this machine sets, and what sets it.
MACHINE_LIMITS = {"nr_socks": "the descriptors the kernel lets a process open (fs.nr_open)"}
#: What a quick report suite runs with: the default 100000 sockets take
#: seconds to open and close, and more descriptors than many limits allow.
QUICK_PARAMS = {"sk-storage-get": {"nr_socks": 1000}}


def get(nr_socks=100000, *, caller="iter", **options):
    """sk-storage-get: gets of existing socket storage over nr_socks sockets.

    nr_socks: 1 .. 2**31-1 (kernel bench ``--nr-socks``, default 100000).
    caller: "iter" (a bpf_iter/tcp pass, one get per socket) or "getsockopt"
    (a cgroup/getsockopt program, 100 gets per call).  Common options as for
    benchbpf.run; one producer, no consumers.  Returns a Result whose hits
    are gets."""
    return run("sk-storage-get", nr_socks=nr_socks, caller=caller, **options)
