"""The shadow Git repository of a workspace: snapshots of its files, and putting them back.

The repository lives in ``<dataDir>/checkpoints/shadow.git`` (``GIT_DIR``) with the workspace as
its work tree and an index of its own, so the user's ``.git``, index and configuration are never
read or touched. The workspace's ignore rules (``.gitignore`` files; the user's global excludes
are not read) apply; the data folder itself, every ``.git`` folder and files over
:data:`MAX_FILE_BYTES` are left out of each snapshot and reported as skipped. The repository has
its own identity (no ``user.name`` of the user's is needed) and never runs ``git gc`` by itself:
:meth:`ShadowRepo.prune` does, when sessions are cleaned up. A file that cannot be read (its
permissions, or it is no longer a regular file) is left out of a snapshot, as the snapshot
before had it, and reported (:meth:`ShadowRepo.unreadable`); the other files are still
snapshotted.

A file the ignore rules leave out but the agent itself writes (``write_file``, ``edit_file``:
a ``.env``, a ``*.local``) is kept as before-images instead (:class:`~pseudoclaude.checkpoints.
images.ImageStore` in ``<dataDir>/checkpoints/ignored``), so a rewind restores it too.

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
import secrets
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from pseudoclaude.checkpoints.base import (
    MAX_FILE_BYTES,
    Change,
    CheckpointError,
    Snapshot,
    Step,
)
from pseudoclaude.checkpoints.files import inside, put_back
from pseudoclaude.checkpoints.images import LOST, Files, ImageStore
from pseudoclaude.checkpoints.status import Coverage
from pseudoclaude.oslock import exclusive

SESSION_REFS = "refs/pseudoclaude/sessions/"
LOCK_FILE = "lock"
"""In ``<dataDir>/checkpoints``: held while a snapshot, a write's before-image or a prune
changes the repository, so two processes on one folder (two editors) take turns."""
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
_LOG_HEADER = re.compile(rb"\x01([0-9a-f]+)((?: [0-9a-f]+)*)\x02(.*)", re.DOTALL)
"""A commit's line in :meth:`ShadowRepo.steps`'s ``git log``: its id, its parents, its
message."""


def git_available(git: str = "git") -> bool:
    return shutil.which(git) is not None


def _nul(paths: Iterable[bytes]) -> bytes:
    return b"\0".join(paths)


def readable(path: Path) -> bool:
    """Whether the regular file ``path`` can be opened for reading (what ``git`` will do to
    hash it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    os.close(fd)
    return True


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
        # (and the lock file: one at a time among the processes on this folder)
        self._initialised = False
        self._heads: dict[str, str] = {}  # ref -> the commit this process last put there
        self._unreadable: set[str] = set()  # in the work tree's latest look
        self._unreadable_kept: list[str] = []  # of the ignored files the agent wrote
        self._images = ImageStore(workspace, folder / "ignored", max_file_bytes=max_file_bytes)
        self._sessions: dict[str, str | None] = {}  # commit -> its session (None: unknown)

    # -- git ---------------------------------------------------------------------------------
    def _env(self, index: Path | None = None, literal: bool = True) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update({
            "GIT_DIR": str(self.git_dir), "GIT_WORK_TREE": str(self.workspace),
            "GIT_INDEX_FILE": str(index or self.git_dir / "index"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0", "GIT_LITERAL_PATHSPECS": "1", "LC_ALL": "C",
        })
        if not literal:  # a command that takes paths, not pathspecs, and refuses the setting
            del env["GIT_LITERAL_PATHSPECS"]
        return env

    def _git(self, *args: str, data: bytes | None = None, check: bool = True,
             timeout: float | None = GIT_TIMEOUT, index: Path | None = None,
             literal: bool = True) -> subprocess.CompletedProcess[bytes]:
        if not git_available(self._git_cmd):
            raise CheckpointError("checkpoints need the `git` command, which is not on PATH")
        command = [self._git_cmd, *IDENTITY, "-c", "core.autocrlf=false",
                   "-c", "core.quotepath=off", "-c", "gc.auto=0", *args]
        try:
            done = subprocess.run(command, input=data, capture_output=True,
                                  env=self._env(index, literal),
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
    def _stage(self, paths: Sequence[str] | None = None, index: Path | None = None
               ) -> tuple[list[str], list[str]]:
        """Bring the index up to the work tree (ignore rules applied), staging only what is
        new, modified or deleted since it — or, given ``paths``, only those (the files a tool
        wrote: no walk of the tree). Files over the limit are left out (removed from the
        index), files that cannot be read too (their entries left as they were). Returns
        ``(over the limit, unreadable)``."""
        if paths is None:
            listed = self._git("ls-files", "-z", "--others", "--modified", "--deleted",
                               "--exclude-standard", index=index).stdout.split(b"\0")
        else:
            listed = [p.encode("utf-8", "surrogateescape") for p in paths]
        stage: list[bytes] = []
        large: list[bytes] = []
        unreadable: list[bytes] = []
        for raw in sorted(set(filter(None, listed))):
            path = self.workspace / raw.decode("utf-8", "surrogateescape")
            try:
                info = os.lstat(path)
            except (FileNotFoundError, NotADirectoryError):
                stage.append(raw)  # deleted: staged as a removal
                continue
            except OSError:  # a folder on its way cannot be searched
                unreadable.append(raw)
                continue
            if stat.S_ISREG(info.st_mode):
                (large if info.st_size > self.max_file_bytes else
                 stage if readable(path) else unreadable).append(raw)
            elif stat.S_ISLNK(info.st_mode) or stat.S_ISDIR(info.st_mode):
                stage.append(raw)  # a link is kept as a link; a folder where a file was
            else:  # a pipe, a socket, a device where a file was: git cannot keep it
                unreadable.append(raw)
        if stage and paths is None:  # git's own list: exact paths, no pathspec matching
            self._git("update-index", "--add", "--remove", "-z", "--stdin", data=_nul(
                p for p in stage if not p.endswith(b"/")), timeout=None, index=index)
        elif stage:  # a tool's paths: git add, so that ignored files stay out
            self._git("add", "--all", "--ignore-errors", "--pathspec-from-file=-",
                      "--pathspec-file-nul", data=_nul(stage), check=False, index=index)
        if large:
            self._git("update-index", "--force-remove", "-z", "--stdin", data=_nul(large),
                      index=index)
        found = {p.decode("utf-8", "surrogateescape") for p in unreadable}
        if index is None:
            self._unreadable = found if paths is None else (self._unreadable - set(paths)
                                                           ) | found
        return sorted(p.decode("utf-8", "surrogateescape") for p in large), sorted(found)

    def prepare(self) -> None:
        """Bring the index up to the work tree now (the first time: every file is hashed), so
        the next snapshot is incremental. What a workspace does in the background when it
        opens."""
        with self._lock, exclusive(self.folder / LOCK_FILE):
            self.init()
            self._initialised = True
            self._stage()

    def snapshot(self, message: str, session: str = "",
                 paths: Sequence[str] | None = None) -> Snapshot:
        """Snapshot the work tree now: a commit after ``session``'s previous one, even when
        nothing changed. ``paths``: only these may have changed since the previous snapshot
        (the files a tool wrote), so only they are looked at."""
        with self._lock, exclusive(self.folder / LOCK_FILE):
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
        skipped, unreadable = self._stage(paths)
        tree = self._git("write-tree").stdout.decode().strip()
        ref = self._ref(session)
        parent = self._heads.get(ref) or self.head(session)
        args = ["commit-tree", tree, "-m", message]
        if parent:
            args += ["-p", parent]
        commit = self._git(*args).stdout.decode().strip()
        if self._images.baseline(session):  # the ignored files the agent wrote, as they are
            _, self._unreadable_kept = self._images.record(commit, session, message, parent)
            unreadable = sorted({*unreadable, *self._unreadable_kept})
        self._git("update-ref", ref, commit)
        self._heads[ref] = commit
        self._sessions[commit] = session
        return Snapshot(ref=commit, skipped=skipped, unreadable=unreadable)

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
        session = self._session_of(newer)
        if session is not None:  # the ignored files the agent wrote
            changes += self._images.differ(self._kept(older, session),
                                           self._kept(newer, session))
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
        """The paths whose work-tree state differs from snapshot ``ref`` now, and those that
        cannot be read now. The work tree is staged into a copy of the index (the index the
        next snapshot builds on keeps only what the snapshots had); nothing is committed."""
        with self._lock, exclusive(self.folder / LOCK_FILE):
            self.init()
            self._initialised = True
            look = self.git_dir / f"index.look-{secrets.token_hex(6)}"
            try:
                with contextlib.suppress(FileNotFoundError):
                    shutil.copyfile(self.git_dir / "index", look)
                _, unreadable = self._stage(index=look)
                tree = self._git("write-tree", index=look).stdout.decode().strip()
            finally:
                for leftover in (look, look.with_name(look.name + ".lock")):
                    leftover.unlink(missing_ok=True)
            self._unreadable = set(unreadable)
        out = self._git("diff-tree", "-r", "-z", "--no-renames", "--name-only", ref,
                        tree).stdout.split(b"\0")
        changed = {raw.decode("utf-8", "surrogateescape") for raw in out if raw}
        session = self._session_of(ref)
        if session is not None:
            kept, self._unreadable_kept = self._images.changed_since(self._kept(ref, session))
            changed |= kept
        return changed | set(unreadable)

    def steps(self, older: str, newer: str) -> list[Step] | None:
        """The snapshots after ``older`` up to ``newer`` (oldest first), each with its message
        and the paths it changed: one ``git log``."""
        if older == newer:
            return []
        done = self._git("log", "-z", "--no-renames", "--name-only",
                         "--format=%x01%H %P%x02%s", f"{older}..{newer}", check=False)
        if done.returncode != 0:
            return None
        commits: list[tuple[str, list[str], str, set[str]]] = []
        for token in done.stdout.split(b"\0"):
            header = _LOG_HEADER.fullmatch(token)
            if header is not None:
                commits.append((header[1].decode(), header[2].decode().split(),
                                header[3].decode("utf-8", "replace"), set()))
            elif token and commits:
                commits[-1][3].add(token.removeprefix(b"\n").decode("utf-8", "surrogateescape"))
        if not commits:
            return None  # ``newer`` is not after ``older``
        commits.reverse()
        first = self._git("rev-parse", "--verify", "--quiet", older + "^{commit}",
                          check=False).stdout.decode().strip()
        chain = [first] + [commit for commit, _, _, _ in commits]
        if any(parents != [parent] for (_, parents, _, _), parent in zip(commits, chain,
                                                                            strict=False)):
            return None  # not one chain from ``older`` to ``newer``
        session = self._session_of(newer)
        previous = self._kept(older, session) if session is not None else {}
        steps = []
        for commit, _, message, paths in commits:
            if session is not None:  # the ignored files the agent wrote
                kept = self._kept(commit, session)
                paths |= {c.path for c in self._images.differ(previous, kept)}
                previous = kept
            steps.append(Step(message, frozenset(paths)))
        return steps

    def unreadable(self) -> list[str]:
        return sorted(self._unreadable | set(self._unreadable_kept))

    def content(self, ref: str, path: str) -> bytes | None:
        """A file's bytes in snapshot ``ref`` (None: not in it)."""
        session = self._session_of(ref)
        if session is not None:
            kept = self._kept(ref, session)
            if path in kept:
                return self._images.blob(path, kept[path])
        return self._tracked(ref, path)

    def _tracked(self, ref: str, path: str) -> bytes | None:
        done = self._git("cat-file", "blob", f"{ref}:{path}", check=False)
        return done.stdout if done.returncode == 0 else None

    def restore(self, ref: str, paths: Iterable[str]) -> list[str]:
        """Put ``paths`` back as they are in snapshot ``ref``: written whole (each file is old
        or new, never torn) or removed when the snapshot does not have it (a file whose
        earlier content was not kept is left alone). Returns the paths changed."""
        session = self._session_of(ref)
        kept = self._kept(ref, session) if session is not None else {}
        return [path for path in paths if kept.get(path) not in LOST and put_back(
            self.workspace, path, self._images.blob(path, kept[path]) if path in kept
            else self._tracked(ref, path))]

    def before_write(self, path: str, session: str) -> None:
        """The agent is about to write ``path``: a file the snapshots leave out (the ignore
        rules) has its content kept now, the first time in the session, so a rewind can put
        it back. Any other file is in the snapshot before the tool call already."""
        target = inside(self.workspace, path)
        if target is None or ".git" in Path(path).parts or any(
                target.resolve().is_relative_to(p) for p in self._excluded):
            return
        with self._lock, exclusive(self.folder / LOCK_FILE):
            if not self._initialised:
                self.init()
                self._initialised = True
            ignored = self._git("check-ignore", "-q", "--", path, check=False,
                                literal=False).returncode == 0
            if ignored:
                self._images.keep(path, session)

    # -- the ignored files the agent wrote ---------------------------------------------------
    def _session_of(self, ref: str) -> str | None:
        """The session whose snapshot ``ref`` is, when the agent kept ignored files in the
        workspace (None: no need to know)."""
        if not self._images.has_baselines():
            return None
        manifest = self._images.manifest(ref)
        if manifest is not None:
            return str(manifest.get("session", ""))
        if ref not in self._sessions:
            out = self._git("for-each-ref", "--contains", ref, "--format=%(refname)",
                            SESSION_REFS, HEAD_REF, check=False).stdout.decode().split()
            names = [name.removeprefix(SESSION_REFS) if name != HEAD_REF else ""
                     for name in out]
            self._sessions[ref] = names[0] if len(names) == 1 else None
        return self._sessions[ref]

    def _kept(self, ref: str, session: str) -> Files:
        """The ignored files the agent wrote, as snapshot ``ref`` of ``session`` has them."""
        return self._images.files_at(self._images.manifest(ref), session)

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
        with self._lock, exclusive(self.folder / LOCK_FILE):
            self._heads.clear()
            self._sessions.clear()
            self._images.prune(kept)
            if dropped:
                self._git("update-ref", "--stdin", data="".join(
                    f"delete {SESSION_REFS}{s}\n" for s in dropped).encode())
                self._git("gc", "--quiet", f"--prune={PRUNE_AFTER}")
            else:  # only when the loose objects have piled up (git's own measure)
                self._git("-c", "gc.auto=6700", "gc", "--auto", "--quiet",
                          f"--prune={PRUNE_AFTER}")
        return dropped
