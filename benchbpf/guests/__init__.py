"""Runs in guests booting other kernels (QEMU, virtme-ng): `vm` on the
host, `_guest` its half inside the guest, `_kernels` the kernels they boot
(Debian packages fetched into a cache).  Uses the harness and the
results, nothing above."""

__all__ = []
