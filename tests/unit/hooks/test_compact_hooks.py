"""PreCompact and PostCompact hooks: told of a summary, manual or automatic, with the token
counts around it; nothing when there is nothing to summarise."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pseudoclaude.compact import CompactConfig, CompactRuntime
from pseudoclaude.conversation import Conversation
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.types import Message

SUMMARY = {"when": {"has_tools": False}, "reply": {"text": "<summary>the gist</summary>"}}


class Told:
    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    async def compacting(self, trigger: str, before_tokens: int, instructions: str) -> None:
        self.calls.append(("PreCompact", trigger, before_tokens, instructions))

    async def compacted(self, trigger: str, before_tokens: int, after_tokens: int) -> None:
        self.calls.append(("PostCompact", trigger, before_tokens, after_tokens))


def runtime(tmp_path: Path, fake: FakeModelServer, messages: int) -> CompactRuntime:
    conversation = Conversation()
    for i in range(messages):
        conversation.append(Message(role="user" if i % 2 == 0 else "assistant",
                                    content=f"m{i} " + "x" * 2000))
    return CompactRuntime(conversation, config=CompactConfig(window=8_000),
                          spill_dir=tmp_path / "spill", workspace=tmp_path,
                          provider=fake.provider_source(model="claude-test", read_timeout=5.0))


def test_manual_and_automatic_summaries_are_told(tmp_path: Path) -> None:
    with FakeModelServer({"rules": [SUMMARY]}) as fake:
        manual, told = runtime(tmp_path, fake, 12), Told()
        manual.hooks = told
        done = asyncio.run(manual.compact("keep the decisions"))
        assert done.summarized
        assert told.calls == [("PreCompact", "manual", done.before_tokens, "keep the decisions"),
                              ("PostCompact", "manual", done.before_tokens, done.after_tokens)]
        assert asyncio.run(manual.compact()).summarized is False  # nothing old: not told
        assert len(told.calls) == 2
        auto, told = runtime(tmp_path, fake, 12), Told()
        auto.hooks = told
        asyncio.run(auto.manage_context())
        assert [c[:2] for c in told.calls] == [("PreCompact", "auto"), ("PostCompact", "auto")]
