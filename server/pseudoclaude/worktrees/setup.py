"""Making a new worktree ready to work in: the workspace's own settings copied in, the folders
of installed dependencies linked, and the data folder's ``.gitignore`` ignoring ``worktrees/``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CONFIG_DIR = ".PseudoClaude"
COPIED = ("config.yaml", "permissions.local.yaml", "hooks.yaml", "agents", "skills")
"""What of the workspace's ``.PseudoClaude/`` is copied into the worktree's."""
LINKED = ("node_modules", ".venv", "vendor")
"""Folders of the workspace linked from the worktree (when the worktree has none of its own)."""
FILE_MODE = 0o600
GITIGNORE = ("# Written by PseudoClaude: session logs, pending memory proposals and session "
             "worktrees stay on this machine.\nsessions/\nproposals/\nworktrees/\n")
IGNORE_LINE = "worktrees/"


def ignore_worktrees(data_dir: Path) -> None:
    """Make ``<dataDir>/.gitignore`` ignore ``worktrees/``: the line is appended to the file,
    or the file is written (0600) when there is none."""
    gitignore = data_dir / ".gitignore"
    try:
        fd = os.open(gitignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        text = gitignore.read_text(encoding="utf-8", errors="replace")
        lines = {line.strip() for line in text.splitlines()}
        if not lines & {"worktrees/", "worktrees", "/worktrees/", "/worktrees"}:
            with gitignore.open("a", encoding="utf-8") as f:
                f.write(("" if not text or text.endswith("\n") else "\n") + IGNORE_LINE + "\n")
        return
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(GITIGNORE)


def _files(folder: Path, root: Path) -> list[str]:
    """The files and links under ``folder`` (symbolic links not followed), relative to
    ``root``."""
    found: list[str] = []
    for parent, dirs, names in os.walk(folder):
        here = Path(parent)
        found.extend((here / name).relative_to(root).as_posix() for name in names)
        # a link to a folder is an entry of its own, not walked into
        found.extend((here / d).relative_to(root).as_posix() for d in dirs
                     if (here / d).is_symlink())
    return found


def prepare(workspace: Path, target: Path, root: Path) -> list[str]:
    """Copy the settings and link the dependency folders of ``workspace`` into ``target`` (the
    same folder in the worktree whose root is ``root``). Returns the paths written, relative
    to ``root``."""
    written: list[str] = []
    source_dir, target_dir = workspace / CONFIG_DIR, target / CONFIG_DIR
    for name in COPIED:
        source, copy = source_dir / name, target_dir / name
        if source.is_dir():
            shutil.copytree(source, copy, symlinks=True, dirs_exist_ok=True)
            written.extend(_files(copy, root))
        elif source.is_file():
            target_dir.mkdir(parents=True, exist_ok=True)
            if copy.is_symlink():
                copy.unlink()
            shutil.copy2(source, copy)
            written.append(copy.relative_to(root).as_posix())
    for name in LINKED:
        source, link = workspace / name, target / name
        # a folder the repository has (a committed vendor/) is the worktree's own
        if source.exists() and not os.path.lexists(link):
            os.symlink(source.resolve(), link, target_is_directory=source.is_dir())
            written.append(link.relative_to(root).as_posix())
    return written
