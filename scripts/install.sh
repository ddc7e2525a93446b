#!/bin/sh
# Everything benchbpf needs on a fresh Debian machine, as root: system
# packages, tracefs, and a virtual environment .venv in this checkout holding
# benchbpf (editable, with its test, docs and vm extras) and virtme-ng.
#
#   ./scripts/install.sh                           # the venv's interpreter: python3
#   PYTHON=/usr/bin/python3.11 ./scripts/install.sh
#
# Why a virtual environment: Debian's own python3 is externally managed
# (PEP 668), so pip refuses to install into it, system-wide or --user, and
# --break-system-packages would mix PyPI's files with Debian's. Debian 12
# packages neither virtme-ng nor a Sphinx new enough for the manual (5.3; it
# needs 7.2), so apt cannot replace pip. A venv is what PEP 668 asks for, needs
# only the interpreter's own venv module, works as well with any other python3
# (pyenv, a distribution's, one built from source), leaves the system's Python
# untouched, and goes away with `rm -rf .venv`.
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=.venv

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "install.sh: PYTHON=$PYTHON: no such interpreter" >&2
    exit 2
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
    echo "install.sh: PYTHON=$PYTHON is Python $("$PYTHON" -c 'import platform; print(platform.python_version())'): benchbpf needs 3.9 or newer" >&2
    exit 2
fi
# The interpreter itself, not a wrapper such as pyenv's shim.
python_path=$("$PYTHON" -c 'import os, sys; print(os.path.realpath(sys.executable))')

need=""
# A venv needs the venv module and ensurepip, the C core needs Python.h:
# Debian ships them apart from python3, and apt installs them below with the
# rest; another interpreter lacking them is refused.
python_lacks() {    # $1: what is missing, $2: Debian's packages that bring it
    if dpkg -S "$python_path" >/dev/null 2>&1; then
        need="$need $2"
    else
        echo "install.sh: PYTHON=$PYTHON ($python_path) has no $1: install it," \
             "or name another interpreter with PYTHON=" >&2
        exit 2
    fi
}
"$PYTHON" -c 'import ensurepip, venv' 2>/dev/null ||
    python_lacks "venv or ensurepip module" "python3-venv python3-pip"
"$PYTHON" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' ||
    python_lacks "Python.h (the C core is built against it)" python3-dev
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
# A throwaway PostgreSQL server for the history store's tests (tests/test_history_pg.py).
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need="$need postgresql"
# A real browser for the history dashboard's test (tests/test_history_html.py).
command -v chromium >/dev/null 2>&1 || need="$need chromium"
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

# A venv made by another interpreter than the one asked for is made again.
if [ -x "$VENV/bin/python3" ] && [ "$("$VENV/bin/python3" -c \
        'import os, sys; print(os.path.realpath(sys._base_executable))' 2>/dev/null)" \
        != "$python_path" ]; then
    echo "install.sh: $VENV was not made by $python_path: making it again" >&2
    "$PYTHON" -m venv --clear "$VENV"
elif [ ! -x "$VENV/bin/python3" ]; then
    "$PYTHON" -m venv "$VENV"
fi

# The test extra brings nbclient, nbformat and ipykernel: the notebook tests
# start the "python3" kernel, which runs the interpreter the tests run in, the
# venv's (no kernelspec to install). The docs extra brings Sphinx, MyST and
# furo: tests/test_docs.py builds the manual. The vm extra brings virtme-ng
# (vng), which boots the guests; benchbpf runs the vng beside its interpreter.
"$VENV/bin/python3" -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    -e ".[test,docs,vm,history]"
"$VENV/bin/python3" -m benchbpf history install-detector   # apache-otava, in a venv of its own: its pins would move numpy
