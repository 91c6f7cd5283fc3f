"""A compaction's summary is marked explicitly, and the mark survives the log; a log written
before the mark existed is still read right (its summary recognised by the boundary
reminder)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from pseudoclaude.compact.layer2 import assemble
from pseudoclaude.conversation.summary import BOUNDARY_REMINDER, is_summary, summary_text
from pseudoclaude.llm.types import Message
from pseudoclaude.session import SessionStore, load_session, new_session


def test_the_summary_is_marked_and_the_mark_is_logged(tmp_path: Path) -> None:
    messages = assemble("we built a parser", [Message(role="user", content="next step")])
    assert messages[0].summary and is_summary(messages[0])
    assert not is_summary(messages[1]) and not is_summary(messages[2])
    assert summary_text(messages[0]) == "we built a parser"
    opened = new_session(SessionStore(tmp_path))
    opened.conversation.replace("compact", messages)
    opened.writer.close()
    log = SessionStore(tmp_path).log_path(opened.session_id)
    assert b'"summary":true' in log.read_bytes()
    loaded = load_session(SessionStore(tmp_path), opened.session_id)
    assert loaded.messages[0].summary


def test_a_summary_without_the_mark_is_still_recognised() -> None:
    legacy = msgspec.json.decode(msgspec.json.encode(
        {"role": "user", "content": f"old work\n\n{BOUNDARY_REMINDER}"}), type=Message)
    assert not legacy.summary and is_summary(legacy)
    assert summary_text(legacy) == "old work"
    prompt = Message(role="user", content="a prompt that quotes nothing")
    assert not is_summary(prompt)
