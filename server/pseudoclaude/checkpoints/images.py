"""Before-images of the files the agent itself writes.

Before the agent first writes a file in a session, its content then (or its absence) is kept
as the session's *baseline* for that file; every snapshot records the current content of the
files the session has written so far. A file a snapshot does not list has its baseline content
then (the agent had not touched it yet). A baseline that could not be kept (the file was over
1 MiB, or could not be read) is recorded as such: a rewind says that file cannot come back.

Two uses (:class:`ImageStore` is what they share):

- Where there is no ``git`` command, :class:`BeforeImages` is the checkpoints: a rewind can
  still take back what ``write_file`` and ``edit_file`` did (not what commands did:
  ``pseudoclaude/context`` says so).
- With ``git``, the shadow repository keeps the files its ignore rules leave out (``.env``,
  ``*.local``) this way when the agent writes them, under ``<dataDir>/checkpoints/ignored/``,
  each snapshot's record named by its commit.

On disk, in the store's folder: ``blobs/<sha256>`` (contents, written once),
``snapshots/<id>.json`` (``{session, parent, message, files: {path: sha256 | null}}``),
``baselines/<session>.json`` and, for :class:`BeforeImages`, ``heads/<session>`` (the latest
snapshot id). Every file is written atomically. Blocking: run the calls off the event loop.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pseudoclaude.checkpoints.base import (
    MAX_FILE_BYTES,
    Change,
    CheckpointError,
    Snapshot,
    Step,
)
from pseudoclaude.checkpoints.files import inside, put_back
from pseudoclaude.checkpoints.status import Coverage
from pseudoclaude.durable import atomic_write

_SAFE = re.compile(r"[^A-Za-z0-9._-]")

LARGE = "!large"
"""A baseline not kept: the file was over the size limit when the agent first wrote it."""
UNREADABLE = "!unreadable"
"""A baseline not kept: the file could not be read when the agent first wrote it."""
LOST = {LARGE: "it was over 1 MiB when the agent first wrote it, so its earlier content was "
               "not kept",
        UNREADABLE: "it could not be read when the agent first wrote it, so its earlier "
                    "content was not kept"}
"""Why a file whose baseline is a marker cannot come back."""

Files = dict[str, str | None]
"""Path -> the sha256 of its content (a marker of :data:`LOST`; None: it did not exist)."""


def safe_name(session: str) -> str:
    return _SAFE.sub("_", session) or "_"


class ImageStore:
    """Contents, baselines and per-snapshot records in one folder (see the module
    docstring)."""

    def __init__(self, workspace: Path, folder: Path, *,
                 max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.workspace = workspace.resolve()
        self.folder = folder
        self.max_file_bytes = max_file_bytes

    # -- files -------------------------------------------------------------------------------
    def _read_json(self, path: Path) -> Any:
        try:
            return json.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"{path.name} in the checkpoints is unreadable: {exc}") \
                from None

    def _write_json(self, path: Path, value: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(path, json.dumps(value, ensure_ascii=False).encode())

    def manifest(self, ref: str) -> dict[str, Any] | None:
        """The record of snapshot ``ref`` (None: there is none)."""
        data = self._read_json(self.folder / "snapshots" / f"{safe_name(ref)}.json")
        return data if isinstance(data, dict) and isinstance(data.get("files"), dict) \
            else None

    def baseline(self, session: str) -> Files:
        data = self._read_json(self.folder / "baselines" / f"{safe_name(session)}.json")
        return dict(data) if isinstance(data, dict) else {}

    def has_baselines(self) -> bool:
        """Whether any session kept a before-image here (else there is nothing to look up)."""
        folder = self.folder / "baselines"
        return folder.is_dir() and any(folder.iterdir())

    def files_at(self, manifest: dict[str, Any] | None, session: str) -> Files:
        """Every kept path's value in a snapshot (``manifest``: its record; None: taken before
        the session kept any)."""
        files = self.baseline(session)
        if manifest is not None:
            files.update(manifest["files"])
        return files

    def current(self, path: str, *, store: bool = True) -> str | None:
        """The blob of ``path``'s content now (stored unless ``store`` is false), None when it
        does not exist; ``OSError`` when it cannot be read."""
        target = inside(self.workspace, path)
        if target is None or not target.is_file():
            return None
        data = target.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        blob = self.folder / "blobs" / digest
        if store and not blob.exists():
            blob.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            atomic_write(blob, data)
        return digest

    def blob(self, path: str, digest: str | None) -> bytes | None:
        if digest is None:
            return None
        if digest in LOST:
            raise CheckpointError(f"{path} cannot be restored: {LOST[digest]}")
        try:
            return (self.folder / "blobs" / digest).read_bytes()
        except OSError as exc:
            raise CheckpointError(f"the saved content of {path} is missing: {exc}") from None

    # -- the operations ----------------------------------------------------------------------
    def keep(self, path: str, session: str) -> None:
        """Keep ``path``'s content now as the session's baseline, the first time (a marker of
        :data:`LOST` when it cannot be kept)."""
        baseline = self.baseline(session)
        if path in baseline:
            return
        target = inside(self.workspace, path)
        if target is None:
            return
        try:
            if target.is_file() and target.stat().st_size > self.max_file_bytes:
                baseline[path] = LARGE
            else:
                baseline[path] = self.current(path)
        except OSError:
            baseline[path] = UNREADABLE
        self._write_json(self.folder / "baselines" / f"{safe_name(session)}.json", baseline)

    def record(self, ref: str, session: str, message: str, parent: str | None
               ) -> tuple[Files, list[str]]:
        """Record the current content of the session's kept files as snapshot ``ref``; a file
        that cannot be read keeps the value the snapshot before had. Returns the files and
        those that could not be read."""
        baseline = self.baseline(session)
        before = self.files_at(self.manifest(parent), session) if parent else baseline
        files: Files = {}
        unreadable = []
        for path in sorted(baseline):
            try:
                files[path] = self.current(path)
            except OSError:
                files[path] = before.get(path)
                unreadable.append(path)
        self._write_json(self.folder / "snapshots" / f"{safe_name(ref)}.json", {
            "session": session, "parent": parent, "message": message, "files": files})
        return files, unreadable

    @staticmethod
    def differ(was: Files, now: Files) -> list[Change]:
        """What going back from ``now`` to ``was`` does, path by path."""
        out = []
        for path in sorted(set(was) | set(now)):
            before, after = was.get(path), now.get(path)
            if before == after:
                continue
            if before in LOST:
                out.append(Change(path, "restore", LOST[str(before)]))
            else:
                out.append(Change(path, "delete" if before is None else
                                  "create" if after is None else "restore"))
        return out

    def changed_since(self, files: Files) -> tuple[set[str], list[str]]:
        """The paths of ``files`` whose content now differs or cannot be read, and those that
        cannot be read."""
        out = set()
        unreadable = []
        for path, value in sorted(files.items()):
            try:
                if self.current(path, store=False) != value:
                    out.add(path)
            except OSError:
                out.add(path)
                unreadable.append(path)
        return out, unreadable

    def prune(self, kept: set[str]) -> list[str]:
        """Drop the baselines and records of every session not in ``kept`` (safe names), and
        the contents only they kept. Returns the sessions dropped (of those with a
        baseline)."""
        dropped = []
        baselines = self.folder / "baselines"
        for baseline in sorted(baselines.glob("*.json")) if baselines.is_dir() else []:
            if baseline.stem not in kept:
                dropped.append(baseline.stem)
                baseline.unlink(missing_ok=True)
        used: set[str] = set()
        snapshots = self.folder / "snapshots"
        for path in sorted(snapshots.glob("*.json")) if snapshots.is_dir() else []:
            try:
                data = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue
            if safe_name(str(data.get("session", ""))) not in kept:
                path.unlink(missing_ok=True)
                continue
            used.update(v for v in data.get("files", {}).values() if v)
        for baseline in sorted(baselines.glob("*.json")) if baselines.is_dir() else []:
            data = self._read_json(baseline) or {}
            used.update(v for v in data.values() if v)
        blobs = self.folder / "blobs"
        for blob in blobs.iterdir() if blobs.is_dir() else []:
            if blob.name not in used and not blob.name.startswith("."):
                blob.unlink(missing_ok=True)
        return dropped


class BeforeImages:
    """One workspace's checkpoints without ``git``: before-images of the agent's own writes
    (see the module docstring)."""

    covers: Coverage = "writes"

    def __init__(self, workspace: Path, folder: Path, *,
                 max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.workspace = workspace.resolve()
        self.folder = folder
        self.max_file_bytes = max_file_bytes
        self._store = ImageStore(workspace, folder, max_file_bytes=max_file_bytes)
        self._lock = threading.Lock()
        self._unreadable: list[str] = []

    def _manifest(self, ref: str) -> dict[str, Any]:
        data = self._store.manifest(ref)
        if data is None:
            raise CheckpointError(f"snapshot {ref} is missing from the checkpoints")
        return data

    def _files(self, ref: str) -> Files:
        manifest = self._manifest(ref)
        return self._store.files_at(manifest, str(manifest.get("session", "")))

    # -- the interface -----------------------------------------------------------------------
    def head(self, session: str = "") -> str | None:
        try:
            return (self.folder / "heads" / safe_name(session)).read_text().strip() or None
        except FileNotFoundError:
            return None

    def prepare(self) -> None:
        """Nothing to prepare: contents are kept when the agent writes."""

    def before_write(self, path: str, session: str) -> None:
        """Keep ``path``'s content now as the session's baseline, the first time."""
        with self._lock:
            self._store.keep(path, session)

    def snapshot(self, message: str, session: str = "",
                 paths: Sequence[str] | None = None) -> Snapshot:
        with self._lock:
            ref = secrets.token_hex(20)
            _, unreadable = self._store.record(ref, session, message, self.head(session))
            heads = self.folder / "heads"
            heads.mkdir(parents=True, exist_ok=True, mode=0o700)
            atomic_write(heads / safe_name(session), ref.encode())
            self._unreadable = unreadable
        return Snapshot(ref=ref, unreadable=unreadable)

    def exists(self, ref: str) -> bool:
        return self._store.manifest(ref) is not None

    def changes(self, older: str, newer: str) -> list[Change]:
        a, b = self._manifest(older), self._manifest(newer)
        session = str(b.get("session", ""))
        return self._store.differ(self._store.files_at(a, session),
                                  self._store.files_at(b, session))

    def count_changes(self, pairs: Sequence[tuple[str, str]]) -> list[int]:
        return [len(self.changes(a, b)) for a, b in pairs]

    def changed_since(self, ref: str) -> set[str]:
        files = self._files(ref)
        with self._lock:
            out, self._unreadable = self._store.changed_since(files)
        return out

    def steps(self, older: str, newer: str) -> list[Step] | None:
        chain: list[dict[str, Any]] = []
        ref: str | None = newer
        while ref is not None and ref != older:
            manifest = self._store.manifest(ref)
            if manifest is None:
                return None
            chain.append(manifest)
            parent = manifest.get("parent")
            ref = parent if isinstance(parent, str) else None
        if ref is None:
            return None
        session = str(chain[0].get("session", "")) if chain else ""
        previous = self._store.files_at(self._manifest(older), session)
        out = []
        for manifest in reversed(chain):
            files = self._store.files_at(manifest, session)
            out.append(Step(str(manifest.get("message", "")),
                            frozenset(c.path for c in self._store.differ(previous, files))))
            previous = files
        return out

    def unreadable(self) -> list[str]:
        return list(self._unreadable)

    def content(self, ref: str, path: str) -> bytes | None:
        return self._store.blob(path, self._files(ref).get(path))

    def restore(self, ref: str, paths: Iterable[str]) -> list[str]:
        files = self._files(ref)
        return [path for path in paths if files.get(path) not in LOST
                and put_back(self.workspace, path, self._store.blob(path, files.get(path)))]

    def prune(self, keep: Iterable[str]) -> list[str]:
        """Drop the checkpoints of every session not in ``keep``, and the contents only they
        kept."""
        kept = {safe_name(s) for s in keep}
        heads = self.folder / "heads"
        dropped = [p.name for p in heads.iterdir()] if heads.is_dir() else []
        dropped = [s for s in dropped if s not in kept]
        with self._lock:
            for session in dropped:
                (heads / session).unlink(missing_ok=True)
            self._store.prune(kept)
        return dropped
