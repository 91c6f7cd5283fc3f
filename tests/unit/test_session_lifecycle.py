"""Deleting a session's folder under its lock, and the models a session may switch to
(``pseudoclaude.workspace.lifecycle``; over ACP: tests/acp/test_acp.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from pseudoclaude.config import CompactSettings, Settings
from pseudoclaude.session import SessionNotFound, SessionStore, new_session
from pseudoclaude.session.lock import SessionBusy, SessionLock
from pseudoclaude.workspace import ModelChoice, delete_session_folder, model_choices


def test_a_session_folder_is_deleted_only_when_nobody_writes_it(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / ".PseudoClaude")
    opened = new_session(store, model="m")
    sid = opened.session_id
    opened.writer.touch()
    opened.writer.close()
    writer = SessionLock(store.session_dir(sid), sid)  # a run (any process would do)
    writer.acquire()
    try:
        with pytest.raises(SessionBusy):
            delete_session_folder(store, sid)
        assert store.log_path(sid).is_file()
    finally:
        writer.release()
    delete_session_folder(store, sid)
    assert not store.session_dir(sid).exists()
    with pytest.raises(SessionNotFound):
        delete_session_folder(store, sid)
    with pytest.raises(SessionNotFound):
        delete_session_folder(store, "../../etc")
    assert store.sessions_dir.is_dir()  # only the session's own folder went


def test_the_model_choices_are_the_model_settings_each_once() -> None:
    settings = Settings(provider="anthropic", model="big",
                        compact=CompactSettings(model="small"))
    assert model_choices(settings) == [ModelChoice("big", "model"),
                                       ModelChoice("small", "compact.model")]
    same = Settings(provider="anthropic", model="big", compact=CompactSettings(model="big"))
    assert model_choices(same) == [ModelChoice("big", "model")]
    assert model_choices(Settings()) == []  # no provider, no model
    with_agents = cast(Settings, SimpleNamespace(
        model="big", compact=CompactSettings(), agents=SimpleNamespace(explore_model="fast")))
    assert model_choices(with_agents) == [ModelChoice("big", "model"),
                                          ModelChoice("fast", "agents.exploreModel")]
