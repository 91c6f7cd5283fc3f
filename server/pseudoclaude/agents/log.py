"""A sub-agent's log: ``<session dir>/agents/<agentId>.jsonl`` (SPEC §13).

The session log's format (:mod:`pseudoclaude.session.codec`), with an ``agent`` first line in
place of the ``session`` header (``{type: "agent", parent, agentId, callId, subagentType,
description, ...}``) and an ``agentStop`` last line once it ended (its status and usage). A log
without that last line belongs to a sub-agent that runs, or that a crash or a kill interrupted:
its messages replay and repair like a session's (:func:`load_messages`).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pseudoclaude.llm.types import Message
from pseudoclaude.session.codec import AgentEntry, AgentStopEntry, BadLine, decode, encode
from pseudoclaude.session.loader import replay_file
from pseudoclaude.session.lock import SessionLock, holder
from pseudoclaude.session.repair import repair
from pseudoclaude.session.store import SessionStore
from pseudoclaude.session.writer import SessionWriter

AGENTS_DIR = "agents"
AGENT_ID = re.compile(r"^agent-[0-9a-f]{6,32}$")
STATUSES = ("running", "completed", "failed", "canceled", "max_turns")


def agents_dir(store: SessionStore, session_id: str) -> Path:
    return store.session_dir(session_id) / AGENTS_DIR


def lock_name(agent_id: str) -> str:
    """The name of the lock a running sub-agent holds in its session's ``agents`` folder."""
    return f"{agent_id}.lock"


def running_elsewhere(log: Path, agent_id: str) -> bool:
    """Whether a process holds the lock of this sub-agent (it runs there). Blocking."""
    return holder(log.parent, lock_name(agent_id)) is not None


def agent_log(store: SessionStore, session_id: str, agent_id: str) -> Path:
    """The log of ``agent_id`` (:class:`ValueError` for a malformed id: never a path out)."""
    if not AGENT_ID.match(agent_id):
        raise ValueError(f"not a sub-agent id: {agent_id[:80]!r}")
    return agents_dir(store, session_id) / f"{agent_id}.jsonl"


class AgentWriter(SessionWriter):
    """Appends a sub-agent's entries to its own log (the ``agent`` line first)."""

    def __init__(self, store: SessionStore, header: AgentEntry, *, model: str = "") -> None:
        super().__init__(store, header.parent, model=model)
        self.path = agent_log(store, header.parent, header.agent_id)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.header = header
        self.running = SessionLock(self.path.parent, header.agent_id,
                                   lock_name(header.agent_id))
        """Held while it runs: another process listing it knows it runs."""

    def touch(self) -> None:
        if not self.running.held:
            self.running.acquire()
        super().touch()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.running.release()

    def _header(self) -> bytes:
        return encode(self.header)

    def append_stop(self, status: str, input_tokens: int, output_tokens: int,
                    error: str = "") -> None:
        """The ``agentStop`` line: how it ended."""
        self._write(encode(AgentStopEntry(status=status, input_tokens=input_tokens,
                                          output_tokens=output_tokens, error=error,
                                          ts=time.time())))


def now_iso() -> str:
    return datetime.now(UTC).astimezone().isoformat(timespec="seconds")


@dataclass(frozen=True)
class AgentRecord:
    """What a sub-agent's log says of it."""

    header: AgentEntry
    stop: AgentStopEntry | None
    path: Path

    @property
    def status(self) -> str:
        return self.stop.status if self.stop is not None else "running"


def read_header(path: Path) -> AgentEntry | None:
    with open(path, "rb") as f:
        line = f.readline(1 << 16)
    try:
        entry = decode(line)
    except BadLine:
        return None
    return entry if isinstance(entry, AgentEntry) else None


def read_record(path: Path) -> AgentRecord | None:
    """The record of one log (``None``: not a sub-agent's log). Blocking."""
    header = read_header(path)
    if header is None:
        return None
    return AgentRecord(header, replay_file(path).agent_stop, path)


def list_records(store: SessionStore, session_id: str) -> list[AgentRecord]:
    """The sub-agents of a session, oldest first. Blocking."""
    folder = agents_dir(store, session_id)
    try:
        paths = [p for p in folder.glob("agent-*.jsonl") if p.is_file()]
    except OSError:
        return []
    records = [r for r in (read_record(p) for p in paths) if r is not None]
    return sorted(records, key=lambda r: (r.header.created, r.header.agent_id))


def load_messages(path: Path) -> list[Message]:
    """A sub-agent's conversation, replayed and repaired (a crash mid-call leaves it valid).
    Blocking."""
    return repair(replay_file(path).messages)[0]
