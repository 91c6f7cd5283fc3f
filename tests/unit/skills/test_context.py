"""Skills in the context breakdown: the list of the system prompt, a ``load_skill`` result and
a ``/<skill>`` prompt count under ``skills`` (not ``tool_results`` or ``messages``), a spilled
one under ``spilled``; the ten categories still add up to the estimate."""

from __future__ import annotations

from pathlib import Path

from pseudoclaude.compact import CompactConfig, CompactRuntime
from pseudoclaude.compact.breakdown import CATEGORIES, TokenBreakdown
from pseudoclaude.compact.estimate import message_bytes, tokens_for_bytes
from pseudoclaude.conversation import Conversation
from pseudoclaude.llm.types import Message, ToolCall, ToolResult
from pseudoclaude.skills import Skill, invocation

SKILL = Skill(name="review", description="Review.", source="builtin",
              path=Path("/b/review/SKILL.md"), body="Review $ARGUMENTS carefully. " * 40)


def breakdown(runtime: CompactRuntime) -> TokenBreakdown:
    state = runtime.state()
    b = state.breakdown
    assert sum(getattr(b, name) for name in CATEGORIES) == state.estimated_tokens
    return b


def runtime_of(messages: list[Message], tmp_path: Path) -> CompactRuntime:
    runtime = CompactRuntime(Conversation(messages), config=CompactConfig(window=200_000),
                             spill_dir=tmp_path / "spill")
    runtime.set_request_overhead(system=3_500, rules=0, memory=0, skills=700, tools=7_000)
    return runtime


def test_the_list_and_loaded_skills_count_as_skills(tmp_path: Path) -> None:
    loaded = Message(role="user", tool_result=ToolResult("c1", "load_skill", "x" * 7_000))
    failed = Message(role="user", tool_result=ToolResult("c2", "load_skill", "no", True))
    prompt = Message(role="user", content=invocation(SKILL, "/review src", "src"))
    messages = [Message(role="user", content="hello"),
                Message(role="assistant", tool_calls=[ToolCall("c1", "load_skill",
                                                               {"name": "review"}),
                                                      ToolCall("c2", "load_skill",
                                                               {"name": "nope"})]),
                loaded, failed, Message(role="assistant", content="ok"), prompt]
    b = breakdown(runtime_of(messages, tmp_path))
    expected = 700 + message_bytes(loaded) + message_bytes(prompt)
    assert abs(b.skills - expected / 3.5) <= 1
    assert abs(b.tool_results - message_bytes(failed) / 3.5) <= 1  # an error loaded nothing
    # the /review prompt is not under messages
    assert b.messages <= tokens_for_bytes(message_bytes(messages[0]) + message_bytes(messages[4]))


def test_a_typed_skill_block_alone_is_a_message(tmp_path: Path) -> None:
    b = breakdown(runtime_of([Message(role="user", content='<skill name="review">\nx\n'
                                                           "</skill>")], tmp_path))
    assert b.skills == 200  # the list only
    assert b.messages > 0


def test_a_spilled_load_skill_result_counts_as_spilled(tmp_path: Path) -> None:
    import asyncio

    messages = [Message(role="user", content="load it"),
                Message(role="assistant", tool_calls=[ToolCall("c1", "load_skill", {})]),
                Message(role="user", tool_result=ToolResult("c1", "load_skill",
                                                            "y" * 60_000))]
    runtime = runtime_of(messages, tmp_path)
    assert breakdown(runtime).skills > 17_000
    asyncio.run(runtime.manage_context())  # over compact.singleResultBytes: spilled
    after = breakdown(runtime)
    assert after.skills == 200 and after.spilled > 0
