"""One writer per session, across processes: an exclusive OS lock on ``<session dir>/lock``.

A process holds it while it runs, compacts, undoes or rewinds that session; the lock file then
names the holder's process id. The lock is the operating system's (``fcntl.flock`` on POSIX,
``msvcrt.locking`` on Windows), so it dies with its process: a writer killed with SIGKILL
never leaves a session locked. Two requests of one process on the same session exclude each
other too (each takes the lock on its own open file), so "another writer" means the same
thing within a process and between processes.

:func:`holder` asks, without waiting, whether anyone holds a session's lock (``running`` in
the session list). Blocking, but never waits for a writer: a lock held by one (its pid is in
the file) is :class:`SessionBusy` at once. A lock held with no pid in the file is a
:func:`holder` probe (a shared lock held for microseconds, from any process) or a writer
between taking the lock and writing its pid: :meth:`SessionLock.acquire` tries again for up to
~20 ms before it answers busy, so listing sessions never makes a write fail.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from pseudoclaude.session.store import SessionError

LOCK_FILE = "lock"
PROBE_RETRIES = 20  # a lock held without a pid: tried again this many times,
PROBE_WAIT = 0.001  # this many seconds apart

if os.name == "nt":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int, exclusive: bool) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        with contextlib.suppress(OSError):
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
else:
    import fcntl

    def _try_lock(fd: int, exclusive: bool) -> bool:
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)


class SessionBusy(SessionError):
    """Another writer (another process, or another request of this one) holds the session."""

    def __init__(self, session_id: str, pid: int | None) -> None:
        who = f"process {pid}" if pid else "another process"
        super().__init__(f"session {session_id} is busy: {who} is writing it")
        self.session_id = session_id
        self.pid = pid


def lock_path(session_dir: Path, name: str = LOCK_FILE) -> Path:
    return session_dir / name


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


class SessionLock:
    """The exclusive lock of one session (see the module docstring); a context manager."""

    def __init__(self, session_dir: Path, session_id: str, name: str = LOCK_FILE) -> None:
        """``name``: the lock file's name in ``session_dir`` (a sub-agent's is its own)."""
        self.path = lock_path(session_dir, name)
        self.session_id = session_id
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock now, or raise :class:`SessionBusy` naming the holder's pid. The
        session's folder is created (mode 0700) when missing."""
        if self._fd is not None:
            raise SessionBusy(self.session_id, os.getpid())
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            for _ in range(PROBE_RETRIES):
                if _try_lock(fd, exclusive=True):
                    break
                pid = _read_pid(fd)
                if pid is not None:  # a writer
                    raise SessionBusy(self.session_id, pid)
                time.sleep(PROBE_WAIT)  # a holder() probe, or a writer about to write its pid
            else:
                raise SessionBusy(self.session_id, _read_pid(fd))
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        _unlock(fd)
        os.close(fd)

    def __enter__(self) -> SessionLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder(session_dir: Path, name: str = LOCK_FILE) -> int | None:
    """The pid of the process writing the session now (0 when it is held but the holder is
    not known yet), or ``None`` when nobody holds it. Never waits, never creates anything."""
    try:
        fd = os.open(lock_path(session_dir, name), os.O_RDONLY)
    except OSError:
        return None
    try:
        if _try_lock(fd, exclusive=False):
            _unlock(fd)
            return None
        return _read_pid(fd) or 0
    finally:
        os.close(fd)
