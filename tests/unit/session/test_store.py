from __future__ import annotations

import json
import os
import stat
import time
from datetime import datetime
from pathlib import Path

import pytest

from pseudoclaude.llm.types import Message, ToolCall, ToolResult
from pseudoclaude.session import (
    SessionNotFound,
    SessionStore,
    SessionWriter,
    cleanup_expired,
    is_session_id,
    list_sessions,
    load_session,
    new_session,
    resume_session,
    session_id_time,
)
from pseudoclaude.session.codec import MessageEntry, ReplaceEntry, encode
from pseudoclaude.session.ids import new_session_id
from pseudoclaude.session.listing import make_title


def test_ids() -> None:
    made = new_session_id(datetime(2026, 6, 17, 12, 0, 0))
    assert made.startswith("20260617-120000-") and is_session_id(made)
    assert session_id_time(made) == datetime(2026, 6, 17, 12, 0, 0)
    for bad in ("legacy", "20261317-120000-abcd", "20260617-120000-ABCD", "../x",
                "20260617-120000-abcd/..", "20260617-120000-abc"):
        assert not is_session_id(bad)


def test_layout_modes_and_gitignore(store: SessionStore) -> None:
    opened = new_session(store, model="m", workspace="/w")
    opened.conversation.add_user("hello")
    opened.writer.close()
    sid = opened.session_id
    assert stat.S_IMODE(os.stat(store.data_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.sessions_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.session_dir(sid)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.spill_dir(sid)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.log_path(sid)).st_mode) == 0o600
    lines = (store.data_dir / ".gitignore").read_text().splitlines()
    assert "sessions/" in lines and "proposals/" in lines
    header = json.loads(store.log_path(sid).read_text().splitlines()[0])
    assert header["type"] == "session" and header["version"] == 1 and header["id"] == sid
    assert header["workspace"] == "/w"
    datetime.fromisoformat(header["created"])


def test_existing_sessions_folder_gets_no_gitignore(tmp_path: Path) -> None:
    """A data folder that already holds sessions (e.g. the Go original's) is left as the
    user keeps it: no .gitignore appears in it."""
    (tmp_path / ".PseudoClaude" / "sessions").mkdir(parents=True)
    store = SessionStore(tmp_path / ".PseudoClaude")
    store.allocate()
    assert not (store.data_dir / ".gitignore").exists()


def test_first_sessions_folder_gets_a_gitignore_even_in_an_existing_data_dir(
        tmp_path: Path) -> None:
    """The memory stores may create the data folder first: the first session still brings
    the .gitignore, and a user's own one is never overwritten."""
    (tmp_path / ".PseudoClaude" / "memory").mkdir(parents=True)
    store = SessionStore(tmp_path / ".PseudoClaude")
    assert not (store.data_dir / ".gitignore").exists()  # nothing before a session
    store.allocate()
    assert "sessions/\nproposals/" in (store.data_dir / ".gitignore").read_text()
    mine = tmp_path / "other" / ".PseudoClaude"
    mine.mkdir(parents=True)
    (mine / ".gitignore").write_text("*\n")
    SessionStore(mine).allocate()
    assert (mine / ".gitignore").read_text() == "*\n"


def test_model_stamped_on_the_first_message_of_each_writer(store: SessionStore) -> None:
    opened = new_session(store, model="model-a")
    opened.conversation.add_user("one")
    opened.conversation.add_assistant("two")
    opened.writer.close()
    again = resume_session(store, opened.session_id, model="model-b")
    again.conversation.add_user("three")
    again.writer.close()
    lines = [json.loads(x) for x in store.log_path(opened.session_id).read_text().splitlines()]
    assert [x.get("model") for x in lines if x["type"] == "message"] == [
        "model-a", None, "model-b"]


def _log(store: SessionStore, sid: str, entries: list[object]) -> None:
    store.session_dir(sid).mkdir(parents=True, exist_ok=True)
    store.log_path(sid).write_bytes(b"".join(encode(e) for e in entries))  # type: ignore[arg-type]


def test_listing_fields(store: SessionStore) -> None:
    _log(store, "20260617-120000-aaaa", [
        MessageEntry(role="assistant", content="hi", ts=100.0, model="old-model"),
        MessageEntry(role="user", content="  fix\n the   parser " + "x" * 100, ts=101.0),
        ReplaceEntry(reason="compact", ts=102.0, messages=[Message(role="user", content="s")]),
        MessageEntry(role="assistant", content="a", ts=103.0),
    ])
    _log(store, "20260618-120000-bbbb", [
        MessageEntry(role="user", content="second", ts=200.0, model="m2"),
    ])
    (store.sessions_dir / "not-a-session").mkdir()
    store.allocate()  # a folder without a log yet: not listed
    infos = list_sessions(store)
    assert [i.id for i in infos] == ["20260618-120000-bbbb", "20260617-120000-aaaa"]
    old = infos[1]
    assert old.title == "fix the parser " + "x" * 65 + "..."
    assert old.message_count == 2  # live: after the last replace
    assert old.model == "old-model"  # found before the replace
    assert old.updated.timestamp() == 103.0
    assert old.bytes == store.log_path(old.id).stat().st_size
    assert old.created == datetime(2026, 6, 17, 12, 0).astimezone()
    assert infos[0].model == "m2" and infos[0].title == "second"
    as_json = old.to_json()
    assert set(as_json) == {"id", "title", "created_at", "updated_at", "message_count",
                            "bytes", "model", "active"}


