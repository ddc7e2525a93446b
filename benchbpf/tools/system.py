"""`benchbpf system show | tune | reset`: what on this machine distorts BPF
figures, and the safe knobs set for benchmarking and set back.

As pyperf's ``system`` command is for Python benchmarks, for BPF ones:

- ``show()`` reads each item (the BPF statistics switch, the JIT, CPU
  frequency governor and boost, SMT, mitigations, isolated and nohz_full
  CPUs, IRQ affinity, steal time, other benchbpf runs) and says, for each,
  whether it is as a benchmark wants it, with advice; "not available" where
  the knob does not exist on this machine (no cpufreq in most VMs).
- ``tune()`` sets the knobs that are safe to change at run time, as root,
  and records each old value in a state file.
- ``reset()`` writes back exactly what tune() changed, and removes the file.

Boot-time settings (mitigations, isolcpus, nohz_full) and SMT are shown
with advice, never changed.  The configuration items are those the
fingerprint of every Result records (benchbpf.results.fingerprint)."""
import argparse
import json
import os
import sys
import time
from dataclasses import dataclass

from ..harness._concurrency import lock_dir, running
from ..results import fingerprint as _fp
from ..results._files import replace_text

__all__ = ["Check", "Change", "show", "tune", "reset", "state_path", "format_checks",
           "format_changes", "STATE_ENV", "main"]

#: Environment variable naming the file where tune() records what it changed.
STATE_ENV = "BENCHBPF_SYSTEM_STATE"


@dataclass(frozen=True)
class Check:
    """One item of ``system show``: its name, the value read (None where it
    does not exist here), whether it is as a benchmark wants it (None: no
    judgement or not available) and what to do about it."""
    name: str
    value: object
    ok: object
    advice: str

    @property
    def status(self):
        """"ok", "warning" or "not available" ("info" for an item shown as is)."""
        if self.value is None:
            return "not available"
        return {True: "ok", False: "warning"}.get(self.ok, "info")


@dataclass(frozen=True)
class Change:
    """One knob tune() set or reset() set back: its file, before and after."""
    path: str
    old: str
    new: str


def state_path():
    """Where tune() records its changes: $BENCHBPF_SYSTEM_STATE, else a file
    beside the run markers (/run/benchbpf for root: gone at reboot, as the
    settings it records are)."""
    return os.environ.get(STATE_ENV) or os.path.join(lock_dir(), "system-tune.json")


def _steal_pct(seconds=0.5):
    """Share of CPU time stolen by the hypervisor over `seconds`, in %, or
    None without /proc/stat's steal column."""
    def sample():
        try:
            with open("/proc/stat") as f:
                fields = f.readline().split()[1:]
        except OSError:
            return None
        values = [int(v) for v in fields]
        return (values[7], sum(values[:8])) if len(values) >= 8 else None

    first = sample()
    time.sleep(seconds)
    second = sample()
    if first is None or second is None or second[1] == first[1]:
        return None
    return 100.0 * (second[0] - first[0]) / (second[1] - first[1])


def _mitigated(vulnerabilities):
    """How many of the CPU's vulnerability entries report a mitigation."""
    return sum(1 for v in vulnerabilities.values() if v and v.startswith("Mitigation"))


