"""Usage in the log (SPEC §11 "Details"): assistant lines carry the turn's provider usage, and a
resumed session restores the estimate's anchor from the last stamp of the live part, so a
resumed session (and the CLI) shows the numbers the live session showed. Old logs without
usage keep working with the byte estimate. Also: the estimate covers the whole next request
(system prompt, rules, memory, tool schemas) from the moment a session is attached."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.agent.approvals import ApprovalRequest, Decision
from pseudoclaude.agent.prompt import SEPARATOR, system_prompt_parts
from pseudoclaude.compact.estimate import json_bytes, message_bytes, tokens_for_bytes
from pseudoclaude.config import load_settings
from pseudoclaude.conversation import Conversation, Hooks
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.types import Message, ToolCall, ToolResult, Usage
from pseudoclaude.session import replay_file
from pseudoclaude.session.codec import (
    MessageEntry,
    OffloadEntry,
    ReplaceEntry,
    SessionEntry,
    UsageStamp,
    decode,
    encode,
)
from pseudoclaude.skills import listing
from pseudoclaude.workspace import Workspace

USAGE = Usage(input_tokens=1200, output_tokens=30, cache_read=500, cache_write=70)


# -- the log line -------------------------------------------------------------------------------

def test_assistant_lines_carry_usage_and_other_lines_do_not() -> None:
    line = encode(MessageEntry.from_message(
        Message(role="assistant", content="hi", usage=USAGE), 1.0))
    assert json.loads(line)["usage"] == {"input": 1200, "output": 30, "cacheRead": 500,
                                         "cacheWrite": 70}
    entry = decode(line)
    assert isinstance(entry, MessageEntry) and entry.usage is not None
    assert entry.usage.total == USAGE.total and entry.to_message().usage is None
    for message in (Message(role="assistant", content="hi"),
                    Message(role="assistant", content="hi", usage=Usage()),
                    Message(role="user", content="hi", usage=USAGE)):
        assert "usage" not in json.loads(encode(MessageEntry.from_message(message, 1.0)))
    old = decode(b'{"type":"message","role":"assistant","content":"hi","ts":1.0}')
    assert isinstance(old, MessageEntry) and old.usage is None
    legacy = decode(b'{"Role":"assistant","Content":"hi","usage":{"input":5,"cacheRead":2}}')
    assert isinstance(legacy, MessageEntry) and legacy.usage == UsageStamp(5, 0, 2, 0)


def test_the_conversation_hands_usage_to_the_log_and_does_not_keep_it() -> None:
    logged: list[Message] = []
    conv = Conversation(hooks=Hooks(on_append=logged.append))
    returned = conv.append(Message(role="assistant", content="hi", usage=USAGE))
    assert logged[0].usage == USAGE
    assert returned.usage is None and conv.messages()[0].usage is None
    assert conv.messages() == [Message(role="assistant", content="hi")]


# -- the replay ---------------------------------------------------------------------------------

HEADER = SessionEntry(version=1, id="20260617-120000-abcd", created="2026-06-17T12:00:00+00:00")


def stamp(total: int) -> UsageStamp:
    return UsageStamp(total - 10, 10, 0, 0)


def log(tmp_path: Path, *entries: Any) -> Path:
    path = tmp_path / "conversation.jsonl"
    path.write_bytes(b"".join(encode(e) for e in (HEADER, *entries)))
    return path


def test_the_last_stamp_of_the_live_part_is_the_anchor(tmp_path: Path) -> None:
    path = log(
        tmp_path,
        MessageEntry(role="user", content="q1"),
        MessageEntry(role="assistant", content="a1", usage=stamp(900)),
        MessageEntry(role="user", content="q2"),
        MessageEntry(role="assistant", content="a2", usage=stamp(1500)),
        MessageEntry(role="user", content="q3"),
        MessageEntry(role="assistant", content="a3"),  # no usage reported: the anchor stays
    )
    for fast in (True, False):
        anchor = replay_file(path, fast=fast).anchor
        assert anchor is not None and (anchor.tokens, anchor.count, anchor.saved) == (
            1500, 4, [])


def test_a_replace_resets_the_anchor(tmp_path: Path) -> None:
    entries = [
        MessageEntry(role="user", content="q1"),
        MessageEntry(role="assistant", content="a1", usage=stamp(900)),
        ReplaceEntry(reason="compact", messages=[Message(role="user", content="summary")]),
    ]
    for fast in (True, False):
        assert replay_file(log(tmp_path, *entries), fast=fast).anchor is None
        after = [*entries, MessageEntry(role="user", content="q2"),
                 MessageEntry(role="assistant", content="a2", usage=stamp(300))]
        anchor = replay_file(log(tmp_path, *after), fast=fast).anchor
        assert anchor is not None and (anchor.tokens, anchor.count) == (300, 3)


def test_a_later_offload_before_the_stamp_is_remembered_as_saved(tmp_path: Path) -> None:
    call = ToolCall("c1", "read_file", {"path": "a"})
    path = log(
        tmp_path,
        MessageEntry(role="user", content="q"),
        MessageEntry(role="assistant", tool_calls=(call,)),
        MessageEntry(role="user", tool_result=ToolResult("c1", "read_file", "é" * 1000)),
        MessageEntry(role="assistant", content="a", usage=stamp(2000)),
        OffloadEntry("c1", "tool-results/c1.txt", 2000, "PREVIEW"),
        OffloadEntry("c1", "tool-results/c1.txt", 2000, "PREVIEW"),  # again: nothing saved
    )
    anchor = replay_file(path).anchor
    assert anchor is not None and anchor.saved == [2000 - len("PREVIEW")]


# -- through the workspace ------------------------------------------------------------------------

class Allow:
    async def ask(self, request: ApprovalRequest) -> Decision | None:
        return "allow_once"


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer({"default": {"text": "[]", "chunks": 1}}) as server:
        yield server


@pytest.fixture
async def workspace(tmp_path: Path, fake: FakeModelServer
                    ) -> AsyncIterator[Callable[..., Workspace]]:
    """``workspace()``: a Workspace on ``<tmp>/ws`` (a rules file, a 70 kB file) on the fake
    model, memory on; each one made is closed at the end (a new one is a new process)."""
    made: list[Workspace] = []
    root = tmp_path / "ws"
    root.mkdir()
    (root / "PSEUDOCLAUDE.md").write_text("Run the tests with make test.\n")
    (root / "big.txt").write_text("w" * 70_000)

    def make() -> Workspace:
        settings = load_settings(root, {
            "provider": "anthropic", "baseUrl": fake.base_url, "apiKey": "sk-test-anchor",
            "maxRetries": 0, "memory.userDir": str(tmp_path / "user-memory")},
            home=tmp_path / "home", env={})
        ws = Workspace(root, settings, approver=Allow())
        made.append(ws)
        return ws

    yield make
    for ws in made:
        await ws.close()


def request_bytes(ws: Workspace, messages: list[Message]) -> int:
    prompt = system_prompt_parts(ws.root, user_dir=tmp_user_dir(ws),
                                 memory_index=ws.memory.index_text(),
                                 skills=listing(ws.skills.scan().listed))
    tools = json_bytes([{"name": s.name, "description": s.description,
                         "input_schema": s.input_schema} for s in ws.session.tools.specs()])
    agents = SEPARATOR + ws.session.agents.section()  # the sub-agent types, after the identity
    return len(prompt.text.encode()) + len(agents.encode()) + tools + sum(
        message_bytes(m) for m in messages)


def tmp_user_dir(ws: Workspace) -> Path | None:
    user_dir = ws.settings.memory.user_dir
    return user_dir.parent if user_dir is not None else None


async def test_before_the_first_run_the_estimate_is_the_whole_request(
        workspace: Callable[..., Workspace]) -> None:
    ws = workspace()
    assert ws.context().estimated_tokens == 0  # no session: the empty state
    assert ws.context().breakdown.free == ws.context().context_window
    await ws.new_session()
    state = ws.context()
    assert state.estimated_tokens == tokens_for_bytes(request_bytes(ws, []))
    b = state.breakdown
    assert b.total == state.estimated_tokens and b.system > 0 and b.rules > 0 and b.tools > 0
    assert b.memory == 0 and b.messages == 0
    await ws.memory.remember("Deploy with make deploy.", "project", title="Deploy")
    grown = ws.context()  # the memory index now goes into the prompt: counted at once
    assert grown.breakdown.memory > 0
    assert grown.estimated_tokens == tokens_for_bytes(request_bytes(ws, []))


async def test_a_resumed_session_shows_what_the_live_session_showed(
        workspace: Callable[..., Workspace], fake: FakeModelServer) -> None:
    fake.add_turns({"tool_calls": [{"name": "read_file", "arguments": {"path": "big.txt"}}]},
                   {"text": "It is all w."})
    live = workspace()
    await live.run("what is in big.txt?")  # the result is spilled before the second request
    state = live.context()
    messages = live.session.conversation.messages() if live.session else []
    assert state.breakdown.spilled > 0 and state.breakdown.total == state.estimated_tokens
    # anchored: the fake model's usage for the last turn, plus nothing after it
    assert state.estimated_tokens != tokens_for_bytes(request_bytes(live, messages))
    lines = [json.loads(x) for x in live.store.log_path(live.session_id or "").read_text(
        ).splitlines()]
    stamped = [x for x in lines if x.get("usage")]
    assert [x["role"] for x in stamped] == ["assistant", "assistant"]
    assert state.estimated_tokens == sum(stamped[-1]["usage"].values())
    await live.close()

    resumed = workspace()
    await resumed.resume("latest")
    assert resumed.context() == state

    # an old log without usage: the byte estimate of the whole request
    path = resumed.store.log_path(resumed.session_id or "")
    stripped = [{k: v for k, v in x.items() if k != "usage"} for x in lines]
    path.write_text("".join(json.dumps(x) + "\n" for x in stripped))
    old = workspace()
    await old.resume("latest")
    assert old.context().estimated_tokens == tokens_for_bytes(request_bytes(old, messages))


async def test_a_resume_restores_an_anchor_lowered_by_a_later_spill(
        workspace: Callable[..., Workspace]) -> None:
    """A result before the stamp spilled after it (a failed spill retried): the live anchor
    went down by the estimate of the bytes saved; the resumed one does the same."""
    ws = workspace()
    await ws.new_session()
    assert ws.session is not None and ws.session.runtime is not None
    conv, runtime = ws.session.conversation, ws.session.runtime
    conv.add_user("read it")
    conv.append(Message(role="assistant", tool_calls=[ToolCall("c1", "read_file", {})]))
    conv.append(Message(role="user", tool_result=ToolResult("c1", "read_file", "z" * 90_000)))
    usage = Usage(input_tokens=40_000, output_tokens=20)
    conv.append(Message(role="assistant", content="later", usage=usage))
    runtime.record_usage(usage)
    await runtime.manage_context()  # spills c1, which lies before the anchor
    state = ws.context()
    assert state.breakdown.spilled > 0 and state.breakdown.tool_results == 0
    assert 0 < state.estimated_tokens < usage.total
    await ws.close()
    again = workspace()
    await again.resume("latest")
    assert again.context() == state
