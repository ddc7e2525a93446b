"""Duet rounds: both sides of an A/B comparison at the same time.

Each side runs in a worker process of its own (python3 -m benchbpf.analysis._duet),
so that its BPF programs, which count only their own process's events, tell
its producers from the other side's.  Each round both workers load their
benchmark on their half of the CPUs and say so on a pipe; once both have
loaded, the parent gives them one CLOCK_MONOTONIC time to start at, so that
their warm-ups and measured windows coincide.  The halves swap every round,
and which worker runs which side is drawn anew each round, so that neither
side keeps the faster CPUs or the favoured process (identical sides once
read 6 % apart over 21 rounds in the same two workers).
"""
import json
import os
import select
import signal
import subprocess
import sys
import time

from ..harness import _errors, _runner
from ..harness._children import reap
from ..results.result import Result

#: How long after both sides have loaded they start, ns: enough for the
#: parent to tell both before the time comes.
START_DELAY_NS = 20_000_000
#: A start time that tells a waiting side the round is called off.
CALL_OFF = (1 << 64) - 1
#: How long a worker may take to answer, beyond its run's own length, s.
ANSWER_SLACK_S = 60.0


def cpu_halves():
    """This process's allowed CPUs, split in two equal halves (the odd one
    out is left unused): ([...], [...])."""
    cpus = sorted(os.sched_getaffinity(0))
    half = len(cpus) // 2
    return tuple(cpus[:half]), tuple(cpus[half:2 * half])


def check(a, b):
    """Why a duet of sides a and b cannot run on this machine (ValueError),
    before anything starts: a side whose threads outnumber its half of the
    CPUs, one that places its threads itself, or one whose programs count
    other processes' events (the other side's would count too)."""
    halves = cpu_halves()
    for label, side in (("a", a), ("b", b)):
        info = _runner.describe(side.name)
        if info.sees_other_processes:
            raise ValueError(
                f"{label}: {side.name} cannot run in a duet: its programs count every "
                "process's events, as the kernel bench's do, so each side would count the "
                "other's too; compare it interleaved")
        for key in ("prod_affinity", "cons_affinity", "affinity"):
            if side.options.get(key):
                raise ValueError(f"{label}: {key}={side.options[key]!r}: a duet places each "
                                 "side on its half of the CPUs itself")
        threads = _threads(side)
        if threads > len(halves[0]):
            raise ValueError(
                f"{label}: {side.name} runs {threads} threads ({_threads_text(side)}), more "
                f"than the {len(halves[0])} CPU(s) each side of a duet gets of this "
                f"machine's {len(os.sched_getaffinity(0))}: compare it interleaved")


def _consumers(side):
    info = _runner.describe(side.name)
    c = side.options.get("consumers")
    return info.default_consumers if c is None else c


def _threads(side):
    return side.options.get("producers", 1) + _consumers(side)


def _threads_text(side):
    return f"{side.options.get('producers', 1)} producer(s), {_consumers(side)} consumer(s)"


def _placed(side, cpus):
    """The side's run() options on its CPUs: consumers first, then producers."""
    c = _consumers(side)
    p = side.options.get("producers", 1)
    placed = dict(side.options, prod_affinity=list(cpus[c:c + p]))
    if c:
        placed["cons_affinity"] = list(cpus[:c])
    return placed


