"""What a process holds, to prove that runs leave nothing behind.

snapshot() records this process's descriptors (and which of them are BPF
objects or perf events), threads, child processes and RSS; kernel_objects()
lists every BPF program, map and link on the machine with who references
it, so that objects nobody holds any more (leaked) can be told apart from
objects other processes on the machine are using right now.
"""
import json
import os
import shutil
import subprocess
import time

import benchbpf

BPFTOOL = shutil.which("bpftool") or shutil.which("bpftool", path="/usr/sbin:/sbin")


class BpftoolError(AssertionError):
    """The kernel's object lists could not be read: a leak check that
    cannot look must not pass."""


def require_bpftool():
    """bpftool builds the skeletons too, so where benchbpf is built it is
    there; without it no leak check can look at the kernel."""
    if BPFTOOL is None:
        raise BpftoolError("bpftool not found (PATH, /usr/sbin, /sbin): cannot list the "
                           "kernel's BPF objects to check for leaks; install it "
                           "(scripts/install.sh does)")
    return BPFTOOL


def fd_targets(pid="self"):
    out = {}
    base = f"/proc/{pid}/fd"
    for fd in os.listdir(base):
        try:
            out[int(fd)] = os.readlink(f"{base}/{fd}")
        except OSError:   # closed meanwhile (the listdir's own descriptor)
            pass
    return out


def is_bpf_target(target):
    return target.startswith("anon_inode:bpf") or target == "anon_inode:[perf_event]"


def sockets(pid="self"):
    """This process's socket descriptors (fd -> "socket:[inode]")."""
    return {fd: t for fd, t in fd_targets(pid).items() if t.startswith("socket:")}


def children(pid=None):
    """PIDs of live processes whose parent is `pid` (default: this one)."""
    pid = os.getpid() if pid is None else pid
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # comm may contain spaces: fields after the last ')'
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            kids.append(int(entry))
    return kids


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def markers():
    """This process's run-marker files still present."""
    d = benchbpf.harness._concurrency.lock_dir()
    try:
        return sorted(e for e in os.listdir(d) if e.startswith(f"{os.getpid()}-"))
    except OSError:
        return []


class Snapshot:
    def __init__(self):
        fds = fd_targets()
        self.fds = len(fds)
        self.bpf_fds = sorted(t for t in fds.values() if is_bpf_target(t))
        self.sockets = sorted(t for t in fds.values() if t.startswith("socket:"))
        self.threads = len(os.listdir("/proc/self/task"))
        self.children = children()
        self.rss_kb = rss_kb()
        self.markers = markers()

    def leaks_since(self, before):
        """Human-readable differences that mean something was left behind."""
        out = []
        if self.fds != before.fds:
            out.append(f"open fds {before.fds} -> {self.fds}")
        if self.bpf_fds:
            out.append(f"BPF/perf descriptors still open: {self.bpf_fds}")
        if set(self.sockets) - set(before.sockets):
            out.append(f"sockets still open: {sorted(set(self.sockets) - set(before.sockets))}")
        if self.threads != before.threads:
            out.append(f"threads {before.threads} -> {self.threads}")
        if set(self.children) - set(before.children):
            out.append(f"child processes alive: {sorted(set(self.children) - set(before.children))}")
        if self.markers:
            out.append(f"run markers left: {self.markers}")
        return out


def snapshot():
    return Snapshot()


def settle(before, timeout=3.0):
    """Snapshot after threads and descriptors had time to go; returns (snap, leaks)."""
    deadline = time.monotonic() + timeout
    while True:
        snap = Snapshot()
        leaks = snap.leaks_since(before)
        if not leaks or time.monotonic() > deadline:
            return snap, leaks
        time.sleep(0.05)


