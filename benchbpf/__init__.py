"""benchbpf: how fast is this BPF feature on this kernel?

    >>> import benchbpf
    >>> r = benchbpf.run("count-local", duration=3)
    >>> print(r)            # the kernel bench's summary line
    >>> r.mean, r.stdev, r.median, r.percentile(90)
"""
__version__ = "0.1.0"

from ._core import BenchmarkError, UnsupportedError
from ._runner import COMMON_OPTIONS, describe, list_benchmarks, run
from ._concurrency import ConcurrentRunWarning
from .result import Result, Sample
from .analysis import Comparison, Sweep, compare, plot, sweep
from . import count
from . import rename
from . import trigger
from . import bpf_loop, strncmp
from . import bloom
from . import hashmap, htab_mem, rcu_tasks_trace
# The functions shadow their modules as attributes; import studies and
# probes by name: from benchbpf.ringbuf import study.
from .ringbuf import ringbuf, perfbuf, study as ringbuf_study
from .features import Feature, Features, features

__all__ = [
    "BenchmarkError", "UnsupportedError", "COMMON_OPTIONS", "Result", "Sample",
    "describe", "list_benchmarks", "run", "ConcurrentRunWarning",
    "Comparison", "Sweep", "compare", "plot", "sweep",
    "count", "rename", "trigger", "ringbuf", "perfbuf", "ringbuf_study",
    "Feature", "Features", "features",
    "bpf_loop", "strncmp",
    "bloom",
    "hashmap", "htab_mem", "rcu_tasks_trace",
]
