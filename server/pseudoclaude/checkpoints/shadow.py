"""The shadow Git repository of a workspace: snapshots of its files, and putting them back.

The repository lives in ``<dataDir>/checkpoints/shadow.git`` (``GIT_DIR``) with the workspace as
its work tree and an index of its own, so the user's ``.git``, index and configuration are never
read or touched. The workspace's ignore rules (``.gitignore`` files; the user's global excludes
are not read) apply; the data folder itself, every ``.git`` folder and files over
:data:`MAX_FILE_BYTES` are left out of each snapshot and reported as skipped. The repository has
its own identity (no ``user.name`` of the user's is needed) and never runs ``git gc`` by itself:
:meth:`ShadowRepo.prune` does, when sessions are cleaned up.

A snapshot is a commit whose parent is the previous snapshot of the same session, kept alive by
the ref ``refs/pseudoclaude/sessions/<session id>``; callers keep the commit ids (the session
log's ``checkpoint`` lines). Deleting a session's ref (:meth:`ShadowRepo.prune`) lets ``git gc``
drop what only it kept.

Incremental: a snapshot asks git for the paths that are new, modified or deleted since the
index (one stat walk, with git's untracked cache) and stages only those, so its cost follows
the tree's size only as far as a stat walk does. Blocking: every call runs ``git``; run them off
the event loop.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from pseudoclaude.checkpoints.base import Change, CheckpointError, Snapshot
from pseudoclaude.checkpoints.files import put_back
from pseudoclaude.checkpoints.status import Coverage

MAX_FILE_BYTES = 1024 * 1024
"""Files larger than this are not snapshotted (and so never restored)."""
SESSION_REFS = "refs/pseudoclaude/sessions/"
HEAD_REF = "refs/pseudoclaude/head"
"""The chain of snapshots taken outside any session."""
IDENTITY = ("-c", "user.name=PseudoClaude", "-c", "user.email=checkpoints@pseudoclaude.invalid")
GIT_TIMEOUT = 120.0
STALE_LOCK = 3600.0
INDEX_CONFIG = (("core.splitIndex", "true"), ("index.version", "4"),
                ("core.untrackedCache", "true"))
"""For every git call but staging (hashing a large tree the first time may take longer)."""
PRUNE_AFTER = "1.hour.ago"
"""``git gc`` keeps unreferenced objects younger than this: a snapshot another process is
writing (its objects not yet under a ref) is never pruned."""
_SAFE_REF = re.compile(r"[^A-Za-z0-9._-]")


def git_available(git: str = "git") -> bool:
    return shutil.which(git) is not None


def _nul(paths: Iterable[bytes]) -> bytes:
    return b"\0".join(paths)


class ShadowRepo:
    """One workspace's shadow repository (see the module docstring)."""

    covers: Coverage = "all"
    """What it checkpoints: every file (what commands change included)."""

    def __init__(self, workspace: Path, folder: Path, *, excluded: Sequence[Path] = (),
                 max_file_bytes: int = MAX_FILE_BYTES, git: str = "git") -> None:
        self.workspace = workspace.resolve()
        self.folder = folder
        """``<dataDir>/checkpoints``: the repository, its journal and its ``.gitignore``."""
        self.git_dir = folder / "shadow.git"
        self.max_file_bytes = max_file_bytes
        self._git_cmd = git
        self._excluded = [p.resolve() for p in excluded]
        self._lock = threading.Lock()  # one snapshot or prune at a time in this process
        self._initialised = False
        self._heads: dict[str, str] = {}  # ref -> the commit this process last put there

    # -- git ---------------------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update({
            "GIT_DIR": str(self.git_dir), "GIT_WORK_TREE": str(self.workspace),
            "GIT_INDEX_FILE": str(self.git_dir / "index"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0", "GIT_LITERAL_PATHSPECS": "1", "LC_ALL": "C",
        })
        return env

    def _git(self, *args: str, data: bytes | None = None, check: bool = True,
             timeout: float | None = GIT_TIMEOUT) -> subprocess.CompletedProcess[bytes]:
        if not git_available(self._git_cmd):
            raise CheckpointError("checkpoints need the `git` command, which is not on PATH")
        command = [self._git_cmd, *IDENTITY, "-c", "core.autocrlf=false",
                   "-c", "core.quotepath=off", "-c", "gc.auto=0", *args]
        try:
            done = subprocess.run(command, input=data, capture_output=True, env=self._env(),
                                  cwd=self.workspace, timeout=timeout, check=False)
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
        """Create the repository (idempotent) and its exclude rules; remove an index lock a
        crashed git left behind (older than any git call may take)."""
        if not self.ready():
            self.git_dir.mkdir(parents=True, exist_ok=True)
            self._git("init", "--quiet")
        # a large index is written as a small split part on top of a shared one (at 100k
        # files: 100 ms instead of 190 ms a snapshot); version 4 compresses its paths
        for key, value in INDEX_CONFIG:
            self._git("config", key, value)
        lock = self.git_dir / "index.lock"
        with contextlib.suppress(OSError):
            if time.time() - lock.stat().st_mtime > STALE_LOCK:
                lock.unlink()
        # The folder ignores itself: the user's own repository never shows (or commits) the
        # snapshots, whatever the data folder's .gitignore says.
        ignore = self.folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Written by PseudoClaude: file snapshots stay on this "
                              "machine.\n*\n", encoding="utf-8")
        rules = ["# the shadow repository's own rules: written by PseudoClaude", ".git/"]
        for path in [*self._excluded, self.folder.resolve()]:
            if path.is_relative_to(self.workspace) and path != self.workspace:
                rules.append("/" + path.relative_to(self.workspace).as_posix() + "/")
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        exclude = info / "exclude"
        text = "\n".join(rules) + "\n"
        if not exclude.is_file() or exclude.read_text(encoding="utf-8") != text:
            exclude.write_text(text, encoding="utf-8")

    @staticmethod
    def _ref(session: str) -> str:
        return SESSION_REFS + _SAFE_REF.sub("_", session) if session else HEAD_REF

    def head(self, session: str = "") -> str | None:
        """The latest snapshot of ``session`` (``""``: of those taken outside a session)."""
        done = self._git("rev-parse", "--verify", "--quiet", self._ref(session) + "^{commit}",
                         check=False)
        return done.stdout.decode().strip() or None if done.returncode == 0 else None

    # -- snapshots ---------------------------------------------------------------------------
    def _stage(self, paths: Sequence[str] | None = None) -> list[str]:
        """Bring the index up to the work tree (ignore rules applied), staging only what is
        new, modified or deleted since it — or, given ``paths``, only those (the files a tool
        wrote: no walk of the tree); files over the limit are left out. Returns those."""
        if paths is None:
            listed = self._git("ls-files", "-z", "--others", "--modified", "--deleted",
                               "--exclude-standard").stdout.split(b"\0")
        else:
            listed = [p.encode("utf-8", "surrogateescape") for p in paths]
        stage: list[bytes] = []
        large: list[bytes] = []
        for raw in sorted(set(filter(None, listed))):
            try:
                info = os.lstat(self.workspace / raw.decode("utf-8", "surrogateescape"))
            except OSError:
                stage.append(raw)  # deleted: staged as a removal
                continue
            (large if stat.S_ISREG(info.st_mode) and info.st_size > self.max_file_bytes
             else stage).append(raw)
        if stage and paths is None:  # git's own list: exact paths, no pathspec matching
            self._git("update-index", "--add", "--remove", "-z", "--stdin", data=_nul(
                p for p in stage if not p.endswith(b"/")), timeout=None)
        elif stage:  # a tool's paths: git add, so that ignored files stay out
            self._git("add", "--all", "--ignore-errors", "--pathspec-from-file=-",
                      "--pathspec-file-nul", data=_nul(stage), check=False)
        if large:
            self._git("update-index", "--force-remove", "-z", "--stdin", data=_nul(large))
        return sorted(p.decode("utf-8", "surrogateescape") for p in large)

    def prepare(self) -> None:
        """Bring the index up to the work tree now (the first time: every file is hashed), so
        the next snapshot is incremental. What a workspace does in the background when it
        opens."""
        with self._lock:
            self.init()
            self._initialised = True
            self._stage()

    def snapshot(self, message: str, session: str = "",
                 paths: Sequence[str] | None = None) -> Snapshot:
        """Snapshot the work tree now: a commit after ``session``'s previous one, even when
        nothing changed. ``paths``: only these may have changed since the previous snapshot
        (the files a tool wrote), so only they are looked at."""
        with self._lock:
            try:
                return self._snapshot(message, session, paths)
            except CheckpointError:
                if not self._initialised:
                    raise
                # the repository changed under this process (deleted, broken by hand):
                # look at it again, once
                self._initialised = False
                self._heads.clear()
                return self._snapshot(message, session, None)

    def _snapshot(self, message: str, session: str, paths: Sequence[str] | None
                  ) -> Snapshot:
        if not self._initialised:
            self.init()
            self._initialised = True
        skipped = self._stage(paths)
        tree = self._git("write-tree").stdout.decode().strip()
        ref = self._ref(session)
        parent = self._heads.get(ref) or self.head(session)
        args = ["commit-tree", tree, "-m", message]
        if parent:
            args += ["-p", parent]
        commit = self._git(*args).stdout.decode().strip()
        self._git("update-ref", ref, commit)
        self._heads[ref] = commit
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

    def count_changes(self, pairs: Sequence[tuple[str, str]]) -> list[int]:
        """How many paths differ in each ``(older, newer)`` pair: one ``git`` for them all."""
        if not pairs:
            return []
        lines = "".join(f"{a} {b}\n" for a, b in pairs).encode()
        out = self._git("diff-tree", "--stdin", "-r", "-z", "--no-renames", "--name-only",
                        "--always", data=lines).stdout.split(b"\0")
        counts: list[int] = []
        # each pair's output: its first id, then its paths (an id never is a path here)
        heads = [a.encode() for a, _ in pairs]
        for token in filter(None, out):
            if len(counts) < len(pairs) and token == heads[len(counts)]:
                counts.append(0)
            elif counts:
                counts[-1] += 1
        return counts + [0] * (len(pairs) - len(counts))

    def changed_since(self, ref: str) -> set[str]:
        """The paths whose work-tree state differs from snapshot ``ref`` now (the index is
        brought up to date with the work tree, nothing is committed)."""
        with self._lock:
            self.init()
            self._stage()
            tree = self._git("write-tree").stdout.decode().strip()
        return {c.path for c in self.changes(ref, tree)}

    def content(self, ref: str, path: str) -> bytes | None:
        """A file's bytes in snapshot ``ref`` (None: not in it)."""
        done = self._git("cat-file", "blob", f"{ref}:{path}", check=False)
        return done.stdout if done.returncode == 0 else None

    def restore(self, ref: str, paths: Iterable[str]) -> list[str]:
        """Put ``paths`` back as they are in snapshot ``ref``: written whole (each file is old
        or new, never torn) or removed when the snapshot does not have it. Returns the paths
        changed."""
        return [path for path in paths
                if put_back(self.workspace, path, self.content(ref, path))]

    def before_write(self, path: str, session: str) -> None:
        """Nothing to do: the snapshot before the tool call has the file."""

    # -- retention ---------------------------------------------------------------------------
    def sessions(self) -> list[str]:
        """The sessions with snapshots (by their ref's name)."""
        out = self._git("for-each-ref", "--format=%(refname)", SESSION_REFS).stdout.decode()
        return [line.removeprefix(SESSION_REFS) for line in out.splitlines() if line]

    def prune(self, keep: Iterable[str]) -> list[str]:
        """Drop the snapshots of every session not in ``keep`` (their refs), then let
        ``git gc`` reclaim what nothing refers to any more. Returns the sessions dropped."""
        if not self.ready():
            return []
        kept = {_SAFE_REF.sub("_", s) for s in keep}
        dropped = [s for s in self.sessions() if s not in kept]
        with self._lock:
            self._heads.clear()
            if dropped:
                self._git("update-ref", "--stdin", data="".join(
                    f"delete {SESSION_REFS}{s}\n" for s in dropped).encode())
                self._git("gc", "--quiet", f"--prune={PRUNE_AFTER}")
            else:  # only when the loose objects have piled up (git's own measure)
                self._git("-c", "gc.auto=6700", "gc", "--auto", "--quiet",
                          f"--prune={PRUNE_AFTER}")
        return dropped
