"""benchbpf: how fast is this BPF feature on this kernel?

    >>> import benchbpf
    >>> r = benchbpf.run("count-local", duration=3)
    >>> print(r)            # the kernel bench's summary line
    >>> r.mean, r.stdev, r.median, r.percentile(90)
"""
from ._version import __version__


from ._core import BenchmarkError, UnsupportedError
from .harness._runner import COMMON_OPTIONS, check, describe, list_benchmarks, run
from .harness._concurrency import ConcurrentRunWarning
from .harness._progress import Interrupted
from .harness.features import Feature, Features, features
from .results.result import ProgStats, Result, Sample
from .results.resultset import ResultSet, Unsupported
from .benchs import FAMILIES as _FAMILIES
from .benchs.ringbuf import perfbuf, study as ringbuf_study
from .guests import vm
from .analysis import Comparison, Sweep, compare, plot, sweep
from .analysis import hostdrift
from .analysis.hostdrift import HostDrift
# benchbpf.ab is the module, callable as the ab() function.
from .analysis import ab
from .analysis.ab import ABResult
from . import _moved

# Every family is benchbpf.<family> (benchbpf.ringbuf is the module,
# callable as the ringbuf() function).
globals().update(_FAMILIES)
_moved.install(__name__, {**_FAMILIES, "vm": vm, "hostdrift": hostdrift, "ab": ab})
__getattr__ = _moved.package_getattr


def quick():
    """True when the environment asks for quick runs: BENCHBPF_QUICK set to
    anything but "", "0", "false", "no" or "off" (any case).

    Nothing in the library shortens itself; notebooks and scripts ask, so
    that their cells stay plain calls::

        DURATION = 0.3 if benchbpf.quick() else 2
        nr_maps = [1, 16, 17, 1000] if benchbpf.quick() else [1, 10, 16, 17, 24, 32, 100, 1000]

    The test suite runs every notebook with BENCHBPF_QUICK=1.  Read at each
    call, so setting the variable later in a process takes effect."""
    from .harness._progress import env_switch
    return env_switch("BENCHBPF_QUICK") not in (None, False)


__all__ = [
    "BenchmarkError", "UnsupportedError", "COMMON_OPTIONS", "Result", "Sample", "ProgStats",
    "ResultSet", "Unsupported",
    "check", "describe", "list_benchmarks", "run", "ConcurrentRunWarning",
    "Comparison", "Sweep", "compare", "plot", "sweep",
    "perfbuf", "ringbuf_study", "Feature", "Features", "features", "quick", "vm",
    "Interrupted", "hostdrift", "HostDrift", "ab", "ABResult",
] + sorted(_FAMILIES)
