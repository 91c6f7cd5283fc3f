"""Small durability helpers shared by the session log, spill files, memory notes and the file
tools: the one atomic write (a temporary file in the same folder, ``fsync``, rename over the
target, ``fsync`` of the folder) and its parts."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

PRIVATE = 0o600
PRIVATE_DIR = 0o700
"""The mode of the files only this project reads (memory notes, proposals, spill files)."""

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def fsync_dir(path: Path | str) -> None:
    """Make a folder's entries (a created or renamed file) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_name(name: str) -> str:
    """A fresh hidden name for the temporary file of ``name``: ``.<name>.<random>.tmp``."""
    return f".{name[:200]}.{secrets.token_hex(6)}.tmp"


def is_temp_of(name: str, candidate: str) -> bool:
    """Whether ``candidate`` is a name :func:`temp_name` gives the temporary file of ``name``
    (one a crash may have left behind)."""
    prefix = f".{name[:200]}."
    middle = candidate[len(prefix):-len(".tmp")] if candidate.startswith(prefix) \
        and candidate.endswith(".tmp") else ""
    return len(middle) == 12 and all(c in "0123456789abcdef" for c in middle)


def write_temp(
    directory: Path | str, name: str, data: bytes, *,
    mode: int | None = PRIVATE, dir_fd: int | None = None,
) -> str:
    """Write ``data`` to a new temporary file next to ``name`` and fsync it; returns its path.

    The file is in ``directory`` (or, with ``dir_fd``, in the folder open as ``dir_fd``, and the
    returned name is relative to it). It is created exclusively, never through a symbolic link,
    with ``mode`` (``None``: ``0o666`` less the umask). On failure nothing is left behind.
    """
    while True:
        temp = temp_name(name) if dir_fd is not None else os.path.join(directory, temp_name(name))
        try:
            fd = os.open(temp, _TEMP_FLAGS, 0o666 if mode is None else mode, dir_fd=dir_fd)
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
        break
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if mode is not None:
                os.fchmod(fd, mode)  # exactly ``mode``, whatever the umask
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    return temp


def atomic_write(
    path: Path | str, data: bytes, *,
    mode: int | None = PRIVATE, dir_fd: int | None = None, folder_sync_optional: bool = False,
) -> None:
    """Replace ``path`` with ``data`` atomically: a reader sees the old content or the new one,
    and after a crash the file holds one of them (temp file + fsync + rename + fsync of the
    folder).

    With ``dir_fd``, ``path`` is a plain name in the folder open as ``dir_fd``. ``mode`` as in
    :func:`write_temp`. ``folder_sync_optional``: a folder that cannot be fsynced (some file
    systems refuse) is not an error once the rename is done.
    """
    directory, name = (".", os.fspath(path)) if dir_fd is not None else os.path.split(path)
    temp = write_temp(directory or ".", name, data, mode=mode, dir_fd=dir_fd)
    try:
        os.replace(temp, path, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    try:
        if dir_fd is not None:
            os.fsync(dir_fd)
        else:
            fsync_dir(directory or ".")
    except OSError:
        if not folder_sync_optional:
            raise


def make_private_dir(path: Path) -> bool:
    """Create ``path`` (and parents) mode 0700; True when ``path`` itself was created."""
    if path.is_dir():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(path, PRIVATE_DIR)
    except FileExistsError:
        if not path.is_dir():
            raise
        return False
    os.chmod(path, PRIVATE_DIR)  # in case the umask was stricter than usual about the owner
    return True
