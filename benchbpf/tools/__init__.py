"""The tools on top: the `benchbpf` command (cli), the suite report and
the pytest plugin.  Nothing below imports them."""

__all__ = []