def test_title_rules() -> None:
    assert make_title(" a\t\nb  ") == "a b"
    assert make_title("é" * 81) == "é" * 80 + "..."
    assert make_title("é" * 80) == "é" * 80


def test_latest_and_unknown_ids(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound, match="no session to resume"):
        load_session(store, "latest")
    with pytest.raises(SessionNotFound, match="not a session id"):
        load_session(store, "../../etc")
    with pytest.raises(SessionNotFound, match="no session 20990101-000000-abcd"):
        load_session(store, "20990101-000000-abcd")
    _log(store, "20260617-120000-aaaa", [MessageEntry(role="user", content="a", ts=5.0),
                                         MessageEntry(role="assistant", content="A", ts=6.0)])
    _log(store, "20260101-120000-bbbb", [MessageEntry(role="user", content="b", ts=9.0),
                                         MessageEntry(role="assistant", content="B", ts=9.5)])
    assert load_session(store, "latest").session_id == "20260101-120000-bbbb"
    # Newer, but never answered (its first run failed): listed, not latest.
    _log(store, "20260201-120000-cccc", [MessageEntry(role="user", content="c", ts=12.0)])
    assert list_sessions(store)[0].id == "20260201-120000-cccc"
    assert load_session(store, "latest").session_id == "20260101-120000-bbbb"


def test_idle_note_only_in_memory(store: SessionStore) -> None:
    _log(store, "20260617-120000-aaaa", [
        MessageEntry(role="user", content="q", ts=1000.0),
        MessageEntry(role="assistant", content="a", ts=1001.0),
    ])
    fresh = resume_session(store, "latest", now=1001.0 + 3600)
    assert not fresh.idle_note and len(fresh.conversation) == 2
    fresh.writer.close()
    stale = resume_session(store, "latest", now=1001.0 + 6 * 3600 + 1)
    assert stale.idle_note and stale.loaded is not None
    note = stale.conversation.messages()[-1]
    assert note.role == "user" and "more than 6 hours" in note.content
    stale.conversation.add_user("continue")
    stale.writer.close()
    reloaded = load_session(store, "latest")
    assert [m.content for m in reloaded.messages] == ["q", "a", "continue"]
    assert list_sessions(store)[0].message_count == 3


def test_resume_commits_a_repair_once(store: SessionStore) -> None:
    _log(store, "20260617-120000-aaaa", [
        MessageEntry(role="user", content="q", ts=1.0),
        MessageEntry(role="assistant", tool_calls=(ToolCall("c1", "read_file"),), ts=2.0),
        MessageEntry(role="user", tool_result=ToolResult("c2", "x", "orphan"), ts=3.0),
    ])
    opened = resume_session(store, "latest")
    assert opened.loaded is not None and opened.loaded.repaired == 2
    opened.writer.close()
    last = json.loads(store.log_path("20260617-120000-aaaa").read_text().splitlines()[-1])
    assert last["type"] == "replace" and last["reason"] == "repair"
    assert last["messages"] == [{"role": "user", "content": "q"}]
    assert load_session(store, "latest").repaired == 0


def test_cleanup_expired(store: SessionStore) -> None:
    now = time.time()
    ids = ["20260501-120000-abcd", "20260616-120000-abcd", "20260502-120000-abcd"]
    for sid in ids:
        _log(store, sid, [MessageEntry(role="user", content=sid, ts=1.0)])
    old = now - 31 * 86400
    os.utime(store.log_path(ids[0]), (old, old))
    os.utime(store.log_path(ids[2]), (old, old))
    (store.sessions_dir / "legacy").mkdir()
    report = cleanup_expired(store, 30, keep={ids[2]}, now=now)
    assert report.deleted == [ids[0]] and report.errors == []
    assert not store.session_dir(ids[0]).exists()
    assert store.session_dir(ids[1]).exists() and store.session_dir(ids[2]).exists()
    assert (store.sessions_dir / "legacy").exists()


def test_group_commit_batch(store: SessionStore) -> None:
    with SessionWriter.create(store) as writer:
        with writer.batch():
            for i in range(100):
                writer.append_message(Message(role="user", content=str(i)))
        assert len(load_session(store, writer.session_id).messages) == 100
