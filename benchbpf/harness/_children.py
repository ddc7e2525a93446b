"""Reaping child processes on paths that run after a signal.

Popen.poll() and Popen.wait(timeout) take a lock around waitpid(). An
exception a signal handler raises just after the lock was taken (Ctrl-C,
or SIGTERM stopping a run as Ctrl-C does) leaves it held for good, and
every later wait() without a timeout then blocks forever. Cleanup after
such a signal reaps here instead, with waitpid() itself."""
import os
import time


def reap(proc, timeout=None):
    """The exit status of the subprocess.Popen `proc` once it has ended
    (reaping it and setting proc.returncode), or None while it still runs
    after `timeout` seconds (None: as long as it takes; 0: only look)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.001
    while proc.returncode is None:
        try:
            pid, status = os.waitpid(proc.pid, os.WNOHANG)
        except ChildProcessError:
            # Reaped by someone else (or SIGCHLD ignored) and its status
            # gone: ended, as Popen itself says then.
            if proc.returncode is None:
                proc.returncode = 0
            break
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        if deadline is not None and time.monotonic() >= deadline:
            return None
        time.sleep(pause)
        pause = min(2 * pause, 0.05)
    return proc.returncode
