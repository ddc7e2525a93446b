"""benchbpf: how fast is this BPF feature on this kernel?

    >>> import benchbpf
    >>> r = benchbpf.run("count-local", duration=3)
    >>> print(r)            # the kernel bench's summary line
    >>> r.mean, r.stdev, r.median, r.percentile(90)
"""
__version__ = "0.1.0"

from ._core import BenchmarkError, UnsupportedError
from ._runner import COMMON_OPTIONS, describe, list_benchmarks, run
from .result import Result, Sample
from . import count
from . import rename

__all__ = [
    "BenchmarkError", "UnsupportedError", "COMMON_OPTIONS", "Result", "Sample",
    "describe", "list_benchmarks", "run", "count",
]