def show(steal_seconds=0.5):
    """Every item, read now: a list of Check.  steal_seconds: how long
    steal time is sampled (> 0)."""
    if not steal_seconds > 0:
        raise ValueError(f"steal_seconds={steal_seconds!r}: must be > 0 seconds")
    fp = _fp.fingerprint()
    checks = []

    def add(name, value, ok, advice):
        checks.append(Check(name, value, ok, advice))

    stats = fp["bpf_stats_enabled"]
    add("kernel.bpf_stats_enabled", stats, None if stats is None else stats == 0,
        "on, every BPF program run also reads the clock twice: figures are slower "
        "(benchbpf system tune turns it off)" if stats else
        "off: program runs are not timed by the kernel")
    jit = fp["bpf_jit_enable"]
    add("net.core.bpf_jit_enable", jit, None if jit is None else jit == 1,
        "the JIT is on" if jit == 1 else
        "BPF runs in the interpreter or the JIT logs: figures are not the JIT's "
        "(benchbpf system tune sets 1)")
    harden = fp["bpf_jit_harden"]
    add("net.core.bpf_jit_harden", harden, None if harden is None else harden == 0,
        "constant blinding off" if harden == 0 else
        "constant blinding adds instructions to JITed programs "
        "(benchbpf system tune sets 0)")
    kallsyms = fp["bpf_jit_kallsyms"]
    add("net.core.bpf_jit_kallsyms", kallsyms, None,
        "JITed programs have symbols (profilers can name them); no effect on speed")
    governors = fp["cpu_governors"]
    add("CPU frequency governor", None if governors is None else ", ".join(governors),
        None if governors is None else governors == ["performance"],
        "no cpufreq here (common in a VM): the host sets the frequency"
        if governors is None else
        "performance on every CPU" if governors == ["performance"] else
        "a governor other than performance lets the frequency move between runs "
        "(benchbpf system tune sets performance)")
    boost = fp["cpu_boost"]
    add("CPU boost (turbo)", boost, None if boost is None else not boost,
        "no boost control here" if boost is None else
        "boost off: the frequency does not depend on temperature" if not boost else
        "boost on: the frequency, and so the figures, follow temperature and load "
        "(benchbpf system tune turns it off)")
    smt = fp["smt_active"]
    add("SMT (hyper-threads)", smt, None if smt is None else not smt,
        "no SMT siblings share a core" if smt is False else
        "SMT siblings share a core: pin producers to separate cores (-a, "
        "--prod-affinity), or boot with nosmt" if smt else "not reported here")
    vulns = fp["cpu_vulnerabilities"]
    add("CPU mitigations", None if vulns is None else
        f"{_mitigated(vulns)} of {len(vulns)} entries mitigated", None,
        "mitigations cost system calls and context switches, which every "
        "getpgid()-driven benchmark makes: compare figures only between kernels "
        "booted alike (the fingerprint records them)")
    isolated = fp["isolated_cpus"]
    add("isolated CPUs (isolcpus)", isolated, None if isolated is None else bool(isolated),
        f"CPUs {isolated} isolated: pin producers there (-a, --prod-affinity)" if isolated
        else "none: the scheduler may put other tasks beside a benchmark "
        "(boot with isolcpus= and pin producers there)")
    nohz = fp["nohz_full"]
    add("nohz_full CPUs", nohz, None if nohz is None else bool(nohz),
        f"CPUs {nohz} run without the periodic tick" if nohz else
        "this kernel has no nohz_full" if nohz is None else
        "the periodic tick interrupts every CPU (boot with nohz_full= beside isolcpus=)")
    irq = fp["irq_default_affinity"]
    add("IRQ default affinity", irq, None,
        "the mask of CPUs new interrupts go to; with isolated CPUs keep it off them")
    steal = _steal_pct(steal_seconds)
    add("steal time", None if steal is None else f"{steal:.1f} %",
        None if steal is None else steal < 1.0,
        "a hypervisor takes CPU time from this machine: figures move with its other "
        "guests; repeat runs and compare with benchbpf ab" if steal and steal >= 1.0 else
        f"under 1 % over {steal_seconds:g} s")
    others = running()
    add("other benchbpf runs", None if others is None else
        ("none" if not others else "pid " + ", ".join(map(str, others))),
        None if others is None else not others,
        "runs compete for CPUs: wait for them" if others else "none running now")
    return checks


#: What tune() sets: (file, wanted value, applies when the file exists).
_TUNABLE = (
    ("/proc/sys/kernel/bpf_stats_enabled", "0"),
    ("/proc/sys/net/core/bpf_jit_enable", "1"),
    ("/proc/sys/net/core/bpf_jit_harden", "0"),
    ("/sys/devices/system/cpu/cpufreq/boost", "0"),
    ("/sys/devices/system/cpu/intel_pstate/no_turbo", "1"),
)


def _governor_files():
    return sorted(os.path.join(_fp.CPU_SYSFS, d, "cpufreq", "scaling_governor")
                  for d in os.listdir(_fp.CPU_SYSFS)
                  if d.startswith("cpu") and d[3:].isdigit()
                  and os.path.exists(os.path.join(_fp.CPU_SYSFS, d, "cpufreq",
                                                  "scaling_governor")))


