#!/bin/sh
# Everything benchbpf needs on a fresh Debian machine, as root: system
# packages, tracefs, and benchbpf itself (editable, with test extras).
set -eu
cd "$(dirname "$0")/.."

need=""
command -v clang >/dev/null 2>&1 || need="$need clang llvm"
# crypto-*'s object holds a kptr, whose BTF type tag clang 14 leaves out:
# a clang 15 or newer beside the default one (setup.py picks it for that file).
ls /usr/bin/clang-1[5-9] /usr/bin/clang-2[0-9] >/dev/null 2>&1 || need="$need clang-16"
command -v bpftool >/dev/null 2>&1 || [ -x /usr/sbin/bpftool ] || need="$need bpftool"
pkg-config --exists libbpf 2>/dev/null || need="$need libbpf-dev"
[ -e /usr/include/libelf.h ] || need="$need libelf-dev"
[ -e /usr/include/zlib.h ] || need="$need zlib1g-dev"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
# The kernel's own run_bench_*.sh, which tests/test_kernel_scripts.py runs against
# benchbpf: Debian's kernel source tarball (a 153 MB download, nothing is built).
[ -e /usr/src/linux-source-6.12.tar.xz ] || need="$need linux-source-6.12"
# Guests booting other kernels (benchbpf --kernel, tests/test_vm.py): QEMU,
# and what virtme-ng needs for its initramfs (depmod, a static busybox).
command -v qemu-system-x86_64 >/dev/null 2>&1 || need="$need qemu-system-x86"
command -v depmod >/dev/null 2>&1 || [ -x /usr/sbin/depmod ] || [ -x /sbin/depmod ] || need="$need kmod"
command -v busybox >/dev/null 2>&1 || need="$need busybox-static"
if [ -n "$need" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $need pkg-config >/dev/null
fi

# Tracepoint ids are read from tracefs; benchbpf mounts it itself when it can,
# doing it here too keeps the first run quiet.
if [ ! -d /sys/kernel/tracing/events ] && [ -d /sys/kernel/tracing ]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

# The test extra brings nbclient, nbformat and ipykernel: the notebook tests
# start the "python3" kernel, which runs this interpreter (no kernelspec to install).
# The docs extra brings Sphinx, MyST and furo: tests/test_docs.py builds the manual.
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -e ".[test,docs]"
# virtme-ng (vng) boots the guests; from PyPI, as Debian 12 does not package it.
command -v vng >/dev/null 2>&1 || \
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore virtme-ng
