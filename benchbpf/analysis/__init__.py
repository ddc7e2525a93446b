"""Comparing runs: compare() and the run statistics, A/B rounds (ab),
and the host's drift (hostdrift).  Uses the layers below (results,
harness, benchs, guests); the tools use it.

The names below are what `benchbpf.analysis` has always offered."""
from ._compare import *  # noqa: F401,F403  (the public names, listed in _compare.__all__)
from ._compare import __all__  # noqa: F401
