"""A machine made busy on a known, seeded schedule, for the campaigns that
test what benchbpf does on a busy host (ab_power.py --busy): the windows in
which other work took the CPUs are known, so each round can be told whether
the host really disturbed it.

    with Busy("bursts", seed=7) as busy:
        ...                       # the measurement
    busy.windows()                # [(start, end)] of CLOCK_MONOTONIC, s

Each profile spins `spinners` processes (one per CPU where it says None)
during its windows and sleeps between them; every spinner follows the same
schedule, drawn from the seed and the start time, so that the parent knows
the windows without being told.  Run as a script, it is one spinner:

    python3 scripts/_busy.py T0 SEED PROFILE
"""
import math
import os
import random
import subprocess
import sys
import time

#: name -> (spinners (None: one per CPU), mean gap between windows s,
#: window length range s).  "bursts": other work taking every CPU for a
#: while, now and then, as other engineers' benchmarks do on a shared host;
#: "steady": one CPU taken all the time (a gap of 0 and no end).
PROFILES = {
    "bursts": (None, 8.0, (0.3, 2.0)),
    "steady": (1, 0.0, (math.inf, math.inf)),
}


def schedule(profile, seed, t0):
    """The profile's windows from t0 on, an endless iterator of (start,
    end) in the clock of t0: the same for every caller given the same
    arguments."""
    _, gap, (lo, hi) = PROFILES[profile]
    rng = random.Random(seed)
    t = t0
    while True:
        t += rng.expovariate(1.0 / gap) if gap > 0 else 0.0
        length = rng.uniform(lo, hi) if math.isfinite(hi) else math.inf
        yield t, t + length
        t += length


def _spin(t0, seed, profile):
    """One spinner: busy in the schedule's windows, asleep between them."""
    for start, end in schedule(profile, seed, t0):
        now = time.monotonic()
        if now < start:
            time.sleep(start - now)
        x = 0
        while time.monotonic() < end:
            x += 1


class Busy:
    """The profile's spinners, from __enter__ to __exit__ (killed and
    reaped however the block ends); windows() the windows they were given
    until then."""

    def __init__(self, profile, seed):
        if profile not in PROFILES:
            raise ValueError(f"profile={profile!r}: must be one of {', '.join(PROFILES)}")
        self.profile, self.seed = profile, seed
        self.t0 = self.t1 = None
        self._procs = []

    def __enter__(self):
        self.t0 = time.monotonic()
        n = PROFILES[self.profile][0] or os.cpu_count()
        cmd = [sys.executable, os.path.abspath(__file__), repr(self.t0), str(self.seed),
               self.profile]
        try:
            for _ in range(n):
                self._procs.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL))
        except BaseException:
            self._stop()
            raise
        return self

    def _stop(self):
        for p in self._procs:
            p.kill()
        for p in self._procs:
            p.wait()
        self._procs = []

    def __exit__(self, *exc):
        self.t1 = time.monotonic()
        self._stop()
        return False

    def windows(self):
        """The windows the spinners were given between __enter__ and
        __exit__ (or now), clipped to that span: [(start, end)], monotonic s."""
        until = self.t1 if self.t1 is not None else time.monotonic()
        out = []
        for start, end in schedule(self.profile, self.seed, self.t0):
            if start >= until:
                break
            out.append((start, min(end, until)))
        return out


def overlap(span, windows):
    """Seconds of the span (start, end) that the windows cover."""
    a, b = span
    return sum(max(0.0, min(b, e) - max(a, s)) for s, e in windows)


if __name__ == "__main__":
    _spin(float(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
