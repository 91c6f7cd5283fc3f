"""The Anthropic adapter: the real ``anthropic`` SDK against the fake model over loopback."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from typing import Any

import pytest

from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.errors import (
    AuthenticationFailed,
    MaxTokensTruncated,
    NetworkError,
    Overloaded,
    PromptTooLong,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    ServerError,
)
from pseudoclaude.llm.provider import (
    Retrying,
    Stop,
    StreamEvent,
    TextDelta,
    ThinkingComplete,
    ThinkingDelta,
    ToolCallComplete,
    ToolSpec,
    UsageEvent,
)
from pseudoclaude.llm.types import Message, ThinkingBlock, ToolCall, ToolResult, Usage

KEY = "sk-ant-test-0123456789abcdef"
TOOLS = [
    ToolSpec("read_file", "Read a file.", {"type": "object",
                                           "properties": {"path": {"type": "string"}}}),
    ToolSpec("find_files", "Find files.", {"type": "object",
                                            "properties": {"pattern": {"type": "string"}}}),
]
HELLO = [Message(role="user", content="hello")]


@pytest.fixture
def turns(provider_turns: Any) -> Any:
    return provider_turns("anthropic", "claude-test", KEY, TOOLS)


def test_plain_text_answer(turns: Any) -> None:
    with FakeModelServer([{"text": "Hello there.", "chunks": 1}]) as fake:
        events, done = turns.run_turn(fake)
    assert done.message == Message(role="assistant", content="Hello there.")
    assert done.stop_reason == "end_turn"
    assert events[0] == TextDelta("Hello there.")
    assert isinstance(events[-1], Stop) and events[-1].raw == "end_turn"
    assert isinstance(events[-2], UsageEvent)


def test_streamed_text_arrives_in_order(turns: Any) -> None:
    with FakeModelServer([{"text": ["Hel", "lo, ", "wor", "ld", "!"]}]) as fake:
        events, done = turns.run_turn(fake)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo, ", "wor",
                                                                     "ld", "!"]
    assert done.message.content == "Hello, world!"


def test_one_tool_call_with_fragmented_arguments(turns: Any) -> None:
    args = {"path": "src/main.py", "note": "ünïcödé and \"quotes\""}
    with FakeModelServer([{"text": "Reading.", "arg_chunks": 7,
                           "tool_calls": [{"name": "read_file", "arguments": args}]}]) as fake:
        events, done = turns.run_turn(fake)
        body = fake.requests[0]["body"]
    calls = [e.call for e in events if isinstance(e, ToolCallComplete)]
    assert len(calls) == 1 and calls[0].name == "read_file" and calls[0].arguments == args
    assert calls[0].id.startswith("toolu_")
    assert done.stop_reason == "tool_use"
    assert done.message.content == "Reading."
    assert body["tools"][0] == {"name": "read_file", "description": "Read a file.",
                                "input_schema": TOOLS[0].input_schema}
    assert body["stream"] is True and body["max_tokens"] == 8192


def test_several_tool_calls_in_one_turn(turns: Any) -> None:
    calls = [{"name": "read_file", "arguments": {"path": "a.py"}},
             {"name": "find_files", "arguments": {"pattern": "**/*.md"}},
             {"name": "read_file", "arguments": {}}]
    with FakeModelServer([{"tool_calls": calls, "arg_chunks": 4}]) as fake:
        _, done = turns.run_turn(fake)
    got = done.message.tool_calls
    assert [(c.name, c.arguments) for c in got] == [(c["name"], c["arguments"]) for c in calls]
    assert len({c.id for c in got}) == 3


def test_invalid_json_arguments_are_kept_as_a_string(turns: Any) -> None:
    with FakeModelServer([{"tool_calls": [{"name": "read_file",
                                           "arguments": '{"path": "a.py",,}'}]}]) as fake:
        _, done = turns.run_turn(fake)
    assert done.message.tool_calls[0].arguments == '{"path": "a.py",,}'


def test_system_block_and_last_user_block_are_cached(turns: Any) -> None:
    with FakeModelServer([{"text": "ok"}]) as fake:
        turns.run_turn(fake, system="You are a coding agent.")
        body = fake.requests[0]["body"]
    assert body["system"] == [{"type": "text", "text": "You are a coding agent.",
                               "cache_control": {"type": "ephemeral"}}]
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "thinking" not in body


def test_a_request_without_cache_has_no_breakpoint(turns: Any) -> None:
    """Memory updates and transcript summaries (never repeated) write nothing to the cache."""
    with FakeModelServer([{"text": "ok"}]) as fake:
        turns.run_turn(fake, system="You are a coding agent.", cache=False)
        body = fake.requests[0]["body"]
    assert "cache_control" not in json.dumps(body)
    assert body["system"] == [{"type": "text", "text": "You are a coding agent."}]


def test_usage_mapping_includes_cache_tokens(turns: Any) -> None:
    usage = {"input": 1200, "output": 80, "cache_read": 1000, "cache_write": 300}
    with FakeModelServer([{"text": "ok", "usage": usage}]) as fake:
        events, done = turns.run_turn(fake)
    assert done.usage == Usage(input_tokens=1200, output_tokens=80, cache_read=1000,
                               cache_write=300)
    assert [e for e in events if isinstance(e, UsageEvent)] == [UsageEvent(done.usage)]


def test_thinking_blocks_round_trip_with_signatures(turns: Any) -> None:
    turn1 = {"thinking": [{"thinking": "I should read a.py first.", "signature": "SIG-ONE"},
                          {"redacted": "REDACTED-BLOB"}],
             "text": "Let me look.",
             "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]}
    with FakeModelServer([turn1, {"text": "a.py prints hello."}]) as fake:
        events, first = turns.run_turn(fake, thinking=True, thinking_budget=2048)
        deltas = [e.text for e in events if isinstance(e, ThinkingDelta)]
        assert len(deltas) == 2 and "".join(deltas) == "I should read a.py first."
        assert first.message.thinking == [
            ThinkingBlock(thinking="I should read a.py first.", signature="SIG-ONE"),
            ThinkingBlock(data="REDACTED-BLOB")]
        first_block = next(e for e in events if isinstance(e, ThinkingComplete)).block
        assert first_block.signature == "SIG-ONE"
        call = first.message.tool_calls[0]
        history = [*HELLO, first.message,
                   Message(role="user", tool_result=ToolResult(call.id, "read_file", "print(1)"))]
        _, second = turns.run_turn(fake, messages=history, thinking=True, thinking_budget=2048)
        body = fake.requests[1]["body"]
    assert second.message.content == "a.py prints hello."
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assistant = body["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {"type": "thinking", "thinking": "I should read a.py first.",
                                       "signature": "SIG-ONE"}
    assert assistant["content"][1] == {"type": "redacted_thinking", "data": "REDACTED-BLOB"}
    assert assistant["content"][2] == {"type": "text", "text": "Let me look."}
    assert assistant["content"][3]["type"] == "tool_use"
    assert assistant["content"][3]["id"] == call.id
    result = body["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == call.id
    assert result["content"] == "print(1)"


def test_consecutive_same_role_messages_are_merged(turns: Any) -> None:
    history = [
        Message(role="user", content="first"),
        Message(role="user", content="second"),
        Message(role="assistant", content="two calls", tool_calls=[
            ToolCall("c1", "read_file", {"path": "a"}), ToolCall("c.2", "read_file", "{raw")]),
        Message(role="user", tool_result=ToolResult("c1", "read_file", "A")),
        Message(role="user", content="also consider b"),
        Message(role="user", tool_result=ToolResult("c.2", "read_file", "bad", is_error=True)),
    ]
    with FakeModelServer([{"text": "ok"}]) as fake:
        turns.run_turn(fake, messages=history)
        messages = fake.requests[0]["body"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["text"] for b in messages[0]["content"]] == ["first", "second"]
    tool_uses = [b for b in messages[1]["content"] if b["type"] == "tool_use"]
    assert tool_uses[1]["id"] == "c_2" and tool_uses[1]["input"] == {"_raw_arguments": "{raw"}
    last = messages[2]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text"]
    assert last[1]["tool_use_id"] == "c_2" and last[1]["is_error"] is True


@pytest.mark.parametrize(("failure", "expected", "status"), [
    ("rate_limit", RateLimited, 429),
    ("server_error", ServerError, 500),
    ("overloaded", Overloaded, 529),
    ("prompt_too_long", PromptTooLong, 400),
    ("auth", AuthenticationFailed, 401),
])
def test_http_failures_map_to_typed_errors(failure: str, expected: type[ProviderError],
                                           status: int, turns: Any) -> None:
    with FakeModelServer([{"error": failure}]) as fake:
        error = turns.turn_error(fake)
        assert fake.requests[0]["status"] == status
    assert type(error) is expected
    assert error.status == status and error.provider == "anthropic"
    assert error.retryable == (failure in ("rate_limit", "server_error", "overloaded"))
    assert KEY not in str(error) and KEY not in repr(error)


def test_error_event_inside_the_stream_is_typed(turns: Any) -> None:
    with FakeModelServer([{"text": "never", "error": "overloaded", "error_after": 2}]) as fake:
        error = turns.turn_error(fake)
    assert isinstance(error, Overloaded)


def test_stream_cut_mid_way_is_a_network_error_and_not_retried(turns: Any) -> None:
    with FakeModelServer([{"text": ["one ", "two ", "three"], "cut_after": 5},
                          {"text": "retried?"}]) as fake:
        async def go() -> tuple[list[StreamEvent], BaseException | None]:
            provider = await turns.provider_for(fake, max_retries=3)
            seen: list[StreamEvent] = []
            try:
                async for event in provider.stream("s", HELLO, TOOLS):
                    seen.append(event)
            except ProviderError as exc:
                return seen, exc
            finally:
                await provider.aclose()
            return seen, None
        seen, error = asyncio.run(go())
        assert len(fake.requests) == 1  # text was already streamed: no silent restart
    assert isinstance(error, NetworkError)
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["one ", "two "]


def test_cut_before_any_output_is_retried(turns: Any) -> None:
    with FakeModelServer([{"text": "x", "cut_after": 1}, {"text": "second try"}]) as fake:
        events, done = turns.run_turn(fake, max_retries=2)
        assert len(fake.requests) == 2
    retries = [e for e in events if isinstance(e, Retrying)]
    assert len(retries) == 1 and isinstance(retries[0].error, NetworkError)
    assert done.message.content == "second try"


def test_retry_then_success_with_backoff(turns: Any) -> None:
    script = [{"error": "rate_limit"}, {"error": "overloaded"}, {"text": "finally"}]
    with FakeModelServer(script) as fake:
        events, done = turns.run_turn(fake, max_retries=2)
        assert len(fake.requests) == 3
    retries = [e for e in events if isinstance(e, Retrying)]
    assert [type(r.error) for r in retries] == [RateLimited, Overloaded]
    assert [r.attempt for r in retries] == [1, 2]
    assert done.message.content == "finally"


def test_retries_are_bounded(turns: Any) -> None:
    with FakeModelServer([{"error": "server_error"}] * 5) as fake:
        error = turns.turn_error(fake, max_retries=1)
        assert len(fake.requests) == 2
    assert isinstance(error, ServerError)


def test_retry_after_header_is_honoured(turns: Any) -> None:
    with FakeModelServer([{"error": "rate_limit", "retry_after": 0}, {"text": "ok"}]) as fake:
        events, _ = turns.run_turn(fake, max_retries=1, retry_base_delay=30.0)
    assert [e.delay for e in events if isinstance(e, Retrying)] == [0.0]


def test_prompt_too_long_is_not_retried(turns: Any) -> None:
    with FakeModelServer([{"error": "prompt_too_long"}, {"text": "no"}]) as fake:
        error = turns.turn_error(fake, max_retries=3)
        assert len(fake.requests) == 1
    assert isinstance(error, PromptTooLong)


def test_stalled_stream_times_out(turns: Any) -> None:
    with FakeModelServer([{"text": "late", "stall": 3, "stall_after": 2}]) as fake:
        started = time.monotonic()
        error = turns.turn_error(fake, read_timeout=0.3)
    assert isinstance(error, ProviderTimeout)
    assert time.monotonic() - started < 2.5


def test_connection_refused_is_a_network_error(turns: Any) -> None:
    fake = FakeModelServer([])
    fake.stop()  # the port is now closed
    error = turns.turn_error(fake)
    assert isinstance(error, NetworkError) and error.retryable


def test_cancellation_mid_stream_closes_the_connection(turns: Any) -> None:
    with FakeModelServer([{"text": [f"w{i} " for i in range(60)], "delay": 0.02}]) as fake:
        turns.cancel_mid_stream(fake)
        assert fake.wait_for(lambda reqs: reqs[0]["disconnected"], timeout=3)
        assert not fake.requests[0]["completed"]


def test_max_tokens_in_the_middle_of_a_tool_call_raises(turns: Any) -> None:
    turn = {"text": "Writing the file.", "stop_reason": "max_tokens",
            "tool_calls": [{"name": "read_file", "arguments": '{"path": "src/ma'}]}
    with FakeModelServer([turn]) as fake:
        error = turns.turn_error(fake)
    assert isinstance(error, MaxTokensTruncated)
    assert error.partial_text == "Writing the file."
    assert "max_tokens (8192)" in str(error)


def test_max_tokens_in_plain_text_is_a_stop_reason(turns: Any) -> None:
    with FakeModelServer([{"text": "cut here", "stop_reason": "max_tokens"}]) as fake:
        events, done = turns.run_turn(fake)
    assert done.stop_reason == "max_tokens" and done.message.content == "cut here"
    assert not any(isinstance(e, ToolCallComplete) for e in events)


def test_adaptive_thinking_and_max_tokens_option_are_sent(turns: Any) -> None:
    with FakeModelServer([{"text": "ok"}]) as fake:
        turns.run_turn(fake, thinking=True, thinking_mode="adaptive", max_tokens=1234)
        body = fake.requests[0]["body"]
    assert body["thinking"] == {"type": "adaptive"} and body["max_tokens"] == 1234


def test_leading_assistant_message_gets_a_user_turn_first(turns: Any) -> None:
    history = [Message(role="assistant", content="summary ack"),
               Message(role="user", content="go on")]
    with FakeModelServer([{"text": "ok"}]) as fake:
        turns.run_turn(fake, messages=history, system="")
        body = fake.requests[0]["body"]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert "system" not in body


def test_importing_the_package_does_not_import_sdks_and_create_is_off_loop() -> None:
    code = """
import asyncio, sys, time
import pseudoclaude.llm, pseudoclaude.llm.provider, pseudoclaude.llm.errors
import pseudoclaude.config, pseudoclaude.fake_model
assert 'anthropic' not in sys.modules and 'openai' not in sys.modules, 'SDK imported eagerly'
from pseudoclaude.config import Secret
from pseudoclaude.llm.provider import ProviderOptions, create_provider

async def main():
    gaps, last = [], time.monotonic()
    async def tick():
        nonlocal last
        while True:
            await asyncio.sleep(0.005)
            now = time.monotonic(); gaps.append(now - last); last = now
    ticker = asyncio.create_task(tick())
    started = time.monotonic()
    p = await create_provider(ProviderOptions(provider='anthropic', model='m',
                                              api_key=Secret('k'), base_url='http://127.0.0.1:9'))
    took = time.monotonic() - started
    gaps.append(time.monotonic() - last)
    ticker.cancel()
    await p.aclose()
    print(f'{took:.3f} {max(gaps):.3f}')
asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    took, worst_gap = float(out[0]), float(out[1])
    # The import takes a while, but the loop kept ticking meanwhile.
    assert worst_gap < max(0.25, took / 2), (took, worst_gap)
