"""The shadow Git repository of a workspace: snapshots of its files, and putting them back.

The repository lives in ``<dataDir>/checkpoints/`` (``GIT_DIR``) with the workspace as its work
tree and an index of its own, so the user's ``.git``, index and configuration are never read or
touched. The workspace's ignore rules (``.gitignore`` files, the user's global excludes are not
read) apply; the data folder itself, every ``.git`` folder and files over
:data:`MAX_FILE_BYTES` are left out of each snapshot and reported as skipped. The repository has
its own identity (no ``user.name`` of the user's is needed) and never runs ``git gc`` by itself.

A snapshot is a commit whose parent is the previous snapshot, kept alive by the ref
``refs/pseudoclaude/head``; callers keep the commit ids (the session log's ``checkpoint``
lines). Blocking: every call runs ``git``; run them off the event loop.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pseudoclaude.durable import fsync_dir

MAX_FILE_BYTES = 1024 * 1024
"""Files larger than this are not snapshotted (and so never restored)."""
HEAD_REF = "refs/pseudoclaude/head"
IDENTITY = ("-c", "user.name=PseudoClaude", "-c", "user.email=checkpoints@pseudoclaude.invalid")
GIT_TIMEOUT = 120.0


class CheckpointError(Exception):
    """``git`` is missing, or the shadow repository cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A snapshot: its commit id and the files left out of it (over the size limit)."""

    ref: str
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Change:
    """A path (relative, ``/``) that differs between two snapshots, as what going back to the
    older one does to it: ``restore`` (changed since: written back), ``delete`` (created
    since: removed) or ``create`` (deleted since: written again)."""

    path: str
    action: str


def git_available(git: str = "git") -> bool:
    return shutil.which(git) is not None


class ShadowRepo:
    """One workspace's shadow repository (see the module docstring)."""

    def __init__(self, workspace: Path, git_dir: Path, *, excluded: Sequence[Path] = (),
                 max_file_bytes: int = MAX_FILE_BYTES, git: str = "git") -> None:
        self.workspace = workspace.resolve()
        self.git_dir = git_dir
        self.max_file_bytes = max_file_bytes
        self._git_cmd = git
        self._excluded = [p.resolve() for p in excluded]

    # -- git ---------------------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update({
            "GIT_DIR": str(self.git_dir), "GIT_WORK_TREE": str(self.workspace),
            "GIT_INDEX_FILE": str(self.git_dir / "index"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C",
        })
        return env

    def _git(self, *args: str, data: bytes | None = None, check: bool = True
             ) -> subprocess.CompletedProcess[bytes]:
        if not git_available(self._git_cmd):
            raise CheckpointError("checkpoints need the `git` command, which is not on PATH")
        command = [self._git_cmd, *IDENTITY, "-c", "core.autocrlf=false",
                   "-c", "core.quotepath=off", "-c", "gc.auto=0", *args]
        try:
            done = subprocess.run(command, input=data, capture_output=True, env=self._env(),
                                  cwd=self.workspace, timeout=GIT_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CheckpointError(f"git {args[0]} failed: {exc}") from None
        if check and done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed: {message[-1] if message else done}")
        return done

    # -- the repository ----------------------------------------------------------------------
    def ready(self) -> bool:
        """Whether the repository exists and git can read it."""
        if not (self.git_dir / "HEAD").is_file():
            return False
        return self._git("rev-parse", "--git-dir", check=False).returncode == 0

    def init(self) -> None:
        """Create the repository (idempotent) and its exclude rules."""
        if not self.ready():
            self.git_dir.mkdir(parents=True, exist_ok=True)
            self._git("init", "--quiet")
        # The folder ignores itself: the user's own repository never shows (or commits) the
        # snapshots, whatever the data folder's .gitignore says.
        ignore = self.git_dir.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Written by PseudoClaude: file snapshots stay on this "
                              "machine.\n*\n", encoding="utf-8")
        rules = ["# the shadow repository's own rules: written by PseudoClaude", ".git/"]
        for path in [*self._excluded, self.git_dir.resolve()]:
            if path.is_relative_to(self.workspace) and path != self.workspace:
                rules.append("/" + path.relative_to(self.workspace).as_posix() + "/")
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "exclude").write_text("\n".join(rules) + "\n", encoding="utf-8")

    def head(self) -> str | None:
        done = self._git("rev-parse", "--verify", "--quiet", HEAD_REF + "^{commit}",
                         check=False)
        return done.stdout.decode().strip() or None if done.returncode == 0 else None

    # -- snapshots ---------------------------------------------------------------------------
    def _stage(self) -> list[str]:
        """The index made the work tree's (ignore rules applied); the too-large files are left
        out of it. Returns those."""
        self._git("add", "--all", "--ignore-errors", "--", ".", check=False)
        listed = self._git("ls-files", "-z", "--cached").stdout.split(b"\0")
        skipped = []
        for raw in listed:
            if not raw:
                continue
            path = raw.decode("utf-8", "surrogateescape")
            try:
                size = (self.workspace / path).stat().st_size
            except OSError:
                continue
            if size > self.max_file_bytes:
                skipped.append(path)
        if skipped:
            self._git("rm", "--cached", "--quiet", "--ignore-unmatch", "--pathspec-from-file=-",
                      "--pathspec-file-nul", "--", data=b"\0".join(
                          p.encode("utf-8", "surrogateescape") for p in skipped))
        return sorted(skipped)

    def snapshot(self, message: str) -> Snapshot:
        """Snapshot the work tree now (a commit after the previous one, even when nothing
        changed)."""
        self.init()
        skipped = self._stage()
        tree = self._git("write-tree").stdout.decode().strip()
        parent = self.head()
        args = ["commit-tree", tree, "-m", message]
        if parent:
            args += ["-p", parent]
        commit = self._git(*args).stdout.decode().strip()
        self._git("update-ref", HEAD_REF, commit)
        return Snapshot(ref=commit, skipped=skipped)

    def exists(self, ref: str) -> bool:
        return self._git("cat-file", "-e", ref + "^{commit}", check=False).returncode == 0

    def changes(self, older: str, newer: str) -> list[Change]:
        """What differs between two snapshots, as what it takes to go back to ``older``."""
        out = self._git("diff-tree", "-r", "-z", "--no-renames", "--name-status", older,
                        newer).stdout.split(b"\0")
        changes = []
        for status, raw in zip(out[0::2], out[1::2], strict=False):
            if not status:
                continue
            path = raw.decode("utf-8", "surrogateescape")
            action = {b"A": "delete", b"D": "create"}.get(status[:1], "restore")
            changes.append(Change(path, action))
        return changes

    def changed_since(self, ref: str) -> set[str]:
        """The paths whose work-tree state differs from snapshot ``ref`` now (the index is
        brought up to date with the work tree, nothing is committed)."""
        self.init()
        self._stage()
        tree = self._git("write-tree").stdout.decode().strip()
        return {c.path for c in self.changes(ref, tree)}

    def content(self, ref: str, path: str) -> bytes | None:
        """A file's bytes in snapshot ``ref`` (None: not in it)."""
        done = self._git("cat-file", "blob", f"{ref}:{path}", check=False)
        return done.stdout if done.returncode == 0 else None

    def restore(self, ref: str, paths: Iterable[str]) -> list[str]:
        """Put ``paths`` back as they are in snapshot ``ref``: written whole (a temporary file
        renamed over it, so each file is old or new, never torn) or removed when the snapshot
        does not have it. Returns the paths changed."""
        done = []
        for path in paths:
            target = self.workspace / path
            if not target.resolve().is_relative_to(self.workspace):
                continue  # never outside the workspace
            data = self.content(ref, path)
            if data is None:
                if target.is_file() or target.is_symlink():
                    target.unlink()
                    done.append(path)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            mode = target.stat().st_mode & 0o7777 if target.is_file() else 0o644
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                       suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fchmod(f.fileno(), mode)
                    os.fsync(f.fileno())
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            fsync_dir(target.parent)
            done.append(path)
        return done