def _clean_env():
    """The environment without a sanitizer runtime preloaded: tools we run
    are not under test, and their own reports would change their exit code."""
    env = dict(os.environ)
    for key in ("LD_PRELOAD", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"):
        env.pop(key, None)
    return env


def bpftool(*args):
    """bpftool's JSON answer; BpftoolError (with its stderr) if it fails."""
    out = subprocess.run([require_bpftool(), "-j", *args], capture_output=True, text=True,
                         env=_clean_env())
    if out.returncode != 0:
        raise BpftoolError(f"bpftool {' '.join(args)} failed ({out.returncode}): "
                           f"{out.stderr.strip() or out.stdout.strip()}")
    return json.loads(out.stdout or "null") or []


def kernel_objects():
    """{(kind, id): info} for every BPF program, map and link loaded."""
    objs = {}
    for kind in ("prog", "map", "link"):
        for o in bpftool(kind, "list"):
            objs[(kind, o["id"])] = o
    return objs


def referenced_ids():
    """BPF object ids some live process holds through a descriptor, plus the
    maps and programs those hold in turn."""
    held = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fdinfo")
        except OSError:
            continue
        for fd in fds:
            try:
                with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                    text = f.read()
            except OSError:
                continue
            for line in text.splitlines():
                key, _, value = line.partition(":")
                if key in ("prog_id", "map_id", "link_id"):
                    held.add((key[:-3], int(value)))
    return held


def orphaned_objects(before):
    """Objects loaded since `before` that no process holds: leaked, unless
    pinned or attached without a descriptor (which benchbpf never does).
    Freeing is asynchronous in the kernel, so this waits a little."""
    deadline = time.monotonic() + 5
    while True:
        now = kernel_objects()
        new = {k: v for k, v in now.items() if k not in before}
        held = referenced_ids()
        for (kind, oid), info in now.items():
            if (kind, oid) in held:
                for m in info.get("map_ids", ()):
                    held.add(("map", m))
                if kind == "link" and "prog_id" in info:
                    held.add(("prog", info["prog_id"]))
        orphans = sorted(k for k in new if k not in held)
        if not orphans or time.monotonic() > deadline:
            return [(k, new[k].get("name", "")) for k in orphans]
        time.sleep(0.1)


def named_objects(prefix):
    """Programs and maps on the machine whose name starts with prefix."""
    objs = kernel_objects()
    return sorted((k, v.get("name", "")) for k, v in objs.items()
                  if v.get("name", "").startswith(prefix))


def wait_named_gone(prefix, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        left = named_objects(prefix)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def held_ids(map_type=None):
    """(kind, id) of the BPF objects this process holds through a descriptor;
    with map_type (a BPF_MAP_TYPE_* number), only the maps of that type."""
    mine = set()
    for fd in fd_targets():
        try:
            with open(f"/proc/self/fdinfo/{fd}") as f:
                info = dict(line.partition(":")[::2] for line in f)
        except OSError:
            continue
        if map_type is not None and info.get("map_type", "").strip() != str(map_type):
            continue
        for key in ("prog_id", "map_id", "link_id"):
            if key in info:
                mine.add((key[:-3], int(info[key])))
    return mine


def held_data_maps(section, prefix=""):
    """bpftool's entries for the global data maps (".bss", ".data", ...)
    named prefix...section that this process holds."""
    mine = {oid for kind, oid in held_ids() if kind == "map"}
    return [m for m in bpftool("map", "list")
            if m["id"] in mine and m.get("name", "").startswith(prefix)
            and m.get("name", "").endswith(section)]


def held_data_vars(section, prefix=""):
    """{variable: value} of each held global data map, as bpftool formats it."""
    out = []
    for m in held_data_maps(section, prefix):
        cur = bpftool("map", "lookup", "id", str(m["id"]), "key", "0", "0", "0", "0")
        out.append({k: v for d in cur["formatted"]["value"][section] for k, v in d.items()})
    return out


def left_behind(prefix):
    """Objects named `prefix...` that this process still holds, or that no
    process holds (leaked into the kernel).  Objects other processes on the
    machine hold right now are theirs, not this test's."""
    objs = kernel_objects()
    mine, held = held_ids(), referenced_ids()
    for (kind, oid), info in objs.items():
        if (kind, oid) in held:
            held.update(("map", m) for m in info.get("map_ids", ()))
            if kind == "link" and "prog_id" in info:
                held.add(("prog", info["prog_id"]))
    return sorted((k, v.get("name", "")) for k, v in objs.items()
                  if v.get("name", "").startswith(prefix) and (k in mine or k not in held))
