"""count-global / count-local: the harness measuring itself, no BPF."""
from ..harness._runner import run

__all__ = ["global_", "local"]


def global_(**options):
    """count-global: every producer increments one shared atomic counter.

    Shows the cost of cache-line contention.  `options`: work_per_hit and
    the common options of benchbpf.run (warmup, duration, producers,
    affinity, ...).  Returns the Result (hits: increments, M/s)."""
    return run("count-global", **options)


def local(**options):
    """count-local: each producer increments its own counter (no sharing).
    `options` and the Result as for global_()."""
    return run("count-local", **options)
