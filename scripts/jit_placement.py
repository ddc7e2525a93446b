#!/usr/bin/env python3
"""Where the kernel placed a benchmark's JIT-compiled BPF code, run by run,
next to the figure the run reported.

    scripts/jit_placement.py [-n RUNS] [--symbols outer_loop,empty_callback]
        -- COMMAND...                         (one side)
    scripts/jit_placement.py -n 10 --alternate KERNEL_BENCH -- FLAGS...
                                              (kernel bench and benchbpf CLI)
    scripts/jit_placement.py --copies 16 [--rounds 60] [--cpu 0]
                                  (the bpf-loop nest, copies timed in turn)

The x86 JIT starts each program at a random 4-byte-aligned offset inside
its allocation, so the same instructions land at a different address, and
a different offset within a 64-byte cache line, on every load.  A figure
that takes one of two levels from run to run while the instructions stay
the same can be sorted by that offset: this prints, per run, the offset
modulo 64 of each named program or subprogram (from /proc/kallsyms, read
while the run is going), the run's summary throughput, its median
interval and its fastest.

On a host whose speed wanders by more than the effect, runs taken one after
another cannot show it.  --copies takes the bpf-loop benchmark's nest
(scripts/loop_nest.bpf.c, the instructions of bpf/bpf_loop.bpf.c's callbacks)
as an XDP program, loads it N times with bpftool, each copy landing where the
JIT puts it, and times the copies in turn with BPF_PROG_TEST_RUN, round after
round; each copy's time is taken relative to its round's median, so that
the host's drift cancels, and copies are grouped by outer_loop's offset.

Not part of the test suite; needs root, net.core.bpf_jit_kallsyms=1, and
for --copies clang, bpftool and a mounted /sys/fs/bpf.
"""
import argparse
import collections
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SUMMARY = re.compile(r"Summary: \w+\s+([0-9.]+)")
ITER = re.compile(r"^Iter\s+\d+\s+\(.*?\):\s+hits\s+([0-9.]+)M/s", re.M)


HERE = os.path.dirname(os.path.abspath(__file__))
NEST_SYMBOLS = ("loop_nest", "outer_loop", "empty_callback")
DURATION = re.compile(r"duration \(average\): (\d+)ns")


def jit_symbols(suffixes):
    """{suffix: address} of the JIT symbol ending in each suffix (the last
    listed, where one benchmark at a time has such programs loaded)."""
    found = {}
    with open("/proc/kallsyms") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or not parts[2].startswith("bpf_prog_"):
                continue
            for suffix in suffixes:
                if parts[2].endswith("_" + suffix):
                    found[suffix] = int(parts[0], 16)
    return found


