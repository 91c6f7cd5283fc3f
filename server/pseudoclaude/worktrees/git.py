"""Running ``git`` for worktree sessions, and the state of files.

``git`` runs with a fixed identity, without the system or global configuration (the
repository's own ``.git/config`` is read), without hooks, prompts or automatic ``gc``, and with
no ``GIT_*`` variable of the caller's environment. Blocking: run these off the event loop.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterable
from pathlib import Path

from pseudoclaude.worktrees.base import DIR, MISSING, OTHER, WorktreeError

GIT_TIMEOUT = 120.0
CONFIG = (
    "-c", "user.name=PseudoClaude", "-c", "user.email=worktrees@pseudoclaude.invalid",
    "-c", f"core.hooksPath={os.devnull}", "-c", "core.quotepath=off", "-c", "gc.auto=0",
    "-c", "advice.detachedHead=false",
)
NO_GIT = "worktree sessions need the `git` command, which is not on PATH"


def git_available() -> bool:
    return shutil.which("git") is not None


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C",
    })
    return env


def failure(args: Iterable[str], done: subprocess.CompletedProcess[bytes]) -> str:
    """The last line git wrote to stderr (or its exit status)."""
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    name = next(iter(args), "")
    return f"git {name} failed: {lines[-1] if lines else f'exit status {done.returncode}'}"


def git(cwd: Path, *args: str, data: bytes | None = None, check: bool = True
        ) -> subprocess.CompletedProcess[bytes]:
    """Run ``git args`` in ``cwd``; a failure (with ``check``) is a :class:`WorktreeError`."""
    command = shutil.which("git")
    if command is None:
        raise WorktreeError(NO_GIT)
    try:
        done = subprocess.run([command, *CONFIG, *args], input=data, capture_output=True,
                              env=_env(), cwd=cwd, timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorktreeError(f"git {args[0]} failed: {exc}") from None
    if check and done.returncode != 0:
        raise WorktreeError(failure(args, done))
    return done


def split_nul(out: bytes) -> list[str]:
    """The ``-z`` output of git as paths (bytes that are not UTF-8 kept as surrogates)."""
    return [os.fsdecode(part) for part in out.split(b"\0") if part]


def _quote(path: str) -> bytes:
    """A path as one line of ``--stdin-paths`` (C-quoted when it needs to be)."""
    raw = os.fsencode(path)
    if b"\n" not in raw and b"\\" not in raw and not raw.startswith(b'"'):
        return raw
    escaped = (raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
               .replace(b"\n", b"\\n").replace(b"\t", b"\\t"))
    return b'"' + escaped + b'"'


def blob_id(cwd: Path, data: bytes) -> str:
    """Git's id of a blob holding ``data`` (nothing is written)."""
    out = git(cwd, "hash-object", "--no-filters", "--stdin", data=data).stdout
    return out.decode().strip()


def states(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """The state of each path of the work tree at ``root`` (see :mod:`.base`); regular files
    are hashed by one ``git hash-object`` (the repository's attributes and filters apply,
    nothing is written)."""
    result: dict[str, str] = {}
    files: list[tuple[str, bool]] = []
    for path in paths:
        full = root / path
        try:
            info = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            result[path] = MISSING
            continue
        if stat.S_ISLNK(info.st_mode):
            result[path] = "link " + blob_id(root, os.fsencode(os.readlink(full)))
        elif stat.S_ISREG(info.st_mode):
            files.append((path, bool(info.st_mode & stat.S_IXUSR)))
        else:
            result[path] = DIR if stat.S_ISDIR(info.st_mode) else OTHER
    if files:
        listing = b"".join(_quote(path) + b"\n" for path, _ in files)
        ids = git(root, "hash-object", "--stdin-paths", data=listing).stdout.decode().split()
        if len(ids) != len(files):
            raise WorktreeError("git hash-object failed: it did not hash every file")
        for (path, executable), oid in zip(files, ids, strict=True):
            result[path] = ("exec " if executable else "file ") + oid
    return result


def mode_state(mode: str, oid: str) -> str:
    """The state a tree entry (``git ls-tree``/``diff --raw`` mode and id) stands for."""
    if mode == "000000":
        return MISSING
    if mode == "120000":
        return "link " + oid
    if mode == "100755":
        return "exec " + oid
    return "file " + oid
