"""Undo of a compaction (SPEC §11): from the log's past, after a restart too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pseudoclaude.compact import CompactConfig, CompactRuntime
from pseudoclaude.compact.layer2 import assemble
from pseudoclaude.compact.undo import NOTHING_TO_UNDO, undo_plan
from pseudoclaude.conversation import PastReplace
from pseudoclaude.conversation.summary import is_summary
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.types import Message
from pseudoclaude.session import (
    SessionStore,
    compaction_history,
    load_session,
    new_session,
    resume_session,
)


def msgs(*texts: str) -> list[Message]:
    return [Message(role="user" if i % 2 == 0 else "assistant", content=t)
            for i, t in enumerate(texts)]


def test_undo_plan_walks_back_over_compactions() -> None:
    old0, kept0 = msgs("a", "b", "c", "d"), msgs("e", "f")
    after0 = assemble("S0", kept0)
    c0 = PastReplace("compact", [*old0, *kept0], after0)
    current = [*after0, *msgs("g", "h")]
    planned = undo_plan([c0], current)
    assert planned.reason == "" and planned.target is c0
    restored = planned.restored
    assert restored == [*old0, *kept0, *msgs("g", "h")]
    # an undo hides the compaction it undid; repair is transparent; clear stops the walk
    undone = PastReplace("undo", current, restored)
    assert undo_plan([c0, undone], restored).reason == NOTHING_TO_UNDO
    repair = PastReplace("repair", current, current)
    assert undo_plan([c0, repair], current).target is c0
    clear = PastReplace("clear", current, msgs("z"))
    assert "replaced since (clear)" in undo_plan([c0, clear], msgs("z")).reason
    # the conversation no longer starts with that summary: nothing is changed
    assert undo_plan([c0], msgs("x", "y")).restored is None


def summary_script() -> dict[str, Any]:
    return {"rules": [{"when": {"has_tools": False},
                       "reply": {"text": "<summary>Work continues.</summary>"}}]}


def grow(conversation: Any, start: int, n: int) -> None:
    for i in range(start, start + n):
        if i % 2 == 0:
            conversation.add_user(f"prompt {i}: " + "u" * 2_000)
        else:
            conversation.add_assistant(f"answer {i}: " + "a" * 2_000)


def test_preview_then_compact_then_undo_twice_then_resume(tmp_path: Path,
                                                         provider_source: Any) -> None:
    store = SessionStore(tmp_path / "ws" / ".PseudoClaude")
    opened = new_session(store, model="m", workspace=str(tmp_path / "ws"))
    log = store.log_path(opened.session_id)
    with FakeModelServer(summary_script()) as fake:
        runtime = CompactRuntime(opened.conversation, config=CompactConfig(window=8_000),
                                 spill_dir=store.spill_dir(opened.session_id),
                                 provider=provider_source(fake))
        grow(opened.conversation, 0, 12)
        first_state = opened.conversation.messages()
        bytes_before = log.read_bytes()
        plan = asyncio.run(runtime.preview())
        assert plan.would_summarize and fake.requests == []
        assert log.read_bytes() == bytes_before  # the preview wrote nothing
        done = asyncio.run(runtime.compact())
        assert done.summarized and done.fact_check.added > 0
        after_first = opened.conversation.messages()
        assert is_summary(after_first[0])
        assert len(after_first) - 2 == plan.kept_messages  # the preview said so
        assert "prompt 6:" in after_first[0].content  # the last prompt, carried by the check
        grow(opened.conversation, 12, 12)
        asyncio.run(runtime.compact())
        second_state = opened.conversation.messages()

        undone = asyncio.run(runtime.undo(lambda: compaction_history(log)))
        assert undone.restored and undone.after_tokens > undone.before_tokens
        assert opened.conversation.messages()[0] == after_first[0]
        kept = len(second_state) - 2  # the window the second compaction kept stays last
        assert [m.content for m in opened.conversation.messages()][-kept:] == [
            m.content for m in second_state[2:]]
        last = json.loads(log.read_text().splitlines()[-1])
        assert last["type"] in ("replace", "keep", "offload")
        reasons = [json.loads(x).get("reason") for x in log.read_text().splitlines()
                   if json.loads(x)["type"] == "replace"]
        assert reasons[-1] == "undo"
        opened.writer.close()

    # after a restart: the log alone knows the past; a second undo goes one further back
    again = resume_session(store, opened.session_id)
    runtime = CompactRuntime(again.conversation, config=CompactConfig(window=8_000),
                             spill_dir=store.spill_dir(opened.session_id))
    twice = asyncio.run(runtime.undo(lambda: compaction_history(log)))
    assert twice.restored
    restored = again.conversation.messages()
    assert [m.content for m in restored[:12]] == [m.content for m in first_state]
    third = asyncio.run(runtime.undo(lambda: compaction_history(log)))
    assert not third.restored and third.reason == NOTHING_TO_UNDO
    again.writer.close()
    assert [m.content for m in load_session(store, opened.session_id).messages] == [
        m.content for m in restored]  # the undone state resumes like any other


def test_after_an_undo_auto_compaction_waits_for_window_minus_reserve(
        tmp_path: Path, provider_source: Any) -> None:
    store = SessionStore(tmp_path / "ws" / ".PseudoClaude")
    opened = new_session(store, model="m", workspace=str(tmp_path / "ws"))
    log = store.log_path(opened.session_id)
    config = CompactConfig(window=8_000)
    with FakeModelServer(summary_script()) as fake:
        runtime = CompactRuntime(opened.conversation, config=config,
                                 spill_dir=store.spill_dir(opened.session_id),
                                 provider=provider_source(fake))
        grow(opened.conversation, 0, 10)  # ~5,700 tokens: over 5,000, under 6,000
        asyncio.run(runtime.compact())
        assert asyncio.run(runtime.undo(lambda: compaction_history(log))).restored
        estimate = runtime.estimate()
        assert config.threshold <= estimate < config.undo_threshold
        requests = len(fake.requests)
        asyncio.run(runtime.manage_context())  # over the usual threshold: still no compaction
        assert len(fake.requests) == requests
        grow(opened.conversation, 10, 4)  # past window - reserve: it compacts again
        assert runtime.estimate() >= config.undo_threshold
        asyncio.run(runtime.manage_context())
        assert len(fake.requests) > requests and is_summary(opened.conversation.messages()[0])
        opened.writer.close()
