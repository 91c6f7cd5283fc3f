"""Listing sessions (SPEC §3): newest first by last update.

Per session: id, title (the first user text of the whole log, whitespace collapsed, 80 chars
then ``...``; a fork's ends with `` (fork)``), created, updated (time of the last line), live
message count (after the last replace), bytes, and model (the latest ``model`` stamp). Reading
is the fast resume plus two short scans (three for a fork), so listing a session costs about
as much as its live tail.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from pseudoclaude.session.codec import BadLine, ForkEntry, MessageEntry, ReplaceEntry, decode
from pseudoclaude.session.ids import session_id_time
from pseudoclaude.session.loader import (
    _BLOCK,
    DEFAULT_LINE_LIMIT,
    _line_start,
    _read_line_at,
    iter_lines,
    replay_file,
)
from pseudoclaude.session.store import SessionNotFound, SessionStore

TITLE_CHARS = 80
UNTITLED = "Untitled session"
FORK_MARK = " (fork)"
"""The end of a forked session's title (its conversation, and so its first prompt, is the
source's)."""
_FORK_SCAN_LINES = 4
_TITLE_SCAN_LINES = 1000
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class SessionInfo:
    id: str
    title: str
    created: datetime
    updated: datetime
    message_count: int
    bytes: int
    model: str
    path: Path
    answered: bool = True
    """The model answered in it at least once (an assistant message in the log; in a fork, an
    assistant ``message`` line of its own, after the conversation it copied). A session whose
    first run failed before any answer holds only the prompt, and a fork nobody prompted yet
    only its source's conversation: such a session is listed (marked), but not ``latest``."""
    has_messages: bool = True
    """The log holds a message (a ``message`` or ``replace`` line). One with only its header (an
    editor opened it and never prompted it) is left out of :func:`list_sessions`."""

    def to_json(self, *, active: bool = False) -> dict[str, object]:
        """The snake_case shape of ``sessions list --json``."""
        return {
            "id": self.id,
            "title": self.title,
            "created_at": rfc3339(self.created),
            "updated_at": rfc3339(self.updated),
            "message_count": self.message_count,
            "bytes": self.bytes,
            "model": self.model,
            "active": active,
        }


def rfc3339(moment: datetime) -> str:
    return moment.astimezone().isoformat(timespec="seconds")


def _local(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC).astimezone()


def make_title(text: str) -> str:
    collapsed = _WS.sub(" ", text).strip()
    if len(collapsed) > TITLE_CHARS:
        return collapsed[:TITLE_CHARS] + "..."
    return collapsed


def _first_user_text(f: BinaryIO) -> str:
    f.seek(0)
    for n, line in enumerate(iter_lines(f, DEFAULT_LINE_LIMIT)):
        if n >= _TITLE_SCAN_LINES:
            break
        if not isinstance(line, bytes) or b'"user"' not in line:
            continue
        try:
            entry = decode(line)
        except BadLine:
            continue
        candidates = []
        if isinstance(entry, MessageEntry):
            candidates = [entry.to_message()]
        elif isinstance(entry, ReplaceEntry):
            candidates = entry.messages or []
        for m in candidates:
            if m.role == "user" and m.tool_result is None and m.content.strip():
                return make_title(m.content)
    return ""


def _is_fork(f: BinaryIO) -> bool:
    """Whether the log has a ``fork`` line (the one after the header)."""
    f.seek(0)
    for n, line in enumerate(iter_lines(f, DEFAULT_LINE_LIMIT)):
        if n >= _FORK_SCAN_LINES:
            break
        if not isinstance(line, bytes) or b'"fork"' not in line:
            continue
        try:
            if isinstance(decode(line), ForkEntry):
                return True
        except BadLine:
            continue
    return False


_MODEL_KEY = b'"model"'


