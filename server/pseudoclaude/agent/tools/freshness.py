"""Stale writes are refused: what a session has read and written, by the bytes' ``sha256``.

``write_file`` and ``edit_file`` of an existing file succeed only when the session knows what
the file holds now: the ``sha256`` of its current bytes (the editor's text when the file is
open there with unsaved changes, else the file on disk) equals the one the session recorded
when it last read it (``read_file``, whole or in part) or wrote it. Otherwise the call fails
with ``stale`` and nothing is written: the session never read the file, or someone changed it
since (another session of the workspace, a command, another program, the user). A new file
(absent, deleted since it was read) needs no read. Only the bytes count: a ``touch`` is no
change.

:class:`FileLedger` is one session's record (absolute path -> ``sha256``); :class:`WriteBoard`
is the workspace's (absolute path -> the session that last wrote it and the bytes' ``sha256``),
shared by its sessions, so a refusal can name the session that changed the file.

The record survives a resume: the ``read_file``, ``write_file`` and ``edit_file`` results
carry ``metadata.sha256``, and :func:`ledger_entries` rebuilds the ledger from the results of
a session's log (every result line, so results spilled or summarized away later still count).

Pure logic: this module knows neither the workspace nor the session log's format.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath

from pseudoclaude.agent.tools.base import ToolError
from pseudoclaude.llm.types import ToolResult

DIGEST_KEY = "sha256"
"""The metadata key of the bytes' digest in ``read_file``/``write_file``/``edit_file``
results."""
TRACKED_TOOLS = frozenset({"read_file", "write_file", "edit_file"})


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest_text(text: str) -> str:
    """The digest of a text's UTF-8 bytes (what a file holding the text holds)."""
    return digest(text.encode("utf-8", "surrogatepass"))


class WriteBoard:
    """The last write of each file by any session of one workspace: ``(session id, sha256)``
    by absolute path. Thread-safe (tools run in worker threads)."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def record(self, path: str, session_id: str, sha256: str) -> None:
        with self._lock:
            self._last[path] = (session_id, sha256)

    def last(self, path: str) -> tuple[str, str] | None:
        with self._lock:
            return self._last.get(path)


class FileLedger:
    """What one session last read or wrote of each file (absolute path -> ``sha256``).

    ``load`` gives the entries known from the session's log, ``(absolute path, sha256)`` in log
    order; it is called once, on first use (from the worker thread of the first file tool
    call: the log is never read on the event loop, nor at all by a session that touches no
    file). ``board``: the workspace's :class:`WriteBoard`, told of this session's writes and
    asked who changed a file.
    """

    def __init__(self, session_id: str, board: WriteBoard | None = None,
                 load: Callable[[], Iterable[tuple[str, str]]] | None = None) -> None:
        self.session_id = session_id
        self.board = board
        self._load = load
        self._seen: dict[str, str] = {}
        self._lock = threading.Lock()

    def _loaded(self) -> dict[str, str]:
        """The entries (the log's first, once); call holding the lock."""
        load, self._load = self._load, None
        if load is not None:
            for path, sha256 in load():
                self._seen[path] = sha256
        return self._seen

    def known(self, path: Path | str) -> str | None:
        """The ``sha256`` this session last read or wrote of ``path`` (``None``: never)."""
        with self._lock:
            return self._loaded().get(str(path))

    def saw(self, path: Path | str, sha256: str) -> None:
        """The session read ``path``, holding these bytes."""
        with self._lock:
            self._loaded()[str(path)] = sha256

    def wrote(self, path: Path | str, sha256: str) -> None:
        """The session wrote these bytes to ``path`` (it knows them: no read needed to change
        them again)."""
        with self._lock:
            self._loaded()[str(path)] = sha256
        if self.board is not None:
            self.board.record(str(path), self.session_id, sha256)

    def check(self, path: Path | str, label: str, current: str | None) -> None:
        """:class:`ToolError` ``stale`` unless a write of ``path`` (shown as ``label``) may
        go ahead: ``current`` (the ``sha256`` of what the file holds now; ``None``: it does not
        exist) is what this session last read or wrote."""
        if current is None:
            return  # a new file (or one deleted since): nothing to lose
        known = self.known(path)
        if known == current:
            return
        writer = self.board.last(str(path)) if self.board is not None else None
        other = (writer[0] if writer is not None and writer[1] == current
                 and writer[0] != self.session_id else None)
        if known is None:
            by = f" (session {other} of this workspace wrote it)" if other else ""
            raise ToolError(
                "stale",
                f"{label} exists and this session has not read it{by}; nothing was written. "
                "Read it first with read_file (the whole file, or the part you change), then "
                "make the change on what it holds.")
        who = (f"was changed by another session of this workspace ({other})" if other else
               "changed outside this session (by a command, another program or the user, on "
               "disk or in the editor)")
        raise ToolError(
            "stale",
            f"{label} {who} since this session last read or wrote it; nothing was written. "
            "Read it again with read_file, then make the change on what it holds now.")


def ledger_entries(results: Iterable[ToolResult], root: Path) -> Iterator[tuple[str, str]]:
    """``(absolute path, sha256)`` of each successful ``read_file``/``write_file``/
    ``edit_file`` result that carries ``metadata.sha256``, in order: a session's ledger from
    the results of its log. Paths are the workspace-relative labels joined to ``root``; files
    outside the workspace (a spilled result, a memory note: absolute labels) are left out."""
    for result in results:
        if result.is_error or result.name not in TRACKED_TOOLS:
            continue
        try:
            body = json.loads(result.content)
        except ValueError:
            continue  # a spilled result's preview, a hand-made line
        if not isinstance(body, dict) or body.get("ok") is not True:
            continue
        metadata = body.get("metadata")
        if not isinstance(metadata, dict):
            continue
        label, sha256 = metadata.get("path"), metadata.get(DIGEST_KEY)
        if not isinstance(label, str) or not isinstance(sha256, str) or not label:
            continue
        rel = PurePosixPath(label)
        if rel.is_absolute() or ".." in rel.parts:
            continue
        yield str(root / rel), sha256
