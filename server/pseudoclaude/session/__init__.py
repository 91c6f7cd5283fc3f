"""The session log: an append-only JSONL record of a conversation, resumable (SPEC §3)."""

from pseudoclaude.session.cleanup import CleanupReport, cleanup_expired
from pseudoclaude.session.history import compaction_history
from pseudoclaude.session.ids import is_session_id, new_session_id, session_id_time
from pseudoclaude.session.listing import SessionInfo, list_sessions, session_info
from pseudoclaude.session.loader import Replay, replay_file
from pseudoclaude.session.repair import repair
from pseudoclaude.session.resume import (
    LATEST,
    LoadedSession,
    OpenSession,
    latest_id,
    load_session,
    new_session,
    resolve,
    resume_session,
)
from pseudoclaude.session.store import SessionError, SessionNotFound, SessionStore
from pseudoclaude.session.writer import SessionWriteError, SessionWriter

__all__ = [
    "LATEST",
    "CleanupReport",
    "LoadedSession",
    "OpenSession",
    "Replay",
    "SessionError",
    "SessionInfo",
    "SessionNotFound",
    "SessionStore",
    "SessionWriteError",
    "SessionWriter",
    "cleanup_expired",
    "compaction_history",
    "is_session_id",
    "latest_id",
    "list_sessions",
    "load_session",
    "new_session",
    "new_session_id",
    "repair",
    "replay_file",
    "resolve",
    "resume_session",
    "session_id_time",
    "session_info",
]
