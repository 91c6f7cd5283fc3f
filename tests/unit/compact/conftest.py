"""What the compaction tests share, as fixtures.

- ``call("c1")`` / ``result("c1", content)``: an assistant message with one ``read_file`` call,
  and the user message with its result;
- ``harness(fake, window=..., conversation=..., **config)``: a :class:`CompactRuntime` on a
  conversation, in ``<tmp_path>/ws``, recording its events (``fake=None``: no provider);
- ``provider_source(fake)``: the lazily created Anthropic provider on the fake model;
- ``big_history(n, size)``: a conversation of ``n`` alternating user/assistant messages;
- ``summary_rule``: the fake model's reply to a summary request;
- ``summary_requests(fake)``: the requests without tools (the summaries).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.compact import CompactConfig, CompactRuntime, Ledger
from pseudoclaude.conversation import Conversation
from pseudoclaude.events import Event
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.provider import Provider
from pseudoclaude.llm.types import Message, ToolCall, ToolResult

SUMMARY_RULE = {"when": {"has_tools": False},
                "reply": {"text": "<analysis>private notes</analysis>"
                                  "<summary>public summary</summary>"}}

ProviderSource = Callable[[], Awaitable[Provider]]


def tool_call(call_id: str, name: str = "read_file") -> Message:
    return Message(role="assistant", tool_calls=[ToolCall(call_id, name, {"path": "x"})])


def tool_result(call_id: str, content: str, name: str = "read_file") -> Message:
    return Message(role="user", tool_result=ToolResult(call_id, name, content))


def anthropic_source(fake: FakeModelServer) -> ProviderSource:
    return fake.provider_source(model="claude-test", read_timeout=5.0)


class Harness:
    def __init__(self, tmp: Path, fake: FakeModelServer | None, window: int = 200_000,
                 conversation: Conversation | None = None, ledger: Ledger | None = None,
                 **config: Any) -> None:
        self.workspace = tmp / "ws"
        self.workspace.mkdir(exist_ok=True)
        self.spill_dir = self.workspace / ".PseudoClaude" / "sessions" / "s" / "tool-results"
        self.events: list[Event] = []
        self.conversation = conversation or Conversation()
        self.runtime = CompactRuntime(
            self.conversation, config=CompactConfig(window=window, **config),
            spill_dir=self.spill_dir, workspace=self.workspace,
            provider=anthropic_source(fake) if fake else None, emit=self.events.append,
            ledger=ledger)

    def contents(self) -> list[str]:
        return [m.tool_result.content for m in self.conversation.messages() if m.tool_result]


def history(n: int = 12, size: int = 2000) -> Conversation:
    conv = Conversation()
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        conv.append(Message(role=role, content=f"m{i} " + "x" * size))  # type: ignore[arg-type]
    return conv


def summaries(fake: FakeModelServer) -> list[dict[str, Any]]:
    return [r for r in fake.requests if not r["body"].get("tools")]


@pytest.fixture
def call() -> Callable[..., Message]:
    return tool_call


@pytest.fixture
def result() -> Callable[..., Message]:
    return tool_result


@pytest.fixture
def harness(tmp_path: Path) -> Callable[..., Harness]:
    def make(fake: FakeModelServer | None, **options: Any) -> Harness:
        return Harness(tmp_path, fake, **options)
    return make


@pytest.fixture
def provider_source() -> Callable[[FakeModelServer], ProviderSource]:
    return anthropic_source


@pytest.fixture
def big_history() -> Callable[..., Conversation]:
    return history


@pytest.fixture
def summary_rule() -> dict[str, Any]:
    return SUMMARY_RULE


@pytest.fixture
def summary_requests() -> Callable[[FakeModelServer], list[dict[str, Any]]]:
    return summaries
