"""The bottom layer: results and what describes them.

A `Result` and its samples, result sets, the statistics they are judged
with, the machine's fingerprint, BPF-timed statistics and the kernel
bench's lines.  Nothing here imports any other layer of benchbpf."""

__all__ = []