def _write(path, value):
    with open(path, "w") as f:
        f.write(value)


def _load_state(path):
    try:
        with open(path) as f:
            state = json.load(f)
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a benchbpf system tune record ({e}); remove it "
                         "to start afresh") from None
    if not isinstance(state, dict) or not isinstance(state.get("changes"), list):
        raise ValueError(f"{path}: not a benchbpf system tune record")
    return [Change(**c) for c in state["changes"]]


def tune(path=None):
    """Set the safe knobs for benchmarking, as root; returns the Changes made
    (knobs already as wanted are left alone).  Each old value is recorded in
    `path` (default state_path()) before it is changed, added to what an
    earlier tune() recorded, so that reset() restores the values from before
    the first tune."""
    path = path or state_path()
    recorded = _load_state(path)
    known = {c.path for c in recorded}
    wanted = list(_TUNABLE) + [(g, "performance") for g in _governor_files()]
    changes = []
    for file, value in wanted:
        old = _fp.read(file)
        if old is None or old == value:
            continue
        change = Change(file, old, value)
        if file not in known:
            recorded.append(change)
        _save(path, recorded)        # recorded before the write: a failed write loses nothing
        try:
            _write(file, value)
        except OSError as e:
            raise PermissionError(f"{file}: cannot set {value!r} ({e.strerror}); "
                                  "benchbpf system tune needs root") from None
        changes.append(change)
    return changes


def _save(path, changes):
    replace_text(path, json.dumps({"changes": [c.__dict__ for c in changes],
                                   "written_at": time.time()}, indent=1))


def reset(path=None):
    """Write back every value tune() recorded in `path` (default
    state_path()) and remove the record; returns the Changes made (old: the
    value tune set, new: the one restored).  Nothing recorded: nothing done."""
    path = path or state_path()
    restored = []
    for change in _load_state(path):
        now = _fp.read(change.path)
        if now is None:
            continue
        if now != change.old:
            try:
                _write(change.path, change.old)
            except OSError as e:
                raise PermissionError(f"{change.path}: cannot set back {change.old!r} "
                                      f"({e.strerror}); the record stays in {path}") from None
            restored.append(Change(change.path, now, change.old))
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    return restored


def _shown(value):
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value) if value != "" else "none"


def format_checks(checks):
    """The checks (show()'s list) as the command prints them: one line
    each, name, value, status, then the advice."""
    width = max(len(c.name) for c in checks)
    value_width = max(len(_shown(c.value)) for c in checks)
    lines = []
    for c in checks:
        lines.append(f"{c.name:<{width}}  {_shown(c.value):<{value_width}}  "
                     f"{c.status:<13}  {c.advice}")
    return "\n".join(lines)


def format_changes(changes, verb):
    """tune()'s or reset()'s Changes as lines "verb FILE: OLD -> NEW"."""
    if not changes:
        return "nothing to change"
    return "\n".join(f"{verb} {c.path}: {c.old} -> {c.new}" for c in changes)


def _parser():
    parser = argparse.ArgumentParser(
        prog="benchbpf system",
        description="What on this machine distorts BPF figures (show), the safe knobs set "
                    "for benchmarking (tune, as root) and set back (reset).",
        epilog="Exit status: 0 done, 1 a knob could not be set (not root?), 2 bad usage "
               "or a damaged record.")
    parser.add_argument("action", choices=("show", "tune", "reset"),
                        help="show: each item with advice; tune: set the safe knobs and "
                             "record their old values; reset: write back what tune changed")
    parser.add_argument("--state", metavar="FILE",
                        help=f"the record of what tune changed (default ${STATE_ENV}, else "
                             "/run/benchbpf/system-tune.json as root)")
    return parser


def main(argv):
    """`benchbpf system ACTION [--state FILE]`: argv without the word
    "system"; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.action == "show":
            print(format_checks(show()))
        elif args.action == "tune":
            print(format_changes(tune(args.state), "set"))
        else:
            print(format_changes(reset(args.state), "reset"))
    except PermissionError as e:
        print(f"benchbpf system {args.action}: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"benchbpf system {args.action}: {e}", file=sys.stderr)
        return 2
    return 0