class _Worker:
    """One side's worker process and its two pipes."""

    def __init__(self):
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "benchbpf.analysis._duet", str(ready_w), str(go_r)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(ready_w, go_r),
                text=True, bufsize=1)
        except BaseException:
            for fd in (ready_r, ready_w, go_r, go_w):
                os.close(fd)
            raise
        os.close(ready_w)
        os.close(go_r)
        self.ready_fd, self.go_fd = ready_r, go_w

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def stop(self, interrupt):
        """End the worker: asked to quit, or (interrupt) with SIGINT, which
        stops a run and tears it down first; killed if it does not end."""
        proc = self.proc
        if reap(proc, 0) is None:   # not poll(): this runs after Ctrl-C (_children)
            try:
                if interrupt:
                    proc.send_signal(signal.SIGINT)
                else:
                    self.send({"cmd": "quit"})
            except (OSError, ValueError):
                pass
            if reap(proc, 30) is None:
                proc.kill()
                reap(proc)
        for f in (proc.stdin, proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        for fd in (self.ready_fd, self.go_fd):
            os.close(fd)


class Duet:
    """Rounds of both sides at once (ab(mode="duet")); a context manager
    that starts the two workers and always ends them."""

    def __init__(self, a, b, warmup, duration, interval, rng):
        check(a, b)
        self.sides = (a, b)
        self.rng = rng
        self.warmup, self.duration, self.interval = warmup, duration, interval
        self.halves = cpu_halves()
        self.workers = []

    def __enter__(self):
        try:
            for _ in self.sides:
                self.workers.append(_Worker())
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, et, ev, tb):
        interrupt = et is not None
        for w in self.workers:
            w.stop(interrupt)
        self.workers = []
        return False

    def round(self, index):
        """Both sides once, at the same time: (A's Result, B's Result, None,
        A's CPUs, B's CPUs).  The halves of the CPUs swap every round, and
        which worker runs which side is drawn anew each round: whatever
        favours one CPU or one worker process falls on both sides alike."""
        cpus = (self.halves[index % 2], self.halves[1 - index % 2])
        # side_of[k]: the side (0 = A, 1 = B) worker k runs this round.
        side_of = (1, 0) if self.rng.random() < 0.5 else (0, 1)
        pids = [w.proc.pid for w in self.workers]
        for k, w in enumerate(self.workers):
            side, where = self.sides[side_of[k]], cpus[side_of[k]]
            w.send({"cmd": "run", "name": side.name, "cpus": list(where),
                    "companions": [pids[1 - k]],
                    "options": {**_placed(side, where), "warmup": self.warmup,
                                "duration": self.duration, "interval": self.interval}})
        answers, called_off = self._start_together()
        # The side that failed, not the one called off because of it.
        for k in sorted(range(2), key=lambda k: k in called_off):
            if "error" in answers[k]:
                _raise(answers[k]["error"], "ab"[side_of[k]])
        results = [None, None]
        for k, answer in enumerate(answers):
            results[side_of[k]] = Result.from_dict(answer["result"])
        return results[0], results[1], None, cpus[0], cpus[1]

    def _start_together(self):
        """Wait until both sides have loaded (or one answered, having failed),
        start both at one time, and read both answers."""
        workers = self.workers
        ready = [False, False]
        answers = [None, None]
        limit = time.monotonic() + ANSWER_SLACK_S + self.warmup + self.duration
        while not all(ready[k] or answers[k] for k in range(2)):
            fds = [w.ready_fd for k, w in enumerate(workers) if not ready[k] and not answers[k]]
            fds += [w.proc.stdout for k, w in enumerate(workers) if answers[k] is None]
            readable, _, _ = select.select(fds, [], [], max(0.0, limit - time.monotonic()))
            if not readable:
                raise TimeoutError("duet: a side neither loaded nor answered in time")
            for k, w in enumerate(workers):
                if w.ready_fd in readable and os.read(w.ready_fd, 1):
                    ready[k] = True
                if w.proc.stdout in readable:
                    answers[k] = _answer(w)
        failed = any(a is not None for a in answers)
        start = CALL_OFF if failed else time.monotonic_ns() + START_DELAY_NS
        called_off = set()
        for k, w in enumerate(workers):
            if ready[k] and answers[k] is None:
                os.write(w.go_fd, start.to_bytes(8, sys.byteorder))
                if failed:
                    called_off.add(k)
        for k, w in enumerate(workers):
            if answers[k] is None:
                answers[k] = _answer(w)
        return answers, called_off


def _answer(worker):
    line = worker.proc.stdout.readline()
    if not line:
        code = reap(worker.proc)
        raise RuntimeError(f"duet: a side's worker ended without an answer (status {code})")
    return json.loads(line)


def _raise(error, label):
    raise _errors.from_dict(error, lambda message: f"side {label.upper()}: {message}")


def _serve(ready_fd, go_fd):
    """A worker: run what the parent asks, one JSON line in, one out."""
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "quit":
            return 0
        os.sched_setaffinity(0, cmd["cpus"])
        try:
            r = _runner.run_gated(cmd["name"], cmd["options"], (ready_fd, go_fd),
                                  companions=tuple(cmd["companions"]))
            answer = {"result": r.as_dict()}
        except KeyboardInterrupt:
            raise
        except Exception as e:  # reported to the parent, which raises it
            answer = {"error": _errors.to_dict(e)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(_serve(int(sys.argv[1]), int(sys.argv[2])))
    except KeyboardInterrupt:
        sys.exit(130)
