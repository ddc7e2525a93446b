#!/bin/sh
# Build the Linux kernel's BPF `bench` (tools/testing/selftests/bpf) from
# Debian's linux-source package, for side-by-side comparisons with benchbpf
# (scripts/side_by_side.py).  Not part of the test suite.
#
#   scripts/build_kernel_bench.sh OUTDIR [VERSION]     (VERSION default 6.12)
#   UPSTREAM=DIR scripts/build_kernel_bench.sh OUTDIR  (newer bench files)
#
# Leaves OUTDIR/bench.
#
# UPSTREAM=DIR lays a directory of newer selftests/bpf files (same layout:
# bench.c, bench.h, benchs/, progs/, headers, extra *.c) over the tree
# before the changes below, so that a newer upstream bench can be built over
# Debian's sources (Debian ships no newer one and this script downloads
# nothing else).  Every benchs/bench_*.c of DIR is linked into `bench`, with
# a dependency on each skeleton it includes, and every other top-level *.c
# of DIR that the Makefile does not know (e.g. usdt_1.c) is compiled and
# linked too.  DIR is expected to document which of its files are upstream's
# and which were adapted to the older tree.  Needs root for apt-get if the package is missing, and
# the build tools the selftests need (clang, llvm, make, gcc, libelf-dev,
# zlib1g-dev, libcap-dev is not needed for `bench`).
#
# Changes made to the sources so that the bench runs on a locked-down kernel
# (fentry/fexit/fmod_ret refused), the same as the reference figures:
#  - producers attached with fentry to the getpgid syscall are attached to
#    the syscalls/sys_enter_getpgid tracepoint instead;
#  - the other fentry/fexit programs of an always-loaded skeleton
#    (rename-fentry/-fexit, local-storage-tasks-trace, and with UPSTREAM the
#    lpm-trie skeleton's bpf_map_free_deferred probes, which only
#    lpm-trie-free needs) are made not to load
#    by default ('?'), so one refused program does not sink the whole object;
#  - the bpf crypto benchmark is left out (see below).
# Compiler flags are the Makefile's own (OPT_FLAGS: -O0 unless RELEASE=1):
# the reference figures are taken with that default.  RELEASE=1 in the
# environment builds the bench and its libbpf at -O2, the optimisation
# benchbpf and Debian's libbpf are built with.
set -eu

if [ $# -lt 1 ]; then
	echo "usage: $0 OUTDIR [VERSION]" >&2
	exit 2
fi
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
VER=${2:-6.12}
TARBALL=/usr/src/linux-source-$VER.tar.xz
SRC=$OUT/linux-source-$VER
SELFTESTS=$SRC/tools/testing/selftests/bpf
JOBS=${JOBS:-2}
UP=
if [ -n "${UPSTREAM:-}" ]; then
	UP=$(cd "$UPSTREAM" && pwd)
fi

case "$OUT" in
"$(git rev-parse --show-toplevel 2>/dev/null || echo /nonexistent)"*)
	echo "$0: build the kernel bench outside the repository, not in $OUT" >&2
	exit 2
	;;
esac

if [ ! -f "$TARBALL" ]; then
	apt-get update
	apt-get install -y "linux-source-$VER"
fi

if [ ! -d "$SELFTESTS" ]; then
	echo "extracting $TARBALL"
	tar -C "$OUT" -xJf "$TARBALL" --wildcards \
		"linux-source-$VER/tools/*" "linux-source-$VER/include/*" \
		"linux-source-$VER/scripts/*" "linux-source-$VER/arch/x86/include/*" \
		"linux-source-$VER/kernel/bpf/*" "linux-source-$VER/Makefile"
fi

cd "$SELFTESTS"
if [ -n "$UP" ]; then
	cp -r "$UP"/. .
	echo "laid $UP over $SELFTESTS"
	for f in "$UP"/benchs/bench_*.c "$UP"/*.c; do
		[ -f "$f" ] || continue
		o=$(basename "$f" .c)
		case "$o" in bench|*_helpers) continue ;; esac
		if ! grep -q "^		 \$(OUTPUT)/$o.o \\\\$" Makefile; then
			sed -i "s|^		 \$(OUTPUT)/bench_count.o \\\\$|&\n		 \$(OUTPUT)/$o.o \\\\|" Makefile
			echo "linked $o.o into bench"
		fi
		for s in $(sed -n 's/^#include "\(.*\)\.skel\.h"$/\1/p' "$f"); do
			grep -qF "\$(OUTPUT)/$o.o: \$(OUTPUT)/$s.skel.h" Makefile ||
				echo "\$(OUTPUT)/$o.o: \$(OUTPUT)/$s.skel.h" >>Makefile
		done
	done
fi
# fentry on getpgid -> the getpgid tracepoint (the BPF programs take void *ctx
# and read nothing from it, so the body is unchanged)
for f in progs/*.c; do
	if grep -q 'SEC("fentry/" SYS_PREFIX "sys_getpgid")' "$f"; then
		sed -i 's|SEC("fentry/" SYS_PREFIX "sys_getpgid")|SEC("tp/syscalls/sys_enter_getpgid")|' "$f"
		echo "patched $f: fentry getpgid -> tp/syscalls/sys_enter_getpgid"
	fi
done
for f in progs/test_overhead.c progs/local_storage_rcu_tasks_trace_bench.c \
	 progs/lpm_trie_bench.c; do
	[ -f "$f" ] || continue
	sed -i -E 's#SEC\("(fentry|fexit)/#SEC("?\1/#' "$f"
done

# The crypto benchmark's BPF object does not compile against the BTF of
# newer kernels (its kfunc declarations conflict with vmlinux.h): leave it out.
if grep -q bench_bpf_crypto.o Makefile; then
	sed -i '/bench_bpf_crypto\.o \\$/d' Makefile
	sed -i '/bench_crypto_argp\|bench_crypto_encrypt\|bench_crypto_decrypt/d' bench.c
	echo "left out the bpf crypto benchmark"
fi

mkdir -p "$OUT/build"
nice make -j"$JOBS" ${RELEASE:+RELEASE=1} VMLINUX_BTF=/sys/kernel/btf/vmlinux OUTPUT="$OUT/build" \
	"$OUT/build/bench"
cp "$OUT/build/bench" "$OUT/bench"
echo "built $OUT/bench"
