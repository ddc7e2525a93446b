"""strncmp-no-helper, strncmp-helper: comparing strings in BPF.

Producers call getpgid() in a loop; on each call a BPF program compares a
writable string with a read-only one of random digits that differs only in
its last compared character, so every comparison walks ``cmp_str_len``
characters.  strncmp-no-helper compares with an open-coded byte loop,
strncmp-helper with the bpf_strncmp() helper; the gap between their figures
is what the helper saves.  A hit is one comparison (the kernel bench's
hits/drops report; drops are always 0).

    >>> from benchbpf import strncmp
    >>> strncmp.helper(cmp_str_len=512, duration=3)
    >>> strncmp.no_helper(cmp_str_len=512, duration=3)

Same runs through the generic runner:
``benchbpf.run("strncmp-helper", cmp_str_len=512)`` (kernel bench:
``bench --cmp-str-len 512 strncmp-helper``).

``cmp_str_len`` is 1 .. 4095 (the compared buffers hold 4096 bytes with
their NUL), default 32, as in the kernel bench; anything else is a
ValueError before anything is loaded.

Trigger: the kernel bench attaches these programs to the
``syscalls/sys_enter_getpgid`` tracepoint, and so does ``trigger="auto"``
(default) or ``"tp"``; ``"fentry"`` runs the same comparison from fentry
on the syscall instead (where the kernel refuses fentry it raises
benchbpf.UnsupportedError).  ``Result.metadata["trigger"]`` says which ran.
Only this process's getpgid() calls compare.
"""
from ..harness._runner import run

__all__ = ["no_helper", "helper", "BENCHMARKS", "MAX_CMP_STR_LEN", "TRIGGERS"]

#: Function name -> benchmark name, in the kernel bench's order.
BENCHMARKS = {"no_helper": "strncmp-no-helper", "helper": "strncmp-helper"}
#: Longest comparison: the 4096-byte buffers less their NUL.
MAX_CMP_STR_LEN = 4095
#: Values of the `trigger` parameter: what runs the BPF program on getpgid().
TRIGGERS = ("auto", "fentry", "tp")


def no_helper(cmp_str_len=32, *, trigger="auto", **options):
    """strncmp-no-helper: compare cmp_str_len characters with a BPF byte loop.

    cmp_str_len: 1 .. 4095 (kernel bench ``--cmp-str-len``, default 32).
    trigger: "auto" (the tracepoint), "tp" or "fentry".  Common options as
    for benchbpf.run; no consumers.  Returns the Result (hits:
    comparisons, M/s)."""
    return run("strncmp-no-helper", cmp_str_len=cmp_str_len, trigger=trigger, **options)


def helper(cmp_str_len=32, *, trigger="auto", **options):
    """strncmp-helper: compare cmp_str_len characters with bpf_strncmp().

    cmp_str_len: 1 .. 4095 (kernel bench ``--cmp-str-len``, default 32).
    trigger: "auto" (the tracepoint), "tp" or "fentry".  Common options as
    for benchbpf.run; no consumers.  Returns the Result (hits:
    comparisons, M/s)."""
    return run("strncmp-helper", cmp_str_len=cmp_str_len, trigger=trigger, **options)
