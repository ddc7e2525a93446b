#!/bin/sh
# Everything benchbpf needs on a fresh Debian machine, as root: system
# packages, tracefs, and benchbpf itself (editable, with test extras).
set -eu
cd "$(dirname "$0")/.."

need=""
command -v clang >/dev/null 2>&1 || need="$need clang llvm"
command -v bpftool >/dev/null 2>&1 || [ -x /usr/sbin/bpftool ] || need="$need bpftool"
pkg-config --exists libbpf 2>/dev/null || need="$need libbpf-dev"
[ -e /usr/include/libelf.h ] || need="$need libelf-dev"
[ -e /usr/include/zlib.h ] || need="$need zlib1g-dev"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
# The kernel's own run_bench_*.sh, which tests/test_kernel_scripts.py runs against
# benchbpf: Debian's kernel source tarball (a 153 MB download, nothing is built).
[ -e /usr/src/linux-source-6.12.tar.xz ] || need="$need linux-source-6.12"
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
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -e ".[test]"
