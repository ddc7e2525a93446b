"""What a run loads, read while it runs: each BPF program this process
holds, by name, with the kernel's translated instructions (bpftool's
`prog dump xlated`), so that tests can check the work a program does per
hit against the kernel bench's, deterministically."""
import os
import re
import subprocess
import threading
import time

from leakcheck import bpftool, require_bpftool

_INSN = re.compile(r"^\s*(\d+): \((\w\w)\) (.*)$")


def _prog_ids():
    ids = set()
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            with open(f"/proc/self/fdinfo/{fd}") as f:
                m = re.search(r"^prog_id:\s*(\d+)", f.read(), re.M)
        except OSError:
            continue
        if m:
            ids.add(int(m.group(1)))
    return ids


def instructions(prog_id):
    """[(index, opcode, text)] of one loaded program (subprograms included)."""
    out = subprocess.run([require_bpftool(), "prog", "dump", "xlated", "id", str(prog_id)],
                         capture_output=True, text=True, check=True).stdout
    return [(int(m.group(1)), m.group(2), m.group(3))
            for m in map(_INSN.match, out.splitlines()) if m]


def programs_while_running(call, want, **kw):
    """Run call(**kw) in a thread; while it runs, read the instructions of
    the programs this process loaded whose name (bpftool's: the full
    name where the program has BTF) starts with one of `want`.  Returns ({name: insns},
    result); raises what the run raised."""
    got, box = {}, {}

    def body():
        try:
            box["result"] = call(**kw)
        except BaseException as e:     # handed to the caller
            box["error"] = e

    t = threading.Thread(target=body)
    t.start()
    try:
        while t.is_alive():
            for pid in _prog_ids():
                try:
                    name = bpftool("prog", "show", "id", str(pid))["name"]
                    if name not in got and any(name.startswith(w) for w in want):
                        got[name] = instructions(pid)
                except Exception:      # unloaded meanwhile
                    continue
            time.sleep(0.05)
    finally:
        t.join()
    if "error" in box:
        raise box["error"]
    return got, box["result"]


def loop_bodies(insns):
    """Each backward conditional jump's loop body: the instructions from its
    target up to the jump itself."""
    bodies = []
    for i, (idx, op, text) in enumerate(insns):
        m = re.search(r"goto pc-(\d+)$", text)
        if m and text.startswith("if "):
            target = idx + 1 - int(m.group(1))
            bodies.append([x for x in insns if target <= x[0] <= idx])
    return bodies
