"""Workspace confinement: every path a tool touches lies inside the workspace (SPEC §6).

A path argument is joined to the workspace (an absolute path stays as it is) and resolved with
every symlink followed (``Path.resolve(strict=False)``); the result must be the resolved
workspace or lie under it, else the call fails with ``outside_workspace``. ``..``, absolute
paths elsewhere, symlinks pointing out and ``/proc/self/root/...`` all resolve outside and are
refused. Reads may also land in an *extra read root* (the session's spill folder, which may lie
outside the workspace when the data folder is elsewhere); writes never may.

Checking a resolved path is not enough on its own: a folder could be swapped for a symlink
between the check and the open. So files are opened by walking from the root, one component at
a time, with ``O_NOFOLLOW`` (and ``dir_fd``): a symlink met at that point fails the open
(``ELOOP``, reported as ``outside_workspace``) instead of being followed. The resolved path has
no symlinks in it, so the walk succeeds whenever nothing changed. POSIX only.

Everything here blocks (``resolve`` stats every component): call it from a worker thread.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pseudoclaude.agent.tools.base import ToolError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class Located:
    """A confined path: ``path`` (resolved, absolute) lies under ``root`` at ``rel``."""

    path: Path
    root: Path
    rel: PurePosixPath
    label: str
    """How the path is shown to the model: relative to the workspace (``.`` for the workspace
    itself), or absolute for a file in an extra read root."""

    @property
    def parts(self) -> tuple[str, ...]:
        return self.rel.parts


class Confinement:
    """The workspace (and the extra read roots) that tool paths are confined to."""

    def __init__(self, workspace: Path, extra_read_roots: Iterable[Path] = ()) -> None:
        self.workspace = Path(workspace).resolve()
        roots: list[Path] = []
        for root in extra_read_roots:
            resolved = Path(root).resolve()
            if resolved != self.workspace and resolved not in roots:
                roots.append(resolved)
        self.extra_read_roots: tuple[Path, ...] = tuple(roots)

    def locate(self, raw: str, *, write: bool = False, field: str = "path",
               tool: str = "") -> Located:
        """Resolve a path argument, or raise :class:`ToolError`.

        ``write`` restricts the result to the workspace (extra read roots are read-only).
        Errors: ``invalid_arguments`` (empty, NUL, too long), ``outside_workspace``.
        """
        prefix = f"{tool}: " if tool else ""
        if not raw:
            raise ToolError("invalid_arguments", f"{prefix}`{field}` must not be empty")
        if "\x00" in raw:
            raise ToolError("invalid_arguments",
                            f"{prefix}`{field}` must not contain a NUL character")
        candidate = Path(raw)
        joined = candidate if candidate.is_absolute() else self.workspace / candidate
        try:
            resolved = joined.resolve(strict=False)
        except RuntimeError as exc:  # a symlink loop (Python 3.11 raises RuntimeError)
            raise ToolError("invalid_arguments",
                            f"{prefix}`{field}` {raw!r} is a symbolic link loop") from exc
        except OSError as exc:
            raise os_error(exc, raw) from exc
        roots = (self.workspace,) if write else (self.workspace, *self.extra_read_roots)
        for root in roots:
            if resolved == root or resolved.is_relative_to(root):
                rel = PurePosixPath(resolved.relative_to(root).as_posix())
                label = rel.as_posix() if root == self.workspace else str(resolved)
                return Located(resolved, root, rel, label)
        where = "the workspace" if write or not self.extra_read_roots else \
            "the workspace and the session's tool-result folder"
        raise ToolError(
            "outside_workspace",
            f"{prefix}{raw!r} resolves to {resolved}, outside {where} ({self.workspace}); "
            "only paths inside the workspace are allowed",
        )

    def label(self, path: Path) -> str:
        """How a resolved path under the workspace is shown (relative, POSIX)."""
        try:
            return path.relative_to(self.workspace).as_posix()
        except ValueError:
            return str(path)


def open_dir(root: Path, parts: Sequence[str], *, create: bool = False) -> int:
    """A file descriptor of the folder ``root/parts...``, opened without following any symlink
    below ``root``; with ``create`` the missing folders are made. The caller closes it."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except NotADirectoryError:
                # O_DIRECTORY | O_NOFOLLOW on a symlink fails with ENOTDIR on Linux
                if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise OSError(errno.ELOOP, "symbolic link in the path", part) from None
                raise
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(located: Located, flags: int = os.O_RDONLY) -> int:
    """A file descriptor of ``located``, opened by a symlink-free walk from its root
    (``O_NOFOLLOW | O_CLOEXEC`` added). The caller closes it."""
    parts = located.parts
    if not parts:
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(located.path))
    dir_fd = open_dir(located.root, parts[:-1])
    try:
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def os_error(exc: OSError, label: str) -> ToolError:
    """A :class:`ToolError` for an ``OSError`` met while working on ``label``."""
    if isinstance(exc, FileNotFoundError):
        return ToolError("not_found", f"{label}: no such file or folder")
    if isinstance(exc, IsADirectoryError):
        return ToolError("is_directory", f"{label} is a folder, not a file")
    if isinstance(exc, NotADirectoryError):
        return ToolError("not_found", f"{label}: a parent of this path is a file, not a folder")
    if isinstance(exc, PermissionError):
        return ToolError("permission_denied", f"{label}: permission denied")
    if exc.errno == errno.ELOOP:
        return ToolError("outside_workspace",
                         f"{label}: a symbolic link appeared in the path while it was used")
    if exc.errno == errno.ENAMETOOLONG:
        return ToolError("invalid_arguments", f"{label}: the path is too long")
    reason = exc.strerror or type(exc).__name__
    return ToolError("io_error", f"{label}: {reason}")
