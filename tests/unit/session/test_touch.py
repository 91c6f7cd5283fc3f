"""``SessionWriter.touch``: a new session's log before its first message (the ACP front end
switches away from a session that was never prompted)."""

from __future__ import annotations

from pathlib import Path

from pseudoclaude.llm.types import Message
from pseudoclaude.session import (
    SessionStore,
    list_sessions,
    load_session,
    new_session,
    resume_session,
    session_info,
)


def test_touch_makes_a_new_session_resumable(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "data")
    opened = new_session(store, model="m", workspace="/w")
    path = opened.writer.path
    assert not path.exists()  # the log appears on first use ...
    opened.writer.touch()  # ... or now, header only
    opened.writer.touch()  # once
    opened.writer.close()
    assert len(path.read_bytes().splitlines()) == 1
    assert list_sessions(store) == []  # no message yet: not listed, never `latest` ...
    assert session_info(store, opened.session_id).message_count == 0  # ... but kept
    resumed = resume_session(store, opened.session_id, model="m", workspace="/w")
    resumed.conversation.append(Message(role="user", content="hello"))
    resumed.writer.close()
    assert [m.content for m in load_session(store, opened.session_id).messages] == ["hello"]
    assert len(path.read_bytes().splitlines()) == 2
