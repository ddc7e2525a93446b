"""The harness, as the kernel's bench.c: check a run's options, run it in
the C core, wrap its samples in a Result; sweeps, precision runs, the
command line of one run and the kernel feature probes.  Uses only
benchbpf.results below it."""

from ._runner import would_run

__all__ = ["would_run"]