def _last_model_before(f: BinaryIO, end: int) -> str:
    """The latest ``model`` stamp in ``[0, end)``, however its line is spelled (any spacing,
    any key order): lines holding the ``"model"`` token are decoded, newest first, each once."""
    stop = end  # bytes [0, stop) are still to be searched
    carry = b""  # the first bytes of the block after this one, for a token across the seam
    while stop > 0:
        start = max(0, stop - _BLOCK)
        f.seek(start)
        chunk = f.read(stop - start) + carry
        carry = chunk[: len(_MODEL_KEY) - 1]
        next_stop = start
        hit = len(chunk)
        while (hit := chunk.rfind(_MODEL_KEY, 0, hit)) >= 0:
            newline = chunk.rfind(b"\n", 0, hit)
            offset = start + newline + 1 if newline >= 0 else _line_start(f, start + hit)
            model = _model_at(f, offset)
            if model:
                return model
            if offset < start:  # the rest of this block is that line: go on before it
                next_stop, carry = offset, b""
                break
            hit = offset - start
        stop = next_stop
    return ""


def _model_at(f: BinaryIO, offset: int) -> str:
    line = _read_line_at(f, offset, DEFAULT_LINE_LIMIT)
    if line is None:
        return ""
    try:
        entry = decode(line)
    except BadLine:
        return ""
    return entry.model if isinstance(entry, MessageEntry) else ""


def session_info(store: SessionStore, session_id: str) -> SessionInfo:
    path = store.log_path(session_id)
    try:
        stat = path.stat()
        replay = replay_file(path)
        with open(path, "rb") as f:
            title = _first_user_text(f)
            forked = _is_fork(f)
            model = replay.model or _last_model_before(f, replay.start_offset)
    except FileNotFoundError:
        raise SessionNotFound(f"no session {session_id} in {store.sessions_dir}") from None
    born = session_id_time(session_id)
    created = born.astimezone() if born else _local(stat.st_mtime)
    if replay.header is not None:
        with contextlib.suppress(ValueError):
            created = datetime.fromisoformat(replay.header.created).astimezone()
    updated = _local(replay.last_ts or stat.st_mtime)
    if not forked and any(m.role == "assistant" for m in replay.messages):
        has_messages = answered = True
    else:
        has_messages, answered = _scan_lines(path, forked=forked)
    return SessionInfo(
        id=session_id,
        title=(title or UNTITLED) + (FORK_MARK if forked else ""),
        created=created,
        updated=updated,
        message_count=len(replay.messages),
        bytes=stat.st_size,
        model=model,
        path=path,
        has_messages=has_messages,
        answered=answered,
    )


def _scan_lines(path: Path, *, forked: bool = False) -> tuple[bool, bool]:
    """``(has a message, was ever answered)`` from every line of the log: read only when what
    it replays to has no assistant message (a session a ``replace`` emptied or repaired down to
    its prompt still counts as what it was), and for a fork (``forked``), whose ``replace``
    lines hold its source's answers: only its own assistant ``message`` lines count."""
    has_message = answered = False
    with open(path, "rb") as f:
        for line in iter_lines(f, DEFAULT_LINE_LIMIT):
            if not isinstance(line, bytes):
                continue
            if has_message and b'"assistant"' not in line:
                continue  # cannot change the answer: not decoded
            try:
                entry = decode(line)
            except BadLine:
                continue
            if isinstance(entry, MessageEntry):
                has_message = True
                answered = answered or entry.role == "assistant"
            elif isinstance(entry, ReplaceEntry):
                has_message = True
                answered = answered or (not forked and any(
                    m.role == "assistant" for m in entry.messages or ()))
            if answered:
                break
    return has_message, answered


def list_sessions(store: SessionStore) -> list[SessionInfo]:
    """Every session with a log and a message, newest first by last update: the LSP server's
    and ACP's ``sessions/list`` and ``sessions list``. Unreadable ones are skipped, and so are
    logs with no message (an editor opened the session and never prompted it, as
    codecompanion.nvim does before every ``session/load``); such a log stays, and its id still
    resumes it."""
    infos = []
    for session_id in store.session_ids():
        if not os.path.isfile(store.log_path(session_id)):
            continue
        try:
            info = session_info(store, session_id)
        except (SessionNotFound, OSError):
            continue
        if info.has_messages:
            infos.append(info)
    infos.sort(key=lambda s: (s.updated, s.id), reverse=True)
    return infos
