"""Atomic, race-aware writes into a memory store folder, and what this process wrote there.

Every write goes through :func:`commit`: read the target, compute the new bytes from what was
read, write them to a temporary file in the same folder (mode 0600) and fsync it, **re-read the
target**, and rename over it only if it is still what was read. If somebody changed the file in
the meantime (a hand edit in an editor), the new bytes are computed again from the new content
and the write is retried, so the hand edit is merged rather than overwritten.

:class:`FileStates` remembers, per file name, the state this process last knew (its own writes
and what the watcher saw) and the recent states it wrote itself. The watcher asks it whether a
change on disk was ours (then it is not a hand edit); the writer asks it whether the content it
is about to build on changed since this process last knew it (a hand edit the watcher has not
reported yet). One :class:`FolderState` exists per folder and process (:func:`folder_state`), so
two managers that share the user store (two workspaces of one server) share its lock and know
each other's writes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pseudoclaude.durable import PRIVATE, atomic_write, fsync_dir, write_temp

DIR_MODE = 0o700
FILE_MODE = PRIVATE
COMMIT_ATTEMPTS = 5
"""How often a write is recomputed when the target keeps changing under it."""
_OWN_STATES = 16


class ConflictError(OSError):
    """The target kept changing while it was being written (after every attempt)."""


class Exists(Exception):
    """An exclusive write found the target already there."""


class Skip(Exception):
    """Raised by a transform: leave the file as it is (the reason is the message)."""


def digest(data: bytes | None) -> str | None:
    """The identity of a file's content (None: the file does not exist)."""
    return None if data is None else hashlib.sha256(data).hexdigest()


class FileStates:
    """What this process knows about the files of one folder (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, str | None] = {}
        self._own: dict[str, deque[str | None]] = {}

    def wrote(self, name: str, state: str | None) -> None:
        """This process is about to make ``name`` hold ``state`` (call before the rename)."""
        with self._lock:
            self._known[name] = state
            self._own.setdefault(name, deque(maxlen=_OWN_STATES)).append(state)

    def observe(self, name: str, state: str | None) -> bool:
        """The watcher saw ``name`` in ``state``: True when that is a change this process did
        not make (a hand edit). The state becomes the known one either way."""
        with self._lock:
            if name in self._known and self._known[name] == state:
                return False
            self._known[name] = state
            return state not in self._own.get(name, ())

    def changed_behind(self, name: str, state: str | None) -> bool:
        """The writer read ``name`` in ``state``: True when that differs from the state this
        process last knew (somebody else changed it and nobody has reported it yet). The state
        becomes the known one."""
        with self._lock:
            if name not in self._known:
                self._known[name] = state
                return False
            changed = self._known[name] != state and state not in self._own.get(name, ())
            self._known[name] = state
            return changed

    def seed(self, name: str, state: str | None) -> None:
        """A starting point for a file this process has not seen yet."""
        with self._lock:
            self._known.setdefault(name, state)


@dataclass
class FolderState:
    """The per-process state of one store folder: a write lock and the known file states."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    files: FileStates = field(default_factory=FileStates)


_FOLDERS: dict[str, FolderState] = {}
_FOLDERS_LOCK = threading.Lock()


def folder_state(directory: Path) -> FolderState:
    """The one :class:`FolderState` of ``directory`` in this process."""
    key = os.path.realpath(directory)
    with _FOLDERS_LOCK:
        state = _FOLDERS.get(key)
        if state is None:
            state = _FOLDERS[key] = FolderState()
        return state


def make_private_dir(path: Path) -> None:
    """Create ``path`` and its missing parents, the new folders mode 0700."""
    if path.is_dir():
        return
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise
        else:
            os.chmod(folder, DIR_MODE)


def read_bytes(path: Path, limit: int | None = None) -> bytes | None:
    """The content of ``path`` (at most ``limit`` bytes), None when there is no such file."""
    try:
        with open(path, "rb") as f:
            return f.read() if limit is None else f.read(limit)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError:
        return None




def _write_temp(directory: Path, name: str, data: bytes) -> Path:
    return Path(write_temp(directory, name, data, mode=FILE_MODE))


def _link_exclusive(temp: Path, target: Path) -> None:
    """Put ``temp`` at ``target`` unless ``target`` exists (never overwrites)."""
    try:
        os.link(temp, target)
    except FileExistsError:
        raise Exists(target.name) from None
    except OSError:  # a file system without hard links: check, then rename
        if os.path.lexists(target):
            raise Exists(target.name) from None
        os.replace(temp, target)
        return
    os.unlink(temp)


def replace_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file mode 0600 + fsync + rename + fsync of
    the folder), without any merge: for files only this project writes (proposals)."""
    atomic_write(path, data, mode=FILE_MODE)


def remove_file(path: Path) -> bool:
    """Delete ``path`` durably; False when it was not there."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    fsync_dir(path.parent)
    return True


@dataclass(frozen=True)
class Committed:
    """The outcome of :func:`commit`."""

    changed: bool
    """The file now holds what the transform asked for (False: it already did, or Skip)."""
    data: bytes | None
    """The content written (None: deleted, or unchanged)."""
    hand_edit: bool
    """Somebody else changed the file since this process last knew it (before or during the
    write): it was merged, and should be announced as a hand edit."""
    skipped: str = ""
    """The transform's reason when it raised :class:`Skip`."""


Transform = Callable[[bytes | None], bytes | None]
"""Old content (None: no file) → new content (None: delete the file)."""

BeforeRename = Callable[[Path], None]


def commit(
    path: Path,
    transform: Transform,
    files: FileStates,
    *,
    exclusive: bool = False,
    before_rename: BeforeRename | None = None,
) -> Committed:
    """Replace ``path`` with ``transform(current content)``, atomically and without losing a
    change somebody else made meanwhile (see the module docstring).

    ``exclusive``: the file must not exist; raises :class:`Exists` if it does (or appears).
    ``before_rename`` is called with the target just before the final check (a test seam that
    lets a test edit the file at the worst moment). The caller holds the folder's lock.
    Raises :class:`ConflictError` when the file changed under every attempt.
    """
    directory, name = path.parent, path.name
    hand_edit = False
    for attempt in range(COMMIT_ATTEMPTS):
        base = read_bytes(path)
        if exclusive and base is not None:
            raise Exists(name)
        if attempt == 0 and files.changed_behind(name, digest(base)):
            hand_edit = True
        try:
            new = transform(base)
        except Skip as reason:
            return Committed(False, None, hand_edit, str(reason) or "skipped")
        if new == base:
            return Committed(False, None, hand_edit)
        temp = _write_temp(directory, name, new) if new is not None else None
        try:
            if before_rename is not None:
                before_rename(path)
            current = read_bytes(path)
            if current != base:  # changed since it was read: merge onto the new content
                hand_edit = True
                files.observe(name, digest(current))
                continue
            files.wrote(name, digest(new))
            if temp is None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
            elif exclusive:
                _link_exclusive(temp, path)
                temp = None
            else:
                os.replace(temp, path)
                temp = None
        finally:
            if temp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
        fsync_dir(directory)
        return Committed(True, new, hand_edit)
    raise ConflictError(f"{name} kept changing while it was being written; gave up after "
                        f"{COMMIT_ATTEMPTS} attempts")
