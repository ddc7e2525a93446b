"""Seeing other benchbpf runs on the same machine.

Two benchmarks running at once compete for CPUs, caches and kernel locks,
so both figures are disturbed.  Each run holds an flock'ed marker file for
its whole length; a run looks for markers held by other processes when it
starts and when it ends, warns, and counts them in its metadata.  A run that
finds another one running also appends its pid to that one's marker, so the
run that started first learns about one that came and went meanwhile.
Detection is best effort: a run never fails because of it.
"""
import itertools
import os
import tempfile
import warnings

try:
    import fcntl
except ImportError:  # pragma: no cover - not Linux
    fcntl = None

__all__ = ["ConcurrentRunWarning", "RunMarker", "lock_dir", "running"]

_SEQ = itertools.count()


class ConcurrentRunWarning(RuntimeWarning):
    """Another benchbpf process ran at the same time: both measurements are disturbed."""


def lock_dir():
    """Where markers live: $BENCHBPF_LOCK_DIR, /run/benchbpf for root, else a per-user /tmp dir."""
    d = os.environ.get("BENCHBPF_LOCK_DIR")
    if d:
        return d
    if os.access("/run", os.W_OK):
        return "/run/benchbpf"
    return os.path.join(tempfile.gettempdir(), f"benchbpf-{os.getuid()}")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _held_markers(directory, skip=()):
    """Yield (pid, fd) for each marker in directory that a live run holds
    (fd open for appending where allowed, closed after the caller's turn);
    remove those left by killed processes."""
    for entry in os.listdir(directory):
        pid, dash, _ = entry.partition("-")
        if not dash or not entry.endswith(".lock") or not pid.isdigit() or int(pid) in skip:
            continue
        pid = int(pid)
        path = os.path.join(directory, entry)
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        except PermissionError:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                yield pid, fd
                continue
            fcntl.flock(fd, fcntl.LOCK_UN)
            if not _alive(pid):   # left by a process that was killed
                try:
                    os.unlink(path)
                except OSError:
                    pass
        finally:
            os.close(fd)


def running():
    """The pids of the benchbpf runs going on now (other processes'), sorted;
    None where runs cannot be seen (no flock, or no marker directory access)."""
    if fcntl is None:
        return None
    try:
        return sorted({pid for pid, _ in _held_markers(lock_dir(), skip={os.getpid()})})
    except FileNotFoundError:
        return []
    except OSError:
        return None


class RunMarker:
    """Context manager: holds this run's marker, collects the other runs seen."""

    def __init__(self, name, stacklevel=4, companions=()):
        self.name = name
        # Processes meant to run alongside (a duet's other side): not counted.
        self.companions = frozenset(companions)
        # Where a ConcurrentRunWarning points: the caller of run().
        self.stacklevel = stacklevel
        self.fd = -1
        self.path = None
        self.dir = None
        self.others = set()
        self._warned = set()
        self.detected = False

    def __enter__(self):
        if fcntl is None:
            return self
        try:
            self.dir = lock_dir()
            os.makedirs(self.dir, mode=0o755, exist_ok=True)
            self.path = os.path.join(self.dir, f"{os.getpid()}-{next(_SEQ)}.lock")
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                              0o644)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            self.detected = True
            self._scan()
        except OSError:
            self._release()
        except BaseException:
            # Ctrl-C half-way: leave no file and no descriptor behind.
            self._release()
            raise
        self._warn()
        return self

    def __exit__(self, et, ev, tb):
        if self.fd >= 0 and et is None:
            try:
                self._scan()
                self._read_visitors()
            except OSError:
                pass
        self._release()
        if et is None:
            self._warn()
        return False

    @property
    def count(self):
        """Other runs seen, or None where detection was impossible."""
        return len(self.others) if self.detected else None

    def _scan(self):
        me = os.getpid()
        for pid, fd in _held_markers(self.dir, skip={me} | self.companions):
            # this process's runs are serialised by the core; companions
            # run alongside by design
            self.others.add(pid)
            try:
                os.write(fd, f"{me}\n".encode())   # tell it we were here
            except OSError:
                pass

    def _read_visitors(self):
        os.lseek(self.fd, 0, os.SEEK_SET)
        data = b""
        while True:
            chunk = os.read(self.fd, 4096)
            if not chunk:
                break
            data += chunk
        for line in data.split():
            if line.isdigit() and int(line) != os.getpid() \
                    and int(line) not in self.companions:
                self.others.add(int(line))

    def _release(self):
        if self.fd >= 0:
            try:
                os.unlink(self.path)
            except OSError:
                pass
            os.close(self.fd)
            self.fd = -1

    def _warn(self):
        new = self.others - self._warned
        if not new:
            return
        self._warned |= new
        pids = ", ".join(str(p) for p in sorted(new))
        warnings.warn(
            f"{self.name}: another benchbpf run is going on at the same time (pid {pids}): "
            "runs compete for CPUs and kernel resources, so both measurements are disturbed",
            ConcurrentRunWarning, stacklevel=self.stacklevel)
