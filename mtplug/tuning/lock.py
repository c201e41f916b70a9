"""One tuning run per working directory: ``DIR/tune.lock``.

The lock is an ``flock`` on ``DIR/tune.lock``, which the kernel releases when the holder
dies (kill -9, a crash); the file names the holder (pid, host, start time) for the error a
second run prints and for people looking at a workdir shared by cluster nodes over NFS
(where flock goes through the file system's lock manager). A run that ends in any way the
process survives (success, an error, Ctrl-C, SIGTERM) removes the file; one that was killed
leaves it, with its flock free: the next run takes it over with one line. A lock whose flock
is held but whose holder is on this machine and gone (another process inherited the
descriptor) is taken over as well.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from typing import Callable

from ..errors import InputError

LOCK_FILE = "tune.lock"

#: how long a second run waits for the holder's name to appear in a lock file it found held
#: (the holder writes it right after taking the flock) or for a gone holder's name to change
_NAME_WAIT_SECONDS = 1.0


def _holder_text(holder: dict) -> str:
    if not holder:
        return "a process whose name it does not hold yet"
    return (f"pid {holder.get('pid')} on host {holder.get('host')}"
            + (f", started {holder['started']}" if holder.get("started") else ""))


def _read_holder(fd: int) -> dict:
    """The holder recorded in the open lock file (``{}`` when empty or unreadable)."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 4096).decode("utf-8", "replace")
        holder = json.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _gone_here(holder: dict) -> bool:
    """Whether ``holder`` ran on this machine and its process is gone."""
    if holder.get("host") != socket.gethostname() or not isinstance(holder.get("pid"), int):
        return False
    try:
        os.kill(holder["pid"], 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class WorkdirLock:
    """The lock of one working directory, held from :func:`acquire` to :meth:`release`."""

    def __init__(self, path: str, fd: int):
        """path: the lock file; fd: its open descriptor, which holds the flock."""
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        """Remove the lock file (if it is still ours) and drop the flock; idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            if os.path.samestat(os.fstat(fd), os.stat(self.path)):
                os.remove(self.path)
        os.close(fd)


def acquire(workdir: str, warn: Callable[[str], None]) -> WorkdirLock:
    """Take ``workdir``'s lock, or raise InputError naming its holder (pid, host) when another
    run holds it. A stale lock is taken over with one line through ``warn``. OSErrors of
    the file system (a read-only or forbidden workdir) propagate."""
    path = os.path.join(workdir, LOCK_FILE)
    for _ in range(20):      # each retry follows a holder that removed or replaced the file meanwhile
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            if not _try_flock(fd):
                holder = _held_by(fd)
                if not _gone_here(holder):
                    raise InputError(f"another mtplug tune run works in this directory ({_holder_text(holder)}); "
                                     f"wait for it to end, or choose another --workdir", path)
                # its descriptor outlived it in another process: put a fresh file in its place
                warn(f"{path}: took over the lock of {_holder_text(holder)}, which is gone "
                     f"(the lock file was still open in another process)")
                with contextlib.suppress(FileNotFoundError):
                    if os.path.samestat(os.fstat(fd), os.stat(path)):
                        os.remove(path)
                continue
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(path))
            except FileNotFoundError:
                same = False
            if not same:     # the holder removed it between our open and flock
                continue
            stale = _read_holder(fd)
            if stale:
                warn(f"{path}: took over the stale lock of {_holder_text(stale)} (its lock was free: the run was "
                     f"killed or its machine restarted)")
            mine = {"pid": os.getpid(), "host": socket.gethostname(),
                    "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(mine) + "\n").encode(), 0)
            os.fsync(fd)
            lock, fd = WorkdirLock(path, fd), -1
            return lock
        finally:
            if fd >= 0:
                os.close(fd)
    raise InputError("could not take the lock: other runs keep replacing it", path)


def _held_by(fd: int) -> dict:
    """The holder of a lock file whose flock is held: waits briefly while it is empty (a
    holder that has just taken it), and re-reads a gone holder's name (a run that has just
    taken the lock over may not have written its own yet)."""
    deadline = time.monotonic() + _NAME_WAIT_SECONDS
    holder = _read_holder(fd)
    while (not holder or _gone_here(holder)) and time.monotonic() < deadline:
        time.sleep(0.05)
        holder = _read_holder(fd)
    return holder
