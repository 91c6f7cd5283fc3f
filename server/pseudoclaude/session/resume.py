"""Opening sessions: a new one, or a resumed one with its history repaired (SPEC §3)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pseudoclaude.conversation import Conversation, Offload
from pseudoclaude.llm.types import Message
from pseudoclaude.names import plural
from pseudoclaude.session.listing import list_sessions
from pseudoclaude.session.loader import UsageAnchor, replay_file
from pseudoclaude.session.repair import repair
from pseudoclaude.session.store import SessionNotFound, SessionStore
from pseudoclaude.session.writer import SessionWriter

LATEST = "latest"
IDLE_NOTE_AFTER_SECONDS = 6 * 3600


@dataclass
class LoadedSession:
    session_id: str
    messages: list[Message]  # replayed and repaired: what the model sees next
    bad_lines: int
    repaired: int
    last_activity: float  # Unix time of the last line (the log's mtime when no line has one)
    offloads: dict[str, Offload] = field(default_factory=dict)
    kept: set[str] = field(default_factory=set)
    anchor: UsageAnchor | None = None
    """The estimate's anchor from the last usage stamp (None after a repair: the repair is
    a replace, which resets the estimate to a full one)."""
    mode: str | None = None
    """The permission mode of its last ``mode`` line (``None``: it never set one)."""
    tasks: list[tuple[str, str]] | None = None
    """Its task list (the last ``tasks`` line), ``(content, status)`` each."""


@dataclass
class OpenSession:
    writer: SessionWriter
    conversation: Conversation
    loaded: LoadedSession | None = None  # None for a brand-new session
    note: Message | None = None  # the idle note, in memory only (not logged, not counted)

    @property
    def idle_note(self) -> bool:
        return self.note is not None

    @property
    def session_id(self) -> str:
        return self.writer.session_id


def latest_id(store: SessionStore) -> str | None:
    """What ``latest`` means: the newest session the model answered in. One whose first run
    failed (or was cancelled) before any answer holds only its prompt: it is listed and resumes
    by its id, but is not ``latest``, so ``context`` and ``compact`` never land on it."""
    return next((s.id for s in list_sessions(store) if s.answered), None)


def resolve(store: SessionStore, ref: str) -> str:
    """A session id from an id or ``latest`` (an error when there is no such session)."""
    if ref != LATEST:
        return store.check_id(ref)
    sessions = list_sessions(store)
    latest = next((s.id for s in sessions if s.answered), None)
    if latest is not None:
        return latest
    if sessions:
        raise SessionNotFound(
            f"no session with an answer to resume in {store.sessions_dir} (the model never "
            f"answered in {plural(len(sessions), 'session')}: resume one by its id, "
            f"e.g. {sessions[0].id})")
    raise SessionNotFound(f"no session to resume in {store.sessions_dir}")


def load_session(store: SessionStore, ref: str) -> LoadedSession:
    """Replay and repair a session without changing anything on disk."""
    session_id = resolve(store, ref)
    path = store.log_path(session_id)
    replay = replay_file(path)
    messages, repairs = repair(replay.messages)
    return LoadedSession(
        session_id=session_id,
        messages=messages,
        bad_lines=replay.bad_lines,
        repaired=repairs,
        last_activity=replay.last_ts or os.stat(path).st_mtime,
        offloads=replay.offloads,
        kept=replay.kept,
        anchor=None if repairs else replay.anchor,
        mode=replay.mode,
        tasks=replay.tasks,
    )


def idle_note(last_activity: float, now: float) -> Message | None:
    if now - last_activity <= IDLE_NOTE_AFTER_SECONDS:
        return None
    try:
        when = datetime.fromtimestamp(last_activity, UTC).astimezone()
    except (ValueError, OverflowError, OSError):  # not a time: say nothing rather than fail
        return None
    return Message(
        role="user",
        content=(
            "[session resumed] This session was paused for more than 6 hours (last activity "
            f"{when.isoformat(timespec='seconds')}). Files and other external state may have "
            "changed since then: re-read files and re-check anything you rely on before acting."
        ),
    )


def new_session(store: SessionStore, *, model: str = "", workspace: str = "") -> OpenSession:
    writer = SessionWriter.create(store, model=model, workspace=workspace)
    return OpenSession(writer=writer, conversation=Conversation(hooks=writer.hooks()))


def resume_session(
    store: SessionStore, ref: str, *, model: str = "", workspace: str = "",
    now: float | None = None,
) -> OpenSession:
    """Resume ``ref`` (an id or ``latest``) for appending.

    A history that needed repair is first committed as one ``replace`` line (reason
    ``repair``), so the log matches what the model sees next. The idle note, when due, lives
    only in memory.
    """
    loaded = load_session(store, ref)
    writer = SessionWriter.open(store, loaded.session_id, model=model, workspace=workspace)
    writer.keep_state(loaded.mode, loaded.tasks)
    try:
        if loaded.repaired:
            writer.append_replace("repair", loaded.messages)
    except Exception:
        writer.close()
        raise
    messages = list(loaded.messages)
    note = idle_note(loaded.last_activity, time.time() if now is None else now)
    if note is not None:
        messages.append(note)
    return OpenSession(
        writer=writer,
        conversation=Conversation(messages, hooks=writer.hooks()),
        loaded=loaded,
        note=note,
    )
