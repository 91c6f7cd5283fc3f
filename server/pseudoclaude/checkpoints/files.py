"""Putting one file of a checkpoint back: written whole (a temporary file renamed over it, its
mode kept, so after a crash it is its old or its new content, never torn) or removed; never
outside the workspace. Shared by both kinds of checkpoints."""

from __future__ import annotations

import stat
from pathlib import Path

from pseudoclaude.durable import atomic_write

NEW_FILE_MODE = 0o644


def inside(workspace: Path, path: str) -> Path | None:
    """The file ``path`` (relative, ``/``) names in ``workspace``, or None when it resolves
    outside it (symbolic links followed)."""
    target = workspace / path
    return target if target.resolve().is_relative_to(workspace) else None


def put_back(workspace: Path, path: str, data: bytes | None) -> bool:
    """Make ``path`` hold ``data`` (None: not exist). Returns whether anything was done."""
    target = inside(workspace, path)
    if target is None:
        return False
    if data is None:
        if target.is_file() or target.is_symlink():
            target.unlink()
            return True
        return False
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode) if target.is_file() \
            else NEW_FILE_MODE
    except OSError:
        mode = NEW_FILE_MODE
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, data, mode=mode)
    return True
