"""Checkpoints without ``git``: before-images of the files the agent itself writes.

Where there is no ``git`` command, a rewind can still take back what ``write_file`` and
``edit_file`` did (not what commands did: ``pseudoclaude/context`` says so). Before the agent
first writes a file in a session, its content then (or its absence) is kept as the session's
*baseline* for that file; every snapshot records the current content of the files the session
has written so far. A file a snapshot does not list has its baseline content then (the agent
had not touched it yet).

On disk, in ``<dataDir>/checkpoints/``: ``blobs/<sha256>`` (contents, written once),
``snapshots/<id>.json`` (``{session, parent, files: {path: sha256 | null}}``),
``baselines/<session>.json`` and ``heads/<session>`` (the latest snapshot id). Every file is
written atomically. Blocking: run the calls off the event loop.
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

from pseudoclaude.checkpoints.base import Change, CheckpointError, Snapshot
from pseudoclaude.checkpoints.files import inside, put_back
from pseudoclaude.checkpoints.shadow import MAX_FILE_BYTES
from pseudoclaude.checkpoints.status import Coverage
from pseudoclaude.durable import atomic_write

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def _name(session: str) -> str:
    return _SAFE.sub("_", session) or "_"


class BeforeImages:
    """One workspace's before-image checkpoints (see the module docstring)."""

    covers: Coverage = "writes"

    def __init__(self, workspace: Path, folder: Path, *,
                 max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.workspace = workspace.resolve()
        self.folder = folder
        self.max_file_bytes = max_file_bytes
        self._lock = threading.Lock()

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

    def _manifest(self, ref: str) -> dict[str, Any]:
        data = self._read_json(self.folder / "snapshots" / f"{_name(ref)}.json")
        if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
            raise CheckpointError(f"snapshot {ref} is missing from the checkpoints")
        return data

    def _baseline(self, session: str) -> dict[str, str | None]:
        data = self._read_json(self.folder / "baselines" / f"{_name(session)}.json")
        return dict(data) if isinstance(data, dict) else {}

    def _current(self, path: str, *, store: bool = True) -> str | None:
        """The blob of ``path``'s content now (stored unless ``store`` is false), None when it
        does not exist."""
        target = inside(self.workspace, path)
        if target is None or not target.is_file():
            return None
        data = target.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        blob = self.folder / "blobs" / digest
        if store and not blob.exists():
            self._write_blob(blob, data)
        return digest

    def _write_blob(self, blob: Path, data: bytes) -> None:
        blob.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(blob, data)

    def _value(self, manifest: dict[str, Any], baseline: dict[str, str | None], path: str
               ) -> str | None:
        files: dict[str, str | None] = manifest["files"]
        return files[path] if path in files else baseline.get(path)

    # -- the interface -----------------------------------------------------------------------
    def head(self, session: str = "") -> str | None:
        try:
            return (self.folder / "heads" / _name(session)).read_text().strip() or None
        except FileNotFoundError:
            return None

    def prepare(self) -> None:
        """Nothing to prepare: contents are kept when the agent writes."""

    def before_write(self, path: str, session: str) -> None:
        """Keep ``path``'s content now as the session's baseline, the first time."""
        with self._lock:
            baseline = self._baseline(session)
            if path in baseline:
                return
            target = inside(self.workspace, path)
            if target is not None and target.is_file() \
                    and target.stat().st_size > self.max_file_bytes:
                return  # too large to keep: never restored
            baseline[path] = self._current(path)
            self._write_json(self.folder / "baselines" / f"{_name(session)}.json", baseline)

    def snapshot(self, message: str, session: str = "",
                 paths: Sequence[str] | None = None) -> Snapshot:
        with self._lock:
            baseline = self._baseline(session)
            files = {path: self._current(path) for path in sorted(baseline)}
            ref = secrets.token_hex(20)
            self._write_json(self.folder / "snapshots" / f"{ref}.json", {
                "session": session, "parent": self.head(session), "message": message,
                "files": files})
            heads = self.folder / "heads"
            heads.mkdir(parents=True, exist_ok=True, mode=0o700)
            atomic_write(heads / _name(session), ref.encode())
        return Snapshot(ref=ref)

    def exists(self, ref: str) -> bool:
        return (self.folder / "snapshots" / f"{_name(ref)}.json").is_file()

    def changes(self, older: str, newer: str) -> list[Change]:
        a, b = self._manifest(older), self._manifest(newer)
        baseline = self._baseline(str(b.get("session", "")))
        out = []
        for path in sorted(set(a["files"]) | set(b["files"])):
            was, now = self._value(a, baseline, path), self._value(b, baseline, path)
            if was != now:
                out.append(Change(path, "delete" if was is None else
                                  "create" if now is None else "restore"))
        return out

    def count_changes(self, pairs: Sequence[tuple[str, str]]) -> list[int]:
        return [len(self.changes(a, b)) for a, b in pairs]

    def changed_since(self, ref: str) -> set[str]:
        manifest = self._manifest(ref)
        baseline = self._baseline(str(manifest.get("session", "")))
        with self._lock:
            return {path for path in set(manifest["files"]) | set(baseline)
                    if self._value(manifest, baseline, path)
                    != self._current(path, store=False)}

    def content(self, ref: str, path: str) -> bytes | None:
        manifest = self._manifest(ref)
        digest = self._value(manifest, self._baseline(str(manifest.get("session", ""))), path)
        if digest is None:
            return None
        try:
            return (self.folder / "blobs" / digest).read_bytes()
        except OSError as exc:
            raise CheckpointError(f"the saved content of {path} is missing: {exc}") from None

    def restore(self, ref: str, paths: Iterable[str]) -> list[str]:
        return [path for path in paths if put_back(self.workspace, path,
                                                   self.content(ref, path))]

    def prune(self, keep: Iterable[str]) -> list[str]:
        """Drop the checkpoints of every session not in ``keep``, and the contents only they
        kept."""
        kept = {_name(s) for s in keep}
        heads = self.folder / "heads"
        dropped = [p.name for p in heads.iterdir()] if heads.is_dir() else []
        dropped = [s for s in dropped if s not in kept]
        with self._lock:
            for session in dropped:
                (heads / session).unlink(missing_ok=True)
                (self.folder / "baselines" / f"{session}.json").unlink(missing_ok=True)
            used: set[str] = set()
            snapshots = self.folder / "snapshots"
            for path in sorted(snapshots.glob("*.json")) if snapshots.is_dir() else []:
                try:
                    data = json.loads(path.read_bytes())
                except (OSError, ValueError):
                    continue
                if _name(str(data.get("session", ""))) not in kept:
                    path.unlink(missing_ok=True)
                    continue
                used.update(v for v in data.get("files", {}).values() if v)
            for baseline in (self.folder / "baselines").glob("*.json"):
                data = self._read_json(baseline) or {}
                used.update(v for v in data.values() if v)
            blobs = self.folder / "blobs"
            for blob in blobs.iterdir() if blobs.is_dir() else []:
                if blob.name not in used and not blob.name.startswith("."):
                    blob.unlink(missing_ok=True)
        return dropped
