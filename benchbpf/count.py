"""count-global / count-local: the harness measuring itself, no BPF."""
from ._runner import run

__all__ = ["global_", "local"]


def global_(**options):
    """count-global: every producer increments one shared atomic counter.

    Shows the cost of cache-line contention; takes the common options
    (warmup, duration, producers, affinity, ...)."""
    return run("count-global", **options)


def local(**options):
    """count-local: each producer increments its own counter (no sharing)."""
    return run("count-local", **options)