def run_once(command, suffixes, settle_s):
    proc = subprocess.Popen(command, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    time.sleep(settle_s)
    addresses = jit_symbols(suffixes)
    output, _ = proc.communicate()
    match = SUMMARY.search(output)
    if proc.returncode != 0 or not match:
        raise SystemExit(f"{' '.join(command)} failed:\n{output}")
    # The median and fastest interval as well as the summary's mean: a host
    # stretch that slows one interval moves the mean, seldom the median and
    # never the fastest.
    samples = [float(v) for v in ITER.findall(output)]
    return (float(match.group(1)), statistics.median(samples), max(samples),
            addresses)


def all_jit_symbols():
    with open("/proc/kallsyms") as f:
        return {tuple(line.split()[:3:2]) for line in f if "\tbpf_prog_" in line
                or " bpf_prog_" in line}


def load_copies(obj, pin_dir, n):
    """Load n copies of obj, one at a time; [{symbol: offset % 64}] per copy."""
    offsets = []
    for i in range(n):
        before = all_jit_symbols()
        subprocess.run(["bpftool", "prog", "load", obj, f"{pin_dir}/copy{i}"],
                       check=True)
        new = all_jit_symbols() - before
        placed = {}
        for address, name in new:
            for symbol in NEST_SYMBOLS:
                if name.endswith("_" + symbol):
                    placed[symbol] = int(address, 16) % 64
        offsets.append(placed)
    return offsets


def time_copy(pin, packet, cpu, repeat):
    out = subprocess.run(["taskset", "-c", str(cpu), "bpftool", "prog", "run",
                          "pinned", pin, "data_in", packet, "repeat", str(repeat)],
                         check=True, capture_output=True, text=True).stdout
    return int(DURATION.search(out).group(1))


def copies(args):
    """Time N loaded copies of the bpf-loop nest against each other."""
    work = tempfile.mkdtemp(prefix="jit-placement-")
    pin_dir = f"/sys/fs/bpf/jit-placement-{os.getpid()}"
    try:
        obj = os.path.join(work, "loop_nest.bpf.o")
        multiarch = subprocess.run(["gcc", "-print-multiarch"], capture_output=True,
                                   text=True).stdout.strip()
        subprocess.run(["clang", "-O2", "-g", "-target", "bpf",
                        f"-I/usr/include/{multiarch}", "-c",
                        os.path.join(HERE, "loop_nest.bpf.c"), "-o", obj], check=True)
        packet = os.path.join(work, "packet")
        with open(packet, "wb") as f:
            f.write(bytes(64))
        os.mkdir(pin_dir)
        placed = load_copies(obj, pin_dir, args.copies)
        relative = collections.defaultdict(list)
        for _ in range(args.rounds):
            ns = [time_copy(f"{pin_dir}/copy{i}", packet, args.cpu, args.repeat)
                  for i in range(args.copies)]
            middle = statistics.median(ns)
            for i, t in enumerate(ns):
                relative[i].append(t / middle)
    finally:
        if os.path.isdir(pin_dir):
            for name in os.listdir(pin_dir):
                os.unlink(os.path.join(pin_dir, name))
            os.rmdir(pin_dir)
        shutil.rmtree(work, ignore_errors=True)

    print("copy\t" + "\t".join(f"{s}%64" for s in NEST_SYMBOLS)
          + "\ttime / round median")
    by_outer = collections.defaultdict(list)
    for i in range(args.copies):
        rel = statistics.median(relative[i])
        by_outer[placed[i].get("outer_loop")].append(rel)
        print(f"{i}\t" + "\t".join(str(placed[i].get(s, "-")) for s in NEST_SYMBOLS)
              + f"\t{rel:.3f}")
    print("\nouter_loop%64\tcopies\ttime / round median (median over copies)")
    for offset in sorted(by_outer, key=lambda o: (o is None, o)):
        print(f"{offset}\t{len(by_outer[offset])}\t"
              f"{statistics.median(by_outer[offset]):.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=10)
    parser.add_argument("--symbols", default="outer_loop,empty_callback",
                        help="comma-separated program/subprogram names")
    parser.add_argument("--settle", type=float, default=1.2,
                        help="seconds after start before reading kallsyms")
    parser.add_argument("--alternate", metavar="KERNEL_BENCH",
                        help="run this kernel bench binary and the benchbpf "
                             "CLI in turn with the same flags")
    parser.add_argument("--copies", type=int, metavar="N",
                        help="time N loaded copies of the bpf-loop nest "
                             "against each other instead of running a command")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=1000,
                        help="test runs per timing (each 10,000 loop iterations)")
    parser.add_argument("--cpu", type=int, default=0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.copies:
        if args.copies < 2 or args.rounds < 1:
            parser.error("--copies needs at least 2 copies and 1 round")
        copies(args)
        return
    command = [c for c in args.command if c != "--"]
    if not command:
        parser.error("give the command (or, with --alternate, the flags)")
    suffixes = args.symbols.split(",")
    if args.alternate:
        sides = {"kernel": [args.alternate] + command,
                 "benchbpf": [sys.executable, "-m", "benchbpf"] + command}
    else:
        sides = {"run": command}

    print("side\trun\tmean\tmedian\tfastest\t"
          + "\t".join(f"{s}%64" for s in suffixes))
    for i in range(args.runs):
        for side, cmd in sides.items():
            mean, median, fastest, addresses = run_once(cmd, suffixes,
                                                        args.settle)
            offsets = [str(addresses[s] % 64) if s in addresses else "-"
                       for s in suffixes]
            print(f"{side}\t{i + 1}\t{mean:.2f}\t{median:.2f}\t{fastest:.2f}\t"
                  + "\t".join(offsets),
                  flush=True)


if __name__ == "__main__":
    main()
