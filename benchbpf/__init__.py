"""benchbpf: how fast is this BPF feature on this kernel?

    >>> import benchbpf
    >>> r = benchbpf.run("count-local", duration=3)
    >>> print(r)            # the kernel bench's summary line
    >>> r.mean, r.stdev, r.median, r.percentile(90)
"""
from ._version import __version__


from ._core import BenchmarkError, UnsupportedError
from ._runner import COMMON_OPTIONS, check, describe, list_benchmarks, run
from ._concurrency import ConcurrentRunWarning
from .result import ProgStats, Result, Sample
from .resultset import ResultSet, Unsupported
from .analysis import Comparison, Sweep, compare, plot, sweep
from . import count
from . import rename
from . import trigger
from . import bpf_loop, strncmp
from . import bloom
from . import local_storage
from . import hashmap, htab_mem, rcu_tasks_trace
from . import bpf_timing, bpf_nop, lpm_trie, bpf_for, crypto
from . import sockmap
from . import vm
from . import xdp_lb
# benchbpf.ringbuf is the module, callable as the ringbuf() function.
from . import ringbuf
from .ringbuf import perfbuf, study as ringbuf_study
from .features import Feature, Features, features
from ._progress import Interrupted
from . import hostdrift
from .hostdrift import HostDrift
# benchbpf.ab is the module, callable as the ab() function.
from . import ab
from .ab import ABResult



def quick():
    """True when the environment asks for quick runs: BENCHBPF_QUICK set to
    anything but "", "0", "false", "no" or "off" (any case).

    Nothing in the library shortens itself; notebooks and scripts ask, so
    that their cells stay plain calls::

        DURATION = 0.3 if benchbpf.quick() else 2
        nr_maps = [1, 16, 17, 1000] if benchbpf.quick() else [1, 10, 16, 17, 24, 32, 100, 1000]

    The test suite runs every notebook with BENCHBPF_QUICK=1.  Read at each
    call, so setting the variable later in a process takes effect."""
    from ._progress import env_switch
    return env_switch("BENCHBPF_QUICK") not in (None, False)


__all__ = [
    "BenchmarkError", "UnsupportedError", "COMMON_OPTIONS", "Result", "Sample", "ProgStats",
    "ResultSet", "Unsupported",
    "check", "describe", "list_benchmarks", "run", "ConcurrentRunWarning",
    "Comparison", "Sweep", "compare", "plot", "sweep",
    "count", "rename", "trigger", "ringbuf", "perfbuf", "ringbuf_study",
    "Feature", "Features", "features",
    "bpf_loop", "strncmp",
    "bloom", "local_storage",
    "hashmap", "htab_mem", "rcu_tasks_trace", "sockmap", "xdp_lb", "quick", "vm",
    "Interrupted", "hostdrift", "HostDrift", "ab", "ABResult",
]
